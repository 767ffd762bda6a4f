"""The fleet API's typed records (see ../shared/DESIGN.md, "The fleet API, v1"): the fleet as it is read.

What a request body may hold is in `console.protocol.requests`, the write side's answers in
`console.protocol.answers`; `console.protocol` re-exports all three.

Field names are a contract: scripts, runbooks, the console and the gateway controller depend on them.
Add fields freely; never rename one. Units are in the names (`_s`, `_ms`, `_pct`, `_per_s`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

API_VERSION = "v1"

#: Wave bins are 100 ms wide: the resolution at which lockstep retries become visible (outage seed).
WAVE_BIN_MS = 100


class Record(BaseModel):
    # Unknown fields from a newer server are kept, not rejected: the contract only ever adds fields.
    model_config = ConfigDict(extra="allow", frozen=False)


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


class DrainProgress(Record):
    remaining: int = Field(description="connections still held by the draining node")
    rate_per_s: float = Field(description="requested close rate")
    hint_ms: tuple[int, int] = Field(description="reconnect hint window sent with each close")
    started_at_s: float
    deadline_at_s: float = Field(description="fleet time at which whatever remains is force-closed")
    eta_s: float | None = Field(default=None, description="seconds until empty at the requested rate")
    closed: int = Field(
        default=0, description="planned closes started so far, forced ones included (real nodes)"
    )
    forced: int = Field(default=0, description="of those, force-closed at the deadline (real nodes)")
    achieved_rate_per_s: float | None = Field(
        default=None,
        description="paced closes per second so far, first to last; forced ones left out (real nodes)",
    )


class DueBack(Record):
    """A node's drained clients still within their reconnect hint, by when each was told to come back: the
    count falling due in each `bin_ms` from `start_s` (the node's frame instant). A node knows each close's
    moment and the hint it drew for it; a client that heeds its hint is away until then, so the clients of
    the bins starting at or after an instant are away at it, and counted on no node."""

    start_s: float = Field(description="unix time (fleet time from a controller) the first bin starts at")
    bin_ms: int = WAVE_BIN_MS
    clients: list[int] = Field(description="clients due back in each bin; trailing empty bins left out")

    def away_at(self, at_s: float) -> int:
        """Clients due back no earlier than `at_s`: those of the bins starting at or after it (a bin it
        falls inside may hold clients due before it, back by then: left out, so none is counted twice)."""
        step_s = self.bin_ms / 1000.0
        first = max(0, math.ceil((at_s - self.start_s) / step_s - 1e-9))
        return sum(self.clients[first:])

    @property
    def end_s(self) -> float:
        return self.start_s + len(self.clients) * self.bin_ms / 1000.0


class NodeStatus(Record):
    id: str
    state: NodeState
    connections: int
    cpu_pct: float
    attempts_per_s: float
    accepts_per_s: float
    rejects_per_s: float = Field(
        description="503s answered by admission control or the connection ceiling — not those of a node out "
        "of rotation, to which a load balancer sends no upgrades: a client that reaches one anyway goes on "
        "to another node at once"
    )
    timeouts_per_s: float = Field(description="handshakes the client gave up on while queued")
    handshake_p99_ms: float
    drops_per_s: float = Field(default=0.0, description="established connections lost (missed heartbeats)")
    closes_per_s: float = Field(default=0.0, description="planned closes: drain, lifetime, restart")
    capacity_connections: int = Field(default=0, description="planning target: connections at 100 % headroom")
    drain: DrainProgress | None = None
    # Optional, added to v1 without a version change (an older node or recording leaves it out). Left out
    # while null, as nearly always: "history_unreachable":null on every node made each frame ~11 % larger
    # (a size-bounded recording kept fewer frames; a simulated fleet never sets it).
    history_unreachable: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="why the node's history (its Redis, `--history`) does not answer, while it does not: "
        "arriving clients are closed 1013 and the live feed waits; null while it answers, for an in-process "
        "history, and always for a simulated node",
    )
    # Optional, added to v1 without a version change (an older node leaves it out; the controller then
    # models its drain's clients from `drain.closed`). Left out while null: a node with nothing due back.
    due_back: DueBack | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="the clients this node closed at a drain's pace, each with the reconnect hint it drew, "
        "whose hint has not yet run out (`DueBack`): reported by a real node while it drains or any is due; "
        "null otherwise and always for a simulated node",
    )


class Totals(Record):
    connections: int
    attempts_per_s: float
    accepts_per_s: float
    rejects_per_s: float
    headroom_pct: float = Field(
        description="spare connection capacity of the nodes in rotation against every connection held, as a "
        "share: below 0 over capacity, 0 with no node in rotation"
    )
    drain_inflow_ratio: float | None = Field(
        description="reconnect backlog drain rate ÷ inflow rate over 10 s; null when fewer than 60 clients "
        "flowed in over them (too few to judge)"
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
    # Optional, added to v1 without a version change (an older server or recording leaves it null: the
    # connections_drop alarm then judges the connections alone, as before).
    within_hint_clients: int | None = Field(
        default=None,
        description="clients a drain closed at its pace with a reconnect hint whose hint has not yet run out "
        "(expected: each told to come back at a uniform point of `hint_ms`): away by design, so the "
        "connections_drop alarm counts them as held. A deadline's forced closes are left out. 0 with no "
        "drain; null from a source that does not say",
    )
    # Optional, added to v1 without a version change (an older server or recording leaves it null: the
    # reconnect_rate_high alarm then judges every attempt, as before).
    hinted_returns_per_s: float | None = Field(
        default=None,
        description="clients a drain closed at its pace whose reconnect hint ran out in this second "
        "(expected, as `within_hint_clients`): back by design, each when the fleet told it, so the "
        "reconnect_rate_high alarm leaves them out of the attempts it judges — a paced drain with hints is "
        "no storm. A deadline's forced closes are left out. 0 with no drain; null from a source that does "
        "not say",
    )
    # Running counts (optional; added to v1 without a version change: a reader ignores what it does not
    # know, an older server or recording leaves them null). `<name>_total` counts what `<name>_per_s`
    # measures, every fleet second since the fleet started — the seconds a sped-up frame folds together
    # too, which its per-second rates (the last second's) do not show. They restart with the fleet, i.e.
    # with a new `epoch`: only differences within one epoch mean anything.
    attempts_total: int | None = Field(
        default=None, description="connection attempts since the fleet started"
    )
    accepts_total: int | None = Field(
        default=None, description="completed handshakes since the fleet started"
    )
    rejects_total: int | None = Field(
        default=None,
        description="upgrades answered 503 by admission control or the connection ceiling (`rejects_per_s`) "
        "since the fleet started",
    )
    timeouts_total: int | None = Field(
        default=None, description="handshakes the client gave up on since the fleet started"
    )
    drops_total: int | None = Field(default=None, description="connections lost since the fleet started")
    disconnects_total: int | None = Field(default=None, description="disconnects since the fleet started")
    resumes_total: int | None = Field(default=None, description="session resumes since the fleet started")
    full_resyncs_total: int | None = Field(default=None, description="full resyncs since the fleet started")
    resync_failures_total: int | None = Field(
        default=None, description="failed full resyncs since the fleet started"
    )
    abnormal_closes_total: int | None = Field(
        default=None, description="closes without a close frame (1006) since the fleet started"
    )


#: Each running count of `Totals` and the per-second rate it adds up, second by second.
TOTAL_COUNTERS: dict[str, str] = {
    "attempts_total": "attempts_per_s",
    "accepts_total": "accepts_per_s",
    "rejects_total": "rejects_per_s",
    "timeouts_total": "timeouts_per_s",
    "drops_total": "drops_per_s",
    "disconnects_total": "disconnects_per_s",
    "resumes_total": "resumes_per_s",
    "full_resyncs_total": "full_resyncs_per_s",
    "resync_failures_total": "resync_failures_per_s",
    "abnormal_closes_total": "abnormal_closes_per_s",
}


class Waves(Record):
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


class RolloutWait(Record):
    """What a running rollout waits for right now, and for how long: what lets the operator tell a wait
    from a hang while the state says only `running`."""

    # A string, not an enum: a newer server's kind of wait reads as its name in an older console.
    what: str = Field(
        description="`drain` (the batch's nodes to drain), `restart` (the batch's restarted nodes to come "
        "back in rotation), `interval` (the pause before the next batch); the set may grow"
    )
    nodes: list[str] = Field(default_factory=list, description="the nodes waited for; empty for `interval`")
    waited_s: float = Field(description="seconds waited so far")
    limit_s: float | None = Field(
        default=None,
        description="`drain`, `restart`: the seconds after which the rollout halts; `interval`: the seconds "
        "the pause lasts (the next batch starts after limit_s − waited_s more); null when the wait has no "
        "limit",
    )


class UnavailableReason(StrEnum):
    """Why a fleet cannot start a rollout, as `RolloutStatus.unavailable_reason` names it: the values a
    server of this version sends. The field itself is a string, an open set: a newer server's reason reads
    as its name in an older console (as `RolloutWait.what`), where an enum would refuse the whole frame."""

    #: A node has no restart command: `fleet up`'s nodes, or a nodes file's without `restart = "…{node}…"`.
    NO_RESTART_COMMAND = "no_restart_command"


class RolloutStatus(Record):
    state: RolloutState = RolloutState.IDLE
    mode: RolloutMode | None = None
    batch_size: int | None = None
    interval_s: float | None = None
    pause_cpu_pct: float | None = None
    batch: int = Field(default=0, description="batches started so far (k of n)")
    batches: int = Field(default=0, description="batches in the rollout (n)")
    pause_reason: str | None = None
    started_at_s: float | None = Field(
        default=None,
        description="fleet time the rollout's first batch started; null before it (a rollout scheduled for "
        "later, or paused on a hot survivor at once) and for one that never started",
    )
    completed_at_s: float | None = None
    paused_at_s: float | None = Field(
        default=None,
        description="fleet time the rollout paused itself (the seconds after it run paused), while it is "
        "paused; null otherwise, or from a source that does not say (a sped-up frame's alarms then date "
        "the pause to the frame's last second)",
    )
    # Optional, added to v1 without a version change (an older server or recording leaves it null).
    halted_at_s: float | None = Field(
        default=None,
        description="fleet time the rollout was halted (by the operator, or by itself: a node of its batch "
        "put back in rotation, a restart that failed), while it is halted; null otherwise, or from a "
        "source that does not say",
    )
    unavailable: str | None = Field(
        default=None,
        description="why this fleet cannot start a rollout whatever the guards say (its nodes have no restart "
        "command: `fleet up`), in the words a start would be refused with; null when it can, or from an "
        "older server",
    )
    # Optional, added to v1 without a version change (as are `waiting_for` and `Frame.max_nodes`): an older
    # server leaves it null and says why in `unavailable` only, which a console shows, not parses.
    unavailable_reason: str | None = Field(
        default=None,
        description="why this fleet cannot start a rollout, typed, beside `unavailable`'s words: "
        "`no_restart_command` (a node has no restart command: `fleet up`'s, or a nodes file's without "
        "`restart =`); the set may grow — a console names a reason it does not know as it is. Null when it "
        "can roll out, or from a server that does not say",
    )
    # Optional, added to v1 without a version change.
    waiting_for: RolloutWait | None = Field(
        default=None,
        description="what the running rollout waits for right now; null when it waits for nothing (or is "
        "not running), or from a server that does not say",
    )

    # Optional, added to v1 without a version change. A new value of `state` would have been refused, the
    # whole frame with it, by every console and replay older than it (`state` is a closed enum there): a
    # rollout not yet started says `running` at batch 0, as it always did, and this says it is scheduled.
    starts_at_s: float | None = Field(
        default=None,
        description="fleet time a scheduled rollout starts at (a scenario's `[rollout] start_at_s`), while "
        "that start is still ahead: `state` then says `running` at batch 0 — read it as scheduled, not "
        "begun — or `halted` (halted before its start: it does not start until resumed). Null once it has "
        "started, for a rollout started at once (every operator's, every controller's), and from an older "
        "server",
    )
    # Optional, added to v1 without a version change: the request's field (`RolloutRequest`), said back so
    # the console shows what each batch node drains at; an older server leaves it null.
    drain_rate_per_s: float | None = Field(
        default=None,
        description="closes per second per node each drain-mode batch node drains at, as the rollout asked "
        "(its request's `drain_rate_per_s`); null where it asked for none (the backend's rate), and from an "
        "older server",
    )
    # Optional, added to v1 without a version change. A halted rollout says no `waiting_for`, so nothing
    # said when its resume would start the next batch (a reviewer's resume went on at once, 47 s early).
    next_batch_at_s: float | None = Field(
        default=None,
        description="fleet time the next batch is due: the latest batch's start + `interval_s` (batch "
        "start to batch start). Said once that batch is done and another is left — while the rollout "
        "waits out the interval, and while it is paused or halted there: a resume keeps what is left of "
        "the interval, and starts the next batch at once only past this time. Null during a batch (a "
        "resume goes on with it at once), before the first, after the last, where the backend does not "
        "know, and from an older server",
    )

    @property
    def scheduled(self) -> bool:
        """Whether this is a rollout waiting for its scheduled start, running (not halted) and not begun."""
        return self.starts_at_s is not None and self.state is RolloutState.RUNNING and self.batch == 0

    def state_said(self) -> str:
        """The state in the operator's words: "scheduled" for a running rollout that has not begun, else
        the state's name."""
        return "scheduled" if self.scheduled else self.state.value

    def schedule_said(self, clock: Callable[[float], str]) -> str:
        """When a scheduled rollout starts and what it will do, with `clock` writing the fleet time:
        "starts at 0:00:30, 16 batches of 30"; "" when it is not scheduled."""
        if not self.scheduled or self.starts_at_s is None:
            return ""
        plan = f", {self.batches} batches" + (f" of {self.batch_size}" if self.batch_size else "")
        return f"starts at {clock(self.starts_at_s)}{plan}"

    def position(self) -> str:
        """Where the rollout stands among its batches, in words: "batch 2 of 3" during a batch and after it,
        "before batch 1 of 3" before its first — "rollout paused batch 0 of 3" read as a batch numbered 0
        (found in review) — and while it pauses, which it does only before a batch (`batch` counts the
        batches started; the controller's state file says "paused before batch 3 of 3" alike)."""
        if self.batch == 0 or (self.state is RolloutState.PAUSED and self.batch < self.batches):
            return f"before batch {self.batch + 1} of {self.batches}"
        return f"batch {self.batch} of {self.batches}"


class AdmissionSettings(Record):
    rate_per_s: float | None = Field(description="token bucket refill per node; null when unlimited")
    burst: int | None = None
    max_connections: int | None = Field(description="connection ceiling per node; null when unlimited")
    retry_after_s: tuple[float, float] = Field(description="window the randomized Retry-After is drawn from")
    nodes: list[str] | None = Field(default=None, description="nodes it applies to; null means every node")

    @classmethod
    def unlimited(cls) -> AdmissionSettings:
        """No admission control: what a fleet that has said nothing about it runs."""
        return cls(rate_per_s=None, max_connections=None, retry_after_s=(1.0, 30.0))

    def limits_key(self) -> tuple[float | None, int | None, int | None, tuple[float, float]]:
        """What a node runs under these settings, whichever nodes they name: two settings with the same
        limits are the same admission (`nodes` and any field a newer server adds left out)."""
        low, high = self.retry_after_s
        return (self.rate_per_s, self.burst, self.max_connections, (float(low), float(high)))

    def bare(self) -> AdmissionSettings:
        """These settings as one node runs them: naming no nodes."""
        return self if self.nodes is None else self.model_copy(update={"nodes": None})


#: `Frame.admission_overrides` and `FleetSnapshot.admission_overrides` (optional, added to v1 without a
#: version change).
ADMISSION_OVERRIDES_SAID = (
    "per-node admission: the settings some nodes run instead of `admission`, each naming its `nodes` (a node "
    "is named in one at most; a node named in none runs `admission`). Made by `PUT /v1/admission` with "
    "`nodes` whose settings differ from the fleet's, ended by one without `nodes`. Left out while every node "
    "runs `admission` — and by an older server, whose per-node changes showed nowhere"
)


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


class Alarm(Record):
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
    # Optional, added to v1 without a version change (an older reader ignores it).
    clearing_since_s: float | None = Field(
        default=None,
        description="while active: the first fleet second its condition no longer held — the alarm clears "
        "once it has not held for clear_after_s; value and message are still the last reading that held. "
        "Null while the condition holds",
    )
    worst_value: float | None = Field(
        default=None,
        description="the reading furthest past the limit while the alarm held (the highest of a rule held "
        "over its limit, the lowest of one held under it): what a cleared alarm reports, where `value` is "
        "its last reading. Null where the alarm has no value",
    )
    worst_s: float | None = Field(default=None, description="fleet time of `worst_value`")
    worst_message: str | None = Field(default=None, description="what the alarm said at `worst_s`")


class HotSpells(Record):
    """Which serving nodes were over a CPU line in the earlier seconds a sped-up frame folds: what a
    held-for-N-seconds node criterion (the abort criterion: any surviving node above 80 % for 30 s, the same
    node throughout) needs of each second, where the frame's `nodes` show its last second only."""

    cpu_pct: float = Field(
        description="the CPU line: a node counts while serving (ready, draining) and above it"
    )
    nodes: dict[str, list[tuple[float, float]]] = Field(
        description="node id → its spells over the line among the frame's earlier seconds: [first, last] fleet "
        "seconds, inclusive; a node never over it is left out"
    )

    @classmethod
    def of_seconds(cls, cpu_pct: float, seconds: Iterable[tuple[float, Iterable[str]]]) -> HotSpells:
        """From each second's time and nodes over the line, oldest first, one second apart."""
        nodes: dict[str, list[tuple[float, float]]] = {}
        for time_s, over in seconds:
            for node_id in over:
                runs = nodes.setdefault(node_id, [])
                if runs and runs[-1][1] == time_s - 1:
                    runs[-1] = (runs[-1][0], time_s)
                else:
                    runs.append((time_s, time_s))
        return cls(cpu_pct=cpu_pct, nodes=nodes)


#: A drain under way in a fleet second: its node, its `started_at_s`, its requested `rate_per_s`.
UnderWay = tuple[str, float, float]


class FoldedDrain(Record):
    """A drain under way in the earlier seconds a sped-up frame folds that is no longer under way at its
    last second: it ended inside the frame (its node emptied, or force-closed at its deadline, or the
    drain was cut short), however briefly it ran — the frame's nodes, its last second's, show none of it,
    and a drain that also started inside the frame was seen by no frame at all."""

    node: str
    started_at_s: float = Field(
        description="its drain status's `started_at_s`: it closes from the second after"
    )
    rate_per_s: float = Field(description="its requested close rate")
    last_s: float = Field(description="the last fleet second its node was draining")

    @classmethod
    def ended(
        cls,
        seconds: Iterable[tuple[float, Iterable[UnderWay]]],
        under_way_at_end: Iterable[UnderWay],
    ) -> list[FoldedDrain]:
        """The drains of a frame's earlier seconds — each second's time and its drains under way, as
        (node, started_at_s, rate_per_s) — that are not among those under way at its last second, each with
        the last second it was under way; a drain is its node and its start."""
        last_s: dict[tuple[str, float], tuple[float, float]] = {}
        for time_s, drains in seconds:
            for node, started_at_s, rate_per_s in drains:
                seen = last_s.get((node, started_at_s))
                if seen is None or seen[1] < time_s:
                    last_s[(node, started_at_s)] = (rate_per_s, time_s)
        ongoing = {(node, started_at_s) for node, started_at_s, _ in under_way_at_end}
        return [
            cls(node=node, started_at_s=started_at_s, rate_per_s=rate_per_s, last_s=time_s)
            for (node, started_at_s), (rate_per_s, time_s) in last_s.items()
            if (node, started_at_s) not in ongoing
        ]


#: `Frame.max_nodes` and `FleetSnapshot.max_nodes` (optional, added to v1 without a version change).
MAX_NODES_SAID = (
    "the most nodes this fleet may hold, those it has included, as `GET /v1/capacity` says it: add capacity "
    "(`POST /v1/capacity`) while its nodes are fewer; 0 when it cannot add nodes at all (a controller over "
    "a nodes file: it starts no node processes). In every frame, so the alarms — which read frames only — "
    "name the way on this fleet has. Null from a source that does not say (an older server, a recording "
    "of one)"
)


class Frame(Record):
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
    # Left out while empty, as nearly always: a frame stays the size it was (13 M clients on 480 nodes).
    admission_overrides: list[AdmissionSettings] | None = Field(
        default=None, exclude_if=lambda value: not value, description=ADMISSION_OVERRIDES_SAID
    )
    span_s: float = Field(
        default=1.0,
        description="fleet seconds this frame covers: above 1 at speed > 1 (waves.attempts then holds the "
        "bins of all of them; the per-second rates are the last second's), 0 while the clock is paused",
    )
    # Optional, added to v1 without a version change (a reader ignores what it does not know; an older
    # server or recording leaves it null and the alarms judge the frame as its last second, as before).
    folded_totals: list[Totals] | None = Field(
        default=None,
        description="at speed > 1: the totals of each earlier fleet second the frame folds in, oldest first "
        "— span_s − 1 of them, the frame's own (last) second being `totals` — so a rule that needs a "
        "figure held for N seconds judges every second; null when the frame covers one second",
    )
    folded_hot: list[HotSpells] | None = Field(
        default=None,
        description="at speed > 1: for each CPU line the server watches (its abort line; a served drill's "
        "abort criteria), the serving nodes over it in each earlier fleet second the frame folds, as spells; "
        "null when the frame covers one second or its source does not say",
    )
    folded_drains: list[FoldedDrain] | None = Field(
        default=None,
        description="at speed > 1: the drains under way (their node draining) in the earlier fleet seconds "
        "the frame folds that are not under way at its last second, each with the last second its node was "
        "draining — so a drain that starts and ends between two frames is judged too; [] when none; null "
        "when the frame covers one second or its source does not say",
    )
    published_unix_s: float | None = Field(
        default=None,
        description="the server's wall clock when it published this frame (Unix seconds); "
        "staleness = now − this",
    )
    clock_paused: bool | None = Field(
        default=None,
        description="the fleet clock is paused (`POST /v1/sim/clock`): frames keep coming, the fleet's time "
        "stands. (`span_s` 0 alone does not say it: a frame that runs no fleet second at a speed below 1 "
        "has it too.) Null where the fleet has no clock to pause (real gateways) and from an older server",
    )
    max_nodes: int | None = Field(default=None, description=MAX_NODES_SAID)

    def totals_by_second(self) -> list[Totals] | None:
        """The totals of each fleet second the frame stands for, oldest first, its own (`totals`) last;
        none for a paused frame (span 0). None when it does not say: a frame of several seconds without
        `folded_totals` (an older server or recording), whose earlier seconds are known by their bins only."""
        if self.span_s == 0:
            return []
        earlier = self.folded_totals or []
        if len(earlier) + 1 != self.span_s:
            return None
        return [*earlier, self.totals]

    def seconds(self) -> list[tuple[float, Totals]] | None:
        """`totals_by_second`, each with its fleet second's time (the frame's `time_s` is its last): the one
        place that puts folded seconds on the fleet clock."""
        by_second = self.totals_by_second()
        if by_second is None:
            return None
        last = len(by_second) - 1
        return [(self.time_s - (last - i), totals) for i, totals in enumerate(by_second)]

    def drains_under_way(self) -> list[UnderWay] | None:
        """The drains under way in the frame's own (last) second: its draining nodes' (node, started_at_s,
        rate_per_s). None when it does not say: a draining node without its drain status, or a frame sent
        without its nodes."""
        if not self.nodes:
            return None
        drains = []
        for node in self.nodes:
            if node.state is NodeState.DRAINING:
                if node.drain is None:
                    return None
                drains.append((node.id, node.drain.started_at_s, node.drain.rate_per_s))
        return drains

    def nodes_over(self, cpu_pct: float) -> list[str]:
        """The serving nodes (ready, draining) over `cpu_pct` in the frame's own (last) second, in its order:
        what the abort criterion reads (outage seed: "CPU > 80 % for 30 s on a surviving node"; a restarting
        node's CPU is not a signal)."""
        serving = (NodeState.READY, NodeState.DRAINING)
        return [node.id for node in self.nodes if node.state in serving and node.cpu_pct > cpu_pct]

    def hot_by_second(self, cpu_pct: float) -> list[set[str]] | None:
        """For each earlier fleet second the frame folds (those of `folded_totals`, oldest first), the
        serving nodes over `cpu_pct`; its own last second is its `nodes`. None when it does not say: no
        spells for that line (an older server, or a line the server does not watch), or its seconds
        unknown."""
        by_second = self.seconds()
        if by_second is None:
            return None
        earlier = len(by_second) - 1
        if earlier <= 0:
            return []
        spells = next((hot for hot in self.folded_hot or () if hot.cpu_pct == cpu_pct), None)
        if spells is None:
            return None
        first_s = by_second[0][0]
        seconds: list[set[str]] = [set() for _ in range(earlier)]
        for node_id, runs in spells.nodes.items():
            for start_s, end_s in runs:
                for i in range(max(round(start_s - first_s), 0), min(round(end_s - first_s) + 1, earlier)):
                    seconds[i].add(node_id)
        return seconds


class Event(Record):
    type: Literal["event"] = "event"
    api_version: str = API_VERSION
    seq: int | None = None
    epoch: str | None = None
    time_s: float
    kind: str = Field(description="node_state, rollout, alarm, action, injection, ...")
    node: str | None = Field(
        default=None,
        description="the node it is about; null for the fleet, or for a group of nodes listed in data.nodes",
    )
    message: str
    data: dict[str, Any] = Field(default_factory=dict)

    def node_ids(self) -> tuple[str, ...]:
        """The nodes the event is about: its `node`, or the group a fleet-level event lists in
        `data.nodes` (a rollout batch; one node-state change on many nodes, sent as one event)."""
        if self.node is not None:
            return (self.node,)
        listed = self.data.get("nodes")
        return tuple(str(node) for node in listed) if isinstance(listed, list) else ()

    def names(self, node_id: str) -> bool:
        return node_id in self.node_ids()


class ServedObjective(Record):
    name: str
    points: float


class ServedDrill(Record):
    """The drill a served drill's stream belongs to (`stormdeck drill NAME --serve`), as its `hello` says it:
    what a console attached to it needs to speak the drill's clock, as the drill's lines and hints do, and
    to show a trainee its briefing."""

    name: str
    title: str
    clock_start_s: int = Field(
        description="the drill clock at fleet second 0, in seconds after midnight: fleet second t reads "
        "(clock_start_s + t) mod 86 400 as HH:MM:SS (the drill file's clock_start)"
    )
    duration_s: float = Field(description="fleet seconds the drill runs; the simulation runs on after it")
    seed_source: str = Field(default="", description="the seed's incident the drill rehearses")
    teaches: str = ""
    briefing: str = Field(default="", description="the drill file's briefing, as written")
    objectives: list[ServedObjective] = Field(
        default_factory=list, description="what the drill measures, each with its points (scored elsewhere)"
    )
    ended: Event | None = Field(
        default=None,
        description="the drill's end event (`data.ended`) as the stream sent it, once its time is up: a "
        "console attaching after the end tells that, not the briefing of a drill about to start; null "
        "while it runs and from an older server",
    )

    @property
    def max_points(self) -> float:
        return sum(objective.points for objective in self.objectives)


class Hello(Record):
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
    role: str | None = Field(
        default=None,
        description="the role of the token the stream was opened with (viewer, operator, admin): a viewer's "
        "console offers no actions from the start; null from an older server",
    )
    # Optional, added to v1 without a version change: a console recorded its own actions as `console`,
    # where the audit log and the stream's `action` events name the token's holder (review).
    actor: str | None = Field(
        default=None,
        description="the name of the token the stream was opened with (its holder), as the audit log and "
        "the stream's `action` events name who acted: a console records its own actions under it; null "
        "from an older server",
    )
    drill: ServedDrill | None = Field(
        default=None,
        description="the served drill this fleet runs (`drill NAME --serve`); null on any other fleet and "
        "from an older server",
    )
    # Optional, added to v1 without a version change: a recording of the stream (`stormdeck record URL`)
    # knows nothing else of the fleet, and its report read "scenario —".
    scenario: str | None = Field(
        default=None,
        description="the scenario a simulated fleet runs (its `name`: `sim serve SCENARIO`, a served "
        "drill's); null on a real fleet (a controller) and from an older server",
    )
    # Optional, added to v1 without a version change: the scenario alone does not say how to run the fleet
    # again (`sim serve X --seed 7`), and a recording knows only what the hello says.
    seed: int | None = Field(
        default=None,
        description="the seed of a simulated fleet's run (`sim serve --seed N`, a served drill's, else the "
        "scenario's own): with `scenario`, how to run it again; null on a real fleet (a controller) and "
        "from an older server",
    )
    # Optional, added to v1 without a version change: `sim serve X --seed 7 --set nodes.count=8` read as
    # "X (seed 7)" in a recording's report — 480 nodes, where the fleet had 8.
    overrides: list[str] | None = Field(
        default=None,
        description="the `--set key=value` overrides the simulated fleet's scenario runs with, in the order "
        "given (`sim serve`, a served drill's beyond the drill's own); with `scenario` and `seed`, how to "
        "run it again; [] when none; null on a real fleet (a controller) and from an older server",
    )


class FleetSnapshot(Record):
    api_version: str = API_VERSION
    fleet: str
    source: Source
    time_s: float
    nodes: list[NodeStatus]
    totals: Totals
    rollout: RolloutStatus
    admission: AdmissionSettings
    admission_overrides: list[AdmissionSettings] | None = Field(
        default=None, exclude_if=lambda value: not value, description=ADMISSION_OVERRIDES_SAID
    )
    alarms: list[Alarm] = Field(default_factory=list)
    seq: int | None = Field(default=None, description="seq of the newest frame this snapshot matches")
    epoch: str | None = None
    max_nodes: int | None = Field(default=None, description=MAX_NODES_SAID)

    @classmethod
    def of_frame(
        cls, frame: Frame, fleet: str, source: Source, admission: AdmissionSettings | None = None
    ) -> FleetSnapshot:
        """The snapshot showing the same moment as `frame`, sharing its node list — records already
        validated, not built again. `admission` when the frame's is not the one to show; the per-node
        overrides are the frame's."""
        # Every field given: a default_factory left to model_construct makes pydantic inspect the factory's
        # signature, and for `list` CPython 3.11 parses it with `ast.parse` — each snapshot, in the
        # server's thread, racing Python 3.11's shared AST state (a SystemError in a concurrent parse).
        return cls.model_construct(
            api_version=API_VERSION,
            alarms=[],
            fleet=fleet,
            source=source,
            time_s=frame.time_s,
            nodes=frame.nodes,
            totals=frame.totals,
            rollout=frame.rollout or RolloutStatus(),
            admission=admission or frame.admission or AdmissionSettings.unlimited(),
            admission_overrides=frame.admission_overrides,
            seq=frame.seq,
            epoch=frame.epoch,
            max_nodes=frame.max_nodes,
        )


class NodeSample(NodeStatus):
    """One node's status in one frame: a point of its recent history."""

    seq: int
    time_s: float


class NodeDetail(Record):
    """`GET /v1/nodes/{id}`: the node now, its recent history (oldest first) and its recent events."""

    api_version: str = API_VERSION
    fleet: str
    time_s: float
    node: NodeStatus
    # Optional, added to v1 without a version change.
    admission: AdmissionSettings | None = Field(
        default=None,
        description="the admission this node runs: its per-node override (`admission_overrides`), else the "
        "fleet's; `nodes` null. Null from an older server",
    )
    history: list[NodeSample] = Field(default_factory=list)
    events: list[Event] = Field(default_factory=list)


class ClockState(Record):
    paused: bool
    speed: float = Field(description="fleet seconds per wall second, as requested")
    time_s: float = Field(description="the fleet clock")
    effective_speed: float | None = Field(
        default=None, description="fleet seconds per wall second actually achieved over the last frames"
    )
