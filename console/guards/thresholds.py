"""The thresholds every alarm and guard judges against — one record, shared by both.

Each field carries its unit in its name, the range a config may set it to, and the seed it comes from
(../shared/DESIGN.md, "Defaults from the seeds"). `console.guards.config` loads overrides from TOML and env;
this module is pure: values in, values out.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from console.errors import InputError

OUTAGE = "outage seed (thundering-herd reconnect)"
SYNC_ESSAY = "sync-engine essay (reconnect storm problem)"
FIELD_GUIDE = "practitioner field guide"
INTERVIEW = "interview answer (draining a gateway fleet)"
ISSUE_2 = "issue #2 (lockstep_index, console.waves)"
ISSUE_4 = "issue #4 (the outage seed's pause line)"
STORMDECK = "stormdeck choice (no seed gives this number)"


def _limit(default: float, low: float, high: float, source: str, why: str) -> Any:
    """A threshold field: its default, the closed range a config may set, and where the number comes from."""
    return field(default=default, metadata={"range": (low, high), "source": source, "why": why})


@dataclass(frozen=True)
class Thresholds:
    # --- CPU: the abort criterion and the rollout pause -------------------------------------------
    cpu_abort_pct: float = _limit(
        80.0, 1, 100, OUTAGE, "halt and reassess when any surviving node's CPU stays above this"
    )
    cpu_abort_for_s: float = _limit(30.0, 0, 3600, OUTAGE, "how long CPU must stay above the abort line")
    cpu_pause_pct: float = _limit(
        75.0, 1, 100, OUTAGE, "rollouts pause when any surviving node's CPU exceeds this"
    )
    # --- capacity -----------------------------------------------------------------------------------
    headroom_min_pct: float = _limit(
        35.0, 0, 100, OUTAGE, "no safe restart below this headroom; add capacity instead"
    )
    # --- total connections --------------------------------------------------------------------------
    connections_drop_pct: float = _limit(
        5.0, 0.1, 100, OUTAGE, "alarm when total connections fall by more than this share"
    )
    connections_drop_window_s: float = _limit(60.0, 1, 3600, OUTAGE, "... within this window")
    # --- drain ÷ inflow -----------------------------------------------------------------------------
    drain_inflow_losing_ratio: float = _limit(
        1.0, 0.01, 10, SYNC_ESSAY, "below this the backlog grows: losing ground"
    )
    drain_inflow_losing_for_s: float = _limit(
        60.0, 0, 3600, SYNC_ESSAY, "losing ground for this long means the storm is winning"
    )
    drain_inflow_kill_ratio: float = _limit(0.6, 0.01, 10, SYNC_ESSAY, "the kill switch trips below this")
    # --- waves and reconnect rate -------------------------------------------------------------------
    lockstep_index_max: float = _limit(
        4.0, 1, 1000, ISSUE_2, "peak 100 ms bin ÷ mean of its 2 s: at or above this, attempts come in waves"
    )
    lockstep_window_s: float = _limit(30.0, 3, 600, ISSUE_2, "recent wave bins the lockstep index looks at")
    reconnect_rate_multiple: float = _limit(
        10.0,
        1.5,
        10_000,
        STORMDECK,
        "this many times the steady reconnect rate is a storm (the seed saw ~160×: 13 M/min vs 80 k/min)",
    )
    reconnect_baseline_per_s: float = _limit(
        0.0,
        0,
        1e9,
        OUTAGE,
        "steady reconnects/s (the seed: ~80 k/min ≈ 1333/s at 13 M clients); 0 = learn it while calm",
    )
    reconnect_floor_per_s: float = _limit(
        10.0, 0, 1e9, STORMDECK, "the baseline never counts as lower than this, so a trickle never pages"
    )
    baseline_learn_s: float = _limit(
        30.0, 0, 3600, STORMDECK, "first seconds of a history: learn baselines, raise no rate alarm"
    )
    baseline_tau_s: float = _limit(
        300.0, 1, 86_400, STORMDECK, "time constant of the learned baselines (a slow, 5-minute average)"
    )
    rate_alarm_for_s: float = _limit(
        5.0,
        0,
        3600,
        STORMDECK,
        "a rate alarm needs its rate over the line this long (one noisy second is not a storm)",
    )
    # --- resume window and closes -------------------------------------------------------------------
    resync_share_max_pct: float = _limit(
        10.0,
        0.1,
        100,
        STORMDECK,
        "full resyncs as a share of accepts; the field guide's resync drill forces 10 % onto that path",
    )
    abnormal_closes_multiple: float = _limit(
        5.0, 1.5, 10_000, STORMDECK, "1006 closes this many times their steady baseline (GitLab INC-10719)"
    )
    abnormal_closes_floor_per_s: float = _limit(
        1.0, 0, 1e9, STORMDECK, "the 1006 baseline never counts as lower than this"
    )
    rate_window_s: float = _limit(
        10.0, 1, 600, STORMDECK, "window the resync share and 1006 rate are averaged over"
    )
    # --- drains -------------------------------------------------------------------------------------
    reconnect_skew: float = _limit(
        1.5,
        1,
        20,
        OUTAGE,
        "the busiest survivor takes this many times its even share of reconnects (the seed's capacity model "
        "assumed an even spread; consistent hashing sent them to a few nodes)",
    )
    drain_window_s: float = _limit(600.0, 1, 86_400, INTERVIEW, "the drain window: force-close at its end")
    max_concurrent_drains: int = _limit(
        30, 1, 100_000, STORMDECK, "nodes draining at once (the seed's batch was 30 of 480; smaller is safer)"
    )
    hint_spread_per_s_max: float = _limit(
        100.0,
        1,
        1e9,
        STORMDECK,
        "closes per second per second of hint window: the interview's 833/s drain needs a window ≥ 8.3 s",
    )
    hint_window_min_ms: float = _limit(
        1000.0,
        0,
        3_600_000,
        STORMDECK,
        "a hint window narrower than this recreates lockstep (100 ms jitter did)",
    )
    drain_plan_cpu_margin_pct: float = _limit(
        5.0,
        0,
        100,
        STORMDECK,
        "the drain planner keeps the busiest survivor's projected CPU this many points under the pause line: "
        "CPU readings move between the plan and the verdict (fleet up on loopback: the projection rose 3-4.6 "
        "points at p95 over 1-10 s); the guard still judges against the line itself",
    )
    drain_plan_admission_margin_pct: float = _limit(
        20.0,
        0,
        100,
        STORMDECK,
        "the drain planner keeps its closes this share under the survivors' spare admission: their other "
        "accepts move between the plan and the drain (fleet up, 300 clients at 5/s a node: churn and 503 "
        "retries took 2-3/s of a 10/s spare, and the planner's 10/s raised drain_pacing_exceeded); the guard "
        "still judges against the spare itself",
    )
    # --- admission ----------------------------------------------------------------------------------
    retry_after_window_min_s: float = _limit(
        5.0, 0, 3600, STORMDECK, "Retry-After max − min below this sends refused clients back in lockstep"
    )
    admission_loosen_cpu_pct: float = _limit(
        75.0, 1, 100, ISSUE_4, "no loosening of admission while any node is above this CPU"
    )
    # --- adding capacity ----------------------------------------------------------------------------
    add_capacity_max_nodes: int = _limit(
        1000,
        1,
        10_000,
        STORMDECK,
        "the most nodes one add-capacity action may ask for (a typo of 2000 for 200 must not reach the "
        "provisioner); the fleet's own room may be smaller",
    )
    add_capacity_confirm_pct: float = _limit(
        50.0,
        1,
        1000,
        STORMDECK,
        "an add larger than this share of the fleet asks for confirmation (the outage seed's emergency add "
        "was 200 of 480 nodes, 42 %, and went through at once)",
    )
    # --- the nodes' dependencies ---------------------------------------------------------------------
    history_unreachable_for_s: float = _limit(
        10.0,
        0,
        3600,
        STORMDECK,
        "a node's history (Redis) unreachable this long raises an alarm; a Redis restart's few seconds "
        "do not",
    )
    # --- alarm hygiene ------------------------------------------------------------------------------
    clear_after_s: float = _limit(
        5.0,
        0,
        3600,
        STORMDECK,
        "an alarm clears only after its condition has been false this long (no flapping)",
    )

    def __post_init__(self) -> None:
        validate(self)

    def replace(self, **changes: Any) -> Thresholds:
        """A copy with some values changed, validated."""
        return dataclasses.replace(self, **changes)


#: Fields whose values must be whole numbers.
INTEGER_FIELDS = frozenset({"max_concurrent_drains", "add_capacity_max_nodes"})


def threshold_fields() -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(Thresholds)


def field_range(name: str) -> tuple[float, float]:
    for item in dataclasses.fields(Thresholds):
        if item.name == name:
            return item.metadata["range"]
    raise InputError("threshold", name, "one of " + ", ".join(f.name for f in dataclasses.fields(Thresholds)))


def validate(thresholds: Thresholds) -> None:
    """Raise `InputError` naming the field, the value and the allowed range for the first bad value."""
    for item in dataclasses.fields(thresholds):
        value = getattr(thresholds, item.name)
        low, high = item.metadata["range"]
        kind = "a whole number" if item.name in INTEGER_FIELDS else "a number"
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError(item.name, value, f"{kind} in [{low:g}, {high:g}]")
        if item.name in INTEGER_FIELDS and not float(value).is_integer():
            raise InputError(item.name, value, f"{kind} in [{low:g}, {high:g}]")
        if not low <= value <= high:  # also rejects NaN
            raise InputError(item.name, value, f"{kind} in [{low:g}, {high:g}]")
    # Orderings the rules rely on: the pause must come before the abort, the kill switch below losing, the
    # planner's margin within the pause line.
    if thresholds.cpu_pause_pct > thresholds.cpu_abort_pct:
        raise InputError(
            "cpu_pause_pct", thresholds.cpu_pause_pct, f"≤ cpu_abort_pct ({thresholds.cpu_abort_pct:g})"
        )
    if thresholds.drain_plan_cpu_margin_pct > thresholds.cpu_pause_pct:
        raise InputError(
            "drain_plan_cpu_margin_pct",
            thresholds.drain_plan_cpu_margin_pct,
            f"≤ cpu_pause_pct ({thresholds.cpu_pause_pct:g})",
        )
    if thresholds.drain_inflow_kill_ratio > thresholds.drain_inflow_losing_ratio:
        raise InputError(
            "drain_inflow_kill_ratio",
            thresholds.drain_inflow_kill_ratio,
            f"≤ drain_inflow_losing_ratio ({thresholds.drain_inflow_losing_ratio:g})",
        )


DEFAULT_THRESHOLDS = Thresholds()
