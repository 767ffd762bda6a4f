"""`stormdeck drill NAME`: the console in drill mode (issue #5, section 2).

The live console (`ConsoleApp`) on a served drill (`drill NAME --serve` in a child process), plus: a
briefing screen first (the fleet clock stays paused until Enter), an objectives panel with the drill clock
(met / at risk / failed, from `console.drills.live`, which measures with the scorer's own functions), the
served stream's `hint` events on a line of their own (`HintLine`), pause (`p`, through `POST /v1/sim/clock`), and an end
screen with the score when the server says the drill's time is up. Screens render; the app posts intents.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from console.drills.countdown import PenaltySoFar
from console.drills.live import DrillProgress, LiveObjective, Standing
from console.drills.objectives import Score, penalty_rule, penalty_text
from console.drills.schema import Drill
from console.drills.summary import WHAT_WIDTH, NextStep, RunCommand, end_lines, outcome_at_end
from console.drills.summary import next_steps as steps_for
from console.model.actions.refusals import DRILL_ENDED_FROZEN
from console.model.link import Received, StreamItem
from console.model.thresholds import Level
from console.model.units import drill_clock, duration
from console.protocol import Event, Frame, ServedDrill
from console.record.records import ActionRecord, Confirmation, DrillOutcome
from console.ui.actions import ActionRecorder
from console.ui.app import ConsoleApp
from console.ui.screens.briefing import BACK_TO_THE_DRILL, BriefingScreen, ServedBriefingScreen
from console.ui.screens.main import MainScreen
from console.ui.themes import LEVEL_GLYPHS, Palette
from console.ui.widgets.footer import ConsoleFooter
from console.ui.widgets.hint_line import HintLine
from console.ui.widgets.objectives_box import ObjectivesBox

#: Pause or resume the served fleet's clock (`POST /v1/sim/clock`); None where there is no server.
ClockSetter = Callable[[bool], Awaitable[None]]


_STANDING_LEVEL = {
    Standing.MET: Level.OK,
    Standing.AT_RISK: Level.WARNING,
    Standing.FAILED: Level.CRITICAL,
    # Neutral: not judged yet, or never asked — neither a green ✓ nor a warning.
    Standing.PENDING: Level.UNKNOWN,
    Standing.NOT_NEEDED: Level.UNKNOWN,
}


def _mark(standing: Standing, palette: Palette) -> str:
    level = _STANDING_LEVEL[standing]
    return f"[b {palette.levels[level]}]{LEVEL_GLYPHS[level]} {standing.value:8}[/]"


def _columns(rows: list[tuple[str, ...]], fixed: tuple[int, ...]) -> Table:
    """Rows of markup in columns: the first ones `fixed` wide, the last takes the rest and wraps inside
    itself, so a wrapped sentence stays beside its standing (at 80 columns it fell back under the mark)."""
    grid = Table.grid(padding=(0, 1, 0, 0), expand=True)
    for width in fixed:
        grid.add_column(width=width, no_wrap=True)
    grid.add_column(ratio=1)
    for row in rows:
        grid.add_row(*(Text.from_markup(cell) for cell in row))
    return grid


_MARK_WIDTH = len("✓ at risk ")  # the glyph, a space and the longest standing ("at risk", "failed")


def _mark_width(objectives: Sequence[LiveObjective]) -> int:
    """The marks' column: `_MARK_WIDTH`, wider only where a longer standing is shown ("not needed")."""
    longest = max((len(item.standing.value) for item in objectives), default=0)
    return max(_MARK_WIDTH, len("✓ ") + longest + 1)


def objectives_text(
    objectives: list[LiveObjective], palette: Palette, penalty: PenaltySoFar | None = None
) -> Table:
    """The time penalty so far, where the drill charges one, then each objective with its standing and
    what it reads now on the drill's clock (its deadline and the time left).

    The penalty comes first, under the title's "… so far" it explains: at 80×24 the panel's last rows do
    not fit (thundering-herd's last objective was cut already), and a penalty below them went unseen."""
    rows = []
    if penalty is not None:
        mark = f"[b {palette.levels[penalty.level]}]{LEVEL_GLYPHS[penalty.level]} penalty[/]"
        rows.append((mark, escape(penalty.text)))
    rows += [
        (_mark(item.standing, palette), f"{escape(item.measured.name)}  [dim]{escape(item.status)}[/]")
        for item in objectives
    ]
    return _columns(rows, (_mark_width(objectives),))


