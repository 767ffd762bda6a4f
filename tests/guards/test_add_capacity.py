"""The add-capacity guard: the fleet's room and the configured maximum, the confirm line, the ready time and
the headroom once ready."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.errors import InputError
from console.guards import Thresholds, judge_add_capacity, nodes_for_headroom
from console.guards.capacity import node_room
from console.protocol import (
    CapacityRequest,
    NodeState,
    RolloutMode,
    RolloutState,
    RolloutStatus,
    VerdictLevel,
)
from tests.fleet_builders import node, snapshot
from tests.guards.fleets import CAPACITY, fleet, says_a_move

# Room for 25 nodes (20 in the fleet, 5 more), each ready 240 s after it is added (outage seed: 4 minutes).
GROWABLE = dataclasses.replace(CAPACITY, max_nodes=25, provisioning_s=240.0)


def checks(verdict) -> dict:
    return {c.name: c for c in verdict.checks}


def test_a_small_add_is_ok_and_says_when_it_helps() -> None:
    verdict = judge_add_capacity(fleet(), GROWABLE, CapacityRequest(count=2))
    assert verdict.level is VerdictLevel.OK and verdict.action == "add_capacity"
    p = verdict.projections
    assert (p["nodes_now"], p["nodes_after"], p["room_nodes"], p["provisioning_now"]) == (20, 22, 5, 0)
    assert p["ready_in_s"] == 240.0 and p["ready_at_s"] == 100.0 + 240.0  # the builder's snapshot: t=100 s
    # 20 × 27 k held in 20 × 50 k: 46 % now; with 2 more nodes' 100 k: 540 k in 1.1 M, 50.9 %.
    assert p["headroom_now_pct"] == 46.0 and p["headroom_when_ready_pct"] == pytest.approx(50.909, abs=1e-3)
    assert all(c.ok for c in verdict.checks)


def test_more_than_half_the_fleet_again_asks_for_confirmation() -> None:
    roomy = dataclasses.replace(GROWABLE, max_nodes=100)
    verdict = judge_add_capacity(fleet(), roomy, CapacityRequest(count=11))
    assert verdict.level is VerdictLevel.CONFIRM
    share = checks(verdict)["added_share_pct"]
    assert not share.ok and share.value == 55.0 and share.limit == 50.0
    assert judge_add_capacity(fleet(), roomy, CapacityRequest(count=10)).level is VerdictLevel.OK


def test_beyond_the_fleets_room_is_bad_input_naming_count_and_range() -> None:
    with pytest.raises(InputError) as refused:
        judge_add_capacity(fleet(), GROWABLE, CapacityRequest(count=6))
    assert refused.value.field == "count"
    assert "[1, 5]" in str(refused.value) and "room left in the fleet: 5 of 25" in str(refused.value)


def test_beyond_the_configured_maximum_is_bad_input_naming_the_threshold() -> None:
    roomy = dataclasses.replace(GROWABLE, max_nodes=1000)
    strict = Thresholds(add_capacity_max_nodes=8)
    with pytest.raises(InputError) as refused:
        judge_add_capacity(fleet(), roomy, CapacityRequest(count=9), strict)
    assert refused.value.field == "count"
    assert "[1, 8]" in str(refused.value) and "add_capacity_max_nodes = 8" in str(refused.value)


@pytest.mark.parametrize(("max_nodes", "says"), [(0, "cannot add capacity"), (20, "at its most, 20 nodes")])
def test_a_fleet_that_cannot_grow_refuses_every_count(max_nodes: int, says: str) -> None:
    with pytest.raises(InputError) as refused:
        judge_add_capacity(
            fleet(), dataclasses.replace(CAPACITY, max_nodes=max_nodes), CapacityRequest(count=1)
        )
    assert refused.value.field == "count" and says in str(refused.value)


def test_a_hot_fleet_is_warned_to_shed_load_until_the_nodes_are_ready() -> None:
    verdict = judge_add_capacity(fleet(cpu_pct=85.0), GROWABLE, CapacityRequest(count=2))
    hot = checks(verdict)["cpu_now_pct"]
    assert verdict.level is VerdictLevel.OK  # adding capacity is the safe direction: a warning only
    assert not hot.ok and hot.level is VerdictLevel.OK and "in 240 s" in hot.why


def test_headroom_still_short_when_ready_warns_and_says_how_many_would_do() -> None:
    # 35 k held of 50 k (the outage fleet before its post-mortem): 30 % headroom, under the 35 % budget.
    hot_fleet = fleet(connections=35_000)
    verdict = judge_add_capacity(hot_fleet, GROWABLE, CapacityRequest(count=1))
    assert not checks(verdict)["headroom_when_ready_pct"].ok and verdict.level is VerdictLevel.OK
    # 700 k ÷ 0.65 = 1.077 M of capacity needed, 1 M there: 1.54 nodes of 50 k, so 2.
    assert verdict.projections["nodes_for_headroom"] == 2
    assert checks(judge_add_capacity(hot_fleet, GROWABLE, CapacityRequest(count=2)))[
        "headroom_when_ready_pct"
    ].ok


def test_nodes_already_provisioning_count_once_ready() -> None:
    arriving = [node(f"gw-new-{i}", NodeState.PROVISIONING, cpu_pct=0.0, connections=0) for i in range(2)]
    snapshot = fleet(connections=35_000, extra=arriving)
    assert nodes_for_headroom(snapshot, GROWABLE, 35.0) == 0
    verdict = judge_add_capacity(snapshot, GROWABLE, CapacityRequest(count=1))
    assert verdict.projections["provisioning_now"] == 2 and verdict.projections["room_nodes"] == 3


def test_with_no_node_in_rotation_headroom_now_is_0_not_minus_100() -> None:
    # Every node drained or down (the figure the frames give it, console/figures.py): no spare capacity.
    out = [node(f"gw-{i:03d}", NodeState.DRAINED, connections=0) for i in range(3)]
    out.append(node("gw-003", NodeState.DOWN, connections=0))
    verdict = judge_add_capacity(snapshot(out), GROWABLE, CapacityRequest(count=2))
    assert verdict.projections["headroom_now_pct"] == 0.0
    assert verdict.projections["headroom_when_ready_pct"] == 100.0  # the 2 new nodes hold nothing yet


def test_unknown_provisioning_time_projects_no_ready_time() -> None:
    verdict = judge_add_capacity(
        fleet(), dataclasses.replace(GROWABLE, provisioning_s=0.0), CapacityRequest(count=1)
    )
    assert verdict.projections["ready_in_s"] is None and verdict.projections["ready_at_s"] is None
    assert "once provisioned" in checks(verdict)["cpu_now_pct"].why


@given(
    count=st.integers(1, 40),
    held=st.integers(0, 50_000),
    cpu_pct=st.floats(0, 100),
    add=st.integers(1, 200),
)
def test_adding_capacity_is_never_typed_or_blocked_and_the_suggested_add_passes(
    count: int, held: int, cpu_pct: float, add: int
) -> None:
    snapshot = fleet(count, connections=held, cpu_pct=cpu_pct)
    capacity = dataclasses.replace(CAPACITY, max_nodes=count + 1000, provisioning_s=60.0)
    verdict = judge_add_capacity(snapshot, capacity, CapacityRequest(count=add))
    assert verdict.level in (VerdictLevel.OK, VerdictLevel.CONFIRM)
    needed = nodes_for_headroom(snapshot, capacity, 35.0)
    assert needed is not None
    if needed >= 1:
        enough = judge_add_capacity(snapshot, capacity, CapacityRequest(count=needed))
        assert checks(enough)["headroom_when_ready_pct"].ok
        if needed >= 2:
            short = judge_add_capacity(snapshot, capacity, CapacityRequest(count=needed - 1))
            assert not checks(short)["headroom_when_ready_pct"].ok


# --- the fleet's room, one rule for the guard and the alarms' advice (`NodeRoom`) ----------------------


@pytest.mark.parametrize(
    ("max_nodes", "nodes", "room", "why_not"),
    [
        (16, 4, 12, None),  # fleet up: a provisioner's limit above its nodes
        (5, 4, 1, None),
        (4, 4, 0, "is at its most, 4 nodes"),
        (3, 4, 0, "is at its most, 3 nodes"),  # (more than its limit: still no room, never negative)
        (0, 4, 0, "adds no nodes"),  # a controller over a nodes file: no provisioner
    ],
)
def test_node_room_says_whether_a_fleet_can_grow_and_by_how_much(
    max_nodes: int, nodes: int, room: int, why_not: str | None
) -> None:
    said = node_room(max_nodes, nodes)
    assert said is not None and said.room == room and said.can_add is (room > 0)
    assert said.why_not() == why_not


def test_node_room_is_unknown_where_the_fleet_does_not_say() -> None:
    """An older server's frames, or frames built straight from the simulation: `max_nodes` null."""
    assert node_room(None, 4) is None


