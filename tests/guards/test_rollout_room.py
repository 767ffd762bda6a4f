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
    VerdictLevel,
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
RESUME_CAN_ADD = " — add capacity first, or wait for headroom to come back"

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


# --- resume: headroom_pct (blocked as a start; confirm only while its own batch is out) ----------------

PAUSED = RolloutStatus(state=RolloutState.PAUSED, mode=RolloutMode.DRAIN, batch_size=2, batch=1, batches=3)
#: 4 × 34.5 k of 4 × 50 k: 31 % headroom, under the budget, every node in rotation — the resume restarts
#: more nodes below the budget, as a start would: blocked as the start is.
PAUSED_TIGHT = fleet(count=4, connections=34_500, rollout=PAUSED)
#: What a resume under the budget says before its moves, where the rollout's own batch is not what put it there.
RESUME_UNDER = (
    "headroom 31 % under the 35 % budget (outage seed): no safe restart below it, and each batch resumed "
    "restarts nodes as a start does"
)


@pytest.mark.parametrize("max_nodes", CAN_OR_UNSAID)
def test_a_resume_under_the_budget_says_add_capacity_where_the_fleet_can_or_does_not_say(
    max_nodes: int | None,
) -> None:
    said = _why(judge_rollout_resume(_said(PAUSED_TIGHT, max_nodes)), "headroom_pct")
    assert said == f"{RESUME_UNDER}{RESUME_CAN_ADD}", said


@pytest.mark.parametrize(("max_nodes", "why"), CANNOT)
def test_a_resume_under_the_budget_on_a_fleet_that_cannot_grow_says_wait(max_nodes: int, why: str) -> None:
    said = _why(judge_rollout_resume(_said(PAUSED_TIGHT, max_nodes)), "headroom_pct")
    assert said == f"{RESUME_UNDER}, and {why} — wait for headroom to come back", said


@pytest.mark.parametrize("state", [RolloutState.PAUSED, RolloutState.HALTED])
def test_a_resume_without_room_names_the_nodes_to_undrain_but_not_the_batch_it_stopped_on(
    state: RolloutState,
) -> None:
    """The batch it stopped on (gw-000, gw-001) drains for the rollout: undrained, the rollout halts on it
    and its resume drains it again (docs/actions.md). A node drained apart from the rollout comes back.
    (Under the budget even with gw-000 back: 145 k held on 200 k, 27.5 %.)"""
    batch = [node("gw-000", state=NodeState.DRAINING, connections=10_000, drain_rate_per_s=100.0)]
    members = [*batch, *(node(f"gw-00{i}", connections=45_000) for i in (1, 2, 3))]
    drained = node("gw-004", state=NodeState.DRAINED, connections=0)
    snap = snapshot([*members, drained], rollout=PAUSED.model_copy(update={"state": state}), headroom_pct=3.3)
    judged = judge_rollout_resume(_said(snap, 0))
    said = _why(judged, "headroom_pct")
    assert said == (
        "headroom 3 % under the 35 % budget (outage seed), 28 % with batch 1's gw-000 back in rotation: no "
        "safe restart below it, and each batch resumed restarts nodes as a start does, and this fleet adds "
        "no nodes — undrain gw-004 first, or wait for headroom to come back"
    ), said
    assert judged.level is VerdictLevel.BLOCKED


# The reviewer's graceful-drain run, halted during batch 1 of 10: 20 nodes × 800 k holding 10 M, batch 1
# (gw-000, gw-001) draining — 30.7 % headroom now, 37.5 % with the batch back in rotation. A start there is
# blocked; the resume read "FAIL (confirm)" with no reason for the difference.
GRACEFUL = RolloutStatus(state=RolloutState.HALTED, mode=RolloutMode.DRAIN, batch_size=2, batch=1, batches=10)


def _graceful(batch_connections: int, held_by_the_rest: int) -> FleetSnapshot:
    draining = [
        node(
            f"gw-00{i}",
            state=NodeState.DRAINING,
            connections=batch_connections,
            drain_rate_per_s=833.0,
            capacity_connections=800_000,
        )
        for i in (0, 1)
    ]
    rest = [
        node(f"gw-{i:03d}", connections=held_by_the_rest, capacity_connections=800_000) for i in range(2, 20)
    ]
    held = 2 * batch_connections + 18 * held_by_the_rest
    return snapshot(
        [*draining, *rest], rollout=GRACEFUL, connections=held, headroom_pct=(1 - held / 14_400_000) * 100
    )


def test_a_resume_under_the_budget_only_while_its_own_batch_is_out_asks_and_says_why() -> None:
    """Headroom is under the budget only because the halted batch's own nodes are out of rotation: the
    resume finishes that batch first (they come back), so it asks — and says that is why it is not blocked
    as a start is. Judged on the figure with them back (37.5 %), it is a start's 'headroom now'."""
    snap = _graceful(473_000, 503_000)  # 10 M held: 30.6 % now
    judged = judge_rollout_resume(snap)
    headroom = next(c for c in judged.checks if c.name == "headroom_pct")
    assert not headroom.ok and headroom.level is VerdictLevel.CONFIRM
    assert headroom.why == (
        "headroom 31 % under the 35 % budget (outage seed) only while batch 1's gw-000, gw-001 are out of "
        "rotation, 38 % with them back: resuming finishes that batch first, so it is asked, not blocked as "
        "a start is"
    ), headroom.why
    assert judged.level is VerdictLevel.CONFIRM
    start = judge_rollout_start(snap, CAPACITY, RolloutRequest(batch_size=2, interval_s=10))
    assert next(c for c in start.checks if c.name == "headroom_pct").level is VerdictLevel.BLOCKED


def test_a_resume_under_the_budget_even_with_its_batch_back_is_blocked_as_a_start_is() -> None:
    """11 M held: 23.6 % now, 31.3 % with batch 1 back — still under: each later batch restarts nodes below
    the budget, exactly as a start there would; blocked, saying the figure with the batch back."""
    judged = judge_rollout_resume(_graceful(500_000, 555_556))
    headroom = next(c for c in judged.checks if c.name == "headroom_pct")
    assert not headroom.ok and headroom.level is VerdictLevel.BLOCKED
    assert "31 % with batch 1's gw-000, gw-001 back in rotation" in headroom.why, headroom.why
    assert "as a start does" in headroom.why and judged.level is VerdictLevel.BLOCKED


@pytest.mark.parametrize(
    "rollout",
    [
        PAUSED,  # paused between batches: every node back in rotation
        GRACEFUL.model_copy(update={"batch": 0, "starts_at_s": 3000.0}),  # halted before its start
        GRACEFUL.model_copy(update={"batch_size": None}),  # an older source: its batch unknown
    ],
)
def test_a_resume_under_the_budget_fails_to_the_level_a_start_does(rollout: RolloutStatus) -> None:
    """Resuming restarts more nodes exactly as a start does: with none of its own batch to credit (between
    batches, before its first, or a batch it does not say), its headroom check fails as the start's —
    blocked; it asked only, and `--yes` resumed at 30.7 % (reviewer)."""
    snap = fleet(count=4, connections=34_500, rollout=rollout)
    resume = next(c for c in judge_rollout_resume(snap).checks if c.name == "headroom_pct")
    start_snap = snap.model_copy(update={"rollout": RolloutStatus()})
    start = next(c for c in _start(start_snap).checks if c.name == "headroom_pct")
    assert (
        (resume.ok, resume.level, resume.value, resume.limit)
        == (
            start.ok,
            start.level,
            start.value,
            start.limit,
        )
        == (False, VerdictLevel.BLOCKED, start.value, 35.0)
    )
