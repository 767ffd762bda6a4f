"""`stormdeck replay`: the console fed from a recording, driven by real key presses (issue #5, section 4).

The recording is the synthetic fleet (storm at 40 s, so the alarm engine raises alarms) plus one blocked
drain at 60.5 s; the replay's clock is frozen, so nothing moves unless a control moves it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from textual.binding import Binding
from textual.widgets import Input

from console import __version__
from console.alarms import AlarmEngine
from console.client.decode import StreamDecoder
from console.client.synthetic import SyntheticFleet
from console.errors import InputError
from console.model.timeline import parse_clock, parse_seek, timeline_cells
from console.model.units import FLEET_CLOCK, drill_clock
from console.protocol import Check, Event, Frame, Source, Verdict, VerdictLevel
from console.record.reader import Marker, RecordingReader
from console.record.records import ActionRecord, DrillInfo, RecordingHeader
from console.record.replay import ReplaySource
from console.record.writer import RecordingWriter
from console.ui.replay import ReplayApp
from console.ui.screens.main import MainScreen
from console.ui.widgets.alarms_panel import AlarmsPanel
from console.ui.widgets.timeline_bar import TimelineBar

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, event_lines, fleet_ready

SECONDS = 120
ACTION_AT_S = 60.5


def write_recording(
    path: Path,
    edit_at_s: float | None = None,
    drill: DrillInfo | None = None,
    told: dict[float, list[Event]] | None = None,
) -> Path:
    """`edit_at_s`: that frame is written with node 3's cpu_pct "hot", as an edited file would have it.
    `drill`: the header says the session was a drill's, as `drill --record` writes it. `told`: events
    written before the frame of each fleet time (a drill's lines, an instructor's injection)."""
    fleet = SyntheticFleet(nodes=24, seed=7, storm_at_s=40)
    decoder = StreamDecoder()
    header = RecordingHeader(
        stormdeck_version=__version__,
        fleet="demo-fleet",
        source=Source.SIMULATOR,
        started_unix_s=1.8e9,
        drill=drill,
    )
    with RecordingWriter(path, header, alarms=AlarmEngine(), fsync=False) as writer:
        writer.write(decoder.feed(json.dumps(fleet.hello())))
        for _ in range(SECONDS):
            for raw in fleet.next_messages():
                message = decoder.feed(raw)
                assert message is not None
                if isinstance(message, Frame):
                    for event in (told or {}).get(message.time_s, []):
                        writer.write(event)
                if isinstance(message, Frame) and message.time_s == edit_at_s:
                    edited = json.loads(raw)
                    edited["nodes"][3]["cpu_pct"] = "hot"
                    raw = json.dumps(edited)
                writer.write(message, raw=raw)
                if isinstance(message, Frame) and message.time_s == ACTION_AT_S - 0.5:
                    writer.write(blocked_drain(ACTION_AT_S))
    return path


def blocked_drain(time_s: float) -> ActionRecord:
    check = Check(name="drain_pacing_per_s", value=900.0, limit=300.0, ok=False, why="pacing budget")
    return ActionRecord(
        time_s=time_s,
        actor="ops",
        action="drain",
        target="gw-0003",
        request={"rate_per_s": 900, "deadline_s": 600, "hint_ms": [1000, 16000]},
        verdict=Verdict(level=VerdictLevel.BLOCKED, action="drain", checks=[check]),
        outcome="blocked",
        status=422,
    )


@pytest.fixture
def reader(tmp_path: Path):
    reader = RecordingReader(write_recording(tmp_path / "session.sdrec"))
    yield reader
    reader.close()


@pytest.fixture
def replay_app(reader: RecordingReader) -> ReplayApp:
    replay = ReplaySource(reader, paused=True, clock=lambda: 1000.0)  # frozen: only controls move it
    return ReplayApp(replay, remember_theme=False, clock=lambda: 1.8e9 + 0.4)


def shown_time(app: ReplayApp) -> float | None:
    return app.model.frame.time_s if app.model.frame is not None else None


async def test_step_and_pause(replay_app: ReplayApp, reader: RecordingReader):
    first = reader.frame_at(0).time_s
    async with replay_app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: shown_time(replay_app) == first, what="the first frame, paused")
        await pilot.press("full_stop", "full_stop")
        await wait_for(lambda: shown_time(replay_app) == reader.frame_at(2).time_s, what="two frames on")
        await pilot.press("comma")
        await wait_for(lambda: shown_time(replay_app) == reader.frame_at(1).time_s, what="one frame back")
        assert replay_app.replay.status().frame_index == 1
        assert replay_app.model.frames_applied >= 2  # the prefill before the landing frame
        await pilot.press("space")
        assert not replay_app.replay.status().paused
        await pilot.press("space")
        assert replay_app.replay.status().paused


async def test_a_held_replay_is_not_shown_as_a_failing_link(reader: RecordingReader):
    """Paused (or at its end) a replay sends no frames and none are late: no ▲/✖ age in the header; played
    again, the age counts from then."""
    from console.ui.widgets.header import FleetHeader

    wall = [1.8e9]
    replay = ReplaySource(reader, paused=True, clock=lambda: 1000.0)
    app = ReplayApp(replay, remember_theme=False, clock=lambda: wall[0])

    def header() -> str:
        return str(app.screen.query_one(FleetHeader).render())

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: shown_time(app) == reader.frame_at(0).time_s, what="the first frame, paused")
        await fleet_ready(app)  # `_tick` draws the header only into a ready screen
        wall[0] += 60.0  # a minute of wall time, held
        app._tick()
        await pilot.pause()
        # A replay says so, not "link ✓ live" / "link ✓ paused" (user pass): playing at what speed, or held.
        assert "replay ⏸ paused" in header() and "age" not in header() and "link" not in header()
        # The bar under it says the same, with the same glyph: it drew "replay ‖ paused" under "replay ⏸ paused".
        bar = str(app.screen.query_one(TimelineBar).render())
        assert "replay ⏸ paused" in bar and "‖" not in bar, bar
        await pilot.press("space")
        app._tick()
        await pilot.pause()
        speed = app.replay.status().speed
        assert f"replay ▶ ×{speed:g}" in header() and "age 0.0 s" in header() and "live" not in header()
        await pilot.press("x")
        app._tick()
        await pilot.pause()
        assert app.replay.status().speed != speed and f"replay ▶ ×{app.replay.status().speed:g}" in header()


async def test_seek_to_a_time_and_a_bad_time_says_why(replay_app: ReplayApp, reader):
    async with replay_app.run_test(size=SIZE) as pilot:
        await fleet_ready(replay_app)
        await pilot.press("g", *"soon", "enter")
        await pilot.pause()
        error = str(replay_app.screen.query_one("#seek-error").render())
        assert "time" in error and "M:SS" in error
        await pilot.press("g", *"1:30", "enter")  # the bad time comes back selected: typing replaces it
        target = reader.frame_at(reader.index_at(90.0)).time_s
        await wait_for(lambda: shown_time(replay_app) == target, what="the frame at 1:30")
        assert replay_app.replay.status().frame_index == reader.index_at(90.0)
        assert replay_app.model.frames_applied > 30  # a fresh model, prefilled with the minute before
        await pilot.press("g", *"999", "enter")  # past the end: it lands on the last frame, and says so
        last = reader.frame_at(reader.frame_count - 1).time_s
        await wait_for(lambda: shown_time(replay_app) == last, what="the last frame")
        assert any("0:16:39 is outside the recording" in n.message for n in replay_app._notifications)


async def test_after_a_failed_seek_the_box_closes_and_q_quits(replay_app: ReplayApp, reader):
    """User pass: `g`, `99:99`, Enter left the seek box open with its error, so a later `q` was typed into it
    ("99:99q") and did not quit. Enter ends the seek either way: the error is a notification, the box
    closes; `g` brings the bad time back, selected, beside its error, so fixing it is one retype."""
    async with replay_app.run_test(size=SIZE) as pilot:
        await fleet_ready(replay_app)
        await pilot.press("g", *"99:99", "enter")
        await pilot.pause()
        seek = replay_app.screen.query_one("#seek")
        assert not replay_app.screen.query_one("#seek-bar").has_class("-open") and not seek.has_focus
        assert any("M:SS" in n.message and n.severity == "error" for n in replay_app._notifications)
        await pilot.press("g")
        await pilot.pause()
        assert seek.has_focus and seek.value == "99:99" and seek.selected_text == "99:99"
        assert "M:SS" in str(replay_app.screen.query_one("#seek-error").render())
        await pilot.press(*"1:30", "enter")  # typing replaces the selected bad time
        target = reader.frame_at(reader.index_at(90.0)).time_s
        await wait_for(lambda: shown_time(replay_app) == target, what="the frame at 1:30")
        await pilot.press("g", *"99:99", "enter", "q")
        await wait_for(lambda: replay_app._exit, what="q quits after a failed seek")
        assert seek.value == "99:99"  # the q was not typed into the closed box


@pytest.mark.parametrize("drill", [None, DrillInfo(name="regional-outage", clock_start_s=2 * 3600)])
async def test_at_80_by_24_the_seek_s_example_times_stay_whole(tmp_path: Path, drill) -> None:
    """The seek's "(Enter seeks, Esc closes)" was only its placeholder, gone at the first key typed (the
    filter bar's defect, fixed there): the keys are beside the input (the bar's shape, one row at 80×24, is
    `InputBar`'s: test_input_bar). The example times (the drill clock's the longest) stay whole in the
    placeholder beside them."""
    from .test_oncall import visible_lines

    path = write_recording(tmp_path / "session.sdrec", drill=drill)
    with RecordingReader(path) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await fleet_ready(app)
            await pilot.press("g")
            await pilot.pause()
            field = app.screen.query_one("#seek", Input)
            assert visible_lines(field)[0].rstrip() == field.placeholder, visible_lines(field)
            assert "Enter" not in field.placeholder and "Esc" not in field.placeholder


async def test_speed_cycles_and_digits_choose_it(replay_app: ReplayApp):
    async with replay_app.run_test(size=SIZE) as pilot:
        await fleet_ready(replay_app)
        speeds = []
        for _ in range(4):
            await pilot.press("x")
            speeds.append(replay_app.replay.status().speed)
        assert speeds == [5.0, 20.0, 60.0, 1.0]
        await pilot.press("3")
        assert replay_app.replay.status().speed == 20.0
        bar = str(replay_app.screen.query_one(TimelineBar).render())
        assert "×20" in bar


async def test_jump_to_alarms_and_actions(replay_app: ReplayApp, reader: RecordingReader):
    alarms = reader.markers("alarm")
    (action,) = reader.markers("action")
    assert alarms, "the storm must raise alarms for this test to mean anything"
    async with replay_app.run_test(size=SIZE) as pilot:
        await fleet_ready(replay_app)
        await pilot.press("right_square_bracket")
        landing = reader.frame_at(alarms[0].frame_index).time_s
        await wait_for(lambda: shown_time(replay_app) == landing, what="the first alarm")
        await pilot.press("right_curly_bracket")
        landing = reader.frame_at(action.frame_index).time_s
        await wait_for(lambda: shown_time(replay_app) == landing, what="the action")
        bar = str(replay_app.screen.query_one(TimelineBar).render())
        assert "last: drain gw-0003 by ops at 0:01:00 → blocked" in bar, bar
        await pilot.press("left_curly_bracket")  # no action before it: stays, and says so
        await pilot.pause()
        assert replay_app.replay.status().frame_index == action.frame_index
        assert any("no action before" in n.message for n in replay_app._notifications)
        await pilot.press("left_square_bracket")
        await wait_for(lambda: replay_app.replay.status().frame_index < action.frame_index, what="back")


async def test_after_a_seek_alarms_read_as_raised_when_the_recording_says(
    replay_app: ReplayApp, reader: RecordingReader
):
    """Found in review: after `g` the alarms panel said an alarm up since long before was raised where the
    prefill starts (the fresh model's engine first saw it there); it says the recorded raise time."""
    (raised,) = [
        e.time_s
        for e in reader.events()
        if e.kind == "alarm" and e.data["name"] == "lockstep_waves" and e.data["change"] == "raised"
    ]
    assert raised == 41.0  # up until 106 s
    async with replay_app.run_test(size=SIZE) as pilot:
        await fleet_ready(replay_app)
        await pilot.press("g", *"1:45", "enter")
        await wait_for(lambda: shown_time(replay_app) == 105.0, what="the frame at 1:45")
        active = {e.alarm.name: e.raised_at_s for e in replay_app.model.alarms.active()}
        assert active.get("lockstep_waves") == raised  # not 47.0: where the fresh engine first saw it
        await pilot.pause()
        panel = replay_app.screen.query_one(AlarmsPanel)
        rows = [" ".join(map(str, panel.get_row_at(i))) for i in range(panel.row_count)]
        assert any("lockstep_waves" in row and "0:00:41" in row for row in rows), rows


def acknowledged(app: ReplayApp) -> dict[tuple[str, str | None], bool]:
    """The active alarms, by (rule, node), and whether each is acknowledged."""
    return {entry.key: entry.acknowledged for entry in app.model.alarms.active()}


async def test_an_acknowledgement_made_in_a_replay_survives_a_seek(
    replay_app: ReplayApp, reader: RecordingReader
):
    """User pass: `A` at 1:45, then `g 1:30` (or `[`): the seek starts a fresh model and every alarm the
    operator had acknowledged shouted again. The acknowledgement is the alarm spell's: it holds wherever
    that spell is up — before the ack too — and one never acknowledged (reconnect_rate_high, up from 45 s
    to 64 s, and the others cleared before 1:45) still shouts."""
    async with replay_app.run_test(size=SIZE) as pilot:
        await fleet_ready(replay_app)
        await pilot.press("g", *"1:45", "enter")
        await wait_for(lambda: shown_time(replay_app) == 105.0, what="the frame at 1:45")
        await pilot.press("A")
        at_105 = acknowledged(replay_app)
        assert at_105[("lockstep_waves", None)] and all(at_105.values()), at_105
        await pilot.press("g", *"1:30", "enter")
        await wait_for(lambda: shown_time(replay_app) == 90.0, what="the frame at 1:30")
        assert acknowledged(replay_app) == at_105
        assert replay_app.model.alarms.unacknowledged == 0
        await pilot.press("left_square_bracket")  # the previous alarm: reconnect_rate_high at 45 s
        await wait_for(lambda: shown_time(replay_app) == 45.0, what="the alarm at 0:45")
        at_45 = acknowledged(replay_app)
        assert at_45 == {key: key in at_105 for key in at_45}, at_45
        assert at_45[("lockstep_waves", None)] and not at_45[("reconnect_rate_high", None)], at_45
        await pilot.press("g", *"0:30", "enter")  # before the alarms fired
        await wait_for(lambda: shown_time(replay_app) == 30.0, what="the frame at 0:30")
        assert ("lockstep_waves", None) not in acknowledged(replay_app)
        await pilot.press("right_square_bracket", "right_square_bracket")  # lockstep_waves raised at 41 s
        await wait_for(lambda: shown_time(replay_app) == 41.0, what="the alarm at 0:41")
        at_41 = acknowledged(replay_app)
        assert at_41 == {key: key in at_105 for key in at_41}, at_41
        assert at_41[("lockstep_waves", None)], at_41  # the same spell: still acknowledged
        replay_app.refresh_views()
        title = str(replay_app.screen.query_one("#alarms-box").border_title)
        unacknowledged = sum(key not in at_105 for key in at_41)  # connections_drop, the kill switch
        assert title.endswith(f" {unacknowledged} new") and unacknowledged < len(at_41), title


def header_text(app: ReplayApp) -> str:
    from console.ui.widgets.header import FleetHeader

    return str(app.screen.query_one(FleetHeader).render())


async def seek_to_second_45(app: ReplayApp, pilot) -> None:
    """A paused replay sought (`g 45`) to fleet second 45, and drawn."""
    await fleet_ready(app)
    await pilot.press("g", *"45", "enter")
    await wait_for(lambda: shown_time(app) == 45.0, what="the frame at fleet second 45")
    await fleet_ready(app)


async def test_a_drills_recording_replays_on_the_drills_clock(tmp_path: Path):
    """User pass: a trainer replaying `stormdeck drill regional-outage --record`'s recording read `fleet
    clock 0:00:45` where the trainee's console had read `drill clock 02:00:45`, and the briefing, hints and
    timeline speak the drill's clock. The header carries the drill clock's start; the replay shows it in
    the header, the alarms' raised times, the node screen and the timeline bar."""
    drill = DrillInfo(name="regional-outage", title="Regional outage", clock_start_s=2 * 3600)
    path = write_recording(tmp_path / "drill.sdrec", drill=drill)
    with RecordingReader(path) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=SIZE) as pilot:
            await seek_to_second_45(app, pilot)
            header = header_text(app)
            assert "drill clock 02:00:45" in header and "fleet clock" not in header, header
            alarms = app.screen.query_one(AlarmsPanel)
            raised = [str(alarms.get_cell_at((row, 5))) for row in range(alarms.row_count)]
            assert raised and all(cell.startswith("02:00:") for cell in raised), raised
            bar = str(app.screen.query_one(TimelineBar).render())
            assert "02:00:45 / 02:02:00" in bar, bar
            node_id = next(node for node in app.model.nodes if app.model.node_events(node, limit=1))
            app.open_node(node_id)
            await fleet_ready(app)
            assert "drill clock 02:00:45" in header_text(app)
            events = event_lines(app.screen)
            assert events and all(line.startswith("02:00:") for line in events if line[:1].strip()), events


