"""The write side's answers: verdicts, results of actions and injections, problems, plans and capacity.

What a request body may hold is in `console.protocol.requests`; the fleet's records in
`console.protocol.models`. Field names are a contract: add fields freely; never rename one.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from console.protocol.models import API_VERSION, Record
from console.protocol.requests import DrainRequest


class VerdictLevel(StrEnum):
    OK = "ok"
    CONFIRM = "confirm"
    TYPED = "typed"
    BLOCKED = "blocked"


class Check(Record):
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


class Verdict(Record):
    level: VerdictLevel
    action: str
    checks: list[Check] = Field(default_factory=list)
    projections: dict[str, Any] = Field(default_factory=dict)
    forecast: dict[str, Any] | None = None
    confirm_token: str | None = None
    typed_expected: str | None = None


#: Our problem types are this and a kind (`…:invalid`, `…:blocked`, `…:confirmation-required`, …): the
#: server names them, the console's client reads the kind back.
PROBLEM_TYPE_PREFIX = "urn:stormdeck:problem:"


class Problem(Record):
    """RFC 9457 problem details; `detail` names the field, the value and the allowed range."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    field: str | None = None
    instance: str | None = None


class ActionResult(Record):
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


class AuditPage(Record):
    """`GET /v1/audit`: the newest records, oldest first (newest last)."""

    records: list[dict[str, Any]]
    total: int = Field(description="records in the log")


class InjectionResult(Record):
    """200 answer of an injection: applied between two fleet seconds, audited before it was applied."""

    event: str
    params: dict[str, Any] = Field(description="as applied: node counts resolved to node ids")
    applied: bool
    time_s: float = Field(description="the fleet second it was applied after")
    message: str
    audit_seq: int | None = None
    audit_hash: str | None = None


class DrainPlanResult(Record):
    """`GET /v1/nodes/{id}/drain-plan`: the largest safe drain now, to pre-fill a drain."""

    nodes: list[str]
    rate_per_s: float = Field(description="per node; 0 when no drain is safe now")
    duration_s: float | None = Field(description="until the fullest node is empty at that rate")
    deadline_s: float
    hint_ms: tuple[int, int]
    force_closed: int
    limited_by: str = Field(
        description="what set the rate: `drain_pacing` (the survivors' spare admission), `survivor_cpu` (the "
        "busiest survivor's CPU), `hint_reach` (the fleet's longest reconnect hint), `no_survivors` (no node "
        "would be left in rotation: rate 0, the drain is blocked on nodes_in_rotation_after), `offline_at_once` "
        "(the drained clients offline at once kept within connections_drop_pct of the fleet's, or as few as "
        "empty the fullest node by the deadline), `reconnect_rate` (the drained clients' reconnects kept under "
        "the reconnect_rate_high alarm's line). An open set: "
        "a newer server may add a value, which a console names as it is"
    )
    connections: int = Field(description="connections the drain moves to the other nodes")
    cpu_margin_pct: float = Field(
        0.0,
        description="CPU points the busiest survivor is planned under the pause line (readings move "
        "between the plan and the verdict); 0 from a server that keeps none",
    )
    # Optional, added to v1 without a version change.
    admission_margin_pct: float = Field(
        0.0,
        description="share of the survivors' spare admission, in %, the plan leaves free (their other "
        "accepts move between the plan and the drain); 0 from a server that keeps none",
    )
    # Optional, added to v1 without a version change (null from an older server): a console advises adding
    # capacity, when no rate is safe, only where there is room.
    room_nodes: int | None = Field(
        None,
        description="nodes the fleet may still add (its max_nodes less the nodes it has); 0 when it cannot "
        "add capacity (it adds no nodes, or is at its most); null when the server does not say",
    )
    # Optional, added to v1 without a version change (null from an older server, as where no limit applies).
    admission_limit_per_s: float | None = Field(
        None,
        description="the admission rate_per_s a node, under the nodes' handshake ceiling, that sets the "
        "survivors' spare admission (what limits a `drain_pacing` plan); null where only the ceilings do",
    )
    request: DrainRequest


class CapacityRecord(Record):
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
    batch_drain_rate_per_s: float = Field(
        default=0.0,
        description="closes per second a rollout's drain-mode batch applies to each node; 0: unknown",
    )
    batch_drain_deadline_s: float = Field(
        default=0.0, description="seconds a batch node drains before what is left is force-closed; 0: unknown"
    )
    restart_s: float = Field(
        default=0.0, description="seconds from a node's restart to its being back; 0: unknown"
    )
    hint_max_ms: int = Field(
        default=0, description="the longest reconnect hint a drain may give here; 0: the API's own bound"
    )
    # Optional, added to v1 without a version change (false from an older server).
    handshakes_planned: bool = Field(
        default=False,
        description="handshakes_per_s (and so the CPU per handshake) is a planning figure, not a measurement: "
        "CPU projections from it are estimates (a controller whose nodes file has no [capacity] "
        "handshakes_per_s)",
    )
    # Optional, added to v1 without a version change (0 from an older server or a real fleet's controller).
    cpu_pct_per_connection: float = Field(
        default=0.0, description="CPU points a node spends holding one connection; 0: unknown"
    )
    cpu_pct_per_reject_per_s: float = Field(
        default=0.0, description="CPU points a node spends per refusal (503) per second; 0: unknown"
    )


class ThresholdValue(Record):
    """One threshold as a server holds it."""

    value: int | float
    source: str = Field(
        description='who set it: "default", the path of a config file, "env STORMDECK_<FIELD>", or "given" '
        "(handed to the server in code)"
    )


class ThresholdsRecord(Record):
    """`GET /v1/thresholds`: the lines the server's guards judge every action with, by name (the names of
    docs/guards.md), so a console pre-fills its forms as the server will judge them. A newer server may
    name a threshold an older console does not know: it is kept, not refused."""

    api_version: str = API_VERSION
    thresholds: dict[str, ThresholdValue]
