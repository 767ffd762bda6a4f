"""Scenarios: typed, frozen records of a validated scenario, and the timeline actions it may hold.

A scenario is a TOML file (package data in `scenarios/`). Its defaults and allowed values are in
`console.sim.scenario_schema`, the `--set key=value` overrides in `console.sim.scenario_overrides`, and
loading and validation into these records in `console.sim.scenario_loader`.
The schema is documented in docs/scenarios.md; keep the two together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from console.policies import Policy


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
