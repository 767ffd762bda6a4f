"""A drain's deadline force-close against the connections_drop alarm's line.

Review on a real loopback fleet (`fleet up --nodes 3 --clients 300`): `act drain node-2 --rate 2 --deadline 5
--hint 1000:5000` was judged ok — `offline_at_once_pct 2 ≤ 5 pass … counted as held, not lost` and
`force_closed_at_deadline 137` only a note. At the deadline 137 of the 300 clients were force-closed at once,
the connections gauge went "✖ 164 peak −43.7 %" and the critical connections_drop alarm fired, "clients are
failing to reconnect": the alarm counts a drain's paced closes as held while their hint runs
(`console.figures.WithinHint`), never a deadline's forced ones."""

from __future__ import annotations

import dataclasses

import pytest

from console.guards import Thresholds, judge_drain, plan_drain
from console.protocol import DrainRequest, FleetSnapshot, VerdictLevel
from tests.fleet_builders import node, snapshot
from tests.guards.fleets import CAPACITY, LOOPBACK, fleet, says_a_move


def reviewed_fleet() -> FleetSnapshot:
    """The reviewer's fleet as its controller saw it: 300 clients, node-2 holding 147 of them."""
    members = [
        node("node-1", connections=76, cpu_pct=5.0, accepts_per_s=0.6),
        node("node-2", connections=147, cpu_pct=5.0, accepts_per_s=0.6),
        node("node-3", connections=77, cpu_pct=5.0, accepts_per_s=0.6),
    ]
    return snapshot(members, headroom_pct=97.0, accepts_per_s=1.8)


def drain(rate: float, deadline_s: float, hint_ms: tuple[int, int] = (1000, 5000)) -> DrainRequest:
    return DrainRequest(rate_per_s=rate, deadline_s=deadline_s, hint_ms=hint_ms)


def checked(verdict, name: str):
    return next(c for c in verdict.checks if c.name == name)


def test_the_reviewers_drain_whose_deadline_force_closes_137_of_300_is_typed_naming_the_alarm() -> None:
    verdict = judge_drain(reviewed_fleet(), LOOPBACK, "node-2", drain(2, 5))
    drop = checked(verdict, "force_close_drop_pct")
    # 2/s × 5 s closes 10; the deadline force-closes the other 137 in one moment: 45.7 % of the fleet.
    assert not drop.ok and drop.value == pytest.approx(137 / 300 * 100, abs=1e-3) and drop.limit == 5.0
    # The one rule of the guard's checks of an alarm's line (survivor CPU over the pause line, reconnects
    # over reconnect_rate_high's): typed.
    assert drop.level is VerdictLevel.TYPED
    assert verdict.level is VerdictLevel.TYPED and verdict.typed_expected == "node-2"
    assert "connections_drop" in drop.why and "critical" in drop.why, drop.why
    assert "counts them as lost" in drop.why, drop.why
    # 10/s (the planner's) still leaves 97 at a 5 s deadline: only a longer deadline brings it under.
    assert drop.why.endswith(": lengthen the deadline"), drop.why


def test_clients_offline_at_once_count_the_deadlines_force_closed() -> None:
    """At the deadline the paced clients still within their hint (2/s × the 3 s mean: 6) and the 137
    force-closed are offline together: 143 of 300 — the note read 2 (the paced alone), "counted as held"."""
    verdict = judge_drain(reviewed_fleet(), LOOPBACK, "node-2", drain(2, 5))
    offline = checked(verdict, "offline_at_once_pct")
    assert not offline.ok and offline.value == pytest.approx(143 / 300 * 100, abs=1e-3)
    assert "force-closed" in offline.why and "as lost" in offline.why, offline.why
    # A drain that empties its node in time: the paced alone, as before (20/s × the 3 s mean: 60 of 300).
    emptied = checked(judge_drain(reviewed_fleet(), LOOPBACK, "node-2", drain(20, 60)), "offline_at_once_pct")
    assert emptied.value == pytest.approx(60 / 300 * 100, abs=1e-3)


def test_a_faster_drain_is_said_only_where_the_planners_rate_empties_enough_by_the_deadline() -> None:
    # At 30 s the planner's 10/s empties node-2 (147 in 14.7 s); 2/s leaves 87 (29 %).
    verdict = judge_drain(reviewed_fleet(), LOOPBACK, "node-2", drain(2, 30))
    drop = checked(verdict, "force_close_drop_pct")
    assert not drop.ok and drop.why.endswith(": a faster drain, or lengthen the deadline"), drop.why


def test_a_force_close_within_the_alarms_line_passes_and_only_the_count_warns() -> None:
    # 10/s × 13 s closes 130 of node-2's 147: 17 force-closed, 5.7 % — over the line; 14 s leaves 7, 2.3 %.
    over = judge_drain(reviewed_fleet(), LOOPBACK, "node-2", drain(10, 13, (1000, 2000)))
    assert not checked(over, "force_close_drop_pct").ok and over.level is VerdictLevel.TYPED
    within = judge_drain(reviewed_fleet(), LOOPBACK, "node-2", drain(10, 14, (1000, 2000)))
    drop = checked(within, "force_close_drop_pct")
    assert drop.ok and drop.value == pytest.approx(7 / 300 * 100, abs=1e-3) and not says_a_move(drop.why)
    assert within.level is VerdictLevel.OK  # (force_closed_at_deadline and offline_at_once_pct warn)


def test_the_interviews_drain_force_closes_nothing_and_passes() -> None:
    verdict = judge_drain(fleet(), CAPACITY, "gw-003", drain(833, 600, (1000, 31000)))
    drop = checked(verdict, "force_close_drop_pct")
    assert drop.ok and drop.value == 0 and verdict.level is VerdictLevel.OK


def test_the_planner_lengthens_a_deadline_that_would_force_close_over_the_alarms_line() -> None:
    """A fleet whose hints reach only 2 s (100 closes/s at most) and whose other lines are far: a 250 k node
    at 100/s leaves 190 k of 2.95 M (6.4 %) at the 10 min drain window, under every line the planner
    lengthened its deadline for — its own guard now types it. The planner empties the node instead."""
    short_hints = dataclasses.replace(CAPACITY, hint_max_ms=2000)
    loose = Thresholds().replace(reconnect_rate_multiple=1000)
    snap = fleet(100, cpu_pct=5.0, extra=[node("big", connections=250_000, cpu_pct=5.0, accepts_per_s=20.0)])
    plan = plan_drain(snap, short_hints, "big", loose)
    assert (plan.rate_per_s, plan.limited_by) == (100.0, "hint_reach")
    assert (plan.deadline_s, plan.force_closed) == (2500.0, 0)
    verdict = judge_drain(snap, short_hints, "big", plan.request(), loose)
    assert checked(verdict, "force_close_drop_pct").ok and verdict.level is VerdictLevel.OK
