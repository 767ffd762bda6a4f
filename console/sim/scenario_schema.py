"""The scenario schema as values: every key with its default, and the range, choices or type it must have.

Validation errors name the path, the value and the allowed range (`InputError`, exit status 2). The
checks here hold one value to its range; `console.sim.scenario_loader` holds a whole scenario to them.
The schema is documented in docs/scenarios.md; keep the two together.
"""

from __future__ import annotations

from typing import Any

from console.errors import InputError
from console.policies import POLICIES
from console.protocol import limits

# --- defaults: the whole schema in one place ------------------------------------------------------------

DEFAULTS: dict[str, Any] = {
    "name": "",
    "title": "",
    "seed_source": "",
    "teaches": "",
    "seed": 1,
    "duration_s": 600.0,
    "tick_ms": 10.0,
    "clients": {
        "count": 100_000,
        "policy": "",  # a name here switches every population to it
        # Steady reconnects ~80 k/min at 13 M clients (outage seed) ≈ 0.6 % of clients a minute.
        "churn_per_min": 0.0,
        "resume_window_s": 120.0,
        "max_lifetime_s": 0.0,  # 0 = no scheduled lifetime; Zuul ships 1800 (field guide)
        "lifetime_dither_s": 180.0,
        "close_grace_s": 4.0,
        "populations": [
            {
                "name": "all",
                "share": 1.0,
                "policy": "full_jitter",
                "params": {},
                "honours_hints": True,
                "connect_timeout_s": 10.0,
                "stable_period_s": 30.0,
            }
        ],
    },
    "nodes": {
        "count": 20,
        "capacity_connections": 50_000,
        "hold_cpu_pct_at_capacity": 40.0,
        "handshakes_per_s": 1500.0,
        "handshake_base_ms": 40.0,
        "reject_cost": 0.05,
        "timeout_cost": 0.3,
        "accept_backlog": 20_000,
        "overload_after_s": 5.0,
        "overload_drop_per_s": 0.15,
        "restart_s": 30.0,
        "provisioning_s": 240.0,
        "initial_fill": 0.0,  # 0 = spread the clients evenly; else share of capacity_connections
    },
    "admission": {
        "rate_per_s": 0.0,  # 0 = no token bucket
        "burst": 0,
        "max_connections": 0,  # 0 = no ceiling
        "retry_after_s": [1.0, 30.0],
    },
    "lb": {"mode": "uniform", "hot_nodes": 3, "hot_share": 0.1},
    "rollout": {
        "enabled": False,
        "start_at_s": 30.0,
        "batch_size": 1,
        "interval_s": 90.0,
        "mode": "abrupt",
        "pause_cpu_pct": 0.0,  # 0 = never pause (the outage's runbook)
        "abort_cpu_pct": 0.0,  # 0 = no abort criterion
        "abort_after_s": 30.0,
        "drain_rate_per_s": 833.0,
        "drain_deadline_s": 600.0,
        "drain_hint_ms": [1000, 30000],
    },
    "resync": {
        "capacity_per_s": 0.0,  # 0 = resyncs are free (no backend modelled)
        "timeout_s": 30.0,
        "retry_s": [5.0, 10.0],  # matrix-js-sdk: 5000 + random(5000) ms (field guide)
        "breaker": False,
        "breaker_failure_share": 0.05,  # sync-engine essay: > 5 % over a minute → Retry-After 30 s
        "breaker_window_s": 60.0,
        "breaker_retry_after_s": 30.0,
    },
    "autoscale": {
        "enabled": False,
        "cpu_target_pct": 60.0,
        "step_nodes": 10,
        "max_nodes": 0,
        "cooldown_s": 30.0,
    },
    "events": [],
}

