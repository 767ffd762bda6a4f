"""The five gauges under the header, each boxed and coloured by its level (with a glyph as well)."""

from __future__ import annotations

import numpy as np
from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from console.model.downsample import SPARK_MIN_SPAN_SHARE, spark_blocks
from console.model.gauges import Gauge
from console.model.thresholds import Level
from console.ui.themes import LEVEL_GLYPHS, Palette

_LEVEL_CLASSES = {
    Level.UNKNOWN: "-unknown",
    Level.OK: "-ok",
    Level.WARNING: "-warning",
    Level.CRITICAL: "-critical",
}


class GaugeBox(Static):
    DEFAULT_CSS = """
    GaugeBox {
        width: 1fr;
        height: 4;
        border: round $panel;
        padding: 0 1;
        /* Two lines, each cut with an ellipsis: wrapped, the value's sparkline or the 503 count took the
           detail line's place and the detail (Δ60s, 503 share, the kill switch) vanished at 80 columns. */
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    GaugeBox.-ok { border: round $success 60%; }
    GaugeBox.-warning { border: heavy $warning; }
    GaugeBox.-critical { border: double $error; }
    """

    _shown: tuple[Gauge, Palette] | None = None

    def on_resize(self) -> None:
        if self._shown is not None:  # the brief or the whole detail: that depends on the width
            self.show(*self._shown)

    def show(self, gauge: Gauge, palette: Palette) -> None:
        self._shown = (gauge, palette)
        # A title has the box's width less its corners, a rule each side and a space each side.
        narrow_title = 0 < self.size.width - 6 < len(gauge.label) and gauge.short_label
        self.border_title = gauge.short_label if narrow_title else gauge.label
        for level, name in _LEVEL_CLASSES.items():
            self.set_class(level is gauge.level, name)
        # A stale value stays readable, dimmed: the last figure seen is still worth a glance, not a trust.
        style = palette.level_style(gauge.level, bold=not gauge.stale) + Style(dim=gauge.stale)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{LEVEL_GLYPHS[gauge.level]} ", style=style)
        text.append(gauge.value, style=style)
        if gauge.spark:
            text.append("  ")
            text.append(
                spark_blocks(np.asarray(gauge.spark), 12, min_span_share=SPARK_MIN_SPAN_SHARE),
                style=Style(color=palette.chart["line"], dim=gauge.stale),
            )
        text.append("\n")
        text.append(self._detail_that_fits(gauge))
        self.update(text, layout=False)  # a fixed-size box: no layout pass needed

    def _detail_that_fits(self, gauge: Gauge) -> str:
        """The longest form of the detail the box holds whole: "503s 84.1 %", not "503 share 8…"; the
        shortest when none does (an unmeasured box: the whole detail)."""
        forms = [form for form in (gauge.detail, *gauge.wide, gauge.brief, *gauge.fallbacks) if form]
        width = self.content_size.width
        if width <= 0:
            return gauge.detail
        return next((form for form in forms if cell_len(form) <= width), forms[-1])


class GaugeBar(Horizontal):
    DEFAULT_CSS = """
    GaugeBar {
        height: 4;
    }
    """

    def compose(self) -> ComposeResult:
        for key in ("connections", "attempts", "accepts", "headroom", "drain_inflow"):
            yield GaugeBox(id=f"gauge-{key}")

    def show(self, gauges: list[Gauge], palette: Palette) -> None:
        for gauge in gauges:
            self.query_one(f"#gauge-{gauge.key}", GaugeBox).show(gauge, palette)
