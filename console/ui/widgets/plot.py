"""The one widget behind every chart: a plotext 6 figure rendered into a Textual widget.

plotext is used directly (textual-plotext is unmaintained since 2024-11 and pins plotext < 6). Each series
is down-sampled to the plot's width before drawing, gaps (NaN) break lines, and the figure is rebuilt only
when the data, the size or the theme changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import plotext as plt
from rich.style import Style
from rich.text import Span, Text
from textual.widget import Widget

from console.model.downsample import finite_runs
from console.model.units import human_count

_Y_AXIS_CELLS = 9  # tick labels and frame on the left


@dataclass(frozen=True)
class Series:
    x: np.ndarray
    y: np.ndarray
    color: str  # a chart colour key of the theme: line, stale, baseline, capacity, gap


@dataclass(frozen=True)
class ChartSpec:
    series: tuple[Series, ...] = ()
    hlines: tuple[tuple[float, str], ...] = ()  # (y, colour key)
    vlines: tuple[tuple[float, str], ...] = ()  # (x, colour key): gaps in the stream
    x_label: str = ""
    y_label: str = ""
    x_lim: tuple[float, float] | None = None
    y_lim: tuple[float, float] | None = None
    x_ticks: tuple[float, ...] = ()


def nice_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """Round tick positions (1, 2, 5 × 10^k steps) between low and high."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / count
    magnitude = 10 ** np.floor(np.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    start = np.ceil(low / step) * step
    return [float(v) for v in np.arange(start, high + step * 1e-9, step)]


_SCALES = ((1e9, "G"), (1e6, "M"), (1e3, "k"))


def tick_labels(ticks: list[float]) -> list[str]:
    """k/M for big values; enough decimals for small steps (0.2, 0.4 … not 0, 0, 1)."""
    if len(ticks) < 2:
        return [human_count(v) for v in ticks]
    step = ticks[1] - ticks[0]
    if step >= 1:
        top = max(abs(v) for v in ticks)
        scale = next(((limit, suffix) for limit, suffix in _SCALES if top >= limit), None)
        if scale is None:
            return [human_count(v) for v in ticks]
        # One scale for all, and decimals enough for the step: a narrow band of a big value read
        # "990, 1.0k, 1.0k" (and 1.25M, 1.26M read "1.2M, 1.3M").
        limit, suffix = scale
        decimals = max(1, math.ceil(-math.log10(step / limit)))
        if decimals > 3:  # a band too narrow for its scale: whole numbers say it
            return [f"{v:,.0f}" for v in ticks]
        return [f"{v / limit:.{decimals}f}{suffix}" if v else "0" for v in ticks]
    decimals = max(1, -int(np.floor(np.log10(step))))
    return [f"{v:.{decimals}f}" for v in ticks]


def plot_rows(height: int, labelled: bool) -> int:
    """The rows a figure `height` rows tall plots in: less its frame's two, the x ticks' row, the labels'."""
    return max(1, height - 3 - (1 if labelled else 0))


def ticks_for_rows(ticks: list[float], rows: int) -> list[float]:
    """Every other tick until each has a row of its own, the lowest kept: three ticks on a two-row plot
    wrote "0.5" over the "0" of the row a flat zero line is drawn on (a node detail's 503s/s at 80×24)."""
    while len(ticks) > rows:
        ticks = ticks[::2]
    return ticks


def plot_columns(width: int) -> int:
    """How many data points a plot this wide can show: two braille dots per cell."""
    return max(4, (width - _Y_AXIS_CELLS) * 2)


#: Spaces between the y label (left) and the x label (centred) on a chart's last row, at least.
LABEL_GAP = 3


def labels_stand_apart(spec: ChartSpec, width: int) -> bool:
    """Whether the y label fits left of the centred x label with `LABEL_GAP` between: narrower, plotext
    ran them together ("attempts / 100 ms seconds ago") or cut the y label where the x label starts."""
    if not spec.x_label:
        return True
    x_starts = math.ceil((width - len(spec.x_label)) / 2)
    return len(spec.y_label) + LABEL_GAP <= x_starts


def _rgb(color: str) -> tuple[int, int, int]:
    color = color.lstrip("#")
    return int(color[0:2], 16), int(color[2:4], 16), int(color[4:6], 16)


def build_chart(spec: ChartSpec, width: int, height: int, colors: dict[str, str], foreground: str) -> Text:
    fig = plt.figure
    fig.clear()
    plt.terminal.limit(False, False)
    fig.plot_size(max(width, 20), max(height, 5))
    theme_name = f"stormdeck-{foreground}"
    if theme_name not in plt._settings.themes.themes:  # type: ignore[attr-defined]
        plt.add_theme(theme_name, text=plt.pixel(foreground=_rgb(foreground)))
    fig.theme(theme_name)
    fig.canvas("default")
    drawn = False
    for series in spec.series:
        pixel = plt.pixel(foreground=_rgb(colors[series.color]))
        for x, y in finite_runs(np.asarray(series.x, float), np.asarray(series.y, float)):
            signal = fig.signal(x.tolist(), y.tolist(), marker=plt.marker("braille", pixel=pixel))
            fig.draw(signal.lines(True))
            drawn = True
    if not drawn:  # plotext needs one signal to lay the axes out
        x_lim = spec.x_lim or (0.0, 1.0)
        fig.draw(fig.signal([x_lim[0]], [0.0], marker=plt.marker(" ")))
    for y, key in spec.hlines:
        fig.line(y, orientation=0, pixel=plt.pixel(foreground=_rgb(colors[key])))
    for x, key in spec.vlines:
        fig.line(x, orientation=1, pixel=plt.pixel(foreground=_rgb(colors[key])), style="dotted")
    if spec.x_lim:
        fig.ruler("x").lim(*spec.x_lim)
    if spec.x_ticks:
        fig.ruler("x").ticks(list(spec.x_ticks), [f"{v:g}" for v in spec.x_ticks])
    if spec.y_lim:
        fig.ruler("y").lim(*spec.y_lim)
        ticks = nice_ticks(*spec.y_lim, count=max(2, min(5, height // 3)))
        ticks = ticks_for_rows(ticks, plot_rows(max(height, 5), bool(spec.x_label or spec.y_label)))
        fig.ruler("y").ticks(ticks, tick_labels(ticks))
    if spec.x_label:
        fig.label(spec.x_label, axis=0)
    if spec.y_label and labels_stand_apart(spec, max(width, 20)):
        fig.label(spec.y_label, axis=1)
    text = Text.from_ansi(fig.build().string().rstrip("\n"), no_wrap=True, end="")
    # plotext paints some parts (lines) on its own white background; the widget's background must show.
    text.spans = [Span(span.start, span.end, _without_background(span.style)) for span in text.spans]
    return text


def _without_background(style: str | Style) -> Style:
    style = Style.parse(style) if isinstance(style, str) else style
    return Style(color=style.color, bold=style.bold) if style.bgcolor is not None else style


class PlotextChart(Widget):
    DEFAULT_CSS = """
    PlotextChart {
        height: 1fr;
        min-height: 6;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._spec = ChartSpec()
        self._cache_key: tuple[object, ...] | None = None
        self._cached: Text | None = None
        self.chart_colors: dict[str, str] = {
            "line": "#4ea1ff",
            "baseline": "#5fd787",
            "capacity": "#ffb454",
            "gap": "#7a8595",
            "stale": "#8591a1",
        }
        self.chart_foreground = "#d8dee9"

    @property
    def spec(self) -> ChartSpec:
        """What the chart draws (the last `show`)."""
        return self._spec

    def show(
        self, spec: ChartSpec, colors: dict[str, str] | None = None, foreground: str | None = None
    ) -> None:
        self._spec = spec
        if colors is not None:
            self.chart_colors = colors
        if foreground is not None:
            self.chart_foreground = foreground
        self._cache_key = None
        self.refresh()

    def render(self) -> Text:
        key = (id(self._spec), self.content_size, self.chart_foreground, tuple(self.chart_colors.values()))
        if key != self._cache_key or self._cached is None:
            size = self.content_size
            self._cached = build_chart(
                self._spec, size.width, size.height, self.chart_colors, self.chart_foreground
            )
            self._cache_key = key
        return self._cached
