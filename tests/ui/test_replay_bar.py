"""The replay's timeline bar: the last audit entry at the playhead, the jump notices, the end's glyph.

Review of `stormdeck replay`: the README promised the bar shows the last action, but a `stormdeck record`
recording holds the actions only as the stream told them (`action` events), which never reached the bar;
at 80 columns the counts left the last action cut mid-word; `}` said "→ blocked blocked"; at its end the
bar drew "■ end" under the header's "⏹ end of the recording".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from console.model.units import FLEET_CLOCK, drill_clock
from console.protocol import Event
from console.record.reader import Marker, RecordingReader
from console.record.records import DrillInfo
from console.record.replay import ReplaySource
from console.ui.replay import ReplayApp, marker_notice
from console.ui.widgets.header import FleetHeader
from console.ui.widgets.timeline_bar import TimelineBar

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, fleet_ready
from .test_oncall import visible_lines
from .test_replay import shown_time, write_recording

DRILL = DrillInfo(name="regional-outage", clock_start_s=2 * 3600)


def told_drain(time_s: float, actor: str, target: str, seq: int) -> Event:
    """An applied drain as the fleet API's stream tells it (`console.server.desk._told`): all a `stormdeck
    record` recording holds of an action."""
    data = {"actor": actor, "role": "operator", "action": "drain", "target": target}
    return Event(
        time_s=time_s,
        kind="action",
        node=target,
        message=f"{actor} (operator): drain {target}",
        data={
            **data,
            "parameters": {"rate_per_s": 200},
            "outcome": "applied",
            "level": "ok",
            "audit_seq": seq,
        },
    )


def injection(time_s: float, actor: str, injected: str) -> Event:
    return Event(
        time_s=time_s,
        kind="injection",
        message=f"instructor {actor} (admin) injected {injected}",
        data={
            "event": injected.split("(")[0],
            "params": {},
            "actor": actor,
            "role": "admin",
            "audit_seq": 12,
        },
    )


#: Besides the blocked drain `write_recording` writes at 60.5 s (ops): alice's applied drain at 72 s, told
#: by the stream, and bob's injection at 90 s; each written before the frame of its second, as the stream
#: sends them.
TOLD = {
    72.0: [told_drain(72.0, "alice", "gw-0005", 9)],
    91.0: [injection(90.0, "bob", "kill_nodes(nodes=[gw-0004])")],
}
#: An injection whose words are wider than an 80-column bar leaves beside the counts.
LONG_INJECTION = "kill_nodes(nodes=[gw-0004, gw-0006, gw-0007, gw-0008, gw-0010])"


def bar_lines(app: ReplayApp) -> list[str]:
    return [line.strip() for line in visible_lines(app.screen.query_one(TimelineBar))]


async def settle(app: ReplayApp, pilot, time_s: float, what: str) -> None:
    await wait_for(lambda: shown_time(app) == time_s, what=what)
    app.show_timeline()
    await pilot.pause()


async def test_the_bar_shows_the_last_audit_entry_at_the_playhead(tmp_path: Path) -> None:
    """Who did what, when, and what became of it: the newest entry of the recording's audit trail (what `L`
    lists) at or before where the replay stands — the console's own record, an action the stream told, an
    injection — and an older one again after a seek back, none before the first."""
    path = write_recording(tmp_path / "session.sdrec", told=TOLD)
    with RecordingReader(path) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=SIZE) as pilot:
            await fleet_ready(app)
            await pilot.pause()
            assert "last:" not in bar_lines(app)[2], bar_lines(app)
            await pilot.press("right_curly_bracket")
            await settle(app, pilot, 61.0, "the blocked drain")
            assert bar_lines(app)[2].endswith("last: drain gw-0003 by ops at 0:01:00 → blocked"), bar_lines(
                app
            )
            await pilot.press("right_curly_bracket")  # a `stormdeck record` recording's only kind of action
            await settle(app, pilot, 72.0, "alice's drain")
            assert bar_lines(app)[2].endswith("last: drain gw-0005 by alice at 0:01:12 → applied"), bar_lines(
                app
            )
            await pilot.press("right_parenthesis")
            await settle(app, pilot, 91.0, "bob's injection")
            last = "last: injected kill_nodes(nodes=[gw-0004]) by bob at 0:01:30"
            assert bar_lines(app)[2].endswith(last), bar_lines(app)
            await pilot.press("g", *"1:11", "enter")  # back, between the two drains
            await settle(app, pilot, 71.0, "the frame at 1:11")
            assert bar_lines(app)[2].endswith("last: drain gw-0003 by ops at 0:01:00 → blocked"), bar_lines(
                app
            )
            await pilot.press("full_stop")  # one frame on: alice's drain is played
            await settle(app, pilot, 72.0, "one frame on")
            assert bar_lines(app)[2].endswith("last: drain gw-0005 by alice at 0:01:12 → applied"), bar_lines(
                app
            )
            await pilot.press("g", *"0:30", "enter")  # before any: nothing
            await settle(app, pilot, 30.0, "the frame at 0:30")
            assert "last:" not in bar_lines(app)[2], bar_lines(app)


@pytest.mark.parametrize("drill", [None, DRILL], ids=["fleet-clock", "drill-clock"])
async def test_at_80_columns_the_last_entry_fits_with_who_when_and_what_became_of_it(
    tmp_path: Path, drill: DrillInfo | None
) -> None:
    """At 80×24 the counts ("▲ 7 alarms   ◆ 2 actions   ◇ 2 events") left the last action cut at its
    verdict. The counts say less (their glyphs and numbers), then what was done is cut — never who, when
    or what became of it — and the bar stays three lines."""
    told = {**TOLD, 101.0: [injection(100.0, "bob", LONG_INJECTION)]}
    path = write_recording(tmp_path / "session.sdrec", told=told, drill=drill)
    at = (FLEET_CLOCK if drill is None else drill_clock(2 * 3600)).text
    with RecordingReader(path) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await fleet_ready(app)
            width = app.screen.query_one(TimelineBar).content_size.width
            await pilot.press("g", *"75", "enter")
            await settle(app, pilot, 75.0, "the frame at 1:15")
            lines = bar_lines(app)
            assert len(lines) == 3 and all(len(line) <= width for line in lines), lines
            assert lines[2].startswith("▲ "), lines
            assert lines[2].endswith(f"last: drain gw-0005 by alice at {at(72.0)} → applied"), lines
            await pilot.press("g", *"105", "enter")
            await settle(app, pilot, 105.0, "the frame at 1:45")
            lines = bar_lines(app)
            assert len(lines) == 3 and all(len(line) <= width for line in lines), lines
            assert "last: injected kill_nodes(nodes=[gw-0004" in lines[2], lines
            assert lines[2].endswith(f"… by bob at {at(100.0)}"), lines


def test_a_jump_s_notice_says_the_action_and_what_became_of_it_once() -> None:
    """`}` said "0:01:00 action: drain gw-0003 → blocked blocked" (and an action the stream told, "→ applied
    applied"): the marker's label already says what became of it."""
    at = FLEET_CLOCK
    blocked = Marker("action", 60.5, "drain gw-0003 → blocked", "blocked", 61)
    applied = Marker("action", 72.0, "drain gw-0005 → applied", "applied", 72)
    confirmed = Marker("action", 81.0, "drain gw-0005 → applied", "confirm", 82)
    alarm = Marker("alarm", 41.0, "lockstep_waves", "warning", 41)
    assert marker_notice(blocked, at) == "0:01:00 action: drain gw-0003 → blocked"
    assert marker_notice(applied, at) == "0:01:12 action: drain gw-0005 → applied"
    assert marker_notice(confirmed, at) == "0:01:21 action: drain gw-0005 → applied"
    assert marker_notice(alarm, at) == "0:00:41 alarm: lockstep_waves warning"
    drill_line = Marker("event", 30.0, "02:00:30 power fails", "drill", 31)
    assert marker_notice(drill_line, drill_clock(2 * 3600)) == "drill: 02:00:30 power fails"


async def test_jumping_to_an_action_notifies_its_outcome_once(tmp_path: Path) -> None:
    path = write_recording(tmp_path / "session.sdrec", told=TOLD)
    with RecordingReader(path) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=SIZE) as pilot:
            await fleet_ready(app)
            await pilot.press("right_curly_bracket")
            await settle(app, pilot, 61.0, "the blocked drain")
            await pilot.press("right_curly_bracket")
            await settle(app, pilot, 72.0, "alice's drain")
            said = [n.message for n in app._notifications]
            assert said == [
                "0:01:00 action: drain gw-0003 → blocked",
                "0:01:12 action: drain gw-0005 → applied",
            ]


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_at_its_end_the_bar_says_end_with_the_header_s_glyph(tmp_path: Path, size) -> None:
    """The bar drew "replay ■ end" under the header's "replay ⏹ end of the recording"."""
    path = write_recording(tmp_path / "session.sdrec")
    with RecordingReader(path) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=size) as pilot:
            await fleet_ready(app)
            await pilot.press("g", *"999", "enter")
            await settle(app, pilot, 120.0, "the last frame")
            await pilot.press("space")  # played on from the last frame: at its end, not paused
            await wait_for(lambda: app.replay.status().finished, what="the end")
            app._tick()
            await pilot.pause()
            header = str(app.screen.query_one(FleetHeader).render())
            assert "replay ⏹ end of the recording" in header, header
            status = bar_lines(app)[0]
            assert status.startswith(("replay ⏹ end ", "⏹ ×1")) and "■" not in status, status
