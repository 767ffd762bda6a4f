"""The drain guard judges the request as sent: its deadline's force-close burst on the survivors' CPU and on
the reconnect alarm's line, the planner keeps under that line, and a CPU projected past 100 % says so.
Review on graceful-drain (20 nodes × 500 k, 5000 handshakes/s a node): `--rate 833 --deadline 0 --hint
1000:15000` force-closed 508,515 at once and passed the survivors' CPU at 30.6 % while the forecast showed
100 %; the planner's 7,910 closes/s set off reconnect_rate_high (16× the steady 185/s) 17 s after it was
applied."""

from __future__ import annotations

import pytest

from console.guards import FleetCapacity, Thresholds, judge_drain, plan_drain
from console.protocol import AdmissionSettings, DrainRequest, FleetSnapshot, VerdictLevel
from tests.fleet_builders import node, snapshot
from tests.guards.fleets import CAPACITY, fleet

#: graceful-drain's capacity record as its simulator serves it (GET /v1/capacity).
GRACEFUL = FleetCapacity(
    handshakes_per_s=5000.0,
    cpu_pct_per_handshake_per_s=0.02,
    connections_per_node=800_000,
    steady_inflow_per_s=166.7,
    hint_max_ms=80_100,
)


def graceful(capacity_connections: int = 850_000) -> FleetSnapshot:
    """graceful-drain before its rollout: 20 nodes × 500 k at 25 % CPU, 185 reconnects/s. At 800 k a node
    (the scenario's) the survivors' headroom is 34.2 %, under the budget; at 850 k, 38 %."""
    members = [
        node(
            f"gw-{i:03d}",
            cpu_pct=25.3,
            connections=500_000,
            capacity_connections=capacity_connections,
            accepts_per_s=9.0,
            attempts_per_s=9.0,
        )
        for i in range(20)
    ]
    return snapshot(
        members, connections=10_000_000, attempts_per_s=185.0, accepts_per_s=180.0, headroom_pct=38.0
    )


def checked(verdict, name: str):
    return next(c for c in verdict.checks if c.name == name)


def failed(verdict) -> set[str]:
    return {c.name for c in verdict.checks if not c.ok}


def drain(rate: float, deadline_s: float, hint_ms: tuple[int, int] = (1000, 15000)) -> DrainRequest:
    return DrainRequest(rate_per_s=rate, deadline_s=deadline_s, hint_ms=hint_ms)


# --- 1. the force-close burst, at the requested rate --------------------------------------------------


def test_a_deadline_of_0_on_half_a_million_connections_is_blocked_on_the_survivors_cpu() -> None:
    """The review's repro: all 500 k force-closed at once come back over the 14 s hint window, 35.7 k a
    second on 19 survivors — 2.8 k handshakes a second on the busiest (skew 1.5), 56 CPU points more."""
    verdict = judge_drain(graceful(), GRACEFUL, "gw-010", drain(833, 0))
    burst = checked(verdict, "force_close_burst_per_s")
    assert burst.value == pytest.approx(500_000 / 14, abs=1)
    cpu = checked(verdict, "survivor_cpu_vs_abort_pct")
    busiest = 25.3 + (500_000 / 14 + 9) / 19 * 1.5 * 0.02
    assert cpu.value == pytest.approx(busiest, abs=0.01) and not cpu.ok
    assert verdict.projections["survivor_cpu_max_pct"] == pytest.approx(busiest, abs=0.01)
    assert verdict.level is VerdictLevel.BLOCKED
    assert "reconnect_rate_per_s" in failed(verdict)
    # What to do about a burst is not to slow the drain: that leaves more to force-close.
    assert "lengthen the deadline" in cpu.why and "slow the drain" not in cpu.why


def test_the_burst_is_the_requests_own_force_close() -> None:
    """`--deadline 600` at 833/s leaves 201 of 500,001: the burst read 0 (the safe rate's) beside it."""
    members = graceful().nodes
    members[10] = members[10].model_copy(update={"connections": 500_001})
    verdict = judge_drain(snapshot(members), GRACEFUL, "gw-010", drain(833, 600))
    assert checked(verdict, "force_closed_at_deadline").value == 201
    assert checked(verdict, "force_close_burst_per_s").value == pytest.approx(201 / 14, abs=1e-3)