async def test_a_drills_replay_seeks_to_a_time_on_the_drills_clock(tmp_path: Path):
    """User pass: on a drill's replay every time reads `02:01:30`, so that is what a trainer types into `g`;
    it was read as fleet time (2 h 1 min 30 s), outside a 2-minute recording, and the replay went to its
    end. A time with colons is a time of day on the drill's clock (as a drill's `at`), a bare number fleet
    seconds since the drill began (as `at_s`); the field says so."""
    drill = DrillInfo(name="regional-outage", clock_start_s=2 * 3600)
    path = write_recording(tmp_path / "drill.sdrec", drill=drill)
    with RecordingReader(path) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=SIZE) as pilot:
            await fleet_ready(app)
            assert "drill clock" in app.screen.query_one("#seek", Input).placeholder
            await pilot.press("g", *"02:01:30", "enter")
            await wait_for(lambda: shown_time(app) == 90.0, what="02:01:30 on the drill's clock")
            await pilot.press("g", *"45", "enter")
            await wait_for(lambda: shown_time(app) == 45.0, what="fleet second 45")
            await pilot.press("g", *"02:99", "enter")
            await pilot.pause()
            error = str(app.screen.query_one("#seek-error").render())
            assert "HH:MM" in error and "drill clock" in error, error
            assert shown_time(app) == 45.0


