"""The drain planner's no-rate remedies ("add capacity or wait for the fleet to calm") name adding capacity
only where the fleet can grow: the plan and the drain verdict say its room (`room_nodes`, 0 where it adds
no nodes or is at its most; absent from an older server, which keeps today's words)."""

from __future__ import annotations

from typing import Any

import pytest

from console.model.actions.answer import what_would_pass
from console.model.actions.drain import calm_move, drain_prefill_from_plan, no_rate_text
from console.protocol import Verdict, VerdictLevel

CALM = "add capacity or wait for the fleet to calm"
NO_ROOM = "wait for the fleet to calm (this fleet cannot add capacity)"

PLAN: dict[str, Any] = {
    "nodes": ["gw-003"],
    "rate_per_s": 0.0,
    "deadline_s": 600.0,
    "hint_ms": (1000, 15000),
    "limited_by": "drain_pacing",
    "cpu_margin_pct": 0.0,
}


@pytest.mark.parametrize(("room", "move"), [(None, CALM), (12, CALM), (0, NO_ROOM)])
def test_calm_move_adds_capacity_only_where_there_is_room(room: int | None, move: str) -> None:
    assert calm_move(room) == move


@pytest.mark.parametrize(("room", "move"), [(None, CALM), (12, CALM), (0, NO_ROOM)])
def test_a_plan_with_no_rate_says_the_move_its_fleet_has(room: int | None, move: str) -> None:
    plan = PLAN if room is None else {**PLAN, "room_nodes": room}  # (an older server's plan: no room_nodes)
    assert (
        no_rate_text(plan)
        == f"no safe rate now (limited by the survivors' spare admission) — any drain is blocked; {move}"
    )
    # Within the CPU margin of the pause line: the same move.
    margin = {**plan, "limited_by": "survivor_cpu", "cpu_margin_pct": 5.0}
    assert no_rate_text(margin).endswith(f"— {move}")
    # Within the planner's admission margin (a newer server's plan says it): a slow drain may still pass,
    # so not said blocked.
    admission = {**plan, "admission_margin_pct": 20.0}
    assert no_rate_text(admission) == (
        "no safe rate now (no rate leaves 20 % of the survivors' spare admission free) — wait for the drains "
        f"under way to finish, or {move}"
    )
    assert drain_prefill_from_plan(plan, "planner").source == f"planner: {no_rate_text(plan)}"


def _blocked(**projections: Any) -> Verdict:
    return Verdict(
        action="drain",
        level=VerdictLevel.BLOCKED,
        checks=[],
        projections={"largest_safe_rate_per_s": 0, "survivors": 19, **projections},
    )


@pytest.mark.parametrize(("room", "move"), [(None, CALM), (12, CALM), (0, NO_ROOM)])
def test_a_refused_drains_hint_says_the_move_its_fleet_has(room: int | None, move: str) -> None:
    verdict = _blocked() if room is None else _blocked(room_nodes=room)
    assert what_would_pass(verdict)[-1] == f"no drain rate is safe now: {move}"
