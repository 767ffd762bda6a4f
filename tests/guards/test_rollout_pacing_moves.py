"""A rollout held back by its batch's drain pacing names only moves that would pass it (found in review: a
3-node loopback fleet at admission 30/s a node — every rollout blocked, the batch draining at the backend's
fixed 100/s over survivors admitting 60/s, and the advice "wait for the inflow to fall" at an inflow of 0).

The rollout API takes no drain rate (the backend's `batch_drain_rate_per_s` is fixed), so the moves are the
admission rate that makes room (named, fleet-wide), a smaller batch where a batch of 1 fits, the inflow
falling where there is inflow to fall and its falling would make the room, and capacity where it can grow."""

from __future__ import annotations

import dataclasses
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from console.guards import judge_drain, judge_rollout_start
from console.protocol import AdmissionSettings, Check, DrainRequest, FleetSnapshot, RolloutRequest, Verdict
from tests.fleet_builders import node, snapshot
from tests.guards.fleets import LOOPBACK

#: A controller's loopback fleet: 500 handshakes/s a node (planned), each batch node drained at its fixed
#: 100/s over 600 s (`console.gateway.rollout.DEFAULT_BATCH_DRAIN`).
CONTROLLER = dataclasses.replace(LOOPBACK, batch_drain_rate_per_s=100.0, batch_drain_deadline_s=600.0)
RAISE = re.compile(r"raise admission rate_per_s to at least ([\d.]+)/s a node")


def admitting(rate_per_s: float) -> AdmissionSettings:
    return AdmissionSettings(rate_per_s=rate_per_s, max_connections=None, retry_after_s=(1, 30))


def loopback(
    count: int = 3, rate_per_s: float = 30.0, accepts_per_s: float = 0.0, max_nodes: int | None = None
) -> FleetSnapshot:
    members = [
        node(f"node-{i}", cpu_pct=5.0, connections=1_000, accepts_per_s=accepts_per_s)
        for i in range(1, count + 1)
    ]
    fleet = snapshot(
        members, headroom_pct=90.0, accepts_per_s=accepts_per_s * count, admission=admitting(rate_per_s)
    )
    return fleet.model_copy(update={"max_nodes": count if max_nodes is None else max_nodes})


def pacing(verdict: Verdict) -> Check:
    return next(c for c in verdict.checks if c.name == "drain_pacing_per_s")


def start(batch_size: int = 1) -> RolloutRequest:
    return RolloutRequest(batch_size=batch_size, interval_s=90)


def test_a_low_admission_names_the_rate_that_fits_and_no_wait_for_an_inflow_of_zero() -> None:
    verdict = judge_rollout_start(loopback(), CONTROLLER, start())
    held = pacing(verdict)
    assert not held.ok and verdict.level == "blocked"
    assert (held.value, held.limit) == (100.0, 60.0)  # a node's 100/s against 2 survivors × 30/s
    assert "raise admission rate_per_s to at least 50/s a node (now 30/s)" in held.why, held.why
    assert "inflow" not in held.why and "smaller batch" not in held.why, held.why
    assert verdict.projections["pacing_admission_rate_per_s"] == 50.0
    # ... and it is a move that passes: at 50/s a node the batch's drain fits.
    assert pacing(judge_rollout_start(loopback(rate_per_s=50.0), CONTROLLER, start())).ok


def test_the_inflow_is_named_only_where_its_falling_makes_the_room() -> None:
    """2 survivors at 80/s admit 160/s; a 100/s batch fits once their 40/s of other inflow is down to 30."""
    busy = judge_rollout_start(loopback(rate_per_s=80.0, accepts_per_s=25.0), CONTROLLER, start())
    assert not pacing(busy).ok and "wait for the inflow to fall" in pacing(busy).why, pacing(busy).why
    # At 40/s a node no fall of the inflow makes 100/s of room on 80/s: not said.
    slow = judge_rollout_start(loopback(rate_per_s=40.0, accepts_per_s=25.0), CONTROLLER, start())
    assert "inflow" not in pacing(slow).why, pacing(slow).why


def test_add_capacity_only_where_the_fleet_can_grow() -> None:
    can_grow = judge_rollout_start(loopback(max_nodes=16), CONTROLLER, start())
    assert "add capacity first" in pacing(can_grow).why
    assert "add capacity" not in pacing(judge_rollout_start(loopback(), CONTROLLER, start())).why


def test_a_drain_over_drains_that_fill_the_room_is_not_told_to_wait_for_an_inflow_of_zero() -> None:
    """The drain guard's same move: drains under way closing 70/s of 2 × 30/s, no other inflow."""
    busy = loopback(count=4)
    draining = [
        node(f"node-{i}", state="draining", drain_rate_per_s=35.0, connections=1_000, accepts_per_s=0.0)
        for i in (3, 4)
    ]
    fleet = busy.model_copy(update={"nodes": [*busy.nodes[:2], *draining]})
    verdict = judge_drain(
        fleet, CONTROLLER, "node-1", DrainRequest(rate_per_s=5, deadline_s=600, hint_ms=(1000, 30000))
    )
    held = pacing(verdict)
    assert not held.ok and "inflow" not in held.why, held.why
    assert RAISE.search(held.why), held.why


@settings(max_examples=150, deadline=None)
@given(
    count=st.integers(min_value=3, max_value=12),
    rate_per_s=st.floats(min_value=1.0, max_value=200.0).map(lambda r: round(r, 1)),
    accepts_per_s=st.floats(min_value=0.0, max_value=60.0).map(lambda r: round(r, 1)),
    batch=st.integers(min_value=1, max_value=11),
    can_grow=st.booleans(),
)
def test_every_pacing_move_named_passes_the_check(
    count: int, rate_per_s: float, accepts_per_s: float, batch: int, can_grow: bool
) -> None:
    """Whatever the fleet, each move the failed pacing check names passes it once made, and one is named."""
    batch = min(batch, count - 1)
    fleet = loopback(count, rate_per_s, accepts_per_s, max_nodes=16 if can_grow else None)
    held = pacing(judge_rollout_start(fleet, CONTROLLER, start(batch)))
    if held.ok:
        return
    raise_to = RAISE.search(held.why)
    named = ("add capacity first", "a smaller batch", "wait for the inflow to fall")
    assert raise_to or any(move in held.why for move in named), held.why
    if raise_to:
        # (With the batch too where no admission under the handshake ceiling fits it: "a batch of 1 and …")
        sized = start(1 if "a batch of 1 and raise admission" in held.why else batch)
        raised = loopback(count, float(raise_to.group(1)), accepts_per_s)
        assert pacing(judge_rollout_start(raised, CONTROLLER, sized)).ok, held.why
    if "wait for the inflow to fall" in held.why:
        assert pacing(judge_rollout_start(loopback(count, rate_per_s, 0.0), CONTROLLER, start(batch))).ok
    if "a smaller batch" in held.why:
        assert pacing(judge_rollout_start(fleet, CONTROLLER, start(1))).ok, held.why
