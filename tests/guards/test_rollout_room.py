"""The rollout guard advises "add capacity" only where the fleet can grow: its snapshot's `max_nodes` counted
by the same rule as the add guard, the alarms and the drain planner (`console.guards.capacity.NodeRoom`).
Where the snapshot says the fleet cannot add nodes — `max_nodes` 0 (a controller over a nodes file) or its
nodes at `max_nodes` — each check says why not and what that fleet can do; today's words where it can add
and where the snapshot does not say (null: an older server)."""

from __future__ import annotations

import pytest

from console.guards import judge_rollout_resume, judge_rollout_start
from console.protocol import (
    FleetSnapshot,
    NodeState,
    RolloutMode,
    RolloutRequest,
    RolloutState,
    RolloutStatus,
    Verdict,
)
from tests.fleet_builders import node, snapshot
from tests.guards.fleets import CAPACITY, fleet

#: Today's words, kept where the fleet can add nodes and where its snapshot does not say.
START_HEADROOM_CAN_ADD = (
    "no safe restart below this headroom (outage seed): add capacity instead of restarting"
)
BATCH_CAN_ADD = (
    "the first batch's connections against the room left on the other nodes: a smaller batch, or add "
    "capacity first"
)
RESUME_CAN_ADD = (
    "budget (outage seed): each batch resumed restarts more nodes — add capacity first, or wait for headroom "
    "to come back"
)

#: 4 nodes: room for 12 more under `fleet up`'s 16, none where the fleet adds none, none at its most (4).
CAN_OR_UNSAID = [None, 16]
CANNOT = [(0, "this fleet adds no nodes"), (4, "this fleet is at its most, 4 nodes")]


def _said(snap: FleetSnapshot, max_nodes: int | None) -> FleetSnapshot:
    return snap.model_copy(update={"max_nodes": max_nodes})


def _why(verdict: Verdict, name: str) -> str:
    return next(c.why for c in verdict.checks if c.name == name)


def _start(snap: FleetSnapshot, batch_size: int = 1) -> Verdict:
    return judge_rollout_start(
        snap, CAPACITY, RolloutRequest(batch_size=batch_size, interval_s=90, mode=RolloutMode.DRAIN)
    )


# --- start: headroom_pct (blocked) ----------------------------------------------------------------------

#: 4 × 35 k of 4 × 50 k: 30 % headroom, under the 35 % budget — the start is blocked on it.
TIGHT = fleet(count=4, connections=35_000)


@pytest.mark.parametrize("max_nodes", CAN_OR_UNSAID)
def test_a_start_under_the_budget_says_add_capacity_where_the_fleet_can_or_does_not_say(
    max_nodes: int | None,
) -> None:
    verdict = _start(_said(TIGHT, max_nodes))
    assert _why(verdict, "headroom_pct") == START_HEADROOM_CAN_ADD


@pytest.mark.parametrize(("max_nodes", "why"), CANNOT)
def test_a_start_under_the_budget_on_a_fleet_that_cannot_grow_says_wait(max_nodes: int, why: str) -> None:
    """The seed's "add capacity instead of restarting" sent the operator to `c`, which refuses there."""
    said = _why(_start(_said(TIGHT, max_nodes)), "headroom_pct")
    assert said == (
        f"no safe restart below this headroom (outage seed), and {why}: wait for headroom to come back"
    ), said


def test_a_start_under_the_budget_without_room_names_the_nodes_to_undrain() -> None:
    """Headroom counts the nodes in rotation: a drained or draining node undrained brings its room back."""
    out = [
        node("gw-004", state=NodeState.DRAINED, connections=0),
        node("gw-005", state=NodeState.DRAINING, connections=3_000, drain_rate_per_s=50.0),
    ]
    said = _why(_start(_said(fleet(count=4, connections=35_000, extra=out), 6)), "headroom_pct")
    assert said == (
        "no safe restart below this headroom (outage seed), and this fleet is at its most, 6 nodes: undrain "
        "gw-004, gw-005 first, or wait for headroom to come back"
    ), said


# --- start: batch_connections (blocked) -----------------------------------------------------------------

#: 4 × 27 k: a batch of 2 moves 54 k into the other two's 46 k of room (blocked); 46 % headroom.
CALM = fleet(count=4)


