"""Drill mode driven by key presses: briefing → live (objectives, hint, pause) → end screen; snapshots.

The app is fed in-process: the synthetic fleet's frames (console.ui.scenes) and the drill events a served
drill sends (`hint`, and `drill` with data.ended), with a fake clock setter standing in for
`POST /v1/sim/clock`.
"""

from __future__ import annotations

import io
import json
import re

from rich.console import Console

from console.client.decode import StreamDecoder
from console.client.synthetic import SyntheticFleet
from console.drills.live import DrillProgress, Standing
from console.drills.schema import build_drill
from console.drills.summary import said_at_end
from console.model.link import LinkState, LinkStatus, Received
from console.protocol import Event
from console.record.records import ActionRecord
from console.ui.app import ConsoleApp
from console.ui.drill import BriefingScreen, DrillApp, DrillScreen, EndScreen, objectives_brief
from console.ui.widgets.hint_line import HintLine

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, event_lines, fleet_ready

_EPOCH_WALL_S = 1_800_000_000.0

TINY = {
    "name": "tiny",
    "title": "A tiny storm",
    "seed_source": "outage seed (000): the whole region restarts at once",
    "teaches": "Hold the floor; ration the return with admission.",
    "scenario": "demo",
    "clock_start": "02:00",
    "duration_s": 60,
    "briefing": "02:00, a tiny fleet of 12 gateways.\nA storm is coming at 02:00:40. Keep the fleet up.",
    "objectives": [
        {"name": "connections never below 99 %", "kind": "connections_floor", "min_pct": 99, "points": 60},
        {"name": "admission set", "kind": "action_used", "action": "admission", "points": 40},
    ],
}


class FakeClock:
    def __init__(self) -> None:
        self.calls: list[bool] = []

    async def __call__(self, paused: bool) -> None:
        self.calls.append(paused)


class TinyFeed:
    """The synthetic fleet second by second, as the app would receive it."""

    def __init__(self, app: ConsoleApp, served: dict | None = None) -> None:
        """`served`: the hello's `drill`, as a served drill's stream says it (None: a plain fleet's)."""
        self.app = app
        self.fleet = SyntheticFleet(nodes=12, seed=7, storm_at_s=40)
        self.decoder = StreamDecoder()
        self.second = 0
        hello = self.fleet.hello() if served is None else {**self.fleet.hello(), "drill": served}
        app.feed(Received(self.decoder.feed(json.dumps(hello)), _EPOCH_WALL_S))
        app.feed(LinkStatus(LinkState.LIVE, at_s=_EPOCH_WALL_S))

    def run(self, seconds: int) -> None:
        for _ in range(seconds):
            self.second += 1
            for raw in self.fleet.next_messages():
                self.app.feed(Received(self.decoder.feed(raw), _EPOCH_WALL_S + self.second))

    def event(self, event: Event) -> None:
        self.app.feed(Received(event, _EPOCH_WALL_S + self.second))


def tiny_app(clock: FakeClock | None = None, outcomes: list | None = None, **kwargs) -> DrillApp:
    drill = build_drill(TINY)
    return DrillApp(
        DrillProgress(drill, end_s=60),
        set_paused=clock,
        record_outcome=outcomes.append if outcomes is not None else None,
        clock=lambda: _EPOCH_WALL_S + 30.4,
        remember_theme=False,
        theme_name="dark",
        **kwargs,
    )


