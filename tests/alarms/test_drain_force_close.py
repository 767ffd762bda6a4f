"""`connections_drop` names a drain deadline's force-close when the frames say one happened in its window.

Review on a real loopback fleet (`fleet up --nodes 3 --clients 300`): `act drain node-2 --rate 2 --deadline 5
--hint 1000:5000` force-closed 137 of the 300 clients at its deadline, and the critical alarm said "clients
are failing to reconnect. Shed with admission." — the operator's own force-close, every client told to come
back within 5 s, and all back by then. A forced close is never counted as held (`console.figures.WithinHint`),
so the alarm is right to fire; its words were not. A real node says what its deadline force-closed
(`NodeStatus.drain.forced`, `deadline_at_s`), and keeps saying it once drained; the simulator does not say
(`forced` 0), and its frames read as before.

The frames are built by hand: node-2 of three drains from 10 s at 2/s, each client told to come back within
1–5 s; its deadline at 15 s force-closes the 137 it still holds, back evenly over 16–20 s.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from console.alarms import AlarmEngine
from console.protocol import DrainProgress, Event, Frame, NodeState, RolloutStatus
from tests.fleet_builders import node, series

FLEET = 300
DRAIN_FROM_S, DEADLINE_S, RATE_PER_S, FORCED = 10, 15, 2, 137
HINT_MS = (1000, 5000)


def within_hint(t: float) -> int:
    """The paced closes whose hint runs: 2 a second, the last 3 s's (the hint's mean, as the guard counts)."""
    closed_by = lambda s: RATE_PER_S * int(min(max(s - DRAIN_FROM_S, 0), DEADLINE_S - DRAIN_FROM_S))  # noqa: E731
    return closed_by(t) - closed_by(t - 3)


def forced_away(t: float) -> int:
    """The force-closed not yet back: all of them in the deadline's second, then back evenly by 20 s."""
    if t < DEADLINE_S:
        return 0
    return round(FORCED * min(1.0, max(0.0, (20 - t) / 4)))


def back_on_time(t: float) -> int:
    return FLEET - within_hint(t) - forced_away(t)


def never_back(t: float) -> int:
    return FLEET - within_hint(t) - (FORCED if t >= DEADLINE_S else 0)


def fleet_at(forced_said: bool, hint_ms: tuple[int, int] = HINT_MS) -> Callable[[float], list]:
    """The three nodes at fleet second `t`: node-2 draining until its deadline, drained after it — its drain
    status still said, with what its deadline force-closed where `forced_said` (a real node's)."""

    def nodes_at(t: float) -> list:
        state = NodeState.READY if t < DRAIN_FROM_S else NodeState.DRAINING if t < DEADLINE_S else "drained"
        drained = node("node-2", state, connections=147, cpu_pct=5.0)
        if t >= DRAIN_FROM_S:
            forced = FORCED if t >= DEADLINE_S and forced_said else 0
            progress = DrainProgress(
                remaining=0 if t >= DEADLINE_S else 147,
                rate_per_s=RATE_PER_S,
                hint_ms=hint_ms,
                started_at_s=DRAIN_FROM_S,
                deadline_at_s=DEADLINE_S,
                closed=(RATE_PER_S * (DEADLINE_S - DRAIN_FROM_S) + forced) if t >= DEADLINE_S else 0,
                forced=forced,
            )
            drained = drained.model_copy(update={"drain": progress})
        return [
            node("node-1", connections=76, cpu_pct=5.0),
            drained,
            node("node-3", connections=77, cpu_pct=5.0),
        ]

    return nodes_at


def frames(
    connections: Callable[[float], int],
    forced_said: bool = True,
    seconds: int = 40,
    hint_ms: tuple[int, int] = HINT_MS,
    paced_said: bool = True,
) -> list[Frame]:
    """`paced_said`: the frames count the paced closes within their hint (False: they say 0 — the alarm's
    words then have no held clients to set the missing beside)."""
    return series(
        0,
        seconds,
        connections=connections,
        within_hint_clients=within_hint if paced_said else 0,
        fleet=fleet_at(forced_said, hint_ms),
        rollout=RolloutStatus(),  # (none under way: the advice names none to hold)
    )


