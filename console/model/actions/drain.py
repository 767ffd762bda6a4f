"""The drain form's model: its starting values (the server's drain plan, the console's own planner, or the
drain window when neither is at hand), the plan's rate and limit in the operator's words, the hint window
the form re-derives as the rate changes, and the rate a refused drain should be typed at."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from console.figures import first_named
from console.guards import FleetCapacity, Thresholds, plan_drain
from console.guards.capacity import admission_limit_text
from console.guards.drain import HINT_START_MS, admission_margin_kept_pct, margin_kept_pct, planned_hint_ms
from console.guards.fleet import ROTATION_MOVE
from console.model.actions.form import Prefill, form_text
from console.protocol import FleetSnapshot, Frame, Source

#: The drain planner's `limited_by`, as the form says it (console.guards.drain.rate.largest_safe_rate): its
#: names are the code's, and "limited by survivor_cpu" was read at 4 a.m.
PLAN_LIMITS = {
    "survivor_cpu": "the busiest survivor's CPU",
    "drain_pacing": "the survivors' spare admission",
    "hint_reach": "the fleet's longest reconnect hint",
    "no_survivors": "no node left in rotation",
    "offline_at_once": "the clients offline at once (offline_at_once_pct ≤ connections_drop_pct)",
    "reconnect_rate": "the reconnect alarm's line (reconnect_rate_high)",
}


#: The move when no drain rate is safe (hot or full survivors), where the fleet can grow or does not say…
CALM_MOVE = "add capacity or wait for the fleet to calm"
#: …and where it says it cannot (`room_nodes` 0: it adds no nodes, or is at its most): an add is refused.
NO_ROOM_CALM_MOVE = "wait for the fleet to calm (this fleet cannot add capacity)"


def calm_move(room_nodes: object) -> str:
    """What to do when no drain rate is safe, as the fleet's room says (`room_nodes` of a drain plan or a
    drain verdict's projections: `console.guards.capacity.snapshot_room`): "add capacity" only with room; an
    older server's plan, which does not say, keeps it."""
    return NO_ROOM_CALM_MOVE if room_nodes == 0 else CALM_MOVE


#: What to do when a plan has no rate, by its limit (`no_rate_text`): capacity helps hot or full survivors
#: (where the fleet can grow: `calm_move`), not a fleet with none left in rotation (the guard's
#: `nodes_in_rotation_after` says the same move).
NO_RATE_MOVES = {
    "survivor_cpu": "any drain is blocked; {calm}",
    "drain_pacing": "any drain is blocked; {calm}",
    # A hint the fleet cannot give is not widened by capacity, and its narrow window asks for confirmation
    # (hint_window_ms), not a block.
    "hint_reach": "adding capacity would not widen it: a fleet whose hints reach further would, or a smaller "
    "hint_window_min_ms in [thresholds]",
    "no_survivors": f"any drain is blocked; {ROTATION_MOVE}",
    # Over the alarm's line before a single close: capacity does not lower the reconnects (typed, not blocked).
    "reconnect_rate": "wait for the drains under way to finish, or for the reconnects to fall",
}

#: The checks a drain's rate sets, which the suggested rate passes (`drain_rate_hint`): a failing check
#: outside them — the headroom, the drains at once, the deadline — fails at any rate.
RATE_CHECKS = frozenset(
    {
        "survivor_cpu_vs_pause_pct",
        "survivor_cpu_vs_abort_pct",
        "drain_pacing_per_s",
        "reconnect_rate_per_s",
        "hint_window_ms",  # (a slower rate needs a narrower window)
    }
)


def plan_limit(plan: Mapping[str, Any]) -> str:
    """What limits a drain plan's rate, in the operator's words (a newer server's limit: its own name) —
    spare admission with the admission limit that sets it, as the guards say it ("…, under their admission
    limit of 2/s a node"), where the plan carries one (`admission_limit_per_s`; an older server's does not)."""
    key = str(plan.get("limited_by", "?"))
    said = PLAN_LIMITS.get(key, key)
    limit = plan.get("admission_limit_per_s")
    if key == "drain_pacing" and isinstance(limit, int | float):
        said += admission_limit_text(float(limit))
    return said


def plan_cpu_margin_pct(plan: Mapping[str, Any]) -> float:
    """The CPU points the plan keeps the busiest survivor under the pause line, where that margin set its
    rate (limited by the survivors' CPU, `margin_kept_pct`); 0 otherwise, and from a server whose plan
    does not say."""
    return margin_kept_pct(str(plan.get("limited_by")), float(plan.get("cpu_margin_pct") or 0.0))


def plan_admission_margin_pct(plan: Mapping[str, Any]) -> float:
    """The share of spare admission the plan left free, where spare admission set its rate
    (`admission_margin_kept_pct`); 0 otherwise, and from a server whose plan does not say."""
    return admission_margin_kept_pct(
        str(plan.get("limited_by")), float(plan.get("admission_margin_pct") or 0.0)
    )