@pytest.mark.parametrize(
    ("typed", "fleet_s"),
    [("02:00", 0.0), ("02:01:30", 90.0), ("75", 75.0), ("12.5", 12.5), ("2:01:30", 90.0)],
)
def test_a_time_on_the_drills_clock_is_read_as_fleet_seconds(typed: str, fleet_s: float):
    assert parse_seek(typed, drill_clock(2 * 3600)) == fleet_s
    assert parse_seek(typed, FLEET_CLOCK) == parse_clock(typed)  # elsewhere: fleet time, as before


def test_a_drill_clock_past_midnight_wraps_and_a_bad_time_of_day_is_refused():
    assert parse_seek("00:05", drill_clock(23 * 3600 + 50 * 60)) == 15 * 60
    for typo in ("24:00", "02:60", "02:00:60", "02:00:00:00", "soon"):
        with pytest.raises(InputError) as refused:
            parse_seek(typo, drill_clock(2 * 3600))
        assert refused.value.field == "time" and "HH:MM" in str(refused.value)


async def test_a_drills_recording_older_than_its_clock_replays_on_the_fleet_clock(tmp_path: Path):
    """A drill recording written before the header carried the drill clock still replays, as before."""
    path = write_recording(tmp_path / "old.sdrec", drill=DrillInfo(name="regional-outage"))
    with RecordingReader(path) as reader:
        assert reader.header.drill is not None and reader.header.drill.clock_start_s is None
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=SIZE) as pilot:
            await seek_to_second_45(app, pilot)
            assert "fleet clock 0:00:45" in header_text(app)
            assert "0:00:45 / 0:02:00" in str(app.screen.query_one(TimelineBar).render())


