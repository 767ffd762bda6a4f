"""The console's alarms judge a frame as the server's do: the same rules over what the nodes report."""

from __future__ import annotations

import json

import pytest

from console.client.synthetic import SyntheticFleet
from console.guards import Thresholds
from console.model import AlarmEntry, Received
from console.model.alarm_source import console_model
from console.model.node_readings import columnar_frame_json
from console.protocol import Frame, Hello
from tests.fleet_builders import frame

WHY = "Redis at redis://127.0.0.1:6379/0: TimeoutError: Timeout reading from 127.0.0.1:6379"


def frames_with_redis_away(seconds: int) -> list[dict]:
    """A fleet whose nodes gw-0001 and gw-0003 say, every second, that they cannot reach their Redis."""
    fleet = SyntheticFleet(nodes=4, seed=3)
    out = []
    for _ in range(seconds):
        frame = fleet.next_frame()
        for node in frame["nodes"]:
            if node["id"] in ("gw-0001", "gw-0003"):
                node["history_unreachable"] = WHY
        out.append(frame)
    return out


@pytest.mark.parametrize("read_as", ["live", "recorded"])
def test_a_node_that_cannot_reach_its_redis_raises_the_alarm_in_the_console(read_as: str) -> None:
    """Seen live (3 `gateway serve` nodes, redis-server stopped with SIGSTOP, console attached): the rows
    turned ▲ and the controller's events said `history_unreachable raised`, but the console's alarm panel
    stayed at "0 active" — its rules were handed the nodes' columns without what they said of Redis."""
    model = console_model()
    read = Frame.model_validate if read_as == "live" else (lambda raw: columnar_frame_json(json.dumps(raw)))
    for k, raw in enumerate(frames_with_redis_away(int(Thresholds().history_unreachable_for_s) + 3)):
        model.apply(Received(read(raw), float(k)))
    raised = [entry.alarm for entry in model.alarms.active() if entry.alarm.name == "history_unreachable"]
    assert len(raised) == 1
    assert set(raised[0].nodes) == {"gw-0001", "gw-0003"}


def test_a_console_reconnected_to_a_restarted_controller_keeps_its_active_alarms() -> None:
    """The controller restarted: the console's stream comes back with a fresh hello (a new epoch) and the
    fleet clock going on. Its alarms cleared there and were raised again, and past alarms were listed
    under two clocks; the fleet did not change, so neither does what is active, nor the time shown."""
    model = console_model()
    model.apply(Received(Hello(fleet="f", source="live", epoch="e1", seq=0), 0.0))
    for time_s in range(10):
        model.apply(Received(frame(time_s, headroom_pct=20.0), float(time_s)))
    (active,) = model.alarms.active()
    assert active.alarm.name == "headroom_low"
    model.apply(Received(Hello(fleet="f", source="live", epoch="e2", seq=0, recovered=False), 15.0))
    for time_s in range(15, 25):
        model.apply(Received(frame(time_s, epoch="e2", headroom_pct=20.0), float(time_s)))
        assert model.frame is not None and model.frame.time_s == time_s
    assert [(e.alarm.name, e.alarm.since_s) for e in model.alarms.active()] == [("headroom_low", 0)]
    assert model.alarms.past() == []


@pytest.mark.parametrize("read_as", ["live", "recorded"])
def test_a_pacing_breach_inside_a_sped_up_frame_raises_the_alarm_in_the_console(read_as: str) -> None:
    """The console judges a frame from its nodes' columns: without each drain's start its pacing alarm read
    a sped-up frame's last second only, and missed a breach at 20–22 s in a frame ending at 24 s."""
    from console.server.backend import fold_frames
    from tests.alarms.test_folded_seconds import PACING_ADMISSION, pacing_accepts, pacing_fleet
    from tests.fleet_builders import series

    seconds = series(1, 24, fleet=pacing_fleet, admission=PACING_ADMISSION, accepts_per_s=pacing_accepts)
    sped_up = fold_frames(seconds)
    model = console_model()
    read = (lambda f: f) if read_as == "live" else (lambda f: columnar_frame_json(f.model_dump_json()))
    model.apply(Received(read(sped_up), 0.0))
    assert [(e.alarm.name, e.alarm.since_s) for e in model.alarms.active()] == [("drain_pacing_exceeded", 20)]


