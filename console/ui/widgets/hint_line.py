"""The drill's hints on a line of their own above the footer: the newest whole, the older ones on Tab.

Told as notifications, two hints stacked over the objectives panel's right half and the rollout box for
30 s at 80×24 — the very objectives they spoke of. Here a hint takes the rows it needs under the panels and
covers none; it stays until the next one (a hint is advice for the rest of the drill, not news that goes
stale in 30 s), and Tab to the line reads every hint told so far, newest first, as Tab to the objectives
panel reads their whys.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.markup import escape
from textual.timer import Timer
from textual.widgets import Static

from console.model.units import ClockFace
from console.protocol import Event

#: How long a new hint's line stands out (its background): long enough to catch an eye on the alarms.
NEW_FOR_S = 10.0


def hint_said(hint: Event, clock: ClockFace) -> str:
    """One hint as Textual markup (the theme's accent), on the drill's clock: "hint 04:03:10 · The seed's abort criterion: …"."""
    return f"[b $accent]hint {clock.text(hint.time_s)}[/] · {escape(hint.message)}"


def newest_text(hints: Sequence[Event], clock: ClockFace, width: int | None = None) -> str:
    """The newest hint whole, then how many came before it and where they are read — in the fullest words
    that add no row to the hint's in `width` cells ("1 earlier (Tab)" took a row of its own at 120×36)."""
    said = hint_said(hints[-1], clock)
    older = len(hints) - 1
    if not older:
        return said
    forms = [f"{said}  [dim]{older} earlier (Tab)[/]", f"{said}  [dim]+{older} (Tab)[/]"]
    if width is None or width < 1:
        return forms[0]
    rows = len(Content.from_markup(said).wrap(width))
    return next((form for form in forms if len(Content.from_markup(form).wrap(width)) <= rows), forms[0])


def all_text(hints: Sequence[Event], clock: ClockFace) -> str:
    """Every hint told so far, newest first, one to a paragraph."""
    return "\n".join(hint_said(hint, clock) for hint in reversed(hints))


class HintLine(VerticalScroll):
    """Hidden until the first hint. It scrolls, and so takes the focus: focused, it lists every hint."""

    DEFAULT_CSS = """
    HintLine {
        display: none; height: auto; max-height: 4; padding: 0 1;
        border-left: outer $accent; background: $boost; overflow-y: hidden; scrollbar-size-vertical: 1;
    }
    HintLine.-told { display: block; }
    HintLine.-new { background: $accent 20%; }
    HintLine:focus { max-height: 50%; overflow-y: auto; background-tint: $foreground 3%; }
    HintLine .all-hints { display: none; }
    HintLine:focus .all-hints { display: block; }
    HintLine:focus .newest-hint { display: none; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.told = 0  # the hints shown so far: a new one stands out (`-new`)
        self._standing_out: Timer | None = None
        self._hints: list[Event] = []
        self._clock: ClockFace | None = None

    def compose(self) -> ComposeResult:
        yield Static("", classes="newest-hint")
        yield Static("", classes="all-hints")

    def show(self, hints: Sequence[Event], clock: ClockFace) -> None:
        if not hints:
            return
        self._hints, self._clock = list(hints), clock
        self._say()
        self.add_class("-told")
        if len(hints) > self.told:
            self.told = len(hints)
            self.add_class("-new")
            if self._standing_out is not None:
                self._standing_out.stop()  # the earlier hint's would end the new one's sooner
            self._standing_out = self.set_timer(NEW_FOR_S, lambda: self.remove_class("-new"))

    def on_resize(self) -> None:
        self._say()  # the words beside the newest depend on the width (a paused drill draws nothing new)

    def _say(self) -> None:
        if not self._hints or self._clock is None:
            return
        for panel in self.query(".newest-hint").results(Static):  # (query: as `ObjectivesBox.show`)
            panel.update(newest_text(self._hints, self._clock, self.content_size.width or None))
        for panel in self.query(".all-hints").results(Static):
            panel.update(all_text(self._hints, self._clock))
