"""The largest safe drain rate and what set it (`LIMITED_BY`): one arithmetic for the planner's offer, the
verdict's largest safe rate and the rate a refused drain is told to type."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from console.guards.capacity import FleetCapacity
from console.guards.drain.hint import (
    HINT_START_MS,
    hint_window_needed_ms,
    offline_at_once_pct,
    planned_hint_ms,
)
from console.guards.fleet import FleetLoad
from console.guards.reconnects import ReconnectLine, reconnect_room_rate
from console.guards.thresholds import Thresholds
from console.protocol import FleetSnapshot, NodeStatus

#: What may set a plan's rate (`DrainPlan.limited_by`): the survivors' spare admission, the busiest survivor's
#: CPU, the fleet's longest reconnect hint, the clients offline at once (`offline_at_once_pct`'s line: on a
#: small fleet a node's clients all closed in a moment are a large share of it), the reconnect alarm's line
#: (`reconnect_rate_per_s`: the drain's reconnects on the fleet's under reconnect_rate_high's line) — or no
#: survivor at all (the last node in rotation: nothing to measure, and "limited by the busiest survivor's
#: CPU" named a survivor that was not there). An open set on the wire: a console names a value it does not
#: know as it is.
LIMITED_BY = (
    "drain_pacing",
    "survivor_cpu",
    "hint_reach",
    "no_survivors",
    "offline_at_once",
    "reconnect_rate",
)


def _offline_rate(
    count: int, leaving: Sequence[NodeStatus], fleet_connections: int, capacity: FleetCapacity, t: Thresholds
) -> float | None:
    """The largest per-node rate (3 significant figures, rounded down) whose clients offline at once, at the
    planner's hint for it (`planned_hint_ms`), stay within `connections_drop_pct` of the fleet's — and never
    slower than empties the fullest node by the drain window: a deadline's forced closes are the surge this
    pace is there to avoid. None when the nodes hold no more than that share: any rate keeps it.

    The planner once offered a small fleet's node at 457/s (a 300-client loopback fleet, review): its 100
    clients closed in a quarter second, a third of the fleet offline together, and its own guard noted it."""
    connections = sum(node.connections for node in leaving)
    if connections / max(fleet_connections, 1) * 100 <= t.connections_drop_pct:
        return None

    def within(total: float) -> bool:
        hint_ms = planned_hint_ms(total, t, capacity.hint_max_ms)
        return (
            offline_at_once_pct(total, hint_ms, connections, fleet_connections, t) <= t.connections_drop_pct
        )

    low, high = 0.0, 1.0
    while within(high):  # (offline at once grows with the rate, up to the nodes' connections: over the line)
        high *= 2
    for _ in range(60):  # bisect to float precision
        low, high = (mid, high) if within(mid := (low + high) / 2) else (low, mid)
    rate = low / count
    in_time = max(node.connections for node in leaving) / t.drain_window_s
    if rate < in_time:
        digits = 2 - math.floor(math.log10(in_time))
        return math.ceil(in_time * 10**digits - 1e-9) / 10**digits
    digits = 2 - math.floor(math.log10(rate))
    candidate = math.floor(rate * 10**digits) / 10**digits
    while candidate > 0 and not within(candidate * count):  # float noise
        candidate = round(candidate - 10.0**-digits, digits)
    return candidate


@dataclass(frozen=True)
class RateBasis:
    """The drain rate the planner offers, and what set it."""

    rate_per_s: float  # per node; 0 when no rate keeps the margin
    limited_by: str  # one of `LIMITED_BY`
    cpu_margin_pct: float  # the CPU points under the pause line that set the rate; 0 when another limit did
    # The share of the survivors' spare admission (%) kept free where it set the rate; 0 when another did.
    admission_margin_pct: float = 0.0


def margin_kept_pct(limited_by: str, cpu_margin_pct: float) -> float:
    """The CPU margin a planned rate gave up, said only where it set the rate (the survivors' CPU): where
    spare admission or the fleet's hint reach set it, the margin took nothing off it. One rule for the
    verdict's suggestion and a plan read back from the server
    (`console.model.actions.drain.plan_cpu_margin_pct`)."""
    return cpu_margin_pct if limited_by == "survivor_cpu" else 0.0


def admission_margin_kept_pct(limited_by: str, admission_margin_pct: float) -> float:
    """The share of spare admission a planned rate left free, said only where spare admission set it
    (`margin_kept_pct`'s rule for the CPU margin)."""
    return admission_margin_pct if limited_by == "drain_pacing" else 0.0


def rate_basis(
    load: FleetLoad, count: int, capacity: FleetCapacity, thresholds: Thresholds, line: ReconnectLine
) -> RateBasis:
    """The largest safe per-node rate less `drain_plan_cpu_margin_pct` under the pause line: what the
    planner offers (`plan_drain`) and a refused drain's verdict suggests (`judge_drain`), one arithmetic for
    both. A plan is made on one second's CPU readings and judged on a later one's, and a real node's CPU
    moves between them (`fleet up`: a rate on the line itself was typed at 75.1 % seconds later)."""
    margin = thresholds.drain_plan_cpu_margin_pct
    admission_share = 1.0 - thresholds.drain_plan_admission_margin_pct / 100.0
    rate, limited_by = largest_safe_rate(load, count, capacity, thresholds, line, margin, admission_share)
    return RateBasis(
        rate,
        limited_by,
        margin_kept_pct(limited_by, margin),
        admission_margin_kept_pct(limited_by, thresholds.drain_plan_admission_margin_pct),
    )


def largest_safe_rate(
    load: FleetLoad,
    count: int,
    capacity: FleetCapacity,
    thresholds: Thresholds,
    line: ReconnectLine,
    cpu_margin_pct: float = 0.0,
    admission_share: float = 1.0,
) -> tuple[float, str]:
    """The largest per-node rate within `admission_share` of the spare admission and `cpu_margin_pct` under
    the pause line, with a hint window the fleet can give (`_hint_reach_rate`), and whose reconnects keep
    the fleet under the reconnect alarm's line (`reconnect_room_rate`). A verdict judges at it with no
    margin (`largest_safe_rate_per_s`); the planner and a verdict's suggestion keep the margins
    (`rate_basis`)."""
    rate, limited_by = _admitted_rate(
        load, count, capacity, thresholds, thresholds.cpu_pause_pct - cpu_margin_pct, admission_share
    )
    for reach, name in (
        (_hint_reach_rate(count, capacity, thresholds), "hint_reach"),
        (reconnect_room_rate(line, count), "reconnect_rate"),
    ):
        if reach is not None and reach < rate:
            rate, limited_by = reach, name
    return rate, limited_by


def _admitted_rate(
    load: FleetLoad,
    count: int,
    capacity: FleetCapacity,
    thresholds: Thresholds,
    cpu_line_pct: float,
    admission_share: float = 1.0,
) -> tuple[float, str]:
    """The largest per-node rate, to three significant figures, that keeps the drains within
    `admission_share` of the spare admission and the busiest survivor at or under `cpu_line_pct` — the two
    checks `judge_drain` makes of it, at their lines or a margin under them."""
    if load.survivors == 0:
        return 0.0, "no_survivors"
    spare = load.spare_admission_per_s * admission_share
    pacing = (spare - load.drain_rate_per_s) / count
    cpu = (load.pause_room_per_s(capacity, thresholds, cpu_line_pct) - load.moving_accepts_per_s) / count
    rate, limited_by = (pacing, "drain_pacing") if pacing <= cpu else (cpu, "survivor_cpu")

    def passes(candidate: float) -> bool:
        new_rate = candidate * count
        return (
            load.drain_rate_per_s + new_rate <= spare
            and load.projected_cpu_pct(new_rate, capacity, thresholds) <= cpu_line_pct
        )

    if rate <= 0:
        return 0.0, limited_by
    digits = 2 - math.floor(math.log10(rate))
    candidate = round(rate, digits)
    while candidate > 0 and not passes(candidate):  # rounding went up, or float noise: one step down
        candidate = round(candidate - 10.0**-digits, digits)
    return max(candidate, 0.0), limited_by


def planned_basis(
    snapshot: FleetSnapshot,
    load: FleetLoad,
    leaving: Sequence[NodeStatus],
    capacity: FleetCapacity,
    t: Thresholds,
    line: ReconnectLine,
) -> RateBasis:
    """The rate the planner offers and a refused drain is told to type: `rate_basis`, slowed where it would
    take more than `connections_drop_pct` of the fleet offline at once (`_offline_rate`) — so the plan
    passes its own guard without the `offline_at_once_pct` note."""
    basis = rate_basis(load, len(leaving), capacity, t, line)
    fleet_connections = sum(node.connections for node in snapshot.nodes)
    cap = _offline_rate(len(leaving), leaving, fleet_connections, capacity, t)
    if cap is None or cap >= basis.rate_per_s:
        return basis
    return RateBasis(cap, "offline_at_once", 0.0)


def _hint_reach_rate(count: int, capacity: FleetCapacity, thresholds: Thresholds) -> float | None:
    """The largest per-node rate (3 significant figures, rounded down) whose hint window the fleet can
    give: a faster drain needs a wider window (`hint_window_needed_ms`) than a simulated fleet's hints
    reach (`FleetCapacity.hint_max_ms`). None when the fleet sets no such bound."""
    if not capacity.hint_max_ms:
        return None
    width_ms = capacity.hint_max_ms - HINT_START_MS
    if width_ms < thresholds.hint_window_min_ms:
        return 0.0
    rate = width_ms / 1000 * thresholds.hint_spread_per_s_max / count
    digits = 2 - math.floor(math.log10(rate))
    candidate = math.floor(rate * 10**digits) / 10**digits
    # Float noise, as `judge_drain` computes it: 65.7 × 3 closes/s needed 1971.0000000000002 ms of a 1971.
    while candidate > 0 and hint_window_needed_ms(candidate * count, thresholds) > width_ms:
        candidate = round(candidate - 10.0**-digits, digits)
    return max(candidate, 0.0)
