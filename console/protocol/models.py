"""The fleet API's typed records (see ../shared/DESIGN.md, "The fleet API, v1").

Field names are a contract: scripts, runbooks, the console and the gateway controller depend on them.
Add fields freely; never rename one. Units are in the names (`_s`, `_ms`, `_pct`, `_per_s`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, StrictBool

from console.protocol import limits

API_VERSION = "v1"

#: Wave bins are 100 ms wide: the resolution at which lockstep retries become visible (outage seed).
WAVE_BIN_MS = 100


class _Record(BaseModel):
    # Unknown fields from a newer server are kept, not rejected: the contract only ever adds fields.
    model_config = ConfigDict(extra="allow", frozen=False)


# --- what a request body may hold ------------------------------------------------------------------
#
# A request is an operator's intent, so it is read literally: an unknown field (a typo: "dryrun") is
# refused rather than ignored — ignored, it would apply what was meant as a dry run — and values are not
# coerced: a bool is true or false (not "yes"), a number is a JSON number (not "100", not true). A whole
# number may come as 3.0 (what many JSON encoders write for it), as the scenario loader takes 1e6; 3.5 is
# refused, never truncated.


def _whole_number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool | int):
        return int(value)  # numpy's integers, from the planners; never a bool
    return value


#: A JSON number (an int or a float; not a string, not a bool), finite (`_Request`'s allow_inf_nan).
Number = Annotated[float, Strict()]
#: A JSON whole number: 3 or 3.0; not 3.5, "3" or true.
WholeNumber = Annotated[int, Strict(), BeforeValidator(_whole_number)]


@dataclass(frozen=True)
class Window:
    """Marks a [min, max] pair whose ends lie within `bounds` (each end's range is in the schema and
    checked by pydantic; min ≤ max is the guards' to judge, so the console's own planner meets it too)."""

    bounds: tuple[float, float]

    def allowed(self) -> str:
        return limits.window_text(self.bounds)


def _window(item: Any, bounds: tuple[float, float]) -> Any:
    end = Annotated[item, Field(ge=bounds[0], le=bounds[1])]
    return Annotated[tuple[end, end], Window(bounds)]


RetryAfterWindow = _window(Number, limits.RETRY_AFTER_S)
HintWindow = _window(WholeNumber, limits.HINT_MS)


class _Request(_Record):
    model_config = ConfigDict(extra="forbid", frozen=False, allow_inf_nan=False)


class NodeState(StrEnum):
    READY = "ready"
    DRAINING = "draining"
    DRAINED = "drained"
    RESTARTING = "restarting"
    DOWN = "down"
    PROVISIONING = "provisioning"

    @property
    def in_rotation(self) -> bool:
        """Whether the load balancer sends this node new connections."""
        return self is NodeState.READY


class Source(StrEnum):
    SIMULATOR = "simulator"
    DRILL = "drill"
    LIVE = "live"
    REPLAY = "replay"


class DrainProgress(_Record):
    remaining: int = Field(description="connections still held by the draining node")
    rate_per_s: float = Field(description="requested close rate")
    hint_ms: tuple[int, int] = Field(description="reconnect hint window sent with each close")
    started_at_s: float
    deadline_at_s: float = Field(description="fleet time at which whatever remains is force-closed")
    eta_s: float | None = Field(default=None, description="seconds until empty at the requested rate")
    closed: int = Field(default=0, description="planned closes started so far (real nodes)")
    achieved_rate_per_s: float | None = Field(
        default=None, description="closes per second so far, first close to last (real nodes)"
    )


class NodeStatus(_Record):
    id: str
    state: NodeState
    connections: int
    cpu_pct: float
    attempts_per_s: float
    accepts_per_s: float
    rejects_per_s: float = Field(description="503s answered by admission control or the connection ceiling")
    timeouts_per_s: float = Field(description="handshakes the client gave up on while queued")
    handshake_p99_ms: float
    drops_per_s: float = Field(default=0.0, description="established connections lost (missed heartbeats)")
    closes_per_s: float = Field(default=0.0, description="planned closes: drain, lifetime, restart")
    capacity_connections: int = Field(default=0, description="planning target: connections at 100 % headroom")
    drain: DrainProgress | None = None


class Totals(_Record):
    connections: int
    attempts_per_s: float
    accepts_per_s: float
    rejects_per_s: float
    headroom_pct: float = Field(description="spare connection capacity of the nodes in rotation, as a share")
    drain_inflow_ratio: float | None = Field(
        description="reconnect backlog drain rate ÷ inflow rate over 10 s; null when nothing flows in"
    )
    timeouts_per_s: float = 0.0
    drops_per_s: float = 0.0
    disconnects_per_s: float = 0.0
    offline_clients: int = Field(default=0, description="clients wanting a connection that have none")
    resumes_per_s: float = 0.0
    full_resyncs_per_s: float = 0.0
    resync_failures_per_s: float = 0.0
    resync_backlog: int = Field(default=0, description="full resyncs waiting for the resync backend")
    abnormal_closes_per_s: float = Field(default=0.0, description="closes without a close frame (1006)")
    max_cpu_pct: float = 0.0


class Waves(_Record):
    bin_ms: int = WAVE_BIN_MS
    attempts: list[int] = Field(description="connection attempts per bin since the previous frame")
    start_s: float | None = Field(
        default=None, description="unix time the first bin starts at (real nodes), so sources can be summed"
    )


class RolloutState(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    PAUSED = "paused"
    HALTED = "halted"
    ABORTED = "aborted"
    COMPLETED = "completed"


class RolloutMode(StrEnum):
    DRAIN = "drain"
    ABRUPT = "abrupt"


class RolloutStatus(_Record):
    state: RolloutState = RolloutState.IDLE
    mode: RolloutMode | None = None
    batch_size: int | None = None
    interval_s: float | None = None
    pause_cpu_pct: float | None = None
    batch: int = Field(default=0, description="batches started so far (k of n)")
    batches: int = Field(default=0, description="batches in the rollout (n)")
    pause_reason: str | None = None
    started_at_s: float | None = None
    completed_at_s: float | None = None


class AdmissionSettings(_Record):
    rate_per_s: float | None = Field(description="token bucket refill per node; null when unlimited")
    burst: int | None = None
    max_connections: int | None = Field(description="connection ceiling per node; null when unlimited")
    retry_after_s: tuple[float, float] = Field(description="window the randomized Retry-After is drawn from")
    nodes: list[str] | None = Field(default=None, description="nodes it applies to; null means every node")


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


class Alarm(_Record):
    name: str
    severity: Severity
    since_s: float
    value: float | None = None
    limit: float | None = None
    message: str
    active: bool = True
    node: str | None = None
    nodes: list[str] | None = Field(
        default=None, description="for a fleet alarm about several nodes: those nodes, worst first"
    )
    acknowledged: bool = Field(
        default=False, description="the operator has seen it; it stays until it clears"
    )
    cleared_s: float | None = Field(default=None, description="fleet time the condition cleared")


class Frame(_Record):
    type: Literal["frame"] = "frame"
    api_version: str = API_VERSION
    seq: int
    epoch: str
    time_s: float
    nodes: list[NodeStatus]
    totals: Totals
    waves: Waves
    rollout: RolloutStatus | None = None
    admission: AdmissionSettings | None = None
    span_s: float = Field(
        default=1.0,
        description="fleet seconds this frame covers: above 1 at speed > 1 (waves.attempts then holds the "
        "bins of all of them; the per-second rates are the last second's), 0 while the clock is paused",
    )
    published_unix_s: float | None = Field(
        default=None,
        description="the server's wall clock when it published this frame (Unix seconds); "
        "staleness = now − this",
    )


class Event(_Record):
    type: Literal["event"] = "event"
    api_version: str = API_VERSION
    seq: int | None = None
    epoch: str | None = None
    time_s: float
    kind: str = Field(description="node_state, rollout, alarm, action, injection, ...")
    node: str | None = None
    message: str
    data: dict[str, Any] = Field(default_factory=dict)


class Hello(_Record):
    type: Literal["hello"] = "hello"
    api_version: str = API_VERSION
    fleet: str
    source: Source
    epoch: str
    seq: int = Field(description="seq of the newest frame the server holds")
    recovered: bool | None = Field(
        default=None, description="for a resume (?since=&epoch=): whether every missed frame follows"
    )
    frame_interval_s: float = 1.0


class FleetSnapshot(_Record):
    api_version: str = API_VERSION
    fleet: str
    source: Source
    time_s: float
    nodes: list[NodeStatus]
    totals: Totals
    rollout: RolloutStatus
    admission: AdmissionSettings
    alarms: list[Alarm] = Field(default_factory=list)
    seq: int | None = Field(default=None, description="seq of the newest frame this snapshot matches")
    epoch: str | None = None


class NodeSample(NodeStatus):
    """One node's status in one frame: a point of its recent history."""

    seq: int
    time_s: float