async def test_replay_is_read_only_and_says_so(replay_app: ReplayApp):
    async with replay_app.run_test(size=SIZE) as pilot:
        await fleet_ready(replay_app)
        await pilot.press("d")
        # The action's worker answers with a notification (no form), whenever it runs.
        await wait_for(
            lambda: any("read-only" in n.message for n in replay_app._notifications), what="the notice"
        )
        assert isinstance(replay_app.screen, MainScreen)
        replay_app.refresh_views()
        assert "actions off" in str(replay_app.screen.query_one("#rollout-box").border_title)


async def test_a_seek_past_a_damaged_frame_ends_the_replay_there_saying_what_is_wrong(tmp_path: Path):
    """The frame at 50 s has a node's cpu_pct "hot" (an edited file: its CRC checks out). Seeking to 1:40
    read it in the prefill and the console died with an IndexError traceback. It lands on the frame before
    it and says, as the reader does, which record and field; a seek before it still works."""
    path = write_recording(tmp_path / "edited.sdrec", edit_at_s=50.0)
    with RecordingReader(path) as reader:
        replay = ReplaySource(reader, paused=True, clock=lambda: 1000.0)
        app = ReplayApp(replay, remember_theme=False, clock=lambda: 1.8e9 + 0.4)
        async with app.run_test(size=SIZE) as pilot:
            await fleet_ready(app)
            await pilot.press("g", *"1:40", "enter")
            await wait_for(lambda: shown_time(app) == 49.0, what="the last frame before the damage")
            await pilot.pause()
            status = replay.status()
            assert status.finished and status.frame_count == 49
            told = [n.message for n in app._notifications if "nodes.3.cpu_pct" in n.message]
            assert told and "frame record at byte" in told[0] and "'hot'" in told[0]
            bar = str(app.screen.query_one(TimelineBar).render())
            assert "end of the recording: the frame record at byte" in bar and "nodes.3.cpu_pct" in bar
            await pilot.press("g", *"0:30", "enter")
            await wait_for(lambda: shown_time(app) == 30.0, what="the frame at 0:30")
            assert replay.status().frame_index == 29 and not replay.status().finished


