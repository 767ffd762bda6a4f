"""A small SVG line chart: one or more polylines, threshold lines, and time markers — nothing else.

Hand-rolled rather than matplotlib (a large dependency for three charts) or plotext (it draws for a
terminal; its files are text, not pictures). The output is plain SVG 1.1 any browser or Markdown viewer
shows. Long series are thinned to at most `MAX_POINTS` per line, keeping each bucket's min and max so a
one-bin spike survives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from console.model.units import FLEET_CLOCK, ClockFace
from console.record.clock import clock

MAX_POINTS = 2000
WIDTH, HEIGHT = 900, 300
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 20, 30, 40
_MARKER_COLOURS = {"alarm": "#c0392b", "action": "#2471a3"}


@dataclass(frozen=True)
class Line:
    label: str
    xs: Sequence[float]
    ys: Sequence[float]
    colour: str = "#2c3e50"


@dataclass(frozen=True)
class Threshold:
    label: str
    y: float
    colour: str = "#b9770e"


@dataclass(frozen=True)
class TimeMarker:
    kind: str  # alarm | action
    x: float
    label: str


@dataclass(frozen=True)
class Chart:
    title: str
    y_label: str
    lines: list[Line]
    thresholds: list[Threshold] = field(default_factory=list)
    markers: list[TimeMarker] = field(default_factory=list)
    y_min: float | None = 0.0
    y_max: float | None = None
    #: The time axis's clock: fleet time (m:ss), or a drill's (`drill_clock`), whose ticks fall on round
    #: times of that clock and whose label says so.
    clock: ClockFace = FLEET_CLOCK


def thin(xs: Sequence[float], ys: Sequence[float], max_points: int = MAX_POINTS) -> list[tuple[float, float]]:
    """At most ~`max_points` points: each bucket keeps its min and max, in x order."""
    points = list(zip(xs, ys, strict=True))
    if len(points) <= max_points:
        return points
    bucket = math.ceil(len(points) / (max_points / 2))
    out: list[tuple[float, float]] = []
    for start in range(0, len(points), bucket):
        chunk = points[start : start + bucket]
        low, high = min(chunk, key=lambda p: p[1]), max(chunk, key=lambda p: p[1])
        out.extend(sorted({low, high}))
    return out


def _nice_step(span: float, ticks: int = 5) -> float:
    raw = span / ticks if span > 0 else 1.0
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)


#: Steps a fleet-time axis may take, in seconds: whole minutes and their usual fractions.
_TIME_STEPS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400)


def _time_step(span_s: float, ticks: int = 8) -> float:
    return next((step for step in _TIME_STEPS_S if step >= span_s / ticks), _TIME_STEPS_S[-1])


def _fmt(value: float) -> str:
    if abs(value) >= 1e6:
        return f"{value / 1e6:g} M"
    if abs(value) >= 1e4:
        return f"{value / 1e3:g} k"
    return f"{value:g}"


def _time_axis(face: ClockFace, x0: float, x1: float) -> tuple[Callable[[float], str], str, float]:
    """(fleet second → tick text, the axis's label, where its clock's 0 is in fleet seconds before 0). A
    drill's clock (hh:mm:ss) ticks at round times of day; fleet time at round fleet seconds, every tick in
    one format (0:30:00 beside 1:00:00, not 30:00)."""
    if face.day_start_s is not None:
        return face.text, f"{face.label} (hh:mm:ss)", float(face.day_start_s)
    hours = max(abs(x0), abs(x1)) >= 3600
    return lambda time_s: clock(time_s, hours), f"fleet time ({'h:mm:ss' if hours else 'm:ss'})", 0.0


def render(chart: Chart) -> str:
    """The chart as an SVG document."""
    xs = [x for line in chart.lines for x in line.xs] + [m.x for m in chart.markers]
    ys = [y for line in chart.lines for y in line.ys] + [t.y for t in chart.thresholds]
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    y0 = chart.y_min if chart.y_min is not None else (min(ys) if ys else 0.0)
    y1 = chart.y_max if chart.y_max is not None else (max(ys) if ys else 1.0)
    if x1 <= x0:
        x1 = x0 + 1.0
    if y1 <= y0:
        y1 = y0 + 1.0
    y1 += (y1 - y0) * 0.05
    plot_w, plot_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM

    def px(x: float) -> float:
        return _LEFT + (x - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return _TOP + plot_h - (y - y0) / (y1 - y0) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">',
        f"<title>{escape(chart.title)}</title>",
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{_LEFT}" y="18" font-size="14" font-weight="bold">{escape(chart.title)}</text>',
        f'<text x="14" y="{_TOP + plot_h / 2}" transform="rotate(-90 14 {_TOP + plot_h / 2})" '
        f'text-anchor="middle">{escape(chart.y_label)}</text>',
    ]
    step = _nice_step(y1 - y0)
    tick = math.ceil(y0 / step) * step
    while tick <= y1:
        parts.append(
            f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" stroke="#e5e5e5"/>'
            f'<text x="{_LEFT - 6}" y="{py(tick) + 4:.1f}" text-anchor="end">{_fmt(tick)}</text>'
        )
        tick += step
    x_step = _time_step(x1 - x0)
    at, axis_label, offset_s = _time_axis(chart.clock, x0, x1)
    tick = math.ceil((x0 + offset_s) / x_step) * x_step - offset_s
    while tick <= x1:
        parts.append(
            f'<text x="{px(tick):.1f}" y="{HEIGHT - _BOTTOM + 16}" text-anchor="middle">{at(tick)}</text>'
        )
        tick += x_step
    parts.append(
        f'<text x="{_LEFT + plot_w / 2}" y="{HEIGHT - 6}" text-anchor="middle">{escape(axis_label)}</text>'
        f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>'
    )
    for index, threshold in enumerate(chart.thresholds):
        y = py(threshold.y)
        label_y = y - 4 if index % 2 == 0 else y + 12  # alternate above and below: close lines stay legible
        parts.append(
            f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="{threshold.colour}" '
            f'stroke-dasharray="6 4"/><text x="{WIDTH - _RIGHT - 4}" y="{label_y:.1f}" text-anchor="end" '
            f'fill="{threshold.colour}">{escape(threshold.label)}</text>'
        )
    if chart.markers:
        parts.append(
            f'<text x="{WIDTH - _RIGHT}" y="18" text-anchor="end"><tspan fill="{_MARKER_COLOURS["alarm"]}">'
            f'| alarm raised</tspan>  <tspan fill="{_MARKER_COLOURS["action"]}">| action</tspan></text>'
        )
    for marker in chart.markers:
        x = px(marker.x)
        colour = _MARKER_COLOURS.get(marker.kind, "#555")
        parts.append(
            f'<line class="marker {escape(marker.kind)}" x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" '
            f'y2="{_TOP + plot_h}" stroke="{colour}" stroke-width="1" opacity="0.6">'
            f"<title>{escape(at(marker.x))} {escape(marker.label)}</title></line>"
        )
    for index, line in enumerate(chart.lines):
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in thin(line.xs, line.ys))
        parts.append(
            f'<polyline fill="none" stroke="{line.colour}" stroke-width="1.5" points="{points}">'
            f"<title>{escape(line.label)}</title></polyline>"
            f'<text x="{_LEFT + 360 + 180 * index}" y="18" fill="{line.colour}">— {escape(line.label)}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