class NodeDetail(_Record):
    """`GET /v1/nodes/{id}`: the node now, its recent history (oldest first) and its recent events."""

    api_version: str = API_VERSION
    fleet: str
    time_s: float
    node: NodeStatus
    history: list[NodeSample] = Field(default_factory=list)
    events: list[Event] = Field(default_factory=list)


class ClockRequest(_Request):
    """`POST /v1/sim/clock`: pause or resume the simulated fleet's clock, or change its speed."""

    paused: StrictBool | None = None
    speed: Number | None = Field(default=None, gt=0, le=100, description="fleet seconds per wall second")


class ClockState(_Record):
    paused: bool
    speed: float = Field(description="fleet seconds per wall second, as requested")
    time_s: float = Field(description="the fleet clock")
    effective_speed: float | None = Field(
        default=None, description="fleet seconds per wall second actually achieved over the last frames"
    )


# --- actions (#4 serves them; the shapes live here so every side agrees) -------------------------


class ConfirmAnswer(_Request):
    token: str = Field(max_length=200, description="the confirm_token of the 409 answer")
    typed: str | None = Field(
        default=None, max_length=200, description="for `typed`: the node id or fleet name"
    )


# Upper bounds keep every number a request may carry finite and meaningful (a week, a billion): beyond
# them a value is a typo, and the simulator's tick arithmetic must never see it. The scenario loader takes
# the same ends from console.protocol.limits.
_BILLION = limits.BILLION


