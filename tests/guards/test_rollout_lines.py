"""A rollout start judged against the pause line it asks for, the largest batch it could take, and words
that advise only what exists: found on a real loopback fleet (`stormdeck controller` over 3 `gateway
serve` nodes, docs/gateway.md), where a start passed at `cpu_now_pct 18.2 ≤ 75` and sat "paused: b CPU 18 %
> 15 %" a second later, and a batch of 1 was told to be "a smaller batch"."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from console.guards import Thresholds, judge_rollout_resume, judge_rollout_start
from console.guards.rollout import BATCH_CHECKS, batch_checks_failing, largest_safe_batch_size
from console.protocol import (
    AdmissionSettings,
    Check,
    NodeState,
    RolloutMode,
    RolloutRequest,
    RolloutState,
    RolloutStatus,
    Verdict,
    VerdictLevel,
)
from tests.fleet_builders import node, snapshot
from tests.guards.fleets import CAPACITY, fleet
from tests.guards.test_properties import capacity_strategy, snapshot_strategy


def start(batch_size: int = 1, pause_cpu_pct: float = 75.0, **fields) -> RolloutRequest:
    return RolloutRequest(
        batch_size=batch_size, interval_s=20, mode=RolloutMode.DRAIN, pause_cpu_pct=pause_cpu_pct, **fields
    )


def named(verdict: Verdict, name: str) -> Check:
    return next(c for c in verdict.checks if c.name == name)


#: Words that tell the operator what to do about a failure: a passing check carries none of them.
REMEDIES = ("a smaller batch", "wait for", "add capacity", "shed ", "undrain ", "raise", "a higher", "lower ")


# --- 1. the pause line the request asks for -----------------------------------------------------------

#: Three nodes at 18.2 % CPU at most: under the seed's 75 % line, over the 15 % the reviewer asked for.
WARM = snapshot([node("a", cpu_pct=12.0), node("b", cpu_pct=18.2), node("c", cpu_pct=9.0)], headroom_pct=50.0)


def test_a_start_is_judged_against_the_pause_line_it_asks_for() -> None:
    """`--pause-cpu 15` on a fleet at 18.2 %: the rollout would pause before its first batch."""
    verdict = judge_rollout_start(WARM, CAPACITY, start(pause_cpu_pct=15))
    cpu = named(verdict, "cpu_now_pct")
    assert (cpu.value, cpu.limit, cpu.ok) == (18.2, 15, False)
    assert verdict.level is VerdictLevel.BLOCKED
    # In the request's terms: its pause line, and that the rollout would pause at once.
    assert "15 %" in cpu.why and "pause_cpu_pct" in cpu.why and "pause at once" in cpu.why, cpu.why
    assert named(verdict, "survivor_cpu_vs_pause_pct").limit == 15
    # The seed's line when the request asks for it (the protocol's default, 75).
    at_default = judge_rollout_start(WARM, CAPACITY, RolloutRequest(batch_size=1, interval_s=20))
    assert named(at_default, "cpu_now_pct").limit == 75 and at_default.level is VerdictLevel.OK


def test_a_pause_line_above_the_configured_one_is_judged_at_the_configured_one() -> None:
    """A looser line is asked for by typing the fleet's name (pause_cpu_pct); the fleet is no healthier for
    it: CPU over the configured line still holds the start, and says that line is the fleet's."""
    hot = snapshot([node("a", cpu_pct=78.0), node("b", cpu_pct=30.0), node("c")], headroom_pct=50.0)
    verdict = judge_rollout_start(hot, CAPACITY, start(pause_cpu_pct=90))
    cpu = named(verdict, "cpu_now_pct")
    assert (cpu.limit, cpu.ok, verdict.level) == (75, False, VerdictLevel.BLOCKED)
    assert "cpu_pause_pct" in cpu.why and "shed load with admission" in cpu.why, cpu.why


