"""What a fleet screen shows instead of its panels when the terminal is smaller than they need.

Below 80×24 the panels cut their figures: at 40×12 the gauges read "✖ 1…" and "✓ 2…", at 60×20 a node's
connections "2," of 2,xxx, and a cut figure reads as another figure. The screen says what it needs instead;
the header (is the link live?) and the footer (q quits, ? helps) stay.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

#: The smallest terminal every panel was laid out for (README: the storm on an 80×24 terminal).
MIN_WIDTH = 80
MIN_HEIGHT = 24

#: A screen's CSS, `{screen}` its type, whose breakpoints name "-too-narrow" below MIN_WIDTH and "-too-short"
#: below MIN_HEIGHT: its panels (class "fits-or-hides") give way to the notice.
TOO_SMALL_CSS = """
{screen} TooSmallNotice {{ display: none; }}
{screen}.-too-narrow TooSmallNotice, {screen}.-too-short TooSmallNotice {{ display: block; }}
{screen}.-too-narrow .fits-or-hides, {screen}.-too-short .fits-or-hides {{ display: none; }}
"""


def too_small_text(width: int, height: int) -> Text:
    return Text.assemble(
        (f"This terminal is {width}×{height}.", "bold"),
        f" stormdeck needs {MIN_WIDTH}×{MIN_HEIGHT} to show its figures whole: enlarge the window. ",
        "q quits, ? lists the keys.",
    )


class TooSmallNotice(Static):
    DEFAULT_CSS = """
    TooSmallNotice { width: 1fr; height: 1fr; padding: 1 2; content-align: center middle; }
    """

    def render(self) -> Text:
        # The screen's size, not this widget's: it is what the operator enlarges.
        return too_small_text(*self.screen.size)