def rate_basis_text(cpu_margin_pct: float, admission_margin_pct: float = 0.0) -> str:
    """What a planned or suggested drain rate is: "largest safe rate less a 5-point CPU margin" or "… less
    a 20 % margin on the spare admission" (the margin that set it, `console.guards.drain.rate_basis`), or the
    largest safe rate itself. Said alike by the drain form, `stormdeck plan drain` and a refused drain's
    "what would pass"."""
    if cpu_margin_pct > 0:
        return f"largest safe rate less a {cpu_margin_pct:g}-point CPU margin"
    if admission_margin_pct > 0:
        return f"largest safe rate less a {admission_margin_pct:g} % margin on the spare admission"
    return "largest safe rate"


def keeps_margin_text(cpu_margin_pct: float) -> str:
    return f"keeps the busiest survivor's CPU {cpu_margin_pct:g} points under the pause line"


def plan_basis(plan: Mapping[str, Any]) -> str:
    """What a drain plan's rate is, as the form and `stormdeck plan drain` say it: "largest safe rate less
    a 5-point CPU margin, limited by the busiest survivor's CPU" — the rate on the pause line itself was
    typed at 75.1 % a few seconds after a real fleet's plan (fleet up), so the planner keeps a margin."""
    return (
        f"{rate_basis_text(plan_cpu_margin_pct(plan), plan_admission_margin_pct(plan))}, "
        f"limited by {plan_limit(plan)}"
    )


def no_rate_text(plan: Mapping[str, Any]) -> str:
    """Why a plan has no rate, naming the limit that left no room (`plan drain` said "no spare admission or
    CPU" when only the CPU was short). Out of spare admission any drain is blocked; within the planner's CPU
    margin of the pause line a slow drain may still pass now, but no rate keeps the margin — not said
    blocked. With no node left in rotation, or hints too short for any window, capacity is not the move:
    each says its own. Said alike by the drain form and `stormdeck plan drain`."""
    margin = plan_cpu_margin_pct(plan)
    calm = calm_move(plan.get("room_nodes"))
    if margin > 0:
        return f"no safe rate now (no rate {keeps_margin_text(margin)}) — {calm}"
    key = str(plan.get("limited_by", "?"))
    admission_margin = plan_admission_margin_pct(plan)
    if admission_margin > 0:
        # Within the planner's admission margin a slow drain may still pass now: not said blocked (as the
        # CPU margin's case above).
        return (
            f"no safe rate now (no rate leaves {admission_margin:g} % of the survivors' spare admission free) "
            f"— wait for the drains under way to finish, or {calm}"
        )
    # A newer server's limit: named, and no remedy guessed for it (its verdict names what would pass).
    move = NO_RATE_MOVES.get(key, "a drain's verdict says what would pass").replace("{calm}", calm)
    return f"no safe rate now ({_no_rate_why(key, plan)}) — {move}"


def _no_rate_why(key: str, plan: Mapping[str, Any]) -> str:
    """The limit that left no rate, where its name alone does not say it."""
    if key == "no_survivors":
        return "no node would be left in rotation to take its clients"
    if key == "hint_reach":
        # At rate 0 the plan's hint is the fleet's whole reach from HINT_START_MS (`planned_hint_ms`): too
        # narrow for the guard's minimum window at any rate (`_hint_reach_rate`).
        low, high = (int(ms) for ms in plan["hint_ms"])
        return (
            f"the fleet's longest reconnect hint, {high:,} ms, leaves no window from {low:,} ms as wide as "
            "hint_window_min_ms"
        )
    return f"limited by {plan_limit(plan)}"


def no_rate_note(plan: Mapping[str, Any], source: str) -> str:
    return f"{source}: {no_rate_text(plan)}"


def drain_prefill_from_plan(plan: Mapping[str, Any], source: str) -> Prefill:
    """From a drain plan (the server's `drain-plan`, or `console.guards.plan_drain` as a dict)."""
    low, high = plan["hint_ms"]
    rate = float(plan["rate_per_s"])
    note = f"{source}: {plan_basis(plan)}"
    if rate <= 0:
        # No rate at all, not a token one: 0.1 closes/s read as the planner's suggestion, and was blocked.
        note = no_rate_note(plan, source)
    return Prefill(
        {
            # The planned rate however slow (a floor above it would pre-fill a refused drain); the form asks
            # for one when none is safe.
            "rate_per_s": form_text(rate) if rate > 0 else "",
            "deadline_s": form_text(float(plan["deadline_s"])),
            "hint_min_ms": str(int(low)),
            "hint_max_ms": str(int(high)),
        },
        note,
    )


