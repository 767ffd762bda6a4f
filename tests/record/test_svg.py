"""The report's charts: the fleet-time axis reads as every other clock in stormdeck, however long the recording."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from console.record import svg

SVG = "{http://www.w3.org/2000/svg}"


def _axis(span_s: float) -> tuple[list[str], str]:
    """The time axis' tick labels and its title, for a chart spanning `span_s` fleet seconds."""
    xs = [float(t) for t in range(0, int(span_s) + 1, 10)]
    root = ET.fromstring(svg.render(svg.Chart("c", "y", [svg.Line("l", xs, [1.0] * len(xs))])))
    bottom = str(svg.HEIGHT - svg._BOTTOM + 16)
    ticks = [t.text or "" for t in root.iter(f"{SVG}text") if t.get("y") == bottom]
    title = next(t.text or "" for t in root.iter(f"{SVG}text") if (t.text or "").startswith("fleet time"))
    return ticks, title


def test_an_hours_long_chart_reads_hours_not_hundreds_of_minutes() -> None:
    # A three-hour maintenance window: its axis read 30:00 … 180:00 under "fleet time (min:s)", while the
    # report beside it says 3:00:00.
    ticks, title = _axis(3 * 3600)
    assert ticks[-1] == "3:00:00" and "1:00:00" in ticks and "0:30:00" in ticks, ticks
    assert all(len(t.split(":")) == 3 for t in ticks), ticks
    assert title == "fleet time (h:mm:ss)"


def test_a_short_chart_keeps_minutes_and_seconds() -> None:
    ticks, title = _axis(25 * 60)
    assert ticks[0] == "0:00" and "25:00" in ticks, ticks
    assert title == "fleet time (m:ss)"
