"""The drill's objectives panel: its clock and score, and each objective's standing, whole or brief.

Whole, each objective's why beside its name (`console.ui.drill.objectives_text`); brief, its standing and
name only (`objectives_brief`). Both are drawn into it and the screen's CSS shows one (`DrillScreen`): the
whys are what gives way when the rows are few, and Tab to the panel brings them back.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from console.ui.words import BORDER_AROUND_TITLE


class ObjectivesBox(VerticalScroll):
    """A third of the screen at most; it scrolls, and so takes the focus: five objectives with their whys
    can be more than its rows.

    `titled`: the clock and score are its border's title; otherwise the first line inside it, where a
    narrow box's border would cut it ("… 74.7/100 so…" in 48 columns at 80×24). Either way in the fullest
    words that fit the box's width whole (`fitted`): inside, the title wrapped "74.8/100 / so far · p
    pauses" at 80×24, a row the objectives needed.
    """

    DEFAULT_CSS = """
    /* No scrollbar unless the box is read (Tab): where the box's height came from its last content, new
       lines made it overflow, the scrollbar narrowed it, the lines wrapped into more rows and it stayed,
       over the last objective (seen at 80×24); a stable gutter did not help (Textual measures an auto
       height without it, and so one line short). */
    ObjectivesBox {
        height: auto; max-height: 33%; border: round $accent; padding: 0 1;
        overflow-y: hidden; scrollbar-size-vertical: 1;
    }
    ObjectivesBox:focus { overflow-y: auto; background-tint: $foreground 3%; }
    ObjectivesBox .drill-title { display: none; }
    ObjectivesBox.-untitled .drill-title { display: block; }
    ObjectivesBox .objectives-brief { display: none; }
    """

    def __init__(self, *, titled: bool = True, id: str | None = None) -> None:
        super().__init__(id=id, classes="" if titled else "-untitled")
        self.titled = titled
        self.titles: Sequence[str] = ()  # the title in fewer and fewer words (`show`), fitted on a resize

    def compose(self) -> ComposeResult:
        yield Static("", classes="drill-title")
        yield Static("", classes="objectives")
        yield Static("", classes="objectives-brief")

    def show(self, titles: Sequence[str], whole: RenderableType, brief: RenderableType) -> None:
        """`titles`: the clock and score in markup, fullest first (`console.ui.drill.drill_titles`)."""
        self.titles = titles
        self._show_title()
        # query, not query_one: a frame may be drawn as the screen is being torn down
        for selector, content in (
            (".objectives", whole),
            (".objectives-brief", brief),
        ):
            for panel in self.query(selector).results(Static):
                panel.update(content)

    def on_resize(self) -> None:
        # A paused drill's frames say nothing new: the title is fitted to the new width here.
        self.call_after_refresh(self._show_title)

    def _show_title(self) -> None:
        if not self.titles:
            return
        if self.titled:
            room = self.outer_size.width - BORDER_AROUND_TITLE if self.outer_size.width else None
        else:
            room = self.content_size.width or None
        title = fitted(self.titles, room)
        if self.titled:
            self.border_title = title
        for panel in self.query(".drill-title").results(Static):
            panel.update(title)


def fitted(titles: Sequence[str], room: int | None) -> str:
    """The first of `titles` (markup) whose text fits `room` cells; the last, the shortest, where none
    does (it wraps inside the box); the first where the room is not known yet."""
    if room is None:
        return titles[0]
    return next((title for title in titles if Text.from_markup(title).cell_len <= room), titles[-1])
