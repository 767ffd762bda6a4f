"""The drain ÷ inflow gauge judges losing ground as the drain_inflow_losing alarm does: under 1 held for
its 60 s, not a second's dip.

Reviewer: a steady fleet (graceful-drain before its rollout: churn only, ~70 clients offline of 10 M) read
"▲ 0.99" — a warning — while its ratio hovered at 0.95–1.02 second by second and no alarm came. A steady
fleet's accepts match its churn only on average: under 1 half its seconds by chance."""

from __future__ import annotations

from console.model import FleetModel, Level, Received, fleet_gauges
from console.model.gauges import BRIEF_CELLS, Gauge
from tests.fleet_builders import series


def drain_gauge(ratios: list[float | None]) -> Gauge:
    model = FleetModel()
    for i, ratio in enumerate(ratios):
        for frame in series(60.0 + i, 1, drain_inflow_ratio=ratio):
            model.apply(Received(frame, frame.time_s))
    return next(g for g in fleet_gauges(model) if g.key == "drain_inflow")


def test_a_steady_fleets_dip_under_1_is_not_a_warning_and_says_how_long_it_has_held() -> None:
    gauge = drain_gauge([1.01, 0.99, 1.02, 0.98, 0.97])
    assert gauge.value == "0.97"
    assert gauge.level is Level.OK, gauge
    assert gauge.detail == "under 1 for 1 s (alarm at 60 s)", gauge.detail
    assert "under 1 for 1 s" in gauge.wide[0] and len(gauge.wide[0]) <= 20
    assert len(gauge.brief) <= BRIEF_CELLS, gauge.brief


def test_under_1_held_for_the_alarms_60_s_warns_losing_ground() -> None:
    gauge = drain_gauge([0.9] * 61)
    assert gauge.level is Level.WARNING
    assert gauge.detail.startswith("losing ground: under 1 for 60 s"), gauge.detail
    # one second short of it, not yet
    assert drain_gauge([0.9] * 60).level is Level.OK


def test_a_too_few_second_breaks_the_streak_as_it_does_the_alarms() -> None:
    assert drain_gauge([0.9] * 40 + [None] + [0.9] * 30).level is Level.OK


def test_the_kill_switch_is_critical_at_once_and_at_1_or_over_it_reads_as_before() -> None:
    kill = drain_gauge([1.0, 0.5])
    assert (kill.level, kill.detail) == (Level.CRITICAL, "kill switch 0.6")
    steady = drain_gauge([0.98, 1.0])
    assert (steady.level, steady.detail) == (Level.OK, "kill switch 0.6")
    none = drain_gauge([None])
    assert (none.value, none.detail, none.level) == ("—", "too few to judge", Level.OK)