def test_a_request_that_empties_the_node_in_time_has_no_burst() -> None:
    """On the demo the burst read 3,459 for a request that force-closes 0: the safe rate, slower than the
    request, would have left some. Here 170/s is safe (spare admission) and 833/s empties 27 k in 33 s."""
    tight = fleet(admission=AdmissionSettings(rate_per_s=30.0, max_connections=None, retry_after_s=(1, 30)))
    verdict = judge_drain(tight, CAPACITY, "gw-003", drain(833, 60, (1000, 31000)))
    assert verdict.projections["largest_safe_rate_per_s"] == 170
    assert checked(verdict, "force_closed_at_deadline").value == 0
    assert checked(verdict, "force_close_burst_per_s").value == 0


def test_a_shorter_deadline_never_lowers_the_level() -> None:
    levels = [
        judge_drain(graceful(), GRACEFUL, "gw-010", drain(833, deadline_s)).level
        for deadline_s in (700, 600, 300, 60, 10, 0)
    ]
    ranks = ["ok", "confirm", "typed", "blocked"]
    assert [ranks.index(level) for level in levels] == sorted(ranks.index(level) for level in levels)
    assert levels[0] is VerdictLevel.OK and levels[-1] is VerdictLevel.BLOCKED


# --- 2. the reconnect alarm's line ---------------------------------------------------------------------


def test_the_planners_rate_keeps_the_reconnects_under_the_alarms_line() -> None:
    """The alarm's line: 10 × the steady 166.7/s (the fleet's calm inflow) = 1,667/s; 185/s now leaves
    1,482/s for the drain's reconnects. The planner offered 7,910 (the survivors' CPU's limit)."""
    plan = plan_drain(graceful(), GRACEFUL, "gw-010")
    assert (plan.rate_per_s, plan.limited_by) == (1480, "reconnect_rate")
    verdict = judge_drain(graceful(), GRACEFUL, "gw-010", plan.request())
    assert verdict.level is VerdictLevel.OK, failed(verdict)
    line = checked(verdict, "reconnect_rate_per_s")
    assert (line.value, line.limit) == (pytest.approx(185 + 1480), pytest.approx(1667))
    assert verdict.projections["suggested_rate_per_s"] == 1480


def test_the_reviewers_drain_at_7910_is_typed_on_the_reconnect_line() -> None:
    verdict = judge_drain(graceful(), GRACEFUL, "gw-010", drain(7910, 600, (1000, 80_100)))
    line = checked(verdict, "reconnect_rate_per_s")
    assert not line.ok and line.level is VerdictLevel.TYPED
    assert (line.value, line.limit, line.bound) == (pytest.approx(185 + 7910), pytest.approx(1667), "max")
    assert "reconnect_rate_high" in line.why and "slow the drain" in line.why
    assert verdict.level is VerdictLevel.TYPED


def test_the_line_is_the_alarms_own_where_a_baseline_is_configured() -> None:
    t = Thresholds(reconnect_baseline_per_s=185.0)
    verdict = judge_drain(graceful(), GRACEFUL, "gw-010", drain(1000, 600, (1000, 11_000)), t)
    line = checked(verdict, "reconnect_rate_per_s")
    assert line.limit == pytest.approx(t.reconnect_rate_multiple * 185.0)


def test_the_line_is_the_alarms_learned_baseline_where_the_fleet_api_has_learned_one() -> None:
    """The alarm learns its steady rate over calm seconds (185/s on graceful-drain); the backend's calm
    inflow is 166.7: judged by that, the guard's line was 1,667 against the alarm's 1,850 — every manual
    drain during graceful-drain's own rollout failed it. Given the learned level (`SteadyAttempts`), the
    planner and the guard draw the alarm's line from it. (The server does not pass it yet: learned only after
    `baseline_learn_s`, it moved the line between the planner's pre-fill and the verdict.)"""
    verdict = judge_drain(
        graceful(), GRACEFUL, "gw-010", drain(1000, 600, (1000, 11_000)), calm_baseline_per_s=185.0
    )
    line = checked(verdict, "reconnect_rate_per_s")
    assert line.limit == pytest.approx(1850) and "learned" in line.why, line.why
    plan = plan_drain(graceful(), GRACEFUL, "gw-010", calm_baseline_per_s=185.0)
    assert (plan.rate_per_s, plan.limited_by) == (1660, "reconnect_rate")
    # a configured baseline is the alarm's own: it stays first
    configured = Thresholds(reconnect_baseline_per_s=200.0)
    verdict = judge_drain(graceful(), GRACEFUL, "gw-010", drain(1000, 600, (1000, 11_000)), configured, 185.0)
    assert checked(verdict, "reconnect_rate_per_s").limit == pytest.approx(2000)


