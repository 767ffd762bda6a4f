"""`stormdeck drill NAME`: the console in drill mode (issue #5, section 2).

The live console (`ConsoleApp`) on a served drill (`drill NAME --serve` in a child process), plus: a
briefing screen first (the fleet clock stays paused until Enter), an objectives panel with the drill clock
(met / at risk / failed, from `console.drills.live`, which measures with the scorer's own functions), the
served stream's `hint` events as notifications, pause (`p`, through `POST /v1/sim/clock`), and an end
screen with the score when the server says the drill's time is up. Screens render; the app posts intents.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ClassVar

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from console.drills.live import DrillProgress, LiveObjective, Standing
from console.drills.objectives import Score, penalty_text
from console.drills.schema import Drill
from console.model.link import Received, StreamItem
from console.model.thresholds import Level
from console.model.units import drill_clock
from console.protocol import Event, Frame, ServedDrill
from console.record.records import ActionRecord, Confirmation, DrillOutcome
from console.ui.actions import ActionRecorder
from console.ui.app import ConsoleApp
from console.ui.screens.briefing import BACK_TO_THE_DRILL, BriefingScreen, ServedBriefingScreen
from console.ui.screens.main import MainScreen
from console.ui.themes import LEVEL_GLYPHS, Palette
from console.ui.widgets.footer import ConsoleFooter

#: Pause or resume the served fleet's clock (`POST /v1/sim/clock`); None where there is no server.
ClockSetter = Callable[[bool], Awaitable[None]]


_STANDING_LEVEL = {Standing.MET: Level.OK, Standing.AT_RISK: Level.WARNING, Standing.FAILED: Level.CRITICAL}


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


def objectives_text(objectives: list[LiveObjective], palette: Palette) -> Table:
    rows = [
        (_mark(item.standing, palette), f"{escape(item.measured.name)}  [dim]{escape(item.measured.why)}[/]")
        for item in objectives
    ]
    return _columns(rows, (_MARK_WIDTH,))


def drill_title(progress: DrillProgress, score: Score, paused: bool) -> str:
    drill = progress.drill
    if progress.ended:
        return (
            f"drill · {drill.human_time(progress.time_s)} · over · score {score.score:g}/{score.max_score:g}"
        )
    state = " · [b]PAUSED[/] (p resumes)" if paused else " · p pauses"
    return (
        f"drill · {drill.human_time(progress.time_s)} · {progress.time_s:.0f} of {progress.end_s:.0f} s · "
        f"{score.score:g}/{score.max_score:g} so far{state}"
    )


def end_text(drill: Drill, score: Score, palette: Palette) -> Group:
    heading = [
        f"[b]{escape(drill.title)}[/] — the drill's time is up",
        "",
        f"[b]score {score.score:g} / {score.max_score:g}[/]",
        "",
    ]
    rows = []
    for item in score.objectives:
        standing = Standing.MET if item.met else Standing.FAILED
        rows.append(
            (
                _mark(standing, palette),
                f"{item.points:>4g}/{item.max_points:<4g}",
                f"{escape(item.name)}  [dim]({escape(item.reading())})[/]\n{escape(item.why)}",
            )
        )
    ending = [
        "",
        escape(penalty_text(score, drill.scoring)),
        "",
        "[b]Esc[/] back to the fleet (frozen) · [b]q[/] quit",
    ]
    return Group(
        Text.from_markup("\n".join(heading)),
        _columns(rows, (_MARK_WIDTH, len(f"{100:>4g}/{100:<4g}"))),
        Text.from_markup("\n".join(ending)),
    )


class EndScreen(Screen[None]):
    DEFAULT_CSS = """
    EndScreen { align: center middle; }
    EndScreen #end { width: 120; max-width: 100%; height: auto; max-height: 90%; border: round $accent;
                     padding: 1 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "back to the fleet"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self, text: Group) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="end"):
            yield Static(self.text, id="end-text")
        yield ConsoleFooter(essential=("back",))

    def on_mount(self) -> None:
        self.query_one("#end").border_title = "drill over"

    def action_back(self) -> None:
        self.dismiss(None)


class DrillScreen(MainScreen):
    """The fleet screen with the objectives panel (and the drill clock in its title) above the footer."""

    DEFAULT_CSS = """
    DrillScreen #drill-box { height: auto; max-height: 9; border: round $accent; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, Footer):
                with Vertical(id="drill-box"):
                    yield Static("", id="objectives")
            yield widget

    def show_drill(self, title: str, objectives: Table) -> None:
        for box in self.query("#drill-box"):
            box.border_title = title
        for panel in self.query("#objectives").results(Static):
            panel.update(objectives)


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
    #: Hints only: the drill's end is its end screen (a notice over it once covered the score).
    told_kinds: ClassVar[frozenset[str]] = frozenset({"hint"})
    #: Its own briefing opens the drill (Enter starts the clock), not the served drill's hello.
    briefs_served_drill: ClassVar[bool] = False

    def __init__(
        self,
        progress: DrillProgress,
        set_paused: ClockSetter | None = None,
        action_recorder: ActionRecorder | None = None,
        record_outcome: Callable[[DrillOutcome], None] | None = None,
        **kwargs,
    ) -> None:
        self.progress = progress
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
        return ServedBriefingScreen(served, BACK_TO_THE_DRILL, scored=True)

    def on_mount(self) -> None:
        # (ConsoleApp.on_mount runs too.) The briefing first; Enter starts the fleet clock.
        briefing = BriefingScreen(self.progress.drill.served(self.progress.end_s))
        self.push_screen(briefing, self._briefing_done)

    def _briefing_done(self, started: bool | None) -> None:
        if started:
            self.started = True
            self._ask_clock(paused=False)

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
        elif isinstance(message, Event):
            self.progress.add_event(message)  # (its hints are told as any console tells them: `tell`)

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
            screen.show_drill(
                drill_title(self.progress, score, self.paused),
                objectives_text(self.progress.objectives(score), self.palette),
            )

    # --- intents -----------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_pause" and (not self.started or self.end_shown):
            # On the briefing the clock waits for Enter (a `p` there once started it unseen); after the
            # end the drill is over. Either way: no `p` in the footer, and the key does nothing.
            return False
        return super().check_action(action, parameters)

    def quit_warning(self) -> str | None:
        if self.abandoned:
            score = self.progress.score()
            return (
                f"the drill is running ({self.progress.time_s:.0f} of {self.progress.end_s:.0f} s, "
                f"{score.score:g}/{score.max_score:g} so far): quitting leaves it unscored"
            )
        return super().quit_warning()

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
        if self.record_outcome is not None:
            self.record_outcome(score.outcome(self.progress.time_s))
        # The hints (shown 30 s) would cover the end screen's why of each objective: the drill is over.
        self.clear_notifications()
        self.push_screen(EndScreen(end_text(self.progress.drill, score, self.palette)))