def test_timeline_cells_place_markers_and_the_head():
    markers = [Marker("alarm", 40.0, "x", "critical"), Marker("action", 60.0, "drain", "blocked")]
    cells = timeline_cells((0.0, 100.0), markers, 50.0, 11)
    assert [c.kind for c in cells].count("played") == 4
    assert cells[4].glyph == "▲" and cells[5].kind == "head" and cells[6].glyph == "◆"
    assert parse_clock("4:05") == 245 and parse_clock("0:04:05") == 245 and parse_clock("12.5") == 12.5
    assert parse_clock("75") == 75 and parse_clock("90:00") == 5400  # the first field is not bounded


@pytest.mark.parametrize("typo", ["0:61", "4:99", "1:60:00", "0:04:60", "4:59.5x"])
def test_a_clock_with_seconds_or_minutes_past_59_is_refused(typo: str):
    with pytest.raises(InputError) as refused:
        parse_clock(typo)
    assert refused.value.field == "time"


def test_replay_snapshot(reader: RecordingReader, snap_compare):
    replay = ReplaySource(reader, paused=True, clock=lambda: 1000.0)
    app = ReplayApp(replay, remember_theme=False, clock=lambda: 1.8e9 + 0.4)
    (action,) = reader.markers("action")
    landing = reader.frame_at(action.frame_index).time_s

    async def at_the_action(pilot) -> None:
        await pilot.pause()
        await pilot.press("right_curly_bracket")
        await wait_for(lambda: shown_time(app) == landing, what="the action")
        app.clear_notifications()
        await fleet_ready(app)
        app.refresh_views()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=at_the_action)


def _model_after(items: list, reader: RecordingReader):
    from console.model.alarm_source import console_model
    from console.model.link import Received
    from console.protocol import Event
    from console.ui.replay import recorded_raise_times

    model = console_model()
    assert model.alarm_source is not None
    model.alarm_source = recorded_raise_times(model.alarm_source, reader)
    for item in items:
        if isinstance(item, Frame | Event):
            model.apply(Received(item, 1.8e9))
    return model


@pytest.mark.parametrize("seek_s", [30.0, 50.0, 75.0, 119.0])
def test_a_seek_builds_node_records_for_the_landing_frame_only_and_shows_the_same(
    reader: RecordingReader, seek_s: float
) -> None:
    """A seek at 2000 nodes took 1.6 s, nearly all of it building the prefill's node records (pydantic
    models) only to read a few numbers of each. The prefill's frames now come with their nodes as columns;
    a model fed them holds what one fed the whole frames holds: the charts, sparklines, alarms."""
    replay = ReplaySource(reader, paused=True, clock=lambda: 1000.0)
    replay.seek(seek_s)
    items = replay.take(1000.0)
    frames = [item for item in items if isinstance(item, Frame)]
    landing = replay.status().frame_index
    assert len(frames) > 10 and all(f.nodes == [] for f in frames[:-1]) and len(frames[-1].nodes) == 24
    first = landing - len(frames) + 1
    whole = {id(f): reader.frame_at(first + i) for i, f in enumerate(frames)}
    fast, slow = _model_after(items, reader), _model_after([whole.get(id(i), i) for i in items], reader)

    assert fast.frame == slow.frame and fast.nodes == slow.nodes and fast.node_rows == slow.node_rows
    for ring in ("time_s", "connections", "attempts_per_s", "accepts_per_s", "rejects_per_s"):
        np.testing.assert_array_equal(
            getattr(fast.totals, ring).values(), getattr(slow.totals, ring).values()
        )
    for name, table in fast.node_series.items():
        for row in fast.node_rows.values():
            np.testing.assert_array_equal(table.row(row), slow.node_series[name].row(row))
    np.testing.assert_array_equal(fast.wave_bins.values(), slow.wave_bins.values())
    assert (fast.lockstep, fast.baseline_attempts_per_s) == (slow.lockstep, slow.baseline_attempts_per_s)
    assert [(e.alarm, e.raised_at_s) for e in fast.alarms.active()] == [
        (e.alarm, e.raised_at_s) for e in slow.alarms.active()
    ]
    assert [(e.alarm, e.cleared_at_s) for e in fast.alarms.past()] == [
        (e.alarm, e.cleared_at_s) for e in slow.alarms.past()
    ]
    assert list(fast.events) == list(slow.events)


async def test_the_replay_footer_shows_its_own_keys_whole_at_160_columns(replay_app: ReplayApp):
    """User pass: the replay's footer was cut after "} next": "{ prev action" never showed."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    async with replay_app.run_test(size=SIZE) as pilot:
        await fleet_ready(replay_app)
        await pilot.pause()
        footer = replay_app.screen.query_one(Footer)
        shown = {
            key.key_display
            for key in footer.query(FooterKey)
            if key.region.width and key.region.right <= footer.region.right
        }
        assert {"q", "?", "g", ".", ",", "x", "[", "]", "{", "}"} <= shown, shown


async def test_the_replays_node_screen_footer_shows_the_replay_keys_not_the_actions(replay_app: ReplayApp):
    """User pass: Enter on a node in a replay showed a footer of `d drain u undrain R rollout h halt …`,
    keys a replay cannot use, and cut the replay's own at "−1 fram": the fleet screen's footer leaves the
    actions off for the replay's keys; so does the node screen."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    from console.ui.screens.node_detail import NodeDetailScreen

    async with replay_app.run_test(size=SIZE) as pilot:
        await fleet_ready(replay_app)
        replay_app.open_node(next(iter(replay_app.model.nodes)))
        await fleet_ready(replay_app)
        await pilot.pause()
        assert isinstance(replay_app.screen, NodeDetailScreen)
        footer = replay_app.screen.query_one(Footer)
        shown = {
            key.key_display
            for key in footer.query(FooterKey)
            if key.region.width and key.region.right <= footer.region.right
        }
        assert {"esc", "q", ".", ",", "x", "[", "]", "{", "}"} <= shown, shown
        assert not {"d", "u", "R", "h", "a", "c"} & shown, shown
        await pilot.press("d")  # still answered, as on the fleet screen: the replay is read-only
        await wait_for(
            lambda: any("read-only" in n.message for n in replay_app._notifications), what="the notice"
        )


