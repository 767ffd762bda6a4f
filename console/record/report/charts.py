"""The report's three SVG charts — connections, reconnect waves, hottest node CPU — with their alarm and
action markers, their time axes on the recorded clock (a drill's own, else fleet time). Pure: a `Review` in, `svg.Chart`s out (`files` renders and writes them)."""

from __future__ import annotations

from console.guards.thresholds import Thresholds
from console.record import svg
from console.record.clock import recorded_clock
from console.record.reader import describe_action
from console.record.review import Review


def charts_of(reviewed: Review, thresholds: Thresholds) -> dict[str, svg.Chart]:
    series = reviewed.series
    if not series.times_s:
        return {}
    markers = [svg.TimeMarker("alarm", a.since_s, a.name) for a in reviewed.alarms] + [
        svg.TimeMarker("action", a.time_s, describe_action(a)) for a in reviewed.actions
    ]
    start = series.connections[0]
    face = recorded_clock(reviewed.header)  # a drill's axes on its clock, as its panel showed the time
    bin_times = [series.bins_start_s + (i + 1) / 10 for i in range(len(series.bins))]
    return {
        "connections": svg.Chart(
            "Total connections",
            "connections",
            [svg.Line("connections", series.times_s, series.connections, "#1e8449")],
            thresholds=[svg.Threshold("recovery line: 95 % of the start", 0.95 * start)] if start else [],
            markers=markers,
            clock=face,
        ),
        "waves": svg.Chart(
            "Reconnect waves: attempts per 100 ms",
            "attempts / 100 ms",
            [svg.Line("attempts per 100 ms bin", bin_times, series.bins, "#7d3c98")],
            markers=markers,
            clock=face,
        ),
        "cpu": svg.Chart(
            "Hottest node CPU",
            "CPU %",
            [svg.Line("max node CPU %", series.times_s, series.max_cpu_pct, "#c0392b")],
            thresholds=[
                svg.Threshold(
                    f"abort: {thresholds.cpu_abort_pct:g} % for {thresholds.cpu_abort_for_s:g} s",
                    thresholds.cpu_abort_pct,
                ),
                svg.Threshold(
                    f"rollout pause {thresholds.cpu_pause_pct:g} %", thresholds.cpu_pause_pct, "#7f8c8d"
                ),
            ],
            markers=markers,
            y_max=100.0,
            clock=face,
        ),
    }
