"""The rollout guard judges a batch's drain at the rate the request asks for (`drain_rate_per_s`), and a
start its pacing holds back names the drain rate that fits beside the admission rate that makes room (the
seeds' graceful drain is a rate the operator picks: 833 closes/s per node over 10 minutes)."""

from __future__ import annotations

import dataclasses
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from console.guards import judge_rollout_start
from console.protocol import RolloutRequest, VerdictLevel
from tests.fleet_builders import node
from tests.guards.test_rollout_pacing_moves import CONTROLLER, loopback, pacing

RATE = re.compile(r"a drain rate of at most ([\d.]+) closes/s per node \(drain_rate_per_s")


def start(batch_size: int = 1, drain_rate_per_s: float | None = None) -> RolloutRequest:
    return RolloutRequest(batch_size=batch_size, interval_s=90, drain_rate_per_s=drain_rate_per_s)


def test_a_slower_drain_passes_where_the_backends_rate_is_blocked() -> None:
    """3 loopback nodes at admission 30/s: a node's 100/s (the controller's) against 2 survivors' 60/s."""
    backends = judge_rollout_start(loopback(), CONTROLLER, start())
    assert backends.level is VerdictLevel.BLOCKED and not pacing(backends).ok
    slower = judge_rollout_start(loopback(), CONTROLLER, start(drain_rate_per_s=20))
    held = pacing(slower)
    assert held.ok and held.value == 20.0 and held.limit == 60.0, held
    assert "drain_rate_per_s 20/s per node, 600 s deadline" in held.why, held.why
    assert slower.level is not VerdictLevel.BLOCKED, [c for c in slower.checks if not c.ok]
    assert slower.projections["batch_drain_s"] == 50.0  # 1 000 connections at 20/s


def test_a_faster_drain_than_the_backends_is_judged_at_its_own_rate() -> None:
    fits = loopback(rate_per_s=80.0)  # 2 survivors admit 160/s: the backend's 100/s fits
    assert pacing(judge_rollout_start(fits, CONTROLLER, start())).ok
    faster = pacing(judge_rollout_start(fits, CONTROLLER, start(drain_rate_per_s=200)))
    assert not faster.ok and faster.value == 200.0, faster


def test_the_refusal_names_the_drain_rate_that_fits_and_it_passes() -> None:
    verdict = judge_rollout_start(loopback(), CONTROLLER, start())
    held = pacing(verdict)
    assert held.why.endswith(
        ": raise admission rate_per_s to at least 50/s a node (now 30/s), or a drain rate of at most 60 "
        "closes/s per node (drain_rate_per_s)"
    ), held.why
    assert verdict.projections["pacing_drain_rate_per_s"] == 60.0
    assert pacing(judge_rollout_start(loopback(), CONTROLLER, start(drain_rate_per_s=60))).ok
    # Two batch nodes share the 3 survivors' 90/s.
    two = pacing(judge_rollout_start(loopback(count=5), CONTROLLER, start(2)))
    assert "a drain rate of at most 45 closes/s per node" in two.why, two.why


def test_a_rate_the_deadline_cuts_short_says_what_it_force_closes() -> None:
    """50 000 connections at 60/s: 36 000 in the 600 s deadline, 14 000 force-closed at once then."""
    fleet = loopback()
    full = [node(n.id, cpu_pct=5.0, connections=50_000, accepts_per_s=0.0) for n in fleet.nodes]
    held = pacing(judge_rollout_start(fleet.model_copy(update={"nodes": full}), CONTROLLER, start()))
    assert (
        "a drain rate of at most 60 closes/s per node (drain_rate_per_s; the 600 s deadline then " in held.why
    )
    assert "force-closes 14,000)" in held.why, held.why


def test_a_drain_rate_that_does_not_pace_the_batch_is_not_named() -> None:
    """Where the drains under way fill the survivors' room already, no rate of this batch fits."""
    fleet = loopback(count=4)
    busy = node("node-4", state="draining", drain_rate_per_s=60.0, connections=1_000, accepts_per_s=0.0)
    fleet = fleet.model_copy(update={"nodes": [*fleet.nodes[:3], busy]})
    verdict = judge_rollout_start(fleet, CONTROLLER, start())
    assert not pacing(verdict).ok and "drain rate" not in pacing(verdict).why, pacing(verdict).why
    assert "pacing_drain_rate_per_s" not in verdict.projections


@settings(max_examples=150, deadline=None)
@given(
    count=st.integers(min_value=3, max_value=12),
    rate_per_s=st.floats(min_value=1.0, max_value=200.0).map(lambda r: round(r, 1)),
    accepts_per_s=st.floats(min_value=0.0, max_value=60.0).map(lambda r: round(r, 1)),
    batch=st.integers(min_value=1, max_value=11),
    connections=st.sampled_from([0, 10, 500, 1_000, 90_000]),
    backend_rate=st.sampled_from([100.0, 833.0]),
)
def test_every_drain_rate_named_passes_the_check(
    count: int, rate_per_s: float, accepts_per_s: float, batch: int, connections: int, backend_rate: float
) -> None:
    batch = min(batch, count - 1)
    fleet = loopback(count, rate_per_s, accepts_per_s)
    fleet = fleet.model_copy(
        update={"nodes": [n.model_copy(update={"connections": connections}) for n in fleet.nodes]}
    )
    capacity = dataclasses.replace(CONTROLLER, batch_drain_rate_per_s=backend_rate)
    verdict = judge_rollout_start(fleet, capacity, start(batch))
    held = pacing(verdict)
    named = RATE.search(held.why)
    if held.ok or named is None:
        return
    rate = float(named.group(1))
    assert rate == verdict.projections["pacing_drain_rate_per_s"] and 0 < rate < backend_rate
    assert pacing(judge_rollout_start(fleet, capacity, start(batch, rate))).ok, held.why
