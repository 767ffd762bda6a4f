"""Scenarios: typed, frozen records of a validated scenario, and the timeline actions it may hold.

A scenario is a TOML file (package data in `scenarios/`). Its defaults and allowed values are in
`console.sim.scenario_schema`, the `--set key=value` overrides in `console.sim.scenario_overrides`, and
loading and validation into these records in `console.sim.scenario_loader`.
The schema is documented in docs/scenarios.md; keep the two together.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from console.policies import Policy

#: Node ids are "gw-" and the node's index zero-padded to one width for the whole fleet, at least 3 digits:
#: ids of one width sort by number wherever they are sorted as text (the node table, alarm lists), and none
#: is the start of another, as gw-100 was of gw-1000 in a fleet of 1200 — one keystroke apart in a typed
#: confirmation, and neighbours in a list sorted by name.
NODE_ID_MIN_DIGITS = 3
#: Node slots the simulator keeps beyond the fleet as scheduled, at least: room to add nodes at run time.
SPARE_NODES = 64


def node_id(index: int, digits: int) -> str:
    return f"gw-{index:0{digits}d}"


def node_ids(count: int, digits: int) -> tuple[str, ...]:
    """The ids of the first `count` nodes of a fleet whose ids have `digits` digits."""
    return tuple(node_id(i, digits) for i in range(count))


def node_slots(count: int, autoscale_max: int, events: Iterable[TimelineEvent]) -> int:
    """The node slots a simulation preallocates for a fleet of `count` nodes: the fleet as its scenario may
    grow it (the autoscaler's ceiling, the scheduled `add_nodes`; a count that is no integer adds none here,
    the timeline's check refuses it), and room for an operator or instructor to add as many nodes again as
    the fleet has (the outage seed added 200 to 480), at least `SPARE_NODES` — but not past 1000 slots
    while that still leaves `SPARE_NODES` of room, so such a fleet keeps 3-digit ids."""
    added = sum(
        e.params["count"]
        for e in events
        if e.action == "add_nodes"
        and isinstance(e.params.get("count"), int)
        and not isinstance(e.params["count"], bool)
    )
    scheduled = max(count, autoscale_max) + added
    slots = scheduled + max(SPARE_NODES, count)
    three_digit_slots = 10**NODE_ID_MIN_DIGITS
    if scheduled + SPARE_NODES <= three_digit_slots:
        slots = min(slots, three_digit_slots)
    return slots


def node_id_digits(slots: int) -> int:
    """The digits of every node id of a fleet with `slots` node slots (ids 0 … slots − 1)."""
    return max(NODE_ID_MIN_DIGITS, len(str(slots - 1)))


@dataclass(frozen=True)
class Population:
    name: str
    share: float
    policy: Policy
    honours_hints: bool
    connect_timeout_s: float
    stable_period_s: float


@dataclass(frozen=True)
class Clients:
    count: int
    populations: tuple[Population, ...]
    churn_per_min: float
    resume_window_s: float
    max_lifetime_s: float
    lifetime_dither_s: float
    close_grace_s: float


@dataclass(frozen=True)
class Nodes:
    count: int
    capacity_connections: int
    hold_cpu_pct_at_capacity: float
    handshakes_per_s: float
    handshake_base_ms: float
    reject_cost: float
    timeout_cost: float
    accept_backlog: int
    overload_after_s: float
    overload_drop_per_s: float
    restart_s: float
    provisioning_s: float
    initial_fill: float


@dataclass(frozen=True)
class Admission:
    rate_per_s: float
    burst: int
    max_connections: int
    retry_after_s: tuple[float, float]


@dataclass(frozen=True)
class LoadBalancer:
    mode: str
    hot_nodes: int
    hot_share: float


@dataclass(frozen=True)
class Rollout:
    start_at_s: float
    batch_size: int
    interval_s: float
    mode: str
    pause_cpu_pct: float
    abort_cpu_pct: float
    abort_after_s: float
    drain_rate_per_s: float
    drain_deadline_s: float
    drain_hint_ms: tuple[int, int]


@dataclass(frozen=True)
class Resync:
    capacity_per_s: float
    timeout_s: float
    retry_s: tuple[float, float]
    breaker: bool
    breaker_failure_share: float
    breaker_window_s: float
    breaker_retry_after_s: float


@dataclass(frozen=True)
class Autoscale:
    enabled: bool
    cpu_target_pct: float
    step_nodes: int
    max_nodes: int
    cooldown_s: float


@dataclass(frozen=True)
class TimelineEvent:
    at_s: float
    action: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    seed_source: str
    teaches: str
    seed: int
    duration_s: float
    tick_ms: float
    clients: Clients
    nodes: Nodes
    admission: Admission
    lb: LoadBalancer
    rollout: Rollout | None
    resync: Resync
    autoscale: Autoscale
    events: tuple[TimelineEvent, ...]
    raw: dict[str, Any] = field(repr=False, compare=False)

    @property
    def node_slots(self) -> int:
        """The node slots its simulation preallocates (`node_slots`)."""
        return node_slots(self.nodes.count, self.autoscale.max_nodes, self.events)

    @property
    def node_id_digits(self) -> int:
        return node_id_digits(self.node_slots)


EVENT_ACTIONS = {
    "restart_nodes": "restart nodes abruptly: `nodes` (ids or a count from `first`)",
    "kill_nodes": "nodes go down and stay down",
    "disconnect_fraction": "reset a `fraction` of every node's connections at once",
    "add_nodes": "provision `count` more nodes (ready after nodes.provisioning_s)",
    "start_rollout": "start the scenario's rollout (or with overrides)",
    "halt_rollout": "halt the running rollout",
    "set_admission": "change admission: rate_per_s, burst, max_connections, retry_after_s",
    "drain_nodes": "drain nodes: rate_per_s, deadline_s, hint_ms",
    "set_policy": "switch a population (`population`, default all) to `policy`",
}