def logged(entries: list[AlarmEntry]) -> list[tuple[str, float, float | None]]:
    return [(e.alarm.name, e.raised_at_s, e.cleared_at_s) for e in entries]


@pytest.mark.parametrize("read_as", ["live", "recorded"])
def test_an_alarm_raised_and_cleared_inside_a_sped_up_frame_is_in_the_consoles_alarm_log(
    read_as: str,
) -> None:
    """A frame folding 1–30 s: the pacing breach at 20–22 s raised the alarm at 20 s and it cleared at 27 s,
    both inside the frame. The engine's history had it; the console's log, built from the alarms active
    after each frame, never saw it — an operator reviewing a sped-up replay was not told it happened."""
    from console.server.backend import fold_frames
    from tests.alarms.test_folded_seconds import PACING_ADMISSION, pacing_accepts, pacing_fleet
    from tests.fleet_builders import series

    seconds = series(1, 30, fleet=pacing_fleet, admission=PACING_ADMISSION, accepts_per_s=pacing_accepts)
    model = console_model()
    read = (lambda f: f) if read_as == "live" else (lambda f: columnar_frame_json(f.model_dump_json()))
    model.apply(Received(read(fold_frames(seconds)), 0.0))
    assert model.alarms.active() == []
    assert logged(model.alarms.past()) == [("drain_pacing_exceeded", 20.0, 27.0)]


def test_a_sped_up_frame_logs_each_spell_of_an_alarm_at_its_own_times() -> None:
    """An alarm up at one frame's end (raised 20 s) clears inside the next (27 s), then is raised (40 s)
    and cleared (47 s) again inside it: two spells, each at its fleet times. The log had one, raised at
    20 s and cleared at the frame's end (60 s)."""
    from console.server.backend import fold_frames
    from tests.alarms.test_folded_seconds import PACING_ADMISSION, pacing_accepts, pacing_fleet
    from tests.fleet_builders import series

    def accepts_per_s(time_s: float) -> float:
        return 2200.0 if 40 <= time_s <= 42 else pacing_accepts(time_s)

    seconds = series(1, 60, fleet=pacing_fleet, admission=PACING_ADMISSION, accepts_per_s=accepts_per_s)
    model = console_model()
    model.apply(Received(fold_frames(seconds[:24]), 0.0))
    assert logged(model.alarms.active()) == [("drain_pacing_exceeded", 20.0, None)]
    model.apply(Received(fold_frames(seconds[24:]), 1.0))
    assert model.alarms.active() == []
    assert logged(model.alarms.past()) == [  # newest first
        ("drain_pacing_exceeded", 40.0, 47.0),
        ("drain_pacing_exceeded", 20.0, 27.0),
    ]


@pytest.mark.parametrize("read_as", ["live", "recorded"])
def test_a_drain_ending_inside_a_sped_up_frame_counts_until_its_end_in_the_console(read_as: str) -> None:
    """The console's columns carry each node's drain status: the frame before (1–10 s) dates the drain
    that ends inside the next frame (11–40 s), and the pacing alarm clears at 30 s as at one frame a
    second — it cleared at the frame's end, 40 s, without the drain's end."""
    from console.server.backend import fold_frames
    from tests.alarms.test_folded_seconds import PACING_ADMISSION, ending_drain
    from tests.fleet_builders import series

    seconds = series(1, 40, fleet=ending_drain("paced"), admission=PACING_ADMISSION, accepts_per_s=2600.0)
    model = console_model()
    read = (lambda f: f) if read_as == "live" else (lambda f: columnar_frame_json(f.model_dump_json()))
    for k, folded in enumerate([fold_frames(seconds[:10]), fold_frames(seconds[10:])]):
        model.apply(Received(read(folded), float(k)))
    assert logged(model.alarms.past()) == [("drain_pacing_exceeded", 1.0, 30.0)]