def raised(judged: list[Frame]) -> tuple[dict[str, Event], AlarmEngine]:
    engine = AlarmEngine()
    first: dict[str, Event] = {}
    for frame in judged:
        for change in engine.update(frame):
            if change.data["change"] == "raised":
                first.setdefault(change.data["name"], change)
    return first, engine


@pytest.mark.parametrize("paced_said", [True, False])
def test_the_drop_a_drain_deadlines_force_close_makes_is_said_as_that(paced_said: bool) -> None:
    event = raised(frames(back_on_time, paced_said=paced_said))[0]["connections_drop"]
    assert event.time_s == DEADLINE_S
    message = event.data["message"]
    assert "failing to reconnect" not in message and "lost without a paced hint" not in message, message
    assert (
        "node-2's drain deadline force-closed 137 clients at once, each told to come back within 1–5 s — "
        "a forced close is counted as lost, not held, until its client is back (due within 5 s)" in message
    ), message
    # What to do, said of the moment they are due: not "shed with admission" of clients on their way back.
    assert message.endswith("If they are not back by then, shed with admission."), message


def test_the_alarm_raised_by_a_force_close_clears_once_its_clients_are_back() -> None:
    _, engine = raised(frames(back_on_time))
    assert not [a for a in engine.active if a.name == "connections_drop"]


def test_force_closed_clients_not_back_once_due_are_failing_to_reconnect() -> None:
    """Past the force-closed's hint the force-close no longer explains the drop: the words are as before."""
    judged = frames(never_back)
    _, engine = raised(judged[:19])  # (to 18 s: due by 20 s)
    (alarm,) = [a for a in engine.active if a.name == "connections_drop"]
    assert "force-closed 137 clients" in alarm.message and "due within 2 s" in alarm.message, alarm.message
    _, engine = raised(judged[:21])
    (alarm,) = [a for a in engine.active if a.name == "connections_drop"]
    assert "force-closed" not in alarm.message and "clients are failing to reconnect" in alarm.message


def test_a_loss_beyond_the_force_close_is_still_said_as_clients_failing_to_reconnect() -> None:
    """node-1's 76 lost at the deadline too, told nothing: the force-close explains 137 of the 213."""

    def also_lost(t: float) -> int:
        return back_on_time(t) - (76 if t >= DEADLINE_S else 0)

    message = raised(frames(also_lost))[0]["connections_drop"].data["message"]
    assert (
        "node-2's drain deadline force-closed 137 of them at once (due back within 5 s); 76 more are missing "
        "— lost without a paced hint (a restart, a kill) or not back after theirs. Shed with admission."
        in message
    ), message
    # Not said as held, the 6 paced closes within their hint are missing too: 82.
    message = raised(frames(also_lost, paced_said=False))[0]["connections_drop"].data["message"]
    assert "(due back within 5 s); 82 more are missing — clients are failing to reconnect. Shed" in message


def test_a_source_that_does_not_say_what_its_deadline_force_closed_reads_as_before() -> None:
    """The simulator's drain status says no `forced` (and it drops a drained node's drain): nothing is
    guessed from a deadline passing."""
    for paced_said, missing in (
        (False, "clients are failing to reconnect"),
        (
            True,
            "the missing ones were lost without a paced hint (a restart, a kill, a deadline's force-close)",
        ),
    ):
        judged = frames(back_on_time, forced_said=False, paced_said=paced_said)
        message = raised(judged)[0]["connections_drop"].data["message"]
        assert f"%): {missing}" in message and "node-2" not in message, message


def test_a_force_close_older_than_the_alarms_window_is_not_named() -> None:
    """A second drop 70 s after the force-close, the drained node still saying what its deadline did and
    its clients told to come back within 2 min: out of the 60 s window it is in no drop the alarm judges."""

    def later_loss(t: float) -> int:
        return back_on_time(t) - (60 if t >= 85 else 0)

    first, engine = raised(frames(later_loss, seconds=90, hint_ms=(1000, 120_000)))
    assert "force-closed 137 clients" in first["connections_drop"].data["message"]
    (alarm,) = [a for a in engine.active if a.name == "connections_drop"]
    assert alarm.since_s == 85 and "force" not in alarm.message, alarm.message
    assert "clients are failing to reconnect" in alarm.message