RANGES: dict[str, tuple[float, float]] = {
    "seed": (0, 2**63 - 1),
    "duration_s": (1, 86_400),
    "tick_ms": (1, 100),
    "clients.count": (0, 1_000_000_000),
    "clients.churn_per_min": (0, 1e9),
    "clients.resume_window_s": (0, 86_400),
    # `gateway serve` takes the same high ends (console.protocol.limits).
    "clients.max_lifetime_s": limits.CONNECTION_LIFETIME_S,
    "clients.lifetime_dither_s": limits.CONNECTION_LIFETIME_S,
    "clients.close_grace_s": limits.CLOSE_GRACE_S,
    "nodes.count": limits.NODE_COUNT,
    "nodes.capacity_connections": (1, 100_000_000),
    "nodes.hold_cpu_pct_at_capacity": (0, 95),
    "nodes.handshakes_per_s": (1, 10_000_000),
    "nodes.handshake_base_ms": (0, 60_000),
    "nodes.reject_cost": (0, 1),
    "nodes.timeout_cost": (0, 1),
    "nodes.accept_backlog": (0, 100_000_000),
    "nodes.overload_after_s": (0, 3600),
    "nodes.overload_drop_per_s": (0, 1),
    "nodes.restart_s": (0, 3600),
    "nodes.provisioning_s": (0, 3600),
    "nodes.initial_fill": (0, 1),
    # The fleet API's PUT /v1/admission takes the same ranges (there null, not 0, means unlimited).
    "admission.rate_per_s": limits.ADMISSION_RATE_PER_S,
    "admission.burst": limits.ADMISSION_BURST,
    "admission.max_connections": limits.ADMISSION_MAX_CONNECTIONS,
    "lb.hot_nodes": (1, 10_000),
    "lb.hot_share": (0, 1),
    "rollout.start_at_s": (0, 86_400),
    # The fleet API's POST /v1/rollout and drains take the same high ends (console.protocol.limits).
    "rollout.batch_size": limits.ROLLOUT_BATCH_SIZE,
    "rollout.interval_s": (1, limits.ROLLOUT_INTERVAL_S[1]),
    "rollout.pause_cpu_pct": (0, 100),
    "rollout.abort_cpu_pct": (0, 100),
    "rollout.abort_after_s": (0, 3600),
    "rollout.drain_rate_per_s": (0.001, limits.BILLION),
    "rollout.drain_deadline_s": limits.DRAIN_DEADLINE_S,
    "resync.capacity_per_s": (0, 1e9),
    "resync.timeout_s": (0, 3600),
    "resync.breaker_failure_share": (0, 1),
    "resync.breaker_window_s": (1, 3600),
    "resync.breaker_retry_after_s": (0, 3600),
    "autoscale.cpu_target_pct": (1, 100),
    "autoscale.step_nodes": (1, 10_000),
    "autoscale.max_nodes": (0, 10_000),
    "autoscale.cooldown_s": (0, 3600),
}
CHOICES: dict[str, tuple[str, ...]] = {
    "lb.mode": ("uniform", "weighted", "skewed"),
    "rollout.mode": ("drain", "abrupt"),
    "clients.policy": tuple(sorted(POLICIES)),
}
#: Choices that may stay "" (unset): an unset clients.policy leaves each population its own policy.
UNSET_CHOICES = frozenset({"clients.policy"})
BOOLEANS = ("rollout.enabled", "resync.breaker", "autoscale.enabled")


def _default_at(path: str) -> Any:
    value: Any = DEFAULTS
    for part in path.split("."):
        value = value[part]
    return value


#: The ranged paths whose default is an integer: counts, sizes, the seed. They refuse 40.7 rather than
#: truncate it to 40; an integral float (1e6 in TOML) is taken as the integer it is.
_INTEGERS = frozenset(p for p in RANGES if type(_default_at(p)) is int)


def check_range(path: str, value: Any) -> float:
    low, high = RANGES[path]
    if path in _INTEGERS:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InputError(path, value, f"an integer in [{int(low)}, {int(high)}]")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise InputError(path, value, f"a number in [{low:g}, {high:g}]")
    return value


def check_window(path: str, value: Any, low: float, high: float) -> tuple[float, float]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, int | float) for v in value)
        or not limits.in_window(value, (low, high))
    ):
        raise InputError(path, value, limits.window_text((low, high)))
    return (value[0], value[1])


def check_seed(seed: int | None, field: str = "--seed") -> None:
    """A seed given beside the scenario (`--seed`) has the range of the scenario's own `seed`: numpy's
    generator refuses a negative one with a traceback."""
    if seed is None:
        return
    try:
        check_range("seed", seed)
    except InputError as error:
        raise InputError(field, seed, error.allowed) from None