def test_drains_under_way_count_before_the_first_of_their_reconnects_are_back() -> None:
    """graceful-drain's rollout drains two nodes at 833/s: 1,666 reconnects/s once their hints run, on
    the steady 166.7 — over the line already, though this second's attempts are 185."""
    members = graceful().nodes
    for i in (0, 1):
        members[i] = node(f"gw-00{i}", state="draining", connections=499_000, drain_rate_per_s=833.0)
    busy = snapshot(members, connections=10_000_000, attempts_per_s=185.0, accepts_per_s=162.0)
    plan = plan_drain(busy, GRACEFUL, "gw-010")
    assert (plan.rate_per_s, plan.limited_by) == (0, "reconnect_rate")
    verdict = judge_drain(busy, GRACEFUL, "gw-010", drain(10, 86_400, (1000, 2000)))
    line = checked(verdict, "reconnect_rate_per_s")
    assert not line.ok and line.value == pytest.approx(166.7 + 1666 + 10)
    assert "wait for the 2 drains under way to finish" in line.why and "slow the drain" not in line.why


def test_with_no_calm_second_to_learn_from_the_line_is_a_note() -> None:
    """A storm's attempts are no steady rate (the alarm learns none from them either)."""
    storm = fleet(cpu_pct=90.0)
    verdict = judge_drain(storm, CAPACITY, "gw-003", drain(10, 3600))
    line = checked(verdict, "reconnect_rate_per_s")
    assert line.level is VerdictLevel.OK and line.limit is None and not line.ok
    assert "no calm" in line.why


def test_a_plan_whose_drain_window_leaves_a_burst_over_the_line_lengthens_its_deadline() -> None:
    """A slow safe rate leaves most of the node to the deadline: the plan's deadline empties it instead of
    force-closing 21 k into its own line."""
    plan = plan_drain(fleet(cpu_pct=74.9), CAPACITY, "gw-003", Thresholds(drain_plan_cpu_margin_pct=0))
    assert 0 < plan.rate_per_s < 27_000 / 600
    assert plan.force_closed == 0 and plan.deadline_s >= 27_000 / plan.rate_per_s
    verdict = judge_drain(
        fleet(cpu_pct=74.9), CAPACITY, "gw-003", plan.request(), Thresholds(drain_plan_cpu_margin_pct=0)
    )
    assert verdict.level is VerdictLevel.OK, failed(verdict)


# --- 3. a CPU projected past 100 % -------------------------------------------------------------------


def test_a_cpu_projection_over_100_is_said_as_demand_over_capacity() -> None:
    """Verdicts read `survivor_cpu_vs_abort_pct 428 ≤ 80`: a CPU share over 100. The checks say what the
    figure is — the busiest survivor's CPU demand in % of its capacity — and past 100, that it is over it."""
    over = judge_drain(fleet(cpu_pct=70.0), CAPACITY, "gw-003", drain(30_000, 600, (1000, 301_000)))
    for name in ("survivor_cpu_vs_pause_pct", "survivor_cpu_vs_abort_pct"):
        cpu = checked(over, name)
        assert cpu.value > 100 and "% of its capacity" in cpu.why and "over capacity" in cpu.why, cpu
    calm = judge_drain(fleet(), CAPACITY, "gw-003", drain(833, 600, (1000, 31000)))
    cpu = checked(calm, "survivor_cpu_vs_pause_pct")
    assert cpu.ok and "% of its capacity" in cpu.why and "over capacity" not in cpu.why