async def test_the_timeline_bar_keeps_to_three_lines_at_120_columns_and_counts_in_the_singular(
    replay_app: ReplayApp, reader: RecordingReader
):
    """User pass at 120×40: the controls line wrapped its last word ("action") onto a line of its own,
    pushing the bar down; and the counts read "◆ 1 actions"."""
    assert len(reader.markers("action")) == 1
    async with replay_app.run_test(size=(120, 40)) as pilot:
        await fleet_ready(replay_app)
        await pilot.pause()
        bar = replay_app.screen.query_one(TimelineBar)
        lines = str(bar.render()).splitlines()
        assert bar.region.height == 3, lines  # status, the bar, the counts
        assert "◆ 1 action " in lines[-1] and "1 actions" not in lines[-1], lines


TOKEN = "tok-never-shown-4f2a"


def add_confirmed_drain(path: Path) -> None:
    """Append an attempt that needed confirmation (its verdict and request given a token: the writer drops
    it, as recordings from before it did may not have), the operator's confirmation, and the applied drain."""
    from console.record.records import Confirmation

    asked = Verdict(level=VerdictLevel.CONFIRM, action="drain", confirm_token=TOKEN)
    with RecordingWriter(
        path, RecordingHeader(stormdeck_version=__version__, started_unix_s=0), fsync=False
    ) as w:
        w.write(
            ActionRecord(
                time_s=80.0,
                actor="ops",
                action="drain",
                target="gw-0005",
                request={"rate_per_s": 200, "confirm": {"token": TOKEN}},
                verdict=asked,
                outcome="needs_confirmation",
                status=409,
                detail="drain gw-0005 needs confirmation",
            )
        )
        w.write(Confirmation(time_s=81.0, actor="ops", action="drain", target="gw-0005", answer="confirmed"))
        w.write(
            ActionRecord(
                time_s=81.0,
                actor="ops",
                action="drain",
                target="gw-0005",
                request={"rate_per_s": 200},
                verdict=asked.model_copy(update={"confirm_token": None}),
                outcome="applied",
                status=200,
                detail="draining gw-0005 at 200/s",
                audit_seq=7,
            )
        )


@asynccontextmanager
async def paused_replay_showing(
    path: Path, key: str, screen_type: type, what: str
) -> AsyncIterator[tuple[Any, Any]]:
    """A paused replay of `path` once `key` has opened a `screen_type`: the app and the pilot."""
    with RecordingReader(path) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=SIZE) as pilot:
            await fleet_ready(app)
            await pilot.press(key)
            await wait_for(lambda: isinstance(app.screen, screen_type), what=what)
            yield app, pilot


@asynccontextmanager
async def replay_audit_log(
    path: Path, rows: int, what: str
) -> AsyncIterator[tuple[Any, Any, Any, list[list[str]]]]:
    """A paused replay of `path` with `L` pressed: the pilot, the audit screen, its table once it holds
    `rows` records, and their cells as text."""
    from console.ui.screens.audit import AuditScreen

    async with paused_replay_showing(path, "L", AuditScreen, "the audit log") as (app, pilot):
        screen = app.screen
        table = screen.query_one("#audit-table")
        await wait_for(lambda: table.row_count == rows, what=what)
        yield (
            pilot,
            screen,
            table,
            [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)],
        )


async def test_the_audit_log_of_a_replay_shows_the_recordings_actions_never_their_tokens(tmp_path: Path):
    """User pass: `L` in a replay opened an empty audit log ("no fleet API: this session's attempts only"),
    though the recording holds every attempt, confirmation and outcome. It shows them, newest first, at the
    times the replay's clock shows, read-only — and never a confirmation token, wherever one was kept."""
    path = write_recording(tmp_path / "session.sdrec")
    add_confirmed_drain(path)
    async with replay_audit_log(path, 4, "the recording's four records") as (pilot, screen, table, rows):
        # newest first: applied, confirmed, needs confirmation, the blocked drain at 60.5 s
        assert [row[5].split()[-1] for row in rows] == [
            "applied",
            "confirmed",
            "needs_confirmation",
            "blocked",
        ], rows
        assert rows[-1][:4] == [FLEET_CLOCK.text(ACTION_AT_S), "ops", "drain", "gw-0003"], rows
        note = str(screen.query_one("#audit-note").render())
        assert "read-only" in note and "session.sdrec" in note, note
        shown = "\n".join(strip.text for strip in table.render_lines(table.region.reset_offset))
        for row in range(table.row_count):
            table.move_cursor(row=row)
            await pilot.pause()
            shown += str(screen.query_one("#audit-detail").render())
        assert TOKEN not in shown and "token" not in shown.lower(), shown
        await pilot.press("escape")
        await wait_for(lambda: isinstance(pilot.app.screen, MainScreen), what="back to the fleet")


#: A drill's line (its timeline's injection) told before the frame of 31 s; an instructor's injection
#: before the frame of 91 s; a hint before the frame of 101 s.
DRILL_EVENTS = {
    31.0: [
        Event(
            time_s=30.0,
            kind="drill",
            message="02:00:30 power fails: every gateway restarts",
            data={"drill": "regional-outage", "action": "restart_nodes", "params": {"nodes": 24}},
        )
    ],
    91.0: [
        Event(
            time_s=90.0,
            kind="injection",
            message="instructor injected kill_nodes(nodes=[gw-0004])",
            data={"event": "kill_nodes", "params": {"nodes": ["gw-0004"]}},
        )
    ],
    101.0: [Event(time_s=100.0, kind="hint", message="Admission is off.", data={"drill": "regional-outage"})],
}


