"""A drill's briefing: the title, the seed it rehearses, the briefing, what it teaches, the objectives.

Two consoles open on it. The single-player drill console (`console.ui.drill`) shows it before its fleet
clock runs — Enter starts the drill. A trainee's console on `stormdeck attach` to a served drill shows it
once, from the stream's hello (`Hello.drill`): the instructor starts that drill's clock, so Enter or Esc
only goes to the fleet. The palette's "Show the drill briefing" reopens it on either.
"""

from __future__ import annotations

import re
from typing import ClassVar

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from console.protocol import ServedDrill
from console.ui.widgets.footer import ConsoleFooter

#: The single-player drill's last line: Enter starts its clock.
#: What `p` does is said here: at 80×24 neither the footer nor the drill panel's title has room for it.
START_OR_QUIT = "[b]Enter[/] to start the drill · [b]p[/] pauses the drill's clock · [b]q[/] to quit"
#: A served drill's trainee: the instructor's clock starts it; the briefing only stands in front of the fleet.
TO_THE_FLEET = (
    "[b]Enter[/] or [b]Esc[/] to the fleet · the instructor starts and pauses the drill's clock (the header "
    "says ⏸ paused while it stands) · [b]q[/] to quit"
)
#: The single-player drill's briefing reopened from the palette: its clock is already the trainee's.
BACK_TO_THE_DRILL = "[b]Enter[/] or [b]Esc[/] back to the drill · [b]q[/] to quit"


def briefing_commands() -> list[tuple[str, str, str]]:
    """(title, help, action) of the palette's briefing command, on a console with a served drill (the
    trainee's, the instructor's, drill mode's): once dismissed, the briefing could not be read again."""
    return [("Show the drill briefing", "the drill's story and objectives, as it opened", "show_briefing")]


def reflowed(text: str) -> str:
    """Paragraphs as the screen wraps them: a drill file's line breaks are for its editor, blank lines end
    a paragraph."""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in paragraphs)


def briefing_text(
    drill: ServedDrill, closing: str = START_OR_QUIT, scored: bool = True, scoring: str = ""
) -> str:
    """`scored`: this console scores the objectives (the single-player drill); a trainee's on a served
    drill does not, and says so beside them. `scoring`: the time penalty's rule, under the objectives
    (the single-player drill's: the drill screen shows it accrue, and the end screen takes it off)."""
    lines = [
        f"[b]{escape(drill.title)}[/]  ({escape(drill.name)})",
        "",
        f"[dim]rehearses:[/] {escape(drill.seed_source)}",
        "",
        escape(reflowed(drill.briefing)),
        "",
    ]
    if drill.teaches:
        lines += [f"[dim]teaches:[/] {escape(drill.teaches)}", ""]
    score = "" if scored else "; this console keeps no score"
    lines.append(f"[b]objectives[/] ({drill.max_points:g} points{score})")
    lines += [f"  {objective.points:>4g}  {escape(objective.name)}" for objective in drill.objectives]
    if scoring:  # under the objectives, no blank line: at 120×36 thundering-herd's briefing fits whole
        lines.append(f"  {escape(scoring)}")
    lines += ["", closing]
    return "\n".join(lines)


class BriefingScreen(Screen[bool]):
    """The single-player drill's: Enter starts the drill (dismisses with True), q quits."""

    DEFAULT_CSS = """
    BriefingScreen { align: center middle; }
    BriefingScreen #briefing { width: 100; max-width: 100%; height: auto; max-height: 90%;
                               border: round $accent; padding: 1 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "start", "start"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self, drill: ServedDrill, scoring: str = "") -> None:
        """`scoring`: the time penalty's rule in words (`penalty_rule`), where this console scores."""
        super().__init__()
        self.drill = drill
        self.scoring = scoring

    def text(self) -> str:
        return briefing_text(self.drill, scoring=self.scoring)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="briefing"):
            yield Static(self.text(), id="briefing-text")
        yield ConsoleFooter(essential=("start",))  # Enter the last key to give way, then q and ?

    def on_mount(self) -> None:
        self.query_one("#briefing").border_title = "briefing"

    def action_start(self) -> None:
        self.dismiss(True)


class ServedBriefingScreen(BriefingScreen):
    """A trainee's, on `attach` to a served drill: Enter or Esc goes to the fleet (the clock is the
    instructor's); q quits, as on the fleet screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "start", "to the fleet"),
        Binding("escape", "start", "to the fleet", show=False),
    ]

    def __init__(
        self, drill: ServedDrill, closing: str = TO_THE_FLEET, scored: bool = False, scoring: str = ""
    ) -> None:
        """`closing`, `scored` and `scoring` as `briefing_text`'s: drill mode reopens its own briefing as
        this one."""
        super().__init__(drill, scoring)
        self.closing = closing
        self.scored = scored

    def text(self) -> str:
        return briefing_text(self.drill, self.closing, scored=self.scored, scoring=self.scoring)
