"""`connections_drop` judged net of the clients a drain closed with a reconnect hint and still within it
(`Totals.within_hint_clients`): a paced drain's clients are away by design until their hint runs out.

Found in review: the alarm fired on every drain-mode batch and planned drain whose clients wait out a hint
of 1–30 s ("clients are failing to reconnect. Hold the rollout; shed with admission" — false: the fleet
closed them and told them when to come back). At 4 a.m. an alarm that cries on every planned batch teaches
the operator to ignore it. It must still fire for clients that do not come back once their hint has run
out, and for connections lost without a hint (an abrupt restart, a kill) during a drain.

The frames are built by hand: one node of four drains at 1000 closes/s from 10 s, each client told to come
back exactly 15 s later (a hint of [15 000, 15 000] ms, so the arithmetic is plain): 15 000 clients — 15 %
of the fleet — are away at once while the drain runs.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from console.alarms import AlarmEngine
from console.protocol import Event, Frame, RolloutState, RolloutStatus
from console.server.backend import fold_frames
from tests.fleet_builders import node, nodes, series

FLEET = 100_000
DRAIN_FROM_S, DRAIN_FOR_S, RATE_PER_S, HINT_S = 10, 25, 1000, 15


def closed_by(t: float) -> int:
    """Clients the drain has closed by fleet second `t` (its first closes in the second after it starts)."""
    return RATE_PER_S * int(min(max(t - DRAIN_FROM_S, 0), DRAIN_FOR_S))


def within_hint(t: float) -> int:
    """Of those, the ones whose hint has not run out: closed in the last HINT_S seconds."""
    return closed_by(t) - closed_by(t - HINT_S)


def draining_fleet(t: float) -> list:
    state = "draining" if DRAIN_FROM_S <= t < DRAIN_FROM_S + DRAIN_FOR_S else "ready"
    return [node("gw-000", state, connections=25_000 - within_hint(t)), *nodes(3)]


def drain(connections: Callable[[float], int], said: bool = True, seconds: int = 90) -> list[Frame]:
    return series(
        0,
        seconds,
        connections=connections,
        within_hint_clients=within_hint if said else None,
        fleet=draining_fleet,
        rollout=RolloutStatus(state=RolloutState.RUNNING),
    )


def back_on_time(t: float) -> int:
    """Every client back the second its hint runs out."""
    return FLEET - within_hint(t)


def never_back(t: float) -> int:
    """The drain's clients do not come back at all: due, and not reconnecting."""
    return FLEET - closed_by(t)


def raised(frames: list[Frame], engine: AlarmEngine | None = None) -> dict[str, Event]:
    engine = engine or AlarmEngine()
    first: dict[str, Event] = {}
    for frame in frames:
        for change in engine.update(frame):
            if change.data["change"] == "raised":
                first.setdefault(change.data["name"], change)
    return first


def test_a_paced_drain_whose_clients_wait_out_their_hint_raises_no_drop() -> None:
    frames = drain(back_on_time)
    assert min(f.totals.connections for f in frames) == FLEET - 15_000  # 15 % under the peak: over 5 %
    assert "connections_drop" not in raised(frames)


def test_a_source_that_does_not_say_whos_within_a_hint_is_judged_on_connections_as_before() -> None:
    """An older server or recording (`within_hint_clients` null): nothing is guessed from its nodes."""
    assert raised(drain(back_on_time, said=False))["connections_drop"].time_s == 16  # 6 000 away: 6 %


def test_clients_not_back_once_their_hint_has_run_out_still_raise_it() -> None:
    """Never back: those closed more than 15 s ago are missing beyond the allowance — 5 % of the fleet
    is 5 000, over the line at the drain's 21st second (21 000 closed, 15 000 of them still due)."""
    event = raised(drain(never_back))["connections_drop"]
    assert event.time_s == DRAIN_FROM_S + 21
    message = event.data["message"]
    assert "fell 6.0 % within 60 s beyond the 15 k clients closed by drains and still within their hint" in (
        message
    ), message
    # What it compared: the peak, and the connections with the drained clients still within their hint.
    assert "(100 k → 94 k counting them; alarm over 5 %)" in message, message
    # What the rest can be, not "clients are failing to reconnect": the review's false claim.
    assert (
        "%): the missing ones were lost without a paced hint (a restart, a kill, a deadline's force-close) "
        "or are not back after theirs. Hold the rollout and drains; shed with admission." in message
    ), message


def test_connections_lost_without_a_hint_during_a_drain_still_raise_it() -> None:
    """An abrupt restart (or a kill) of another node, 25 000 connections at once, at 20 s: its clients
    were told nothing, and the drain's allowance does not cover them."""

    def one_node_lost(t: float) -> int:
        return back_on_time(t) - (25_000 if t >= 20 else 0)

    event = raised(drain(one_node_lost))["connections_drop"]
    assert event.time_s == 20
    assert "beyond the 10 k clients closed by drains and still within their hint" in event.data["message"]


def test_an_abrupt_loss_with_no_drain_reads_as_it_did() -> None:
    frames = series(0, 70, connections=lambda t: FLEET if t < 40 else 90_000, within_hint_clients=0)
    message = raised(frames)["connections_drop"].data["message"]
    assert message.startswith("Total connections fell 10.0 % within 60 s (100 k → 90 k; alarm over 5 %)")
    assert "hint" not in message, message


def test_the_allowance_is_judged_second_by_second_in_a_sped_up_frame() -> None:
    """At ×10 each folded second's totals carry their own `within_hint_clients`: the planned drain stays
    quiet, and the missing clients raise it at the fleet second one frame a second does."""
    for connections, expected in ((back_on_time, None), (never_back, DRAIN_FROM_S + 21)):
        frames = drain(connections)
        folded = [fold_frames(frames[i : i + 10]) for i in range(0, len(frames), 10)]
        assert folded[1].folded_totals is not None
        assert folded[1].folded_totals[5].within_hint_clients == within_hint(15) == 5000
        event = raised(folded).get("connections_drop")
        assert (event and event.time_s) == expected


@pytest.mark.parametrize("gap_s", [0, 30])
def test_a_drain_whose_clients_come_back_clears_as_they_do(gap_s: int) -> None:
    """Never back for the first 30 s, then every missing client returns at once (e.g. admission lifted):
    the alarm raised on the missing ones clears `clear_after_s` (5 s) after the last second they were
    missing — at 0 s while the drain's other clients are still within their hint, at 30 s after."""

    def late_then_back(t: float) -> int:
        return never_back(t) if t < DRAIN_FROM_S + 30 + gap_s else back_on_time(t)

    engine = AlarmEngine()
    events = [e for f in drain(late_then_back, seconds=120) for e in engine.update(f)]
    changes = [(e.time_s, e.data["change"]) for e in events if e.data["name"] == "connections_drop"]
    assert changes == [(DRAIN_FROM_S + 21, "raised"), (DRAIN_FROM_S + 34 + gap_s, "cleared")]
