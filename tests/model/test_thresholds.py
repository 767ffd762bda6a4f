"""Gauges and alarms judge against one set of thresholds."""

from __future__ import annotations

import dataclasses

from console.guards import Thresholds
from console.model import Level, fleet_gauges
from console.model.alarm_source import console_model
from console.model.thresholds import GaugeThresholds
from console.ui.scenes import fed_model


def test_critical_lines_are_the_shared_ones():
    shared = dataclasses.replace(Thresholds(), headroom_min_pct=60.0, cpu_abort_pct=90.0)
    gauges = GaugeThresholds.from_shared(shared)
    assert gauges.headroom_crit_pct == 60.0 and gauges.headroom_warn_pct >= 60.0
    assert gauges.cpu_crit_pct == 90.0


def test_a_configured_headroom_budget_turns_the_gauge_critical():
    calm = fed_model(20, storm_at_s=None)  # headroom ≈ 50 %
    headroom = {g.key: g for g in fleet_gauges(calm)}["headroom"]
    assert headroom.level is not Level.CRITICAL
    strict = console_model(dataclasses.replace(Thresholds(), headroom_min_pct=70.0))
    strict.apply_frame(calm.frame, 0.0)
    assert {g.key: g for g in fleet_gauges(strict)}["headroom"].level is Level.CRITICAL