class DrainRequest(_Request):
    rate_per_s: Number = Field(gt=0, le=_BILLION, description="closes per second")
    deadline_s: Number = Field(
        ge=0, le=limits.DRAIN_DEADLINE_S[1], description="seconds until whatever remains is force-closed"
    )
    hint_ms: HintWindow = Field(description="reconnect hint window [min, max] in ms")
    dry_run: StrictBool = False
    confirm: ConfirmAnswer | None = None
    override_reason: str | None = Field(default=None, max_length=1000)


class RolloutRequest(_Request):
    batch_size: WholeNumber = Field(gt=0, le=limits.ROLLOUT_BATCH_SIZE[1])
    interval_s: Number = Field(gt=0, le=limits.ROLLOUT_INTERVAL_S[1])
    mode: RolloutMode = RolloutMode.DRAIN
    pause_cpu_pct: Number = Field(default=75.0, gt=0, le=100)
    dry_run: StrictBool = False
    confirm: ConfirmAnswer | None = None
    override_reason: str | None = Field(default=None, max_length=1000)


class AdmissionRequest(_Request):
    # The scenario's admission table has the same ranges (console.protocol.limits); null is unlimited.
    rate_per_s: Number | None = Field(
        default=None,
        gt=0,
        le=limits.ADMISSION_RATE_PER_S[1],
        description="new connections admitted per second per node (token bucket refill); null: unlimited",
    )
    burst: WholeNumber | None = Field(
        default=None, gt=0, le=limits.ADMISSION_BURST[1], description="token bucket depth per node"
    )
    max_connections: WholeNumber | None = Field(
        default=None,
        gt=0,
        le=limits.ADMISSION_MAX_CONNECTIONS[1],
        description="connection ceiling per node; null: unlimited",
    )
    retry_after_s: RetryAfterWindow = Field(
        default=(1.0, 30.0), description="window the randomized Retry-After is drawn from, seconds"
    )
    nodes: list[str] | None = None
    dry_run: StrictBool = False
    confirm: ConfirmAnswer | None = None
    override_reason: str | None = Field(default=None, max_length=1000)


#: The most nodes one add-capacity request may ask for: the simulator's own node-count bound
#: (`nodes.count` ≤ 10 000). The fleet's room and the configured per-action maximum are judged by the guard.
MAX_ADD_NODES = limits.NODE_COUNT[1]


class CapacityRequest(_Request):
    """Add capacity: provision `count` more gateway nodes (ready after the fleet's provisioning time)."""

    count: WholeNumber = Field(ge=1, le=MAX_ADD_NODES, description="nodes to add")
    dry_run: StrictBool = False
    confirm: ConfirmAnswer | None = None
    override_reason: str | None = Field(default=None, max_length=1000)


class ActionRequest(_Request):
    """Body of undrain, rollout halt and rollout resume: only the two-phase controls (all optional)."""

    dry_run: StrictBool = False
    confirm: ConfirmAnswer | None = None
    override_reason: str | None = Field(default=None, max_length=1000)