def test_survivor_cpu_over_the_requested_line_asks_first() -> None:
    """The batch's drain projected over the asked-for line: the rollout would pause mid-way."""
    calm = fleet(count=4, cpu_pct=20.0)
    assert judge_rollout_start(calm, CAPACITY, start(pause_cpu_pct=75)).level is VerdictLevel.OK
    verdict = judge_rollout_start(calm, CAPACITY, start(pause_cpu_pct=20.5))
    survivor = named(verdict, "survivor_cpu_vs_pause_pct")
    assert survivor.limit == 20.5 and not survivor.ok and verdict.level is VerdictLevel.TYPED


# --- 2. the largest batch that passes -----------------------------------------------------------------

#: The reviewer's fleet: 3 nodes at 50 % of their room — a batch of 2 leaves 25 k of room for 50 k.
HALF = fleet(count=3, connections=25_000)


def test_the_verdict_projects_the_largest_batch_that_passes() -> None:
    blocked = judge_rollout_start(HALF, CAPACITY, start(batch_size=2))
    assert blocked.level is VerdictLevel.BLOCKED and not named(blocked, "batch_connections").ok
    assert blocked.projections["largest_safe_batch_size"] == 1
    assert largest_safe_batch_size(HALF, CAPACITY, start(batch_size=2)) == 1
    # A calm 20-node fleet: 9 × 27 k fit in the other 11's 253 k of room, 10 do not (243 k and 230 k) —
    # where the concurrent drains allow that many.
    assert largest_safe_batch_size(fleet(), CAPACITY, start(batch_size=2)) == 9
    capped = Thresholds(max_concurrent_drains=4)
    assert largest_safe_batch_size(fleet(), CAPACITY, start(batch_size=2), capped) == 4


def test_no_batch_passes_is_projected_as_0() -> None:
    full = fleet(count=3, connections=40_000)  # a batch of 1 moves 40 k into 20 k of room
    verdict = judge_rollout_start(full, CAPACITY, start(batch_size=1))
    assert verdict.projections["largest_safe_batch_size"] == 0


# --- 3. moves that exist -------------------------------------------------------------------------------


def test_a_batch_of_one_over_the_pause_line_is_not_told_a_smaller_batch() -> None:
    """`--batch-size 1` with the survivors projected at 24.7 % over a 10 % line."""
    t = Thresholds(cpu_pause_pct=10.0, drain_plan_cpu_margin_pct=5.0)
    calm = fleet(count=4, cpu_pct=9.5)
    verdict = judge_rollout_start(calm, CAPACITY, start(pause_cpu_pct=10), t)
    survivor = named(verdict, "survivor_cpu_vs_pause_pct")
    assert not survivor.ok and "smaller batch" not in survivor.why, survivor.why
    assert "wait for CPU to fall" in survivor.why and "admission" in survivor.why, survivor.why
    # A batch of 2 may still be told it.
    two = named(
        judge_rollout_start(calm, CAPACITY, start(batch_size=2, pause_cpu_pct=10), t),
        "survivor_cpu_vs_pause_pct",
    )
    assert "a smaller batch" in two.why
    # A line asked below the configured one may be raised to it.
    low = named(judge_rollout_start(calm, CAPACITY, start(pause_cpu_pct=9)), "survivor_cpu_vs_pause_pct")
    assert "a higher pause_cpu_pct (up to 75 %)" in low.why, low.why


def test_a_batch_of_one_over_the_concurrent_drains_waits_for_the_drains_under_way() -> None:
    draining = [
        node(f"gw-1{i:02d}", connections=5_000, drain_rate_per_s=20.0, state="draining") for i in range(3)
    ]
    verdict = judge_rollout_start(
        fleet(extra=draining), CAPACITY, start(), Thresholds(max_concurrent_drains=3)
    )
    drains = named(verdict, "concurrent_drains")
    assert not drains.ok and "smaller batch" not in drains.why, drains.why
    assert "wait for the 3 drains under way to finish" in drains.why, drains.why


def test_a_batch_of_one_over_the_pacing_budget_names_the_admission_limit_not_a_smaller_batch() -> None:
    tight = fleet(
        count=4, admission=AdmissionSettings(rate_per_s=20.0, max_connections=None, retry_after_s=(1, 30))
    )
    verdict = judge_rollout_start(tight, CAPACITY, start())
    pacing = named(verdict, "drain_pacing_per_s")
    assert not pacing.ok and "smaller batch" not in pacing.why, pacing.why
    # The rate that passes: 45/s of batch drain and 80/s of other inflow on 3 survivors.
    assert "raise admission rate_per_s to at least 41.7/s a node (now 20/s)" in pacing.why, pacing.why