async def test_briefing_then_live_with_hint_and_pause_then_the_end_screen() -> None:
    clock = FakeClock()
    outcomes: list = []
    app = tiny_app(clock, outcomes)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, BriefingScreen)
        assert clock.calls == []  # the fleet stays paused while the trainee reads
        await pilot.press("enter")
        # The fleet clock is asked by a worker, which `pilot.pause()` does not wait for: waited for here.
        await wait_for(lambda: clock.calls == [False], what="the fleet clock asked to run")
        assert isinstance(app.screen, DrillScreen)
        feed = TinyFeed(app)
        feed.run(30)
        await pilot.pause()
        standings = [item.standing for item in app.progress.objectives()]
        assert standings == [Standing.MET, Standing.AT_RISK]
        title = str(app.screen.query_one("#drill-box").border_title)
        # The admission objective (40 points) at risk is not lost: "60/100" read as a penalty already charged.
        assert "02:00:30" in title and "30 s left" in title and "100/100 so far, 40 at risk" in title
        feed.event(Event(time_s=30, kind="hint", message="Set admission before the clients return."))
        await pilot.pause()
        assert newest_hint(app) == "hint 02:00:30 · Set admission before the clients return."
        assert not app._notifications  # on its own line, not over the panels
        await pilot.press("p")
        await wait_for(lambda: clock.calls == [False, True], what="the fleet clock asked to pause")
        assert "PAUSED" in str(app.screen.query_one("#drill-box").border_title)
        await pilot.press("p")
        await wait_for(lambda: clock.calls == [False, True, False], what="the fleet clock asked to run again")
        feed.run(29)  # the storm at 40 s takes a share of the fleet down: the floor breaks
        feed.event(
            Event(time_s=60, kind="drill", message="time is up", data={"drill": "tiny", "ended": True})
        )
        assert not isinstance(app.screen, EndScreen)  # scored with the last second's frame, not before it
        feed.run(1)
        await pilot.pause()
        assert isinstance(app.screen, EndScreen)
        # the end stops the fleet where it was scored
        await wait_for(lambda: clock.calls == [False, True, False, True], what="the fleet clock stopped")
        assert app.check_action("toggle_pause", ()) is False  # and `p` leaves the footer
        score = app.progress.score()
        assert [item.met for item in score.objectives] == [False, False] and score.score == 0
        assert [(o.time_s, o.score, [i.met for i in o.objectives]) for o in outcomes] == [
            (60.0, 0, [False, False])
        ]
        # Recorded as the end screen says each, on the drill's clock; the scorer's fleet seconds beside.
        said = [(i.detail, i.why) for i in outcomes[0].objectives]
        assert [detail for detail, _ in said] == said_at_end(app.progress.objectives())
        assert said[0][0] is not None and "02:00:" in said[0][0], said
        assert said[0][1] is not None and " s" in said[0][1], said
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen)
        title = str(app.screen.query_one("#drill-box").border_title)
        assert "over · score 0/100" in title and "p resumes" not in title and "so far" not in title
        await pilot.press("p")  # the drill is over: no resuming it
        assert clock.calls == [False, True, False, True]


def test_briefing_snapshot(snap_compare) -> None:
    assert snap_compare(tiny_app(), terminal_size=SIZE)


def test_objectives_panel_snapshot(snap_compare) -> None:
    async def live(pilot) -> None:
        await pilot.press("enter")
        TinyFeed(pilot.app).run(30)
        await fleet_ready(pilot.app)
        pilot.app.refresh_views()
        await pilot.pause()

    assert snap_compare(tiny_app(), terminal_size=SIZE, run_before=live)


async def play_to_the_end(pilot) -> TinyFeed:
    """Past the briefing, then the drill's 60 s up to its end event: the end screen opens."""
    await pilot.press("enter")
    feed = TinyFeed(pilot.app)
    feed.run(59)
    feed.event(Event(time_s=60, kind="drill", message="time is up", data={"ended": True}))
    feed.run(1)
    await pilot.pause()
    return feed


def test_end_screen_snapshot(snap_compare) -> None:
    async def to_the_end(pilot) -> None:
        await play_to_the_end(pilot)
        await pilot.pause()

    # As `stormdeck drill` runs it: its end screen's `r` starts the drill again.
    assert snap_compare(tiny_app(offers_retry=True), terminal_size=SIZE, run_before=to_the_end)


def test_the_briefing_reflows_the_drill_files_lines() -> None:
    from console.ui.screens.briefing import reflowed

    assert reflowed("\n04:00, the window. The runbook says:\nrestart in batches.\n\n  You can halt.\n") == (
        "04:00, the window. The runbook says: restart in batches.\n\nYou can halt."
    )


async def test_an_action_answered_after_the_end_does_not_change_the_score() -> None:
    # An admission form confirmed over the end screen (its answer came after the drill's time was up)
    # once turned "score 0/100" into "40/100" in the panel while the recording kept 0.
    outcomes: list = []
    app = tiny_app(FakeClock(), outcomes)
    async with app.run_test(size=SIZE) as pilot:
        feed = await play_to_the_end(pilot)
        assert isinstance(app.screen, EndScreen)
        await pilot.press("escape")
        app._record_action(ActionRecord(time_s=61, actor="trainee", action="admission", outcome="applied"))
        feed.run(2)
        await fleet_ready(app)
        app.refresh_views()
        await pilot.pause()
        title = str(app.screen.query_one("#drill-box").border_title)
        assert "over · score 0/100" in title
        assert app.progress.score().score == 0 and [o.score for o in outcomes] == [0]


