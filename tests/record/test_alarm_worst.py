"""A recording's alarms say what they read at their worst, as the console's panel does once they clear."""

from __future__ import annotations

import pytest

from console.alarms import AlarmEngine
from console.record.alarm_spans import AlarmSpans
from console.record.report.timeline import alarm_timeline_rows
from tests.alarms.test_engine import conns_dip
from tests.fleet_builders import series


def test_a_reviewed_alarm_keeps_its_worst_reading_and_the_report_says_it() -> None:
    """Review on a loopback fleet: a connections_drop peaked at 43.8 % and cleared reading 6.4 %. The panel
    now reports the worst; the recording's review and its report must agree with it, not with the last."""
    engine, spans = AlarmEngine(), AlarmSpans()
    for frame in series(0, 40, connections=conns_dip):
        spans.take(engine.update(frame))
    (span,) = [s for s in spans.spans if s.name == "connections_drop"]
    assert span.worst_value == pytest.approx(43.5, abs=0.1) and span.worst_s == 18
    assert span.worst_message is not None and "fell 43.5 %" in span.worst_message
    raised, cleared = alarm_timeline_rows(span)
    assert raised[0] == span.since_s and "raised" in raised[3]
    assert cleared[0] == span.cleared_s and cleared[2] == "alarm cleared"
    assert cleared[3].startswith("connections_drop; at its worst, 0:18: Total connections fell 43.5 %")