def objectives_brief(
    objectives: list[LiveObjective], palette: Palette, penalty: PenaltySoFar | None = None
) -> Table:
    """Each objective's standing and name, without why: the panel below 36 rows (`DrillScreen`), where the
    whys took the rows of the node table and the alarms. Tab to the panel reads them (`objectives_text`).
    A penalty once charged comes first, the charge alone: the title's "… so far" is short of it."""
    rows = []
    if penalty is not None and penalty.brief:
        rows.append(
            (f"[b {palette.levels[penalty.level]}]{LEVEL_GLYPHS[penalty.level]} penalty[/]", penalty.brief)
        )
    rows += [(_mark(item.standing, palette), escape(item.measured.name)) for item in objectives]
    return _columns(rows, (_mark_width(objectives),))


def drill_titles(progress: DrillProgress, score: Score, paused: bool) -> list[str]:
    """The objectives panel's title, fullest first, for the panel to fit its width (`ObjectivesBox`): the
    drill's clock, the time left and the score — and PAUSED, when it is — in every form; "drill", "so
    far", the points at risk and what `p` does give way (at 80×24, in 46 cells, "… 74.8/100 / so far · p
    pauses" wrapped). The score so far loses an objective's points only once it is lost
    (`DrillProgress.so_far`), and says the points at risk beside it."""
    drill = progress.drill
    now = drill.human_time(progress.time_s)
    if progress.ended:
        scored = f"{score.score:g}/{score.max_score:g}"
        return [f"drill · {now} · over · score {scored}", f"{now} · over · score {scored}"]
    so_far = progress.so_far(score)
    scored, risk = so_far.scored, so_far.risk
    # On the drill's clock, and the time left as a span: no fleet seconds.
    left = f"{duration(progress.end_s - progress.time_s)} left"
    if paused:
        state = "[b]PAUSED[/]"
        return [
            f"drill · {now} · {left} · {scored} so far{risk} · {state} (p resumes)",
            f"{now} · {left} · {scored} so far{risk} · {state} (p resumes)",
            f"{now} · {left} · {scored}{risk} · {state} (p resumes)",
            f"{now} {state} · {left} · {scored}{risk}",
            f"{now} {state} · {left} · {scored}",
        ]
    return [
        f"drill · {now} · {left} · {scored} so far{risk} · p pauses",
        f"{now} · {left} · {scored} so far{risk} · p pauses",
        f"{now} · {left} · {scored} so far{risk}",
        f"{now} · {left} · {scored}{risk}",
        f"{now} · {left} · {scored}",
    ]


def end_text(
    drill: Drill,
    score: Score,
    objectives: Sequence[LiveObjective],
    palette: Palette,
    steps: Sequence[NextStep] = (),
    retry_key: bool = False,
) -> Group:
    """The end screen: the score, each objective (`DrillProgress.objectives` once scored) with the figure it
    turned on where that informs and what became of it on the drill's clock (`end_lines`), the penalty,
    and what the trainee can do now — the commands (`next_steps`) and keys."""
    heading = [
        f"[b]{escape(drill.title)}[/] — the drill's time is up",
        "",
        f"[b]score {score.score:g} / {score.max_score:g}[/]",
        "",
    ]
    rows = []
    for item in objectives:
        measured = item.measured
        rows.append(
            (
                _mark(item.standing, palette),
                f"{measured.points:>4g}/{measured.max_points:<4g}",
                # The figure on a line of its own: beside a long name it wrapped mid-figure ("6 / min 29 s").
                "\n".join([escape(measured.name), *(escape(line) for line in end_lines(item))]),
            )
        )
    penalty = ["", escape(penalty_text(score, drill.scoring)), ""]
    keys = " · ".join(
        [
            "[b]Esc[/] back to the fleet (frozen)",
            *(["[b]r[/] try again"] if retry_key else []),
            "[b]q[/] quit",
        ]
    )
    parts = [
        Text.from_markup("\n".join(heading)),
        _columns(rows, (_mark_width(objectives), len(f"{100:>4g}/{100:<4g}"))),
        Text.from_markup("\n".join(penalty)),
    ]
    if steps:
        # Shell commands: the recording is whole once the console has quit.
        parts.append(Text.from_markup("[b]next[/] [dim](in a shell, once you quit)[/]"))
        step_rows = [
            (
                f"[dim]{escape(step.what)}[/]",
                escape(step.command) + (f"\n[dim]{escape(step.note)}[/]" if step.note else ""),
            )
            for step in steps
        ]
        parts.append(_columns(step_rows, (WHAT_WIDTH,)))
        parts.append(Text(""))
    parts.append(Text.from_markup(keys))
    return Group(*parts)


