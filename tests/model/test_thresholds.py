"""Gauges and alarms judge against one set of thresholds."""

from __future__ import annotations

import dataclasses

from console.guards import Thresholds
from console.model import Level, fleet_gauges
from console.model.alarm_source import console_model
from console.model.gauges import BRIEF_CELLS
from console.model.thresholds import GaugeThresholds
from console.protocol import NodeState
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


def gauges_at(**totals) -> dict:
    model = fed_model(20, storm_at_s=None)
    frame = model.frame.model_copy(
        update={
            "seq": model.frame.seq + 1,
            "time_s": model.frame.time_s + 1,
            "totals": model.frame.totals.model_copy(update=totals),
        }
    )
    model.apply_frame(frame, 0.0)
    return {g.key: g for g in fleet_gauges(model)}


def test_a_gauge_under_its_line_never_shows_the_line() -> None:
    """User pass: the gauge read "✖ 35 %" against "budget 35 %" at 34.6 %."""
    headroom = gauges_at(headroom_pct=34.6)["headroom"]
    assert (headroom.value, headroom.brief, headroom.level) == ("34.6 %", "budget 35 %", Level.CRITICAL)
    assert gauges_at(headroom_pct=47.4)["headroom"].value == "47 %"
    drain = gauges_at(drain_inflow_ratio=0.598)["drain_inflow"]
    assert (drain.value, drain.level) == ("0.598", Level.CRITICAL)
    assert gauges_at(drain_inflow_ratio=0.603)["drain_inflow"].value == "0.603"
    assert gauges_at(drain_inflow_ratio=1.234)["drain_inflow"].value == "1.23"


def test_with_no_node_in_rotation_the_headroom_gauge_says_so() -> None:
    """0 % of no capacity is not a fleet short of room but one with nothing to send clients to: the gauge
    says which (it read "-100 %" against "budget 35 %")."""
    model = fed_model(20, storm_at_s=None)
    frame = model.frame
    out = [node.model_copy(update={"state": NodeState.DRAINED}) for node in frame.nodes]
    model.apply_frame(
        frame.model_copy(
            update={
                "seq": frame.seq + 1,
                "time_s": frame.time_s + 1,
                "nodes": out,
                "totals": frame.totals.model_copy(update={"headroom_pct": 0.0}),
            }
        ),
        0.0,
    )
    headroom = {g.key: g for g in fleet_gauges(model)}["headroom"]
    assert (headroom.value, headroom.detail, headroom.level) == ("0 %", "no node in rotation", Level.CRITICAL)
    assert len(headroom.brief) <= BRIEF_CELLS
    assert gauges_at(headroom_pct=0.0)["headroom"].brief == "budget 35 %"  # nodes in rotation, all full


def test_the_connections_gauge_and_its_alarm_judge_one_drop() -> None:
    """Review at 0:01:13 on a loopback fleet: the gauge read "✓ 1.7k Δ60s +919 (+120 %)", green, beside
    "connections_drop: fell 43.8 % within 60 s (3.0 k → 1.7 k)". The gauge compared with 60 s ago, the alarm
    with the minute's peak. Both now judge the fall under the peak of the alarm's window: a fleet 44 %
    under it is critical, and the gauge says it from the peak."""
    from tests.fleet_builders import frame

    def conns(t: float) -> float:  # 780 at 0:00:13, up to 3,000 by 0:01:03, down to 1,699 at 0:01:13
        return 780.0 if t <= 13 else 3000.0 if t <= 63 else 1699.0

    model = console_model()
    for t in range(13, 74):
        model.apply_frame(frame(float(t), connections=conns(t)), float(t))
    (alarm,) = [entry.alarm for entry in model.alarms.active() if entry.alarm.name == "connections_drop"]
    gauge = {g.key: g for g in fleet_gauges(model)}["connections"]
    assert gauge.level is Level.CRITICAL
    assert gauge.detail == f"{alarm.value:.1f} % under 60 s peak 3.0k", gauge.detail
    assert len(gauge.brief) <= BRIEF_CELLS and "43.4 %" in gauge.brief, gauge.brief
    # Climbing back within 2 % of the peak: no longer a drop worth a colour; Δ60s again.
    for t in range(74, 80):
        model.apply_frame(frame(float(t), connections=2990.0), float(t))
    gauge = {g.key: g for g in fleet_gauges(model)}["connections"]
    assert gauge.level is Level.OK and gauge.detail.startswith("Δ60s "), gauge.detail


def test_the_connections_gauge_counts_drained_clients_within_their_hint_as_the_alarm_does() -> None:
    """A planned drain's clients, away until their hint runs out (`within_hint_clients`), raise no
    connections_drop: the gauge judges the same drop, so it does not colour what the alarm is quiet about,
    and says why the connections fell. Clients still missing once their hint ran out colour it again."""
    from tests.fleet_builders import frame

    def frames_until(end_s: int, missing_after_s: int | None = None):
        model = console_model()
        for t in range(0, end_s):
            within = 15_000 if t >= 20 else 0  # a drain: 15 k told to come back later, and they do
            lost = 6_000 if missing_after_s is not None and t >= missing_after_s else 0
            model.apply_frame(
                frame(float(t), connections=100_000 - within - lost, within_hint_clients=within), float(t)
            )
        return model

    planned = frames_until(40)
    assert not [e for e in planned.alarms.active() if e.alarm.name == "connections_drop"]
    gauge = {g.key: g for g in fleet_gauges(planned)}["connections"]
    assert gauge.level is Level.OK, gauge
    assert gauge.detail == "Δ60s −15.0k (−15.0 %), 15.0k within hint", gauge.detail
    # a 160-column box (28 cells) keeps the reason: it showed "Δ60s −15.0 %" alone, in green (review)
    assert gauge.wide == ("Δ60s −15.0 %, 15.0k on hint",), gauge.wide
    missing = frames_until(40, missing_after_s=30)  # 6 % more gone, told nothing
    (alarm,) = [e.alarm for e in missing.alarms.active() if e.alarm.name == "connections_drop"]
    gauge = {g.key: g for g in fleet_gauges(missing)}["connections"]
    assert gauge.level is Level.CRITICAL
    assert gauge.detail == f"{alarm.value:.1f} % under 60 s peak 100.0k, 15.0k within hint", gauge.detail
    assert gauge.brief == "peak −6.0 %", gauge.brief
