"""The drill's objectives panel: its clock and score, and each objective's standing, whole or brief.

Whole, each objective's why beside its name (`console.ui.drill.objectives_text`); brief, its standing and
name only (`objectives_brief`). Both are drawn into it and the screen's CSS shows one (`DrillScreen`): the
whys are what gives way when the rows are few, and Tab to the panel brings them back.
"""

from __future__ import annotations

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static


class ObjectivesBox(VerticalScroll):
    """A third of the screen at most; it scrolls, and so takes the focus: five objectives with their whys
    can be more than its rows.

    `titled`: the clock and score are its border's title; otherwise the first line inside it, which
    wraps whole where a narrow box's border would cut it ("… 74.7/100 so…" in 48 columns at 80×24).
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

    def compose(self) -> ComposeResult:
        yield Static("", classes="drill-title")
        yield Static("", classes="objectives")
        yield Static("", classes="objectives-brief")

    def show(self, title: str, whole: RenderableType, brief: RenderableType) -> None:
        if self.titled:
            self.border_title = title
        # query, not query_one: a frame may be drawn as the screen is being torn down
        for selector, content in (
            (".drill-title", title),
            (".objectives", whole),
            (".objectives-brief", brief),
        ):
            for panel in self.query(selector).results(Static):
                panel.update(content)