class EndScreen(Screen[None]):
    DEFAULT_CSS = """
    EndScreen { align: center middle; }
    EndScreen #end { width: 120; max-width: 100%; height: auto; max-height: 90%; border: round $accent;
                     padding: 1 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "back to the fleet"),
        # Offered where the console can start the drill again (`DrillApp.offers_retry`): `stormdeck drill`.
        Binding("r", "app.retry", "try again"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self, text: Group) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="end"):
            yield Static(self.text, id="end-text")
        yield ConsoleFooter(essential=("back", "app.retry"))

    def on_mount(self) -> None:
        self.query_one("#end").border_title = "drill over"

    def action_back(self) -> None:
        self.dismiss(None)


class DrillScreen(MainScreen):
    """The fleet screen with the objectives panel (the drill clock and score in its title) above the footer.

    The panel takes its rows from what a trainee needs least, never from the alarms (what a drill trains
    on) nor the node table: at 120×36 the alarms box had kept its header and no row, at 80×24 the node table
    was gone. From 48 rows the fleet screen is whole. At 36 to 47 (120×36) the connections chart gives way,
    as it does below 36 on any fleet screen (the gauge keeps the count). Below 36 (100×30) the panel says
    each objective's standing and name (`objectives_brief`) under a rule, and Tab to it reads the whys, as
    Tab to the alarms reads what an alarm said. Below ROOM_FOR_THE_WAVE rows (80×24) the wave chart gives
    way too (its lockstep is an alarm of its own) and the panel moves under the node table
    (`#drill-beside`): across the whole width it left the alarms 2 rows beside 10 of nodes.
    """

    #: MainScreen's, with "-tall" ending at 48 rows: from there the connections chart has room beside the panel.
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [
        *(MainScreen.VERTICAL_BREAKPOINTS or []),
        (48, "-roomy"),
    ]
    #: The rows under which the wave chart (10 rows below 36) leaves the node table fewer than 3 rows beside
    #: a brief panel of 5 lines: 28 rows leave it 3 (100×30: 5); at 80×24 the table had none.
    ROOM_FOR_THE_WAVE = 28

    DEFAULT_CSS = """
    DrillScreen.-tall #conn-box { display: none; }
    DrillScreen.-tall #wave-box { height: 1fr; min-height: 10; max-height: 14; }
    DrillScreen.-short ObjectivesBox .objectives { display: none; }
    DrillScreen.-short ObjectivesBox .objectives-brief { display: block; }
    DrillScreen.-short ObjectivesBox {
        border: none; border-top: hkey $accent; border-left: blank; border-right: blank;
    }
    DrillScreen.-short.-reading-objectives ObjectivesBox .objectives { display: block; }
    DrillScreen.-short.-reading-objectives ObjectivesBox .objectives-brief { display: none; }
    DrillScreen.-short.-reading-objectives ObjectivesBox { max-height: 70%; }
    DrillScreen #drill-beside { display: none; }
    DrillScreen.-cramped #drill-beside {
        display: block; max-height: 65%; border-left: none; border-right: none;
    }
    DrillScreen.-cramped.-reading-objectives #drill-beside { max-height: 100%; }
    DrillScreen.-cramped #drill-box { display: none; }
    DrillScreen.-cramped #wave-box { display: none; }
    """

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, HintLine):  # (the fleet screen's: a served drill's hints on `attach` too)
                yield ObjectivesBox(id="drill-box")
            yield widget

    def on_mount(self) -> None:
        # (MainScreen.on_mount runs too.) Under the node table, in the left column's width: its border would
        # cut the clock and score, which it says inside instead.
        self.query_one("#left").mount(ObjectivesBox(titled=False, id="drill-beside"))

    def on_resize(self) -> None:
        # (MainScreen.on_resize runs too.)
        self.set_class(self.size.height < self.ROOM_FOR_THE_WAVE, "-cramped")

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # (MainScreen's runs too: the alarms' `-reading-alarms`.)
        self.set_class(isinstance(event.widget, ObjectivesBox), "-reading-objectives")

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if isinstance(event.widget, ObjectivesBox):
            self.remove_class("-reading-objectives")

    def show_drill(self, titles: Sequence[str], objectives: Table, brief: Table) -> None:
        """`titles` fullest first (each box fits its width); `objectives` with their whys, `brief` without:
        the screen's CSS shows the one it has rows for."""
        for box in self.query(ObjectivesBox):
            box.show(titles, objectives, brief)


