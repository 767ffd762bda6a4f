"""The replay's timeline bar: the last audit entry at the playhead, the jump notices, the end's glyph.

Review of `stormdeck replay`: the README promised the bar shows the last action, but a `stormdeck record`
recording holds the actions only as the stream told them (`action` events), which never reached the bar;
at 80 columns the counts left the last action cut mid-word; `}` said "→ blocked blocked"; at its end the
bar drew "■ end" under the header's "⏹ end of the recording".
"""

from __future__ import annotations

import re
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
    verdict. Beside this recording's entries the counts give way (with their units: bare numbers read
    inconsistently), then what was done is cut — never who, when or what became of it — and the bar stays
    three lines."""
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
            assert lines[2] == f"last: drain gw-0005 by alice at {at(72.0)} → applied", lines
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


def counts_said(line: str) -> str:
    """The counts on the bar's last line: what comes before the last entry."""
    return line.split("last:")[0].strip()


@pytest.mark.parametrize("width", [80, 100, 120])
async def test_the_counts_name_their_units_at_every_width_and_keep_their_form_as_it_plays(
    tmp_path: Path, width: int
) -> None:
    """At 80 columns the counts read "▲ 7 alarms   ◆ 2 actions   ◇ 2 events" before the first audit entry
    and "▲ 7  ◆ 2  ◇ 2  last: …" once one was passed — bare numbers, and a line that changed its words as
    it played. Now the counts say the same words wherever they are shown, units named; where they and the
    recording's widest entry do not fit together, they give way whole, for the whole recording at that
    width, not entry by entry; who, when and what became of the last entry stay whole."""
    told = {**TOLD, 101.0: [injection(100.0, "bob", LONG_INJECTION)]}
    path = write_recording(tmp_path / "session.sdrec", told=told)
    units = {"▲": "alarm", "◆": "action", "◇": "event"}
    with RecordingReader(path) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=(width, 30)) as pilot:
            await fleet_ready(app)
            room = app.screen.query_one(TimelineBar).content_size.width
            said: dict[float, str] = {}
            for at_s in (30.0, 75.0, 105.0):
                await pilot.press("g", *f"{at_s:g}", "enter")
                await settle(app, pilot, at_s, f"the frame at {at_s:g}")
                said[at_s] = bar_lines(app)[2]
            for line in said.values():
                assert len(line) <= room, (room, line)
                for glyph, unit in units.items():
                    if glyph in counts_said(line):
                        assert re.search(rf"{glyph} \d+ {unit}s?\b", line), line
            assert re.fullmatch(r"▲ 7 alarms +◆ 2 actions +◇ 2 events", said[30.0]), said[30.0]
            assert counts_said(said[75.0]) == counts_said(said[105.0]), said  # one form as it plays
            assert said[75.0].endswith("last: drain gw-0005 by alice at 0:01:12 → applied"), said
            assert said[105.0].endswith("… by bob at 0:01:40"), said


def test_beside_the_counts_a_long_entry_is_cut_but_a_drains_target_never() -> None:
    """A cut that leaves "drain g…" beside "▲ 7 alarms" says less than the entry alone: the counts give
    way to it. A long injection's node list may give way beside them ("injected kill_nodes(nodes=[…")."""
    from console.ui.widgets.timeline_bar import LastEntry, counts_text

    markers = [Marker("alarm", float(i), "lockstep_waves", "warning", i) for i in range(7)]
    markers += [Marker("action", 60.0, "drain", "blocked", 60), Marker("action", 72.0, "drain", "ok", 72)]
    markers += [
        Marker("event", 90.0, "kill_nodes", "injection", 90),
        Marker("event", 100.0, "…", "injection", 100),
    ]
    drain = LastEntry("drain gw-0005", "alice", "0:01:12", "applied")
    long = LastEntry(f"injected {LONG_INJECTION}", "bob", "0:01:40", None)
    at_80 = counts_text(markers, drain, 78, [drain]).plain
    assert at_80 == "last: drain gw-0005 by alice at 0:01:12 → applied", at_80
    at_100 = counts_text(markers, long, 98, [drain, long]).plain
    assert at_100.startswith("▲ 7 alarms  ◆ 2 actions  ◇ 2 events  last: injected kill_nodes(nodes=[gw-"), (
        at_100
    )
    assert at_100.endswith("… by bob at 0:01:40") and len(at_100) <= 98, at_100
    assert counts_text(markers, None, 78, [drain]).plain == "▲ 7 alarms   ◆ 2 actions   ◇ 2 events   "


def test_a_recording_without_actions_counts_none_and_keeps_its_counts_beside_the_drills_end() -> None:
    """A drill where nobody acted, replayed at 80 columns: "◆ 0 actions" (a glyph the bar never draws)
    pushed the counts off the line beside "last: drill ended at 04:25:00 → score 20.1". Actions and
    events are counted where the recording has any; the alarms always."""
    from console.ui.widgets.timeline_bar import LastEntry, counts_text

    markers = [Marker("alarm", float(i), "lockstep_waves", "warning", i) for i in range(44)]
    markers += [Marker("event", float(i), "a line", "drill", i) for i in range(6)]
    ended = LastEntry("drill ended", None, "04:25:00", "score 20.1")
    said = counts_text(markers, ended, 78, [ended]).plain
    assert said == "▲ 44 alarms   ◇ 6 events   last: drill ended at 04:25:00 → score 20.1", said
    assert counts_text([], None, 78).plain == "▲ 0 alarms   "
