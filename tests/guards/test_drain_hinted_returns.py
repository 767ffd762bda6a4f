"""The drain guard counts reconnects as the reconnect_rate_high alarm does: where the fleet says which
attempts are drained clients back on their hint (`Totals.hinted_returns_per_s`), those are no storm — a
drain adds to the alarm's count only its deadline's force-closed, back over the hint window.

Found in review: the graceful-drain drill done right (a drain rollout at 167/s a node) read "reconnects 348 >
100/s" for 30 min. Once the alarm left the hinted returns out, a guard still counting a paced drain's
reconnects would type the very drain the alarm calls calm — and the planner, limited by that line, took
the whole room under it, so a verdict one second later could type the planner's own drain."""

from __future__ import annotations

import pytest

from console.guards import FleetCapacity, judge_drain, plan_drain
from console.protocol import FleetSnapshot, VerdictLevel
from tests.fleet_builders import node, snapshot
from tests.guards.test_drain_request import GRACEFUL, checked, drain, failed, graceful


def said(fleet: FleetSnapshot, returns_per_s: float) -> FleetSnapshot:
    totals = fleet.totals.model_copy(update={"hinted_returns_per_s": returns_per_s})
    return fleet.model_copy(update={"totals": totals})


def test_the_planners_paced_rate_is_not_limited_by_the_reconnect_line() -> None:
    """Where the line counted a paced drain, it set the rate at 1,480/s; now the fleet's longest hint does."""
    plan = plan_drain(said(graceful(), 0.0), GRACEFUL, "gw-010")
    assert plan.limited_by != "reconnect_rate" and plan.rate_per_s > 1480
    verdict = judge_drain(said(graceful(), 0.0), GRACEFUL, "gw-010", plan.request())
    assert verdict.level is VerdictLevel.OK, failed(verdict)
    line = checked(verdict, "reconnect_rate_per_s")
    assert (line.value, line.limit) == (pytest.approx(185), pytest.approx(1667))


def test_a_deadline_force_close_still_counts_and_is_told_to_lengthen_not_slow() -> None:
    """`--deadline 0`: all 500 k force-closed, back over 14 s of hint — 35.7 k/s on the 185."""
    verdict = judge_drain(said(graceful(), 0.0), GRACEFUL, "gw-010", drain(833, 0))
    line = checked(verdict, "reconnect_rate_per_s")
    assert not line.ok and line.level is VerdictLevel.TYPED
    assert line.value == pytest.approx(185 + 500_000 / 14)
    assert "lengthen the deadline" in line.why and "slow the drain" not in line.why


def test_drains_under_way_leave_room_once_their_returns_are_said() -> None:
    """Two nodes draining at 833/s, their 1,666 clients a second back on their hint: the alarm counts the
    185 others, and a third drain fits under its line (where the returns are not said: rate 0, typed —
    `test_drains_under_way_count_before_the_first_of_their_reconnects_are_back`)."""
    members = graceful().nodes
    for i in (0, 1):
        members[i] = node(f"gw-00{i}", state="draining", connections=499_000, drain_rate_per_s=833.0)
    busy = snapshot(
        members,
        connections=10_000_000,
        attempts_per_s=185.0 + 1666,
        accepts_per_s=162.0 + 1666,
        hinted_returns_per_s=1666.0,
    )
    assert plan_drain(busy, GRACEFUL, "gw-010").rate_per_s > 0
    line = checked(
        judge_drain(busy, GRACEFUL, "gw-010", drain(10, 86_400, (1000, 2000))), "reconnect_rate_per_s"
    )
    assert line.ok and line.value == pytest.approx(185)


def test_a_line_drawn_from_the_floor_says_so() -> None:
    """A quiet loopback fleet (0 attempts/s, no calm inflow on record): the line is 10× the 10/s floor,
    said as the floor — "10× the steady 10/s (this calm second's attempts)" named a steady rate of 0 as
    10 (review). A drain that force-closes none adds nothing beyond the hinted returns."""
    capacity = FleetCapacity(
        handshakes_per_s=500.0,
        cpu_pct_per_handshake_per_s=0.02,
        connections_per_node=1000,
        steady_inflow_per_s=0.0,
    )
    members = [
        node(
            f"n{i}",
            connections=100,
            capacity_connections=1000,
            cpu_pct=5.0,
            attempts_per_s=0.0,
            accepts_per_s=0.0,
        )
        for i in range(3)
    ]
    quiet = snapshot(
        members, connections=300, attempts_per_s=0.0, accepts_per_s=0.0, hinted_returns_per_s=0.0
    )
    line = checked(judge_drain(quiet, capacity, "n1", drain(10, 600, (1000, 5000))), "reconnect_rate_per_s")
    assert line.ok and (line.value, line.limit) == (0, 100)
    assert "10× the 10/s floor (reconnect_floor_per_s; this calm second's attempts 0/s, under it)" in line.why
    assert "force-close" not in line.why