class DrillApp(ConsoleApp):
    BINDINGS: ClassVar[list[BindingType]] = [
        *ConsoleApp.BINDINGS,
        Binding(
            "p",
            "toggle_pause",
            "pause",
            tooltip="pause / resume the drill's fleet clock (once Enter has started it, until the end)",
        ),
    ]
    #: None: the drill's end is its end screen (a notice over it once covered the score); its hints have
    #: the fleet screen's line, as on `attach` (`ConsoleApp.show_hints`), from its own progress.
    told_kinds: ClassVar[frozenset[str]] = frozenset()
    #: Its own briefing opens the drill (Enter starts the clock), not the served drill's hello.
    briefs_served_drill: ClassVar[bool] = False

    def __init__(
        self,
        progress: DrillProgress,
        set_paused: ClockSetter | None = None,
        action_recorder: ActionRecorder | None = None,
        record_outcome: Callable[[DrillOutcome], None] | None = None,
        next_steps: Sequence[NextStep] | None = None,
        offers_retry: bool = False,
        **kwargs,
    ) -> None:
        """`next_steps`: the commands the end screen gives (default: those of `stormdeck drill NAME`, not
        recorded). `offers_retry`: whoever runs the app starts the drill again when it exits with
        `retry_asked` (the end screen's `r`)."""
        self.progress = progress
        name = progress.drill.name
        self.next_steps = list(
            next_steps if next_steps is not None else steps_for(RunCommand(name), f"{name}.sdrec")
        )
        self.offers_retry = offers_retry
        self.retry_asked = False
        self.record_outcome = record_outcome  # `--record`: the recording ends with the score, as headless
        self.set_paused = set_paused
        self.paused = True  # the fleet waits while the trainee reads the briefing
        self.started = False  # the briefing was read and the fleet clock asked to run
        self.end_shown = False
        self._chained_recorder = action_recorder
        # One clock on screen: the header, alarms and node screen read the drill's (its briefing's, panel's
        # and hints' "02:00:40"), not the fleet's seconds since the simulation began ("0:00:40").
        super().__init__(
            action_recorder=self._record_action,
            clock_face=drill_clock(progress.drill.clock_start_s),
            **kwargs,
        )
        self.title = f"stormdeck drill · {progress.drill.name}"

    def mode_help_sections(self) -> list[tuple[str, list[BindingType]]]:
        return [("briefing", list(BriefingScreen.BINDINGS)), ("drill over", list(EndScreen.BINDINGS))]

    def get_default_screen(self) -> Screen:
        return DrillScreen()

    def briefed_drill(self) -> ServedDrill:
        return self.progress.drill.served(self.progress.end_s)  # its own: known before any hello

    def briefing_screen(self, served: ServedDrill) -> BriefingScreen:
        # Reopened from the palette: Enter or Esc goes back to the drill, whose clock is already running.
        return ServedBriefingScreen(
            served, BACK_TO_THE_DRILL, scored=True, scoring=penalty_rule(self.progress.drill.scoring)
        )

    def on_mount(self) -> None:
        # (ConsoleApp.on_mount runs too.) The briefing first; Enter starts the fleet clock.
        drill = self.progress.drill
        briefing = BriefingScreen(drill.served(self.progress.end_s), scoring=penalty_rule(drill.scoring))
        self.push_screen(briefing, self._briefing_done)

    def _briefing_done(self, started: bool | None) -> None:
        if started:
            self.started = True
            self._ask_clock(paused=False)

    def drill_over(self) -> str | None:
        # The end stops the fleet's clock (`show_end`): nothing sent now would ever play out.
        if self.progress.ended or self.model.drill_ended is not None:
            return DRILL_ENDED_FROZEN
        return None

    @property
    def abandoned(self) -> bool:
        """Started and not over: quitting now leaves the drill unscored."""
        return self.started and not self.end_shown

    # --- feeding -----------------------------------------------------------------------------------------

    def feed(self, item: StreamItem) -> None:
        super().feed(item)
        if not isinstance(item, Received):
            return
        message = item.message
        if isinstance(message, Frame):
            self.progress.add_frame(message)
            if self.progress.ended and not self.end_shown:
                self.call_later(self.show_end)
        elif isinstance(message, Event) and self.progress.add_event(message) is not None:
            self.show_hints(message)

    def clock_time_s(self) -> float | None:
        """The drill's last measured second (`DrillProgress.time_s`): the one its panel and end screen read.
        The fleet runs on a second or a sped-up frame past the end before the pause reaches it; read from
        that frame, the header said "02:07:01 ⏹ ended" beside the panel's "02:07:00 · over" (reviewer)."""
        return self.progress.time_s if self.progress.measures.last is not None else None

    def hear_hint(self, hint: Event) -> None:
        """(Its progress hears the hints, in `feed`: it knows which an action already made moot.)"""

    def hints_told(self) -> Sequence[Event]:
        return self.progress.hints

    def _record_action(self, record: ActionRecord | Confirmation) -> None:
        if isinstance(record, ActionRecord):
            self.progress.add_action(record)
        if self._chained_recorder is not None:
            self._chained_recorder(record)

    def refresh_views(self) -> None:
        super().refresh_views()
        screen = self.fleet_screen()
        if isinstance(screen, DrillScreen):
            score = self.progress.score()
            objectives = self.progress.objectives(score)
            screen.show_drill(
                drill_titles(self.progress, score, self.paused),
                objectives_text(objectives, self.palette, self.progress.penalty_line(score)),
                objectives_brief(objectives, self.palette, self.progress.penalty_line(score)),
            )
            screen.show_hints(self.progress.hints, self.clock_face)

    # --- intents -----------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_pause" and (not self.started or self.end_shown):
            # On the briefing the clock waits for Enter (a `p` there once started it unseen); after the
            # end the drill is over. Either way: no `p` in the footer, and the key does nothing.
            return False
        if action == "retry":
            return self.offers_retry and self.end_shown
        return super().check_action(action, parameters)

    def quit_warning(self) -> str | None:
        if self.abandoned:
            # On the drill's clock, as the header and the panel's title say it (not "241 of 1200 s").
            progress = self.progress
            left = duration(progress.end_s - progress.time_s)
            return (
                f"the drill is running ({progress.drill.human_time(progress.time_s)}, {left} left, "
                f"{progress.so_far().text}): quitting leaves it unscored"
            )
        return super().quit_warning()

    def action_retry(self) -> None:
        """The end screen's `r`: leave, for whoever runs the app to start the drill again."""
        if self.offers_retry and self.end_shown:
            self.retry_asked = True
            self.exit()

    def action_toggle_pause(self) -> None:
        if not self.started or self.end_shown:
            return
        self._ask_clock(paused=not self.paused)

    def _ask_clock(self, paused: bool) -> None:
        self.paused = paused
        self.refresh_views()
        if self.set_paused is not None:
            self.run_worker(self.set_paused(paused), group="clock", exclusive=True, exit_on_error=False)

    def show_end(self) -> None:
        if self.end_shown:
            return
        self.end_shown = True
        self.refresh_bindings()
        self._ask_clock(paused=True)  # the drill is over: the fleet stops where it was scored
        score = self.progress.finish()
        objectives = self.progress.objectives(score)
        if self.record_outcome is not None:  # in the end screen's words, on the drill's clock
            self.record_outcome(outcome_at_end(score, self.progress.time_s, objectives))
        # The hints (shown 30 s) would cover the end screen's why of each objective: the drill is over.
        self.clear_notifications()
        text = end_text(
            self.progress.drill, score, objectives, self.palette, self.next_steps, self.offers_retry
        )
        self.push_screen(EndScreen(text))