def test_injections_and_drill_events_are_markers_landing_on_the_frame_that_shows_them(tmp_path: Path):
    path = write_recording(tmp_path / "drill.sdrec", told=DRILL_EVENTS)
    with RecordingReader(path) as reader:
        events = reader.markers("event")
        assert [(m.time_s, m.level, m.label) for m in events] == [
            (30.0, "drill", "02:00:30 power fails: every gateway restarts"),
            (90.0, "injection", "instructor injected kill_nodes(nodes=[gw-0004])"),
            (100.0, "hint", "Admission is off."),
        ]
        # each lands on the frame written after it: the first to show what it did
        assert [reader.frame_at(m.frame_index).time_s for m in events] == [31.0, 91.0, 101.0]
        assert len(reader.markers()) == len(reader.markers("alarm")) + len(reader.markers("action")) + 3


def test_timeline_cells_mark_events_under_actions_over_alarms():
    markers = [
        Marker("alarm", 40.0, "x", "critical"),
        Marker("event", 40.0, "power fails", "drill"),
        Marker("event", 60.0, "kill", "injection"),
        Marker("action", 60.0, "drain", "blocked"),
    ]
    cells = timeline_cells((0.0, 100.0), markers, 0.0, 11)
    assert (cells[4].glyph, cells[4].kind) == ("◇", "event")  # over the alarm in its cell
    assert cells[6].glyph == "◆"  # the operator's own move still outranks it


async def test_the_replay_marks_injections_and_drill_events_and_jumps_to_them(tmp_path: Path):
    from console.ui.screens.help import HelpScreen, binding_rows

    """User pass on a served drill's recording: the timeline bar showed alarms and actions but not when
    the power failed or the instructor killed a node, and nothing jumped there. `(` `)` jump to the
    previous/next injection or drill event (the bar's controls line and help say so); the bar marks them ◇
    and counts them."""
    path = write_recording(
        tmp_path / "drill.sdrec",
        drill=DrillInfo(name="regional-outage", clock_start_s=2 * 3600),
        told=DRILL_EVENTS,
    )
    with RecordingReader(path) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=SIZE) as pilot:
            await fleet_ready(app)
            bar = app.screen.query_one(TimelineBar)
            lines = str(bar.render()).splitlines()
            assert "( ) event" in lines[0], lines
            assert lines[1].count("◇") == 3, lines
            assert "◇ 3 events" in lines[2], lines
            await pilot.press("right_parenthesis")
            await wait_for(lambda: shown_time(app) == 31.0, what="the power failure's frame")
            assert any("power fails" in n.message for n in app._notifications)
            await pilot.press("right_parenthesis")
            await wait_for(lambda: shown_time(app) == 91.0, what="the injection's frame")
            await pilot.press("left_parenthesis")
            await wait_for(lambda: shown_time(app) == 31.0, what="back to the power failure")
            await pilot.press("left_parenthesis")  # none before it: stays, and says so
            await pilot.pause()
            assert shown_time(app) == 31.0
            assert any("no event before 02:00:31" in n.message for n in app._notifications)
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            rows = [row for where, b in app.screen.sections for row in binding_rows(where, b)]
            assert ("anywhere", ")", "next injection or drill event (story line, hint)") in rows, rows
            assert ("anywhere", "(", "previous injection or drill event (story line, hint)") in rows, rows


async def test_the_audit_log_of_a_replay_lists_the_instructors_injections(tmp_path: Path):
    """User pass on a served drill's recording: `L` listed the trainee's actions but not the instructor's
    injections — the power cut the trainee answered was nobody's doing. Each injection is a row: who
    (the event names the instructor since it says so; an older recording's, without a name, reads
    "instructor"), `inject`, and what was injected. A drill timeline's own lines are the scenario, not
    anyone's entry in the audit log."""
    named = Event(
        time_s=110.0,
        kind="injection",
        message="instructor alice (admin) injected disconnect_fraction(fraction=0.3)",
        data={
            "event": "disconnect_fraction",
            "params": {"fraction": 0.3},
            "actor": "alice",
            "role": "admin",
            "audit_seq": 12,
        },
    )
    path = write_recording(tmp_path / "drill.sdrec", told={**DRILL_EVENTS, 111.0: [named]})
    async with replay_audit_log(path, 3, "two injections and the blocked drain") as (_, screen, _, rows):
        # newest first: alice's injection at 110 s, the older recording's at 90 s, the drain at 60.5 s
        assert [row[:4] for row in rows] == [
            [FLEET_CLOCK.text(110.0), "alice", "inject", "fleet"],
            [FLEET_CLOCK.text(90.0), "instructor", "inject", "fleet"],
            [FLEET_CLOCK.text(ACTION_AT_S), "ops", "drain", "gw-0003"],
        ], rows
        assert [row[5].split()[-1] for row in rows[:2]] == ["applied", "applied"], rows
        assert rows[0][7] == "injected disconnect_fraction(fraction=0.3)", rows
        assert rows[1][7] == "injected kill_nodes(nodes=[gw-0004])", rows
        note = str(screen.query_one("#audit-note").render())
        assert "2 injections" in note, note


