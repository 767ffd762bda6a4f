"""The fleet actions a fleet can take at all, as its frames say it (`not_on_this_fleet`): the footers, the
rollout box's border and help offer a key only for those. A controller over a nodes file whose nodes have no
restart command (max_nodes 0) listed "R rollout … c capacity" and "actions R h r a c" though both keys could
only be refused. A frame that does not say (an older server: the fields null) offers everything."""

from __future__ import annotations

import pytest

from console.model.actions.refusals import pointless
from console.model.offered import not_on_this_fleet
from console.protocol import ActionKind, RolloutState, RolloutStatus, UnavailableReason
from tests.fleet_builders import frame, nodes

#: The controller's words for a nodes file without restart commands (console.gateway.controller).
WORDS = 'node gw-000 has no restart command: add restart = "…{node}…" to its [[nodes]] table in nodes.toml'
CANNOT_ROLL_OUT = RolloutStatus(unavailable=WORDS, unavailable_reason=UnavailableReason.NO_RESTART_COMMAND)
ROLLOUT_KEYS = {ActionKind.ROLLOUT_START, ActionKind.ROLLOUT_HALT, ActionKind.ROLLOUT_RESUME}


def test_a_fleet_that_does_not_say_is_offered_everything() -> None:
    assert not_on_this_fleet(None) == {}
    assert not_on_this_fleet(frame(10.0)) == {}  # max_nodes null, no rollout said
    assert not_on_this_fleet(frame(10.0, rollout=RolloutStatus())) == {}


def test_a_fleet_that_can_neither_roll_out_nor_grow_is_offered_neither() -> None:
    said = frame(10.0, rollout=CANNOT_ROLL_OUT).model_copy(update={"max_nodes": 0})
    off = not_on_this_fleet(said)
    assert set(off) == ROLLOUT_KEYS | {ActionKind.ADD_CAPACITY}, off
    assert off[ActionKind.ROLLOUT_START] == "no restart command"
    # h and r: no rollout exists, and none can start to halt or resume
    assert "cannot start a rollout" in off[ActionKind.ROLLOUT_HALT]
    assert "cannot start a rollout" in off[ActionKind.ROLLOUT_RESUME]
    assert off[ActionKind.ADD_CAPACITY] == "it adds no nodes"
    # drain, undrain and admission are the moves it has: always offered
    assert not {ActionKind.DRAIN, ActionKind.UNDRAIN, ActionKind.ADMISSION} & set(off)


@pytest.mark.parametrize("state", [RolloutState.RUNNING, RolloutState.PAUSED, RolloutState.HALTED])
def test_a_rollout_under_way_keeps_halt_and_resume_on_a_fleet_that_cannot_start_one(state) -> None:
    rollout = CANNOT_ROLL_OUT.model_copy(update={"state": state})
    assert set(not_on_this_fleet(frame(10.0, rollout=rollout))) == {ActionKind.ROLLOUT_START}


def test_capacity_is_offered_while_the_fleet_has_room_and_not_once_it_runs_out() -> None:
    four = frame(10.0, fleet=nodes(4))
    assert not_on_this_fleet(four.model_copy(update={"max_nodes": 5})) == {}
    at_most = not_on_this_fleet(four.model_copy(update={"max_nodes": 4}))
    assert at_most == {ActionKind.ADD_CAPACITY: "it is at its most, 4 nodes"}


def test_an_older_servers_words_alone_or_a_reason_alone_still_say_it() -> None:
    words_only = not_on_this_fleet(frame(10.0, rollout=RolloutStatus(unavailable=WORDS)))
    assert words_only[ActionKind.ROLLOUT_START] == WORDS
    newer = RolloutStatus(unavailable_reason="no_fleet_lock")  # a reason this console does not know
    assert not_on_this_fleet(frame(10.0, rollout=newer))[ActionKind.ROLLOUT_START] == "no fleet lock"
    # ... and the key answers it as it hides it: no form for a start that can only be refused
    assert pointless(ActionKind.ROLLOUT_START, None, newer) == (
        "this fleet cannot start a rollout — no fleet lock; nothing sent"
    )


def test_a_scheduled_rollout_halts_at_the_key_and_its_resume_says_it_has_not_started() -> None:
    """Before its start a scheduled rollout is halted as a running one is (h opens its form, the server
    halts it: it does not start); r says it has not started, on the console's clock, with its key."""
    scheduled = RolloutStatus(
        state=RolloutState.RUNNING, batch=0, batches=16, batch_size=30, starts_at_s=30.0
    )
    assert pointless(ActionKind.ROLLOUT_HALT, None, scheduled) is None
    assert pointless(ActionKind.ROLLOUT_RESUME, None, scheduled) == (
        "resume rollout: nothing to resume — the rollout is scheduled: it starts at 0:00:30, "
        "16 batches of 30; nothing sent"
    )


@pytest.mark.parametrize(
    ("state", "said"),
    [
        (RolloutState.RUNNING, "a rollout is running (batch 3 of 16): h halts it first; nothing sent"),
        (RolloutState.PAUSED, "a rollout is paused (before batch 4 of 16): h halts it first; nothing sent"),
    ],
)
def test_a_start_while_a_rollout_is_under_way_is_refused_at_the_key(state, said: str) -> None:
    """Review: R during a running rollout opened the whole start form, and only its dry run was refused
    ("rollout: 'running' is not allowed; expected no rollout running or paused (halt it first)")."""
    rollout = RolloutStatus(state=state, batch=3, batches=16, batch_size=30)
    assert pointless(ActionKind.ROLLOUT_START, None, rollout) == f"start rollout: {said}"
    halted = rollout.model_copy(update={"state": RolloutState.HALTED})
    assert pointless(ActionKind.ROLLOUT_START, None, halted) is None  # a new one may replace a halted one


def test_a_start_while_a_rollout_is_only_scheduled_says_scheduled_not_running() -> None:
    """Trainee reviewer, graceful-drain: R before the scheduled abrupt restart began (the drill's task is
    to replace it) answered "a rollout is running (before batch 1 of 5)" — nothing ran yet."""
    scheduled = RolloutStatus(state=RolloutState.RUNNING, batch=0, batches=5, batch_size=2, starts_at_s=180.0)
    assert pointless(ActionKind.ROLLOUT_START, None, scheduled) == (
        "start rollout: a rollout is scheduled (starts at 0:03:00, 5 batches of 2): h halts it first; "
        "nothing sent"
    )