@pytest.mark.parametrize("max_nodes", CAN_OR_UNSAID)
def test_a_batch_the_rest_cannot_hold_says_add_capacity_where_the_fleet_can_or_does_not_say(
    max_nodes: int | None,
) -> None:
    verdict = _start(_said(CALM, max_nodes), batch_size=2)
    assert "batch_connections" in {c.name for c in verdict.checks if not c.ok}
    assert _why(verdict, "batch_connections") == BATCH_CAN_ADD


@pytest.mark.parametrize(("max_nodes", "why"), CANNOT)
def test_a_batch_the_rest_cannot_hold_on_a_fleet_that_cannot_grow_says_a_smaller_batch_or_wait(
    max_nodes: int, why: str
) -> None:
    said = _why(_start(_said(CALM, max_nodes), batch_size=2), "batch_connections")
    assert said == (
        f"the first batch's connections against the room left on the other nodes, and {why}: a smaller "
        "batch, or wait for headroom to come back"
    ), said


def test_a_batch_of_one_without_room_does_not_say_a_smaller_batch_and_names_the_nodes_to_undrain() -> None:
    """A batch of one has no smaller batch; an undrained node takes its share of the batch's clients. (4 ×
    40 k: a batch of 1 moves 40 k into the other three's 30 k of room.)"""
    drained = node("gw-004", state=NodeState.DRAINED, connections=0)
    said = _why(_start(_said(fleet(count=4, connections=40_000, extra=[drained]), 0)), "batch_connections")
    assert said == (
        "the first batch's connections against the room left on the other nodes, and this fleet adds no "
        "nodes: undrain gw-004 first, or wait for headroom to come back"
    ), said


# --- resume: headroom_pct (confirm) ---------------------------------------------------------------------

PAUSED = RolloutStatus(state=RolloutState.PAUSED, mode=RolloutMode.DRAIN, batch_size=2, batch=1, batches=3)
#: 4 × 34.5 k of 4 × 50 k: 31 % headroom, under the budget — the resume asks first.
PAUSED_TIGHT = fleet(count=4, connections=34_500, rollout=PAUSED)


@pytest.mark.parametrize("max_nodes", CAN_OR_UNSAID)
def test_a_resume_under_the_budget_says_add_capacity_where_the_fleet_can_or_does_not_say(
    max_nodes: int | None,
) -> None:
    said = _why(judge_rollout_resume(_said(PAUSED_TIGHT, max_nodes)), "headroom_pct")
    assert said == f"headroom 31 % under the 35 % {RESUME_CAN_ADD}", said


@pytest.mark.parametrize(("max_nodes", "why"), CANNOT)
def test_a_resume_under_the_budget_on_a_fleet_that_cannot_grow_says_wait(max_nodes: int, why: str) -> None:
    said = _why(judge_rollout_resume(_said(PAUSED_TIGHT, max_nodes)), "headroom_pct")
    assert said == (
        f"headroom 31 % under the 35 % budget (outage seed): each batch resumed restarts more nodes, and {why} "
        "— wait for headroom to come back"
    ), said


@pytest.mark.parametrize("state", [RolloutState.PAUSED, RolloutState.HALTED])
def test_a_resume_without_room_names_the_nodes_to_undrain_but_not_the_batch_it_stopped_on(
    state: RolloutState,
) -> None:
    """The batch it stopped on (gw-000, gw-001) drains for the rollout: undrained, the rollout halts on it
    and its resume drains it again (docs/actions.md). A node drained apart from the rollout comes back."""
    batch = [node("gw-000", state=NodeState.DRAINING, connections=10_000, drain_rate_per_s=100.0)]
    members = [*batch, *(node(f"gw-00{i}", connections=34_500) for i in (1, 2, 3))]
    drained = node("gw-004", state=NodeState.DRAINED, connections=0)
    snap = snapshot(
        [*members, drained], rollout=PAUSED.model_copy(update={"state": state}), headroom_pct=31.0
    )
    said = _why(judge_rollout_resume(_said(snap, 0)), "headroom_pct")
    assert said == (
        "headroom 31 % under the 35 % budget (outage seed): each batch resumed restarts more nodes, and this "
        "fleet adds no nodes — undrain gw-004 first, or wait for headroom to come back"
    ), said