#: Every key the timeline bar's first line may name, each as it must read: whole.
BAR_KEYS = ("space pause", ", . step", "g seek", "x speed", "[ ] alarm", "{ } action", "( ) event")
#: The keys it names at any width from 80 columns: a replay's own moves.
ESSENTIAL_BAR_KEYS = BAR_KEYS[:2] + BAR_KEYS[3:5]


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
@pytest.mark.parametrize("drill", [None, DrillInfo(name="regional-outage", clock_start_s=2 * 3600)])
async def test_the_timeline_bar_names_its_keys_whole_and_where_the_replay_stands(
    tmp_path: Path, size: tuple[int, int], drill: DrillInfo | None
) -> None:
    """User pass at 80×24: the bar's first line ended "space pause · , . st…" (and at 120 columns
    "{ } act…"); then, fitted whole, it named "space pause" alone at 80 — step, speed and the jumps were
    in help only. The keys give way whole, least important first, and the replay's own moves (pause, step,
    speed, jump to an alarm) stay: where the status would leave no room for them, it says less — not the
    state's words, then not the frame, which the header and the bar under it show — the time and its end
    whole; playing at ×60 on the drill's clock, the widest the status reads."""
    from .test_oncall import visible_lines

    path = write_recording(tmp_path / "session.sdrec", drill=drill)
    with RecordingReader(path) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=size) as pilot:
            await fleet_ready(app)
            await pilot.press("4", "space")  # ×60, playing (the replay's clock is frozen: it stays)
            await pilot.pause()
            bar = app.screen.query_one(TimelineBar)
            line = visible_lines(bar)[0].strip()
            status = app.replay.status()
            assert status.speed == 60.0 and not status.paused
            at = app.clock_face.text
            assert status.span_s is not None
            where = f"{at(status.time_s)} / {at(status.span_s[1])}"
            frame = f"frame 1 of {status.frame_count}"
            assert f"▶ ×60  {where}" in line or f"▶ playing  ×60  {where}" in line, line
            assert (frame in line) is (size[0] >= 120), line
            named = line.split(frame if frame in line else where, 1)[1].strip().split(" · ")
            assert set(ESSENTIAL_BAR_KEYS) <= set(named), line
            assert named == [key for key in BAR_KEYS if key in named], (named, line)  # in their order


def test_the_timeline_bars_keys_do_not_come_and_go_as_the_replay_plays() -> None:
    """The keys are fitted to the widest the status reads in the recording (playing, ×60, at its end), not
    to what it reads now: paused at the first frame, a key more fitted than while playing, and it would
    come and go at each pause."""
    from console.record.replay import ReplayStatus
    from console.ui.widgets.timeline_bar import status_text

    start = ReplayStatus(0.0, 0, 120, (0.0, 119.0), 1.0, paused=True, finished=False)
    end = ReplayStatus(119.0, 119, 120, (0.0, 119.0), 60.0, paused=False, finished=False)
    for width in range(62, 161):  # (narrower, the status alone is cut: `TimelineBar.show`)
        at_start, at_end = (str(status_text(s, FLEET_CLOCK, width)) for s in (start, end))
        assert at_start.split("   ")[-1] == at_end.split("   ")[-1], width
        assert all(len(text) <= width for text in (at_start, at_end)), (width, at_start, at_end)
        # Paused, by the header's glyph whatever the width: whole ("replay ⏸ paused"), or the glyph alone.
        assert at_start.startswith(("replay ⏸ paused", "⏸ ×1")), (width, at_start)


async def test_replay_help_says_the_actions_are_off_and_leaves_out_what_does_nothing(tmp_path: Path):
    """Real-fleet pass: in a replay, help listed d/u/a (drain, undrain, admission) with no note, though the
    console is read-only (`d` answers "actions disabled  drain: read-only console"), and "ctrl+r reconnect
    now", which a replay (no link to retry) cannot do. Each action key and palette command now says the
    console's actions-off reason; ctrl+r is left out; `A` stays (it acknowledges the replayed alarms)."""
    from console.ui.commands import ACTIONS, action_bindings
    from console.ui.screens.help import HelpScreen, binding_rows

    path = write_recording(tmp_path / "fleet.sdrec")
    async with paused_replay_showing(path, "question_mark", HelpScreen, "help") as (app, _):
        rows = app.screen.key_rows()
        keys = {key for _, key, _ in rows}
        assert "ctrl+r" not in keys, rows
        assert "A" in keys, rows
        acting = {binding.action for binding in action_bindings()}
        said = [
            row
            for where, bindings in app.screen.sections
            for binding in bindings
            if isinstance(binding, Binding) and binding.action in acting
            for row in binding_rows(where, [binding], app.screen.notes)
        ]
        assert {key for _, key, _ in said} == {key for key, *_ in ACTIONS}, said
        assert all(does.endswith("— actions off: read-only console") for *_, does in said), said
        actions = [does for title, does in app.screen.commands if title.startswith("Action:")]
        assert actions and all(does.endswith("— actions off: read-only console") for does in actions)
        # `L` reads the recording in a replay (it asks no server), and help and the palette say so.
        audit = dict(app.screen.commands)["Audit log"]
        assert "from the recording" in audit and "server" not in audit, audit


async def test_the_palette_of_a_replay_says_the_audit_log_is_the_recording_s(tmp_path: Path):
    """User pass: the palette's "Audit log" read "every action attempt, from the server's audit log (L)" in a
    replay, whose `L` lists the recording's actions and asks no server."""
    from console.ui.commands import ConsoleCommands
    from console.ui.screens.help import HelpScreen

    path = write_recording(tmp_path / "fleet.sdrec")
    async with paused_replay_showing(path, "question_mark", HelpScreen, "help") as (app, _):
        provider = ConsoleCommands(app.screen)
        palette = {title: does for title, does, _ in provider._commands()}
        assert palette["Audit log"] == "every action attempt, from the recording (L)", palette["Audit log"]


async def test_replay_help_leaves_out_the_forms_a_replay_never_opens(tmp_path: Path):
    """User pass: help in a replay listed the action form's, the big-change check's and the verdict's
    keys (Enter applies, ^d dry run, y confirms…), though a replay takes no action and opens none of
    them. They are left out, with no word for them: the fleet section's action keys say actions are off."""
    from console.ui.screens.help import HelpScreen

    path = write_recording(tmp_path / "fleet.sdrec")
    async with paused_replay_showing(path, "question_mark", HelpScreen, "help") as (app, _):
        listed = {where for where, _ in app.screen.sections}
        assert not listed & {"action form", "big change", "verdict"}, listed
        assert {"anywhere", "replay", "fleet", "alarms", "node detail", "help"} <= listed, listed