@dataclass(frozen=True)
class DrainHintRule:
    """The drain planner's hint window for a rate (`console.guards.drain.planned_hint_ms`), for the form
    to re-derive a hint the operator has not touched when they change the rate: the planner's window
    for its own rate failed the server's hint_window_ms check at theirs (1000:2000 at 833 closes/s)."""

    thresholds: Thresholds
    hint_max_ms: int = 0  # the fleet's longest hint (FleetCapacity.hint_max_ms); 0: none
    whose: str = ""  # "" for the server's thresholds; else whose they are (`FormThresholds.whose`)

    def for_rate(self, rate_per_s: float) -> tuple[int, int]:
        return planned_hint_ms(rate_per_s, self.thresholds, self.hint_max_ms)

    def describe(self) -> str:
        t = self.thresholds
        cap = f", ≤ {self.hint_max_ms:,} ms (the fleet's longest hint)" if self.hint_max_ms else ""
        window = f"max({t.hint_window_min_ms:,.0f}, 1000 × rate ÷ {t.hint_spread_per_s_max:g})"
        whose = f" — with {self.whose}" if self.whose else ""
        return f"hint min {HINT_START_MS:,}, max {HINT_START_MS:,} + {window} ms{cap}{whose}"


def local_drain_prefill(
    frame: Frame, fleet: str, node_id: str, capacity: FleetCapacity, thresholds: Thresholds
) -> Prefill:
    """The drain planner run here, over the newest frame, when the server offers no plan."""
    plan = plan_drain(FleetSnapshot.of_frame(frame, fleet, Source.SIMULATOR), capacity, [node_id], thresholds)
    return drain_prefill_from_plan(
        {
            "rate_per_s": plan.rate_per_s,
            "deadline_s": plan.deadline_s,
            "hint_ms": plan.hint_ms,
            "limited_by": plan.limited_by,
            "cpu_margin_pct": plan.cpu_margin_pct,
            "room_nodes": plan.room_nodes,
            "admission_limit_per_s": plan.admission_limit_per_s,
        },
        "the console's drain planner",
    )


def fallback_drain_prefill(connections: int, thresholds: Thresholds) -> Prefill:
    """No planner at hand: the rate that empties the node within the drain window (interview: 10 min)."""
    window_s = thresholds.drain_window_s
    rate = max(math.ceil(connections / window_s), 1)
    return Prefill(
        {
            "rate_per_s": str(rate),
            "deadline_s": form_text(window_s),
            "hint_min_ms": "1000",
            "hint_max_ms": str(1000 + int(max(thresholds.hint_window_min_ms, 14_000))),
        },
        "no planner: the rate that empties the node within the drain window",
    )


def drain_rate_hint(projections: Mapping[str, Any], failing: Collection[str] = ()) -> str | None:
    """The rate a refused drain should be typed at: the verdict's suggestion, the planner's rate a CPU margin
    under the pause line — the largest safe rate on the line, typed back seconds later on a live fleet,
    was refused again. From an older server, which suggests none: the largest safe rate. None for a drain
    that leaves no survivor: no rate helps, and "add capacity or wait for the fleet to calm" buried the
    reason its verdict names (`nodes_in_rotation_after`: undrain a node first).

    `failing`: the checks that raised the verdict's level. None of them set by the rate (`RATE_CHECKS`):
    no rate is named — a drain at the planner's own 7,910/s that failed only the headroom read "a drain at ≤
    7910 closes/s per node … passes these checks" (review). Some of them: the rate is said to pass those,
    and the others are named as no rate's to change."""
    safe = projections.get("largest_safe_rate_per_s")
    if not isinstance(safe, int | float) or projections.get("survivors") == 0:
        return None
    others = sorted(set(failing) - RATE_CHECKS)
    if failing and len(others) == len(set(failing)):
        return None
    passes = "passes these checks"
    if others:
        them = "it" if len(others) == 1 else "them"
        passes = f"passes the rate's checks, not {first_named(others)} (no rate alone passes {them})"
    forced = projections.get("force_closed")
    if isinstance(forced, int | float) and forced > 0:
        # The deadline's force-close is no rate's to fix (a slower drain leaves more to it): at ≤ 1490/s
        # with --deadline 0, 500 k were still closed at once.
        passes = f"with a deadline that empties the node {passes}"
    calm = calm_move(projections.get("room_nodes"))
    if safe <= 0:
        return f"no drain rate is safe now: {calm}"
    suggested = projections.get("suggested_rate_per_s")
    if not isinstance(suggested, int | float):
        return f"a drain at ≤ {safe:g} closes/s per node {passes}"
    margin = float(projections.get("suggested_cpu_margin_pct") or 0.0)
    admission_margin = float(projections.get("suggested_admission_margin_pct") or 0.0)
    if suggested > 0:
        basis = rate_basis_text(margin, admission_margin)
        return f"a drain at ≤ {suggested:g} closes/s per node ({basis}) {passes}"
    # Within the margin of the line already: a slow drain passes at this second's CPU, none keeps the margin.
    return (
        f"no drain rate {keeps_margin_text(margin)} (≤ {safe:g} closes/s per node passes at this second's CPU): "
        f"{calm}"
    )