@given(st.integers(0, 40), st.integers(1, 40))
def test_the_add_guard_allows_what_the_room_says(max_nodes: int, count: int) -> None:
    """The guard and the alarms count room alike: an add of `room` passes, one more is refused."""
    capacity = dataclasses.replace(CAPACITY, max_nodes=max_nodes)
    room = node_room(max_nodes, 20)
    assert room is not None
    if 1 <= count <= room.room:
        judge_add_capacity(fleet(), capacity, CapacityRequest(count=count))
    else:
        with pytest.raises(InputError):
            judge_add_capacity(fleet(), capacity, CapacityRequest(count=count))


# --- moves said only when a check fails, and only moves the fleet has -------------------------------------


def test_a_calm_adds_passing_checks_tell_nothing_to_do() -> None:
    """ "cpu_now_pct 40 ≤ 75 pass  new nodes serve only in 240 s: while a node is this hot, halt the rollout
    and tighten admission meanwhile" — of a fleet at 40 % with no rollout to halt."""
    verdict = judge_add_capacity(fleet(), GROWABLE, CapacityRequest(count=2))
    for item in verdict.checks:
        assert item.ok and not says_a_move(item.why), item


def test_a_hot_fleet_is_told_to_halt_the_rollout_only_where_one_runs() -> None:
    hot = checks(judge_add_capacity(fleet(cpu_pct=85.0), GROWABLE, CapacityRequest(count=2)))["cpu_now_pct"]
    assert not hot.ok and "tighten admission meanwhile" in hot.why, hot.why
    assert "halt the rollout" not in hot.why, hot.why  # there is none
    running = RolloutStatus(
        state=RolloutState.RUNNING, mode=RolloutMode.DRAIN, batch_size=2, batch=1, batches=10
    )
    rolling = judge_add_capacity(fleet(cpu_pct=85.0, rollout=running), GROWABLE, CapacityRequest(count=2))
    assert "halt the rollout and tighten admission meanwhile" in checks(rolling)["cpu_now_pct"].why