async def test_the_briefing_and_the_end_screen_fit_a_small_terminal() -> None:
    # At 60 columns the briefing (100 wide) and the end screen (120) ran off the right edge: the lines
    # were cut mid-word, with no way to scroll to their ends.
    app = tiny_app(FakeClock())
    async with app.run_test(size=(60, 15)) as pilot:
        await pilot.pause()
        briefing = app.screen.query_one("#briefing")
        assert briefing.region.right <= 60 and briefing.region.x >= 0
        await play_to_the_end(pilot)
        assert isinstance(app.screen, EndScreen)
        end = app.screen.query_one("#end")
        assert end.region.right <= 60 and end.region.x >= 0


async def test_quitting_a_running_drill_asks_again_and_says_it_leaves_it_unscored() -> None:
    # `q` in the middle of a drill quit at once: the trainee's run gone, unscored, without a word.
    app = tiny_app(FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        feed = TinyFeed(app)
        feed.run(30)
        await fleet_ready(app)
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and app.abandoned
        [warning] = [n.message for n in app._notifications]
        # On the drill's clock, as the header and the panel's title say it: "30 of 60 s" was fleet seconds.
        # The admission objective (40 points) is at risk, not lost: the score so far keeps it, and says so.
        assert "the drill is running (02:00:30, 30 s left, 100/100 so far, 40 at risk)" in warning, warning
        assert " of 60 s" not in warning
        assert "unscored" in warning and "quit again within 3 s" in warning
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running
    assert app.abandoned  # (what `stormdeck drill` tells the terminal after the app)


async def test_quitting_before_the_drill_starts_or_after_its_end_asks_nothing() -> None:
    app = tiny_app(FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("q")  # on the briefing: nothing started, nothing to lose
        await pilot.pause()
        assert not app.is_running and not app.abandoned
    app = tiny_app(FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await play_to_the_end(pilot)
        await pilot.press("q")  # on the end screen: scored already
        await pilot.pause()
        assert not app.is_running and not app.abandoned and app.progress.final is not None


async def test_p_on_the_briefing_does_not_start_the_fleet_clock() -> None:
    # Found by a trainee at 80x24: the briefing's footer offered `p pause`, and `p` there asked the fleet
    # clock to run — hints arrived over the briefing, the drill ran unstarted, and `q` then quit with no
    # warning and no "abandoned" line, since the drill was never started.
    clock = FakeClock()
    app = tiny_app(clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, BriefingScreen)
        assert app.check_action("toggle_pause", ()) is False  # not in the briefing's footer
        await pilot.press("p")
        await pilot.pause()
        assert clock.calls == [] and app.paused and not app.started
        await pilot.press("enter")
        await wait_for(lambda: clock.calls == [False], what="the fleet clock asked to run")
        assert app.check_action("toggle_pause", ()) is True


async def test_the_briefings_footer_offers_no_ack_all_nor_audit_log() -> None:
    """Review: the briefing's footer read `A ack all  L audit log`: no alarm to acknowledge and no action to
    audit before the drill starts. Hidden (and the keys inert) while the briefing shows, back after Enter."""
    from textual.widgets._footer import FooterKey

    def offered() -> set[str]:
        return {key.action for key in app.screen.query(FooterKey)}

    app = tiny_app(FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, BriefingScreen)
        assert "start" in offered() and not offered() & {"acknowledge_all", "audit"}, offered()
        await pilot.press("L")
        await pilot.pause()
        assert isinstance(app.screen, BriefingScreen)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, DrillScreen), what="the drill")
        await pilot.pause()
        assert {"acknowledge_all", "audit"} <= offered(), offered()


def newest_hint(app: DrillApp) -> str:
    """What the drill screen's hint line says, unfocused (the newest hint), under other screens too."""
    from textual.widgets import Static

    [screen] = [screen for screen in app.screen_stack if isinstance(screen, DrillScreen)]
    line = screen.query_one(HintLine)
    return str(line.query_one(".newest-hint", Static).render()) if line.display else ""


async def test_a_hint_stays_on_its_line_until_the_next_and_stands_out_when_new() -> None:
    # Found by a trainee: a hint (about 20 words) left after Textual's default 5 s — gone while the
    # trainee was reading the objectives panel or an action form; at 30 s, two stacked over the panels.
    app = tiny_app(FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        feed = TinyFeed(app)
        feed.run(5)
        assert newest_hint(app) == ""  # no line before the first hint
        feed.event(Event(time_s=5, kind="hint", message="Admission is off: ration the return with a rate."))
        await pilot.pause()
        line = app.screen.query_one(HintLine)
        assert newest_hint(app) == "hint 02:00:05 · Admission is off: ration the return with a rate."
        assert line.has_class("-new")
        feed.run(40)
        await fleet_ready(app)
        app.refresh_views()
        await pilot.pause()
        assert newest_hint(app) == "hint 02:00:05 · Admission is off: ration the return with a rate."
        line.remove_class("-new")  # (as its timer would, NEW_FOR_S after it came)
        feed.event(Event(time_s=45, kind="hint", message="The floor is breaking."))
        await pilot.pause()
        assert newest_hint(app) == "hint 02:00:45 · The floor is breaking.  1 earlier (Tab)"
        assert line.has_class("-new")


async def test_a_hint_that_comes_over_another_screen_is_told_there_and_kept_on_its_line() -> None:
    # The hint line is the drill screen's: over a node's screen a trainee would not see it come.
    app = tiny_app(FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        feed = TinyFeed(app)
        feed.run(45)
        await fleet_ready(app)
        app.open_node(next(iter(app.model.nodes)))
        await pilot.pause()
        assert not isinstance(app.screen, DrillScreen)
        feed.event(Event(time_s=45, kind="hint", message="The floor is breaking."))
        await pilot.pause()
        [told] = list(app._notifications)
        assert told.title == "hint · 02:00:45" and told.message.startswith("The floor is breaking.")
        assert newest_hint(app) == "hint 02:00:45 · The floor is breaking."


def rows_of(widget) -> list[str]:  # type: ignore[no-untyped-def]
    return [strip.text.rstrip() for strip in widget.render_lines(widget.region.reset_offset)]


async def test_at_80_columns_an_objectives_wrapped_lines_stay_in_its_text_column() -> None:
    # At 80x24 the panel wrapped an objective's sentence back under its mark ("✖ failed   admission set
    # (a per-node rate) before the clients return  0" / "applied admission by 40 s (needed 1)"), and the
    # end screen did as well: the standings column was lost and a count sat apart from what it counted.
    drill = build_drill(
        {**TINY, "objectives": [{**TINY["objectives"][0], "name": "connections never below 99 % " * 3}]}
    )
    app = DrillApp(DrillProgress(drill, end_s=60), set_paused=FakeClock(), remember_theme=False)
    async with app.run_test(size=(80, 24)) as pilot:
        feed = await play_to_the_end(pilot)
        end_rows = [row for row in rows_of(app.screen.query_one("#end-text")) if row.strip()]
        await pilot.press("escape")
        feed.run(1)
        await fleet_ready(app)
        app.refresh_views()
        # At 80x24 the panel names the objectives; Tab to it reads their whys (tests/ui/test_drill_layout.py).
        app.screen.query_one("#drill-beside").focus()
        await pilot.pause()
        panel_rows = rows_of(app.screen.query_one("#drill-beside .objectives"))
    assert len(panel_rows) > 1  # wrapped, at 80 columns
    assert all(row.startswith("✖ failed") or row.startswith(" " * 11) for row in panel_rows), panel_rows
    standing = [i for i, row in enumerate(end_rows) if row.startswith("✖ failed")]
    objective_rows = end_rows[standing[0] : standing[0] + 3]  # its name in two rows, what became of it
    assert all(row.startswith("✖ failed") or row.startswith(" " * 21) for row in objective_rows), end_rows


async def test_the_end_screen_is_not_covered_by_the_notices_still_shown() -> None:
    # A hint stayed 30 s as a notification; served sped up, the drill ended under two of them, which hid
    # the end screen's why of each objective at 80x24. Hints have a line of their own now (`HintLine`),
    # but an answer or a hint told over a node's screen is still a notification: the drill is over.
    app = tiny_app(FakeClock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter")
        feed = TinyFeed(app)
        feed.run(50)
        app.notify("drain gw-0003: applied")  # an answer still shown as the drill ends
        feed.event(Event(time_s=50, kind="hint", message="Set admission before the clients return."))
        await pilot.pause()
        assert len(app._notifications) == 1
        feed.run(9)
        feed.event(Event(time_s=60, kind="drill", message="time is up", data={"ended": True}))
        feed.run(1)
        await pilot.pause()
        assert isinstance(app.screen, EndScreen)
        assert list(app._notifications) == []


async def test_help_in_a_drill_says_what_p_pauses_and_lists_the_briefing_and_end_screen_keys() -> None:
    # Found by a trainee: `?` listed "anywhere  p  pause" (it does nothing on the briefing or after the
    # end) and nothing of the briefing's Enter or the end screen's Esc.
    from console.ui.screens.help import HelpScreen, binding_rows

    app = tiny_app(FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = [row for where, b in app.screen.sections for row in binding_rows(where, b)]
    [pause] = [does for _, key, does in rows if key == "p"]
    assert "fleet clock" in pause and "Enter" in pause
    assert ("briefing", "⏎ enter", "start") in rows
    assert ("drill over", "escape", "back to the fleet") in rows


async def reads_the_drill_clock_at_02_00_45(app, hint_said: str | None = None) -> None:
    """The header, the alarms' raised times and a node screen's events read the drill's clock at fleet
    second 45 of a drill starting at 02:00:00 (`hint_said`: the hint line's words, when given)."""
    from console.ui.screens.node_detail import NodeDetailScreen
    from console.ui.widgets.alarms_panel import AlarmsPanel
    from console.ui.widgets.header import FleetHeader

    header = str(app.screen.query_one(FleetHeader).render())
    assert "drill clock 02:00:45" in header and "0:00:45" not in header.replace("02:00:45", "")
    alarms = app.screen.query_one(AlarmsPanel)
    raised = [str(alarms.get_cell_at((row, 5))) for row in range(alarms.row_count)]
    assert raised and all(cell.startswith("02:00:") for cell in raised), raised
    if hint_said is not None:
        from textual.widgets import Static

        line = app.screen.query_one(HintLine)
        assert str(line.query_one(".newest-hint", Static).render()) == hint_said
    node_id = next(node for node in app.model.nodes if app.model.node_events(node, limit=1))
    app.open_node(node_id)
    await fleet_ready(app)
    assert isinstance(app.screen, NodeDetailScreen)
    assert "drill clock 02:00:45" in str(app.screen.query_one(FleetHeader).render())
    events = event_lines(app.screen)
    assert events and all(line.startswith("02:00:") for line in events if line[:1].strip()), events


async def test_the_header_and_the_node_screen_read_the_drills_clock_not_the_fleets() -> None:
    """A trainee told "by 02:00:40" read `fleet clock 0:00:30` in the header beside `02:00:30` in the drill
    panel: one clock on screen, the drill's (`Drill.human_time`), in the header, the alarms' raised times
    and the node screen's events and drain."""

    app = tiny_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        feed = TinyFeed(app)
        feed.run(45)  # past the storm at 40 s: alarms raised, nodes restarted
        await fleet_ready(app)
        await reads_the_drill_clock_at_02_00_45(app)


async def test_back_from_the_end_screen_the_header_says_the_drill_ended() -> None:
    """As on a console attached to a served drill (tests/ui/test_instructor.py): the end screen's Esc
    goes back to a frozen fleet, and the header says why it stands still — the drill ended — beside the
    drill's clock, at 80 columns too."""
    from console.ui.widgets.header import FleetHeader

    from .test_oncall import visible_lines

    app = tiny_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play_to_the_end(pilot)
        assert isinstance(app.screen, EndScreen)
        await pilot.press("escape")
        await fleet_ready(app)
        (line,) = visible_lines(app.screen.query_one(FleetHeader))
        assert "02:01:00 ⏹ ended" in line, line


async def test_outside_a_drill_the_header_keeps_the_fleet_clock(storm_app) -> None:
    from console.ui.widgets.header import FleetHeader

    async with storm_app.run_test(size=SIZE):
        await fleet_ready(storm_app)
        header = str(storm_app.screen.query_one(FleetHeader).render())
        assert "fleet clock 0:" in header and "drill clock" not in header


async def test_drill_modes_console_opens_on_its_own_briefing_only() -> None:
    """Its child server's hello names the drill, as any served drill's does: the trainee's briefing of
    `attach` must not open over drill mode's own (whose Enter starts the clock)."""
    from console.ui.screens.briefing import ServedBriefingScreen

    from .test_instructor import SERVED

    clock = FakeClock()
    app = tiny_app(clock)
    async with app.run_test(size=SIZE) as pilot:
        TinyFeed(app, served=SERVED).run(2)
        await pilot.pause()
        assert [type(s) for s in app.screen_stack if isinstance(s, BriefingScreen)] == [BriefingScreen]
        await pilot.press("enter")
        await wait_for(lambda: clock.calls == [False], what="the fleet clock asked to run")
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen)
        assert not any(isinstance(s, ServedBriefingScreen) for s in app.screen_stack)


async def test_drill_modes_palette_reopens_its_briefing_without_touching_the_clock() -> None:
    """The palette's "Show the drill briefing" in drill mode: its own briefing again, which goes back to
    the drill (Enter or Esc; Enter no longer starts anything: the fleet clock is not asked again)."""
    from textual.command import CommandList

    clock = FakeClock()
    app = tiny_app(clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.action_show_briefing()  # over the opening briefing: not a second one
        await pilot.pause()
        assert sum(isinstance(s, BriefingScreen) for s in app.screen_stack) == 1
        await pilot.press("enter")
        await wait_for(lambda: clock.calls == [False], what="the fleet clock asked to run")
        TinyFeed(app).run(5)
        await fleet_ready(app)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Show the drill briefing")
        await wait_for(lambda: app.screen.query(CommandList).first().option_count == 1, what="one hit")
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, BriefingScreen), what="the briefing again")
        await pilot.pause()
        text = str(app.screen.query_one("#briefing-text").render())
        assert "A storm is coming at 02:00:40" in text and "back to the drill" in text
        assert "to start the drill" not in text
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, DrillScreen), what="back to the drill")
        assert clock.calls == [False] and app.started


def end_screen_text(app: DrillApp) -> str:
    return "\n".join(row for row in rows_of(app.screen.query_one("#end-text")) if row.strip())


async def test_the_end_screen_says_what_to_do_next_and_r_tries_the_drill_again() -> None:
    """Review: the end screen ended on "Esc back to the fleet (frozen) · q quit" — nothing of how to see the
    run's report, replay it or try again. Not recorded, it says so and how to record the next run."""
    from console.drills.summary import RunCommand, next_steps

    steps = next_steps(RunCommand(drill="tiny", seed=7), fresh_recording="tiny.sdrec")
    app = tiny_app(FakeClock(), next_steps=steps, offers_retry=True)
    async with app.run_test(size=SIZE) as pilot:
        await play_to_the_end(pilot)
        assert isinstance(app.screen, EndScreen)
        text = end_screen_text(app)
        assert "try it again" in text and "stormdeck drill tiny --seed 7" in text, text
        assert "stormdeck drill tiny --seed 7 --record tiny.sdrec" in text and "not recorded" in text, text
        assert "r try again" in text, text
        assert app.check_action("retry", ()) is True
        await pilot.press("r")
        await pilot.pause()
        assert not app.is_running and app.retry_asked and not app.abandoned


async def test_a_recorded_drills_end_screen_gives_the_report_and_replay_commands() -> None:
    from console.drills.summary import RunCommand, next_steps

    steps = next_steps(RunCommand(drill="tiny", record="run.sdrec"), fresh_recording="run-2.sdrec")
    app = tiny_app(FakeClock(), next_steps=steps)  # a console that cannot start the drill again: no r
    async with app.run_test(size=SIZE) as pilot:
        await play_to_the_end(pilot)
        text = end_screen_text(app)
        assert "stormdeck report run.sdrec" in text and "stormdeck replay run.sdrec" in text, text
        assert "stormdeck drill tiny --record run-2.sdrec" in text and "not recorded" not in text, text
        assert app.check_action("retry", ()) is False and "r try again" not in text
        await pilot.press("r")
        await pilot.pause()
        assert app.is_running and not app.retry_asked


async def test_the_end_screen_shows_no_value_and_limit_that_add_nothing() -> None:
    """Review: "admission set (value 0, limit 1)" — a count against 1 beside "0 applied admission (needed
    1)"; the floor's figure, which does inform, reads as the operator says it."""
    app = tiny_app(FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await play_to_the_end(pilot)
        text = end_screen_text(app)
    assert "value" not in text and "limit" not in text, text
    assert re.search(r"fell to \d+\.\d % \(02:00:4\d\); floor 99 %", text), text  # the lowest said once
    assert "lowest " not in text, text


#: Moments in fleet seconds ("at 41 s", "from 481 s", "by 40 s"): no time on the drill's clock.
FLEET_MOMENTS = re.compile(r"\b(?:at|from|by|of) \d+ s\b")


async def test_the_end_screen_says_when_on_the_drills_clock() -> None:
    """The end screen gave the scorer's sentences in fleet seconds ("connections fell to 89.3 % at 41 s"),
    beside a header and a panel that had read the drill's clock all along: it now says each moment on that
    clock, as the panel did (`console.drills.countdown`), and after the end what became of each deadline."""
    app = tiny_app(FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await play_to_the_end(pilot)
        text = " ".join(end_screen_text(app).split())
    assert re.search(r"fell to \d+\.\d % \(02:00:4\d\)", text), text  # the storm at 02:00:40
    assert "not applied by the drill's end, 02:01:00" in text, text
    assert not FLEET_MOMENTS.search(text), text
    assert re.search(r"\(\d+ s below 95 % of connections\)", text), text  # a span as `duration` writes it


#: TINY with an action due by a time and a time penalty: what the panel says of deadlines and the penalty.
CLOCKED = {
    **TINY,
    "objectives": [
        TINY["objectives"][0],
        {
            "name": "admission set by 02:00:50",
            "kind": "action_used",
            "action": "admission",
            "by_s": 50,
            "points": 40,
        },
    ],
    "scoring": {"penalty_per_min": 2, "penalty_below_pct": 97, "max_penalty": 40},
}


def panel_text(app: DrillApp) -> str:
    """The objectives panel's rows as one line of words (a sentence wrapped at the column reads whole)."""
    return " ".join(" ".join(rows_of(app.screen.query_one("#drill-box .objectives"))).split())


async def test_the_panel_says_each_deadline_on_the_drill_clock_and_the_penalty_as_it_accrues() -> None:
    """The panel read "30 of 60 s · 99.7/100 so far" and the scorer's sentences in fleet seconds ("0 applied
    admission by 50 s"): the trainee could not tell when the admission was due on the clock in the header,
    how long was left, nor why the score was short of the points met."""
    app = DrillApp(
        DrillProgress(build_drill(CLOCKED), end_s=60), set_paused=FakeClock(), remember_theme=False
    )
    async with app.run_test(size=(120, 36)) as pilot:  # the whys shown: 36 rows
        await pilot.press("enter")
        feed = TinyFeed(app)
        feed.run(30)
        await fleet_ready(app)
        app.refresh_views()
        await pilot.pause()
        title = str(app.screen.query_one("#drill-box").border_title)
        assert "02:00:30 · 30 s left · " in title and " of 60 s" not in title
        text = panel_text(app)
        assert "not yet: by 02:00:50 — 20 s left" in text and "50 s" not in text.replace("02:00:50", "")
        assert "penalty none so far (−2 a minute below 97 % of connections, at most −40)" in text
        # First, under the title's score it explains.
        assert rows_of(app.screen.query_one("#drill-box .objectives"))[0].startswith("✓ penalty  none so far")
        feed.run(5)
        app.refresh_views()
        await pilot.pause()
        assert "not yet: by 02:00:50 — 15 s left" in panel_text(app)  # counting down
        feed.run(24)  # the storm at 40 s takes connections below 97 %: the penalty accrues, and says so
        app.refresh_views()
        await pilot.pause()
        text, score = panel_text(app), app.progress.score()
        assert score.penalty > 0
        assert f"penalty −{score.penalty:g} so far: " in text and "below 97 % of connections" in text
        assert "not applied by 02:00:50" in text
        # The short panel (under 36 rows) has the charge too, first: the title's "so far" is short of it.
        table = objectives_brief(
            app.progress.objectives(score), app.palette, app.progress.penalty_line(score)
        )
        brief = Console(width=48, record=True, file=io.StringIO())
        brief.print(table)
        first = brief.export_text().splitlines()[0]
        assert first[2:].startswith(f"penalty  −{score.penalty:g} so far, ") and "below 97 %" in first, first


async def test_the_briefing_states_the_time_penalty_rule() -> None:
    app = DrillApp(
        DrillProgress(build_drill(CLOCKED), end_s=60), set_paused=FakeClock(), remember_theme=False
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = " ".join(rows_of(app.screen.query_one("#briefing-text")))
        assert (
            "time penalty: −2 points a minute with connections below 97 % of the start, at most −40" in text
        )
    app = tiny_app(FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "no time penalty in this drill" in " ".join(rows_of(app.screen.query_one("#briefing-text")))


def test_the_briefing_says_what_p_does() -> None:
    # At 80×24 the drill panel's title fits its 46 cells without "p pauses" and the footer has no room for
    # `p`: the briefing, read before the clock runs, says it.
    from rich.text import Text

    from console.ui.screens.briefing import briefing_text

    text = Text.from_markup(briefing_text(build_drill(TINY).served(60))).plain
    assert "p pauses the drill's clock" in text and "Enter to start the drill" in text


async def test_after_the_drills_end_no_action_is_offered_or_sent() -> None:
    """Review: back from the end screen to the frozen fleet, `c` then Enter added 59 nodes that would never
    finish provisioning (the audit log said `add_capacity … ✓ applied 202`), and `R` reached the server.
    Once the drill has ended the fleet screen offers no action key, the rollout box says why actions are
    off, and a key (or the palette) says it again and sends nothing."""
    from textual.widgets import Footer

    from .fake_actions import FakeFleetApi
    from .test_narrow import shown_keys

    api = FakeFleetApi()
    app = tiny_app(FakeClock(), admin=api.client())
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("enter")
        feed = TinyFeed(app)
        feed.run(5)
        await fleet_ready(app)
        app.refresh_views()
        await pilot.pause()
        before = {key.description for key in shown_keys(app.screen.query_one(Footer))}
        assert {"drain", "rollout", "capacity"} <= before, before  # a running drill offers them
        assert app.actions.disabled_reason is None
        feed.run(54)
        feed.event(Event(time_s=60, kind="drill", message="time is up", data={"ended": True}))
        feed.run(1)
        await pilot.pause()
        assert isinstance(app.screen, EndScreen)
        await pilot.press("escape")
        await fleet_ready(app)
        app.refresh_views()
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen)
        after = {key.description for key in shown_keys(app.screen.query_one(Footer))}
        assert not after & {"drain", "undrain", "rollout", "halt", "resume", "admission", "capacity"}, after
        box = app.screen.query_one("#rollout-box")
        assert "actions off" in str(box.border_title), box.border_title
        assert "the drill has ended" in f"{box.border_title} {box.border_subtitle}"
        for key in ("c", "R", "a"):
            await pilot.press(key)
            await pilot.pause()
        await app.run_action("act('add_capacity')")  # the palette's command, too
        await wait_for(lambda: len(app._notifications) >= 4, what="the refusals said")
        said = [n.message for n in app._notifications]
        assert all("the drill has ended: the fleet is frozen" in message for message in said[-4:]), said
        assert api.sent == [] and api.applied == []


async def test_past_the_end_the_header_and_the_drill_panel_read_one_time() -> None:
    """Trainee reviewer, regional-outage at its end: the header read "drill clock 02:07:01 ⏹ ended" beside
    "drill · 02:07:00 · over" — the fleet ran a second past the drill's end before the pause reached it,
    and the header read that frame while the panel read the drill's last second. One time on screen: the
    drill's, as it was scored."""
    from console.ui.widgets.header import FleetHeader

    app = tiny_app()
    async with app.run_test(size=SIZE) as pilot:
        feed = await play_to_the_end(pilot)
        feed.run(1)  # a frame past the end, before the pause lands
        assert app.model.frame is not None and app.model.frame.time_s == 61
        await pilot.press("escape")
        await fleet_ready(app)
        header = str(app.screen.query_one(FleetHeader).render())
        title = str(app.screen.query_one("#drill-box").border_title)
        assert "drill clock 02:01:00 ⏹ ended" in header, header
        assert "02:01:00 · over" in title, title