# --- 4. no remedies on a passing check; the configured line said --------------------------------------


@pytest.mark.parametrize("max_nodes", [None, 0])
def test_a_passing_start_check_tells_nothing_to_do(max_nodes: int | None) -> None:
    """ "headroom_pct 58.6 ≥ 35 pass … and this fleet adds no nodes: wait for headroom to come back"."""
    calm = fleet(count=4).model_copy(update={"max_nodes": max_nodes})
    verdict = judge_rollout_start(calm, CAPACITY, start())
    assert verdict.level is VerdictLevel.OK
    for item in verdict.checks:
        assert item.ok and not any(word in item.why for word in REMEDIES), item


def test_a_passing_resume_headroom_tells_nothing_to_do() -> None:
    paused = RolloutStatus(
        state=RolloutState.PAUSED, mode=RolloutMode.DRAIN, batch_size=1, batch=1, batches=4
    )
    snap = fleet(count=4, rollout=paused).model_copy(update={"max_nodes": 0})
    headroom = named(judge_rollout_resume(snap), "headroom_pct")
    assert headroom.ok and not any(word in headroom.why for word in REMEDIES), headroom.why
    assert "46 % within the 35 % budget" in headroom.why


def test_the_pause_line_check_names_the_configured_line() -> None:
    """STORMDECK_CPU_PAUSE_PCT=10: "pause_cpu_pct 10 ≤ 10 pass  a pause line above the seed's 75 % …"."""
    t = Thresholds(cpu_pause_pct=10.0, drain_plan_cpu_margin_pct=5.0)
    check = named(
        judge_rollout_start(fleet(count=4, cpu_pct=5.0), CAPACITY, start(pause_cpu_pct=10), t),
        "pause_cpu_pct",
    )
    assert check.ok and "75" not in check.why and "10 %" in check.why, check.why
    above = named(
        judge_rollout_start(fleet(count=4, cpu_pct=5.0), CAPACITY, start(pause_cpu_pct=20), t),
        "pause_cpu_pct",
    )
    assert not above.ok and "configured 10 %" in above.why, above.why
    seed = named(judge_rollout_start(fleet(count=4), CAPACITY, start(pause_cpu_pct=90)), "pause_cpu_pct")
    assert "the outage seed's 75 %" in seed.why, seed.why


def test_a_passing_start_projects_the_largest_batch_not_its_own() -> None:
    verdict = judge_rollout_start(fleet(), CAPACITY, start(batch_size=2))
    assert verdict.level is VerdictLevel.OK and verdict.projections["largest_safe_batch_size"] == 9


@settings(max_examples=100, deadline=None)
@given(
    fleet=snapshot_strategy(),
    capacity=capacity_strategy,
    mode=st.sampled_from(list(RolloutMode)),
    pause=st.floats(1, 100),
)
def test_the_largest_safe_batch_passes_every_check_a_batch_size_changes(fleet, capacity, mode, pause) -> None:
    """What the form pre-fills and "what would pass" names: never a batch its own guard holds back."""
    assume(fleet.rollout.state not in (RolloutState.RUNNING, RolloutState.PAUSED))
    request = RolloutRequest(batch_size=1, interval_s=60, mode=mode, pause_cpu_pct=pause)
    largest = largest_safe_batch_size(fleet, capacity, request)
    if largest == 0:  # not even a batch of 1: it fails one of them, or there is no node in rotation
        ready = [n for n in fleet.nodes if n.state is NodeState.READY]
        assert not ready or batch_checks_failing(fleet, capacity, request)
        return
    sized = request.model_copy(update={"batch_size": largest})
    verdict = judge_rollout_start(fleet, capacity, sized)
    assert not [c.name for c in verdict.checks if not c.ok and c.name in BATCH_CHECKS], verdict
    assert verdict.projections["largest_safe_batch_size"] >= largest