def test_headroom_short_when_ready_names_the_add_that_would_reach_it() -> None:
    """35 k of 50 k a node: an add of 2 brings headroom back to 35 %, within the fleet's room of 5."""
    short = checks(judge_add_capacity(fleet(connections=35_000), GROWABLE, CapacityRequest(count=1)))
    assert "an add of 2 nodes would reach it" in short["headroom_when_ready_pct"].why


def test_headroom_short_beyond_the_fleets_room_says_no_add_reaches_it() -> None:
    """45 k of 50 k a node: 8 nodes would do, and the fleet has room for 5 — no add that it takes reaches
    the budget, so the verdict says so rather than naming an add it would refuse as bad input."""
    full = checks(judge_add_capacity(fleet(connections=45_000), GROWABLE, CapacityRequest(count=5)))
    why = full["headroom_when_ready_pct"].why
    assert "8 nodes would reach it, more than the 5 this fleet has room for" in why, why
    assert "an add of" not in why, why


def test_headroom_short_beyond_one_add_says_the_rest_comes_after() -> None:
    """Room for 5, but one add may ask for 1 (`add_capacity_max_nodes`): 2 nodes take two adds."""
    capped = judge_add_capacity(
        fleet(connections=35_000), GROWABLE, CapacityRequest(count=1), Thresholds(add_capacity_max_nodes=1)
    )
    why = checks(capped)["headroom_when_ready_pct"].why
    assert "2 nodes would reach it, 1 in this add (add_capacity_max_nodes) and the rest after" in why, why
