"""What a refused drain is told about its rate: a drain at the planner's rate that failed only the headroom
still read "What would pass: … a drain at ≤ 7910 closes/s per node (largest safe rate) passes these checks"
(review, graceful-drain) — no rate passes a check the rate does not change. And the planner's new limit,
the reconnect alarm's line, in the operator's words."""

from __future__ import annotations

from console.guards import judge_drain, plan_drain
from console.model.actions.answer import what_would_pass
from console.model.actions.drain import no_rate_text, plan_basis
from console.protocol import DrainRequest
from tests.guards.test_drain_request import GRACEFUL, graceful


def test_a_drain_failing_only_the_headroom_is_not_told_a_rate_passes() -> None:
    fleet = graceful(capacity_connections=800_000)  # the scenario's: 34.2 % headroom once a node leaves
    plan = plan_drain(fleet, GRACEFUL, "gw-010")
    verdict = judge_drain(fleet, GRACEFUL, "gw-010", plan.request())
    assert {c.name for c in verdict.checks if not c.ok} == {"headroom_after_pct"}
    hints = what_would_pass(verdict)
    assert hints == ["headroom_after_pct ≥ 35 (now 34.2)"], hints


def test_a_drain_failing_its_rate_and_the_headroom_is_told_the_rate_is_not_all() -> None:
    fleet = graceful(capacity_connections=800_000)
    request = DrainRequest(rate_per_s=7910, deadline_s=600, hint_ms=(1000, 80_100))
    verdict = judge_drain(fleet, GRACEFUL, "gw-010", request)
    failing = {c.name for c in verdict.checks if not c.ok}
    assert {"headroom_after_pct", "reconnect_rate_per_s"} <= failing
    said = what_would_pass(verdict)[-1]
    assert said.startswith("a drain at ≤ 1480 closes/s per node (largest safe rate) passes")
    assert "these checks" not in said and "not headroom_after_pct (no rate alone passes it)" in said, said


def test_a_plan_limited_by_the_reconnect_line_says_so() -> None:
    plan = {
        "rate_per_s": 1480.0,
        "deadline_s": 600.0,
        "hint_ms": (1000, 15_800),
        "limited_by": "reconnect_rate",
        "cpu_margin_pct": 5.0,
    }
    assert (
        plan_basis(plan) == "largest safe rate, limited by the reconnect alarm's line (reconnect_rate_high)"
    )
    none = no_rate_text({**plan, "rate_per_s": 0.0})
    assert none.startswith("no safe rate now (limited by the reconnect alarm's line")
    assert "wait for the drains under way to finish, or for the reconnects to fall" in none
    assert "add capacity" not in none


def test_a_drain_whose_deadline_force_closes_is_told_the_deadline_too() -> None:
    """`--deadline 0` on 500 k: "a drain at ≤ 1480 closes/s … passes" — at that rate and deadline all
    500 k are still force-closed at once. The rate is named with a deadline that empties the node."""
    request = DrainRequest(rate_per_s=833, deadline_s=0, hint_ms=(1000, 15_000))
    verdict = judge_drain(graceful(), GRACEFUL, "gw-010", request)
    said = what_would_pass(verdict)[-1]
    assert said.startswith(
        "a drain at ≤ 1480 closes/s per node (largest safe rate) with a deadline that empties"
    ), said
