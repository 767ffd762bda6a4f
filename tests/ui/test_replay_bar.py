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
