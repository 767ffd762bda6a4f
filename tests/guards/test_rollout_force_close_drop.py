"""A drain-mode rollout's batch force-close against the connections_drop alarm's line.

The drain guard types a drain whose deadline force-closes more than `connections_drop_pct` of the fleet at
once (`force_close_drop_pct`, tests/guards/test_drain_force_close_drop.py): the critical connections_drop
alarm counts a forced close as lost, not held. A rollout's batch drains the same way — at the backend's batch
drain rate and deadline, or the `drain_rate_per_s` asked for — and its start said nothing of it: a batch of
2 nodes at 1 close/s over 600 s leaves 800 of a 10,000-client fleet to the deadline (8 %), judged ok."""

from __future__ import annotations

import dataclasses

import pytest

from console.guards import judge_drain, judge_rollout_start
from console.protocol import (
    AdmissionSettings,
    Check,
    DrainRequest,
    FleetSnapshot,
    RolloutMode,
    RolloutRequest,
    Verdict,
    VerdictLevel,
)
from tests.fleet_builders import node, snapshot
from tests.guards.fleets import LOOPBACK, says_a_move

#: A backend that drains each batch node at 1 close/s and force-closes the rest at 600 s.
SLOW_BATCHES = dataclasses.replace(LOOPBACK, batch_drain_rate_per_s=1.0, batch_drain_deadline_s=600.0)


def ten_nodes() -> FleetSnapshot:
    """10 nodes of 1,000 clients each, admitting 100/s a node: nothing but the force-close is near a line."""
    members = [node(f"node-{i}", cpu_pct=5.0, connections=1_000, accepts_per_s=0.0) for i in range(1, 11)]
    admission = AdmissionSettings(rate_per_s=100.0, max_connections=None, retry_after_s=(1, 30))
    return snapshot(members, headroom_pct=90.0, accepts_per_s=0.0, admission=admission)


def start(
    batch_size: int, drain_rate_per_s: float | None = None, mode: RolloutMode = RolloutMode.DRAIN
) -> RolloutRequest:
    return RolloutRequest(batch_size=batch_size, interval_s=90, drain_rate_per_s=drain_rate_per_s, mode=mode)


def drop(verdict: Verdict) -> Check:
    found = [c for c in verdict.checks if c.name == "force_close_drop_pct"]
    assert found, f"no force_close_drop_pct check; judged {verdict.level.value}, {verdict.projections}"
    return found[0]


def test_a_batch_whose_deadline_force_closes_over_the_alarms_line_is_typed_naming_the_alarm() -> None:
    verdict = judge_rollout_start(ten_nodes(), SLOW_BATCHES, start(2))
    held = drop(verdict)
    # 1/s × 600 s closes 600 of each node's 1,000: 2 × 400 force-closed at once, 8 % of the fleet.
    assert not held.ok and held.value == pytest.approx(8.0) and held.limit == 5.0, held
    assert held.level is VerdictLevel.TYPED and verdict.level is VerdictLevel.TYPED
    assert verdict.typed_expected == ten_nodes().fleet
    assert "connections_drop" in held.why and "critical" in held.why and "as lost" in held.why, held.why
    # 1.3/s leaves 220 a node (4.4 %); a batch of 1 leaves 400 (4 %).
    assert held.why.endswith(
        ": a batch drain rate of at least 1.3 closes/s per node (drain_rate_per_s), or a smaller batch"
    ), held.why


def test_the_moves_named_pass() -> None:
    assert drop(judge_rollout_start(ten_nodes(), SLOW_BATCHES, start(2, drain_rate_per_s=1.3))).ok
    one = judge_rollout_start(ten_nodes(), SLOW_BATCHES, start(1))
    held = drop(one)
    assert held.ok and held.value == pytest.approx(4.0) and not says_a_move(held.why), held
    assert one.level is VerdictLevel.OK, [c for c in one.checks if not c.ok]


def test_the_rate_asked_for_is_judged_and_a_batch_of_one_over_the_line_is_not_told_smaller() -> None:
    held = drop(judge_rollout_start(ten_nodes(), SLOW_BATCHES, start(1, drain_rate_per_s=0.5)))
    # 0.5/s × 600 s closes 300: 700 force-closed, 7 %; the least rate to a tenth under the line, 0.9/s,
    # leaves 460 (4.6 %).
    assert not held.ok and held.value == pytest.approx(7.0), held
    assert held.why.endswith(": a batch drain rate of at least 0.9 closes/s per node (drain_rate_per_s)"), (
        held.why
    )


def test_the_figure_is_the_drain_guards_for_the_same_node_rate_and_deadline() -> None:
    rollout = drop(judge_rollout_start(ten_nodes(), SLOW_BATCHES, start(1, drain_rate_per_s=0.5)))
    request = DrainRequest(rate_per_s=0.5, deadline_s=600, hint_ms=(1000, 30_000))
    drained = drop(judge_drain(ten_nodes(), SLOW_BATCHES, "node-1", request))
    assert (
        rollout.value == drained.value and rollout.limit == drained.limit and rollout.level is drained.level
    )


def test_a_batch_the_deadline_empties_passes_and_abrupt_mode_has_its_own_note() -> None:
    assert drop(judge_rollout_start(ten_nodes(), SLOW_BATCHES, start(2, drain_rate_per_s=2))).value == 0
    abrupt = judge_rollout_start(ten_nodes(), SLOW_BATCHES, start(2, mode=RolloutMode.ABRUPT))
    assert all(c.name != "force_close_drop_pct" for c in abrupt.checks)