class VerdictLevel(StrEnum):
    OK = "ok"
    CONFIRM = "confirm"
    TYPED = "typed"
    BLOCKED = "blocked"


class Check(_Record):
    name: str
    value: float | str | None
    limit: float | str | None
    ok: bool
    why: str
    bound: Literal["max", "min"] = Field(
        default="max", description="max: the value must not exceed the limit; min: it must not fall below it"
    )
    level: VerdictLevel | None = Field(
        default=None, description="the level this check raises the verdict to when it fails"
    )


class Verdict(_Record):
    level: VerdictLevel
    action: str
    checks: list[Check] = Field(default_factory=list)
    projections: dict[str, Any] = Field(default_factory=dict)
    forecast: dict[str, Any] | None = None
    confirm_token: str | None = None
    typed_expected: str | None = None


class Problem(_Record):
    """RFC 9457 problem details; `detail` names the field, the value and the allowed range."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    field: str | None = None
    instance: str | None = None


# --- answers of the write side (#4) -----------------------------------------------------------------


class ActionResult(_Record):
    """200/202 answer of an action: applied (or, for a dry run, only judged)."""

    action: str
    node: str | None = None
    applied: bool
    dry_run: bool = False
    overridden: bool = Field(default=False, description="a blocked action an admin forced, with a reason")
    verdict: Verdict
    message: str
    audit_seq: int | None = Field(default=None, description="the audit record of this attempt")
    audit_hash: str | None = None


class AuditPage(_Record):
    """`GET /v1/audit`: the newest records, oldest first (newest last)."""

    records: list[dict[str, Any]]
    total: int = Field(description="records in the log")


#: What an instructor may inject, and its parameters (the palette of issue #5: restart nodes, kill a node,
#: disconnect a fraction, add capacity, change the client mix). Operator actions — drain, rollout,
#: admission — are the trainee's, through the guarded API, so they are not injections. Part of the
#: protocol: the console's palette lists them without reaching into the simulator.
INJECTIONS: dict[str, str] = {
    "restart_nodes": "restart nodes abruptly: nodes=ID[,ID…] or nodes=COUNT [first=INDEX]",
    "kill_nodes": "nodes go down and stay down: nodes=ID[,ID…] or nodes=COUNT [first=INDEX]",
    "disconnect_fraction": "reset a share of every node's connections at once: fraction in (0, 1]",
    "add_nodes": "add capacity: count=N nodes, ready after the scenario's nodes.provisioning_s",
    "set_policy": "change the client mix: policy=NAME [population=NAME] [any of the policy's parameters]",
}


class InjectionRequest(_Request):
    """`POST /v1/sim/inject` (admin): an instructor's event in a served drill (issue #5, section 2)."""

    event: str = Field(description="restart_nodes, kill_nodes, disconnect_fraction, add_nodes, set_policy")
    params: dict[str, Any] = Field(default_factory=dict, description="the event's parameters, e.g. fraction")


class InjectionResult(_Record):
    """200 answer of an injection: applied between two fleet seconds, audited before it was applied."""

    event: str
    params: dict[str, Any] = Field(description="as applied: node counts resolved to node ids")
    applied: bool
    time_s: float = Field(description="the fleet second it was applied after")
    message: str
    audit_seq: int | None = None
    audit_hash: str | None = None


class DrainPlanResult(_Record):
    """`GET /v1/nodes/{id}/drain-plan`: the largest safe drain now, to pre-fill a drain."""

    nodes: list[str]
    rate_per_s: float = Field(description="per node; 0 when no drain is safe now")
    duration_s: float | None = Field(description="until the fullest node is empty at that rate")
    deadline_s: float
    hint_ms: tuple[int, int]
    force_closed: int
    limited_by: str
    request: DrainRequest


class CapacityRecord(_Record):
    """`GET /v1/capacity`: what one node of the fleet can take, and the room to add more — the figures the
    guards judge with, so a console can pre-fill a drain or an add as the server will judge it."""

    handshakes_per_s: float = Field(description="new connections one node completes per second")
    cpu_pct_per_handshake_per_s: float = Field(description="CPU points a node spends per handshake/s")
    connections_per_node: int = Field(description="connections one node holds at 100 % (headroom's basis)")
    steady_inflow_per_s: float = Field(
        description="the fleet's new connections per second when calm; 0: unknown"
    )
    max_nodes: int = Field(description="the most nodes the fleet may hold; 0: it cannot add nodes")
    provisioning_s: float = Field(description="seconds from adding a node to its being ready; 0: unknown")
