"""A view past the stale line says so (operator pass: with the fleet API gone, only the header said it; the
gauges kept their green ✓ from the last frame, and at 4 a.m. a dead fleet read as healthy)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from console.client.decode import StreamDecoder
from console.client.synthetic import SyntheticFleet
from console.model import FleetModel, LinkState, LinkStatus, Received
from console.model.alarms import AlarmLog, alarm_rows
from console.model.gauges import fleet_gauges
from console.model.history import stale_note
from console.model.thresholds import Level
from console.protocol import Alarm, Severity


def fed(seconds: int = 40) -> FleetModel:
    """A model whose frames arrived at wall seconds 1 … `seconds` (so the newest at `seconds`)."""
    fleet = SyntheticFleet(nodes=8, seed=3, storm_at_s=None)
    decoder = StreamDecoder()
    model = FleetModel()
    model.apply(Received(decoder.feed(json.dumps(fleet.hello())), 0.0))
    model.apply(LinkStatus(LinkState.LIVE, at_s=0.0))
    for second in range(1, seconds + 1):
        for raw in fleet.next_messages():
            model.apply(Received(decoder.feed(raw), float(second)))
    return model


def test_the_view_is_stale_from_the_critical_line_on():
    model = fed()
    crit = model.thresholds.stale_crit_s
    assert model.stale_s(40.0 + crit - 0.1) is None  # late, as the header's warning says: not yet stale
    assert model.stale_s(40.0 + crit) == crit
    assert model.stale_s(40.0 + 12.3) == pytest.approx(12.3)


def test_a_held_replay_is_not_stale_and_neither_is_a_view_with_no_frame_yet():
    model = fed()
    model.apply(LinkStatus(LinkState.PAUSED, reason="paused", at_s=41.0))
    assert model.stale_s(40.0 + 600) is None
    assert FleetModel().stale_s(1e9) is None  # nothing shown yet: the gauges say they are waiting


def test_a_new_frame_makes_the_view_live_again():
    model = fed(40)
    assert model.stale_s(60.0) is not None
    fleet = SyntheticFleet(nodes=8, seed=3, storm_at_s=None)
    decoder = StreamDecoder()
    decoder.feed(json.dumps(fleet.hello()))
    frames = [decoder.feed(json.dumps(fleet.next_frame())) for _ in range(41)]
    model.apply(Received(frames[-1], 60.0))
    assert model.stale_s(60.5) is None


def test_stale_gauges_keep_their_values_but_no_level_and_say_how_old():
    model = fed()
    live = fleet_gauges(model, 40.5)
    assert live == fleet_gauges(model)  # a fresh view is the plain one
    assert not any(gauge.stale for gauge in live)
    assert any(gauge.level is Level.OK for gauge in live)  # (so the test below could fail)
    stale = fleet_gauges(model, 52.4)
    assert [g.value for g in stale] == [g.value for g in live]
    assert all(g.stale and g.level is Level.UNKNOWN for g in stale)
    assert all(g.detail.startswith("stale 12 s") and "as of 0:00:40" in g.detail for g in stale), stale
    assert all(g.brief == "stale 12 s" for g in stale)  # whole in a 12-cell gauge


def test_the_panels_note_says_how_long_ago_the_last_frame_came():
    assert stale_note(12.9) == "stale — last frame 12 s ago"  # whole seconds, as the header's age counts
    assert stale_note(75.0) == "stale — last frame 1 min 15 s ago"


def test_stale_alarm_rows_are_marked_as_of_the_last_frame_and_the_log_is_untouched():
    """An alarm reading "NEW" from a frame 40 s old read as firing now: past the stale line its row says it
    is the last frame's. Only the drawing changes: the log keeps every state, so frames resuming bring the
    alarms back exactly as they were."""
    log = AlarmLog()
    log.update(
        [
            Alarm(
                name="headroom_low", severity=Severity.CRITICAL, since_s=3.0, value=20, limit=35, message="m"
            ),
            Alarm(name="node_down", severity=Severity.WARNING, since_s=4.0, message="down", node="gw-001"),
        ],
        5.0,
    )
    log.update(
        [Alarm(name="node_down", severity=Severity.WARNING, since_s=4.0, message="down", node="gw-001")], 6.0
    )
    log.acknowledge(("node_down", "gw-001"))
    before = (log.version, [(e.key, e.acknowledged, e.cleared_at_s, e.reading) for e in log.active()])

    live = alarm_rows(log.active()) + alarm_rows(log.past())
    assert live and not any(row.stale for row in live)
    stale_active = alarm_rows(log.active(), stale=True)
    assert stale_active and all(row.stale for row in stale_active)
    assert [replace(row, stale=False) for row in stale_active] == alarm_rows(log.active())  # only the mark
    # A cleared alarm says what held then, and that is still so: not marked.
    (cleared,) = alarm_rows(log.past(), stale=True)
    assert cleared.cleared and not cleared.stale
    assert (log.version, [(e.key, e.acknowledged, e.cleared_at_s, e.reading) for e in log.active()]) == before
