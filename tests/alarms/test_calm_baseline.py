"""The calm baseline on frame sequences: calm → storm → calm, and a console that attaches mid-storm.

Reviewer's drill (regional-outage, attached after the power cut): the attempts gauge read "1.0× steady
(42.8k/s)" with every node at 100 % CPU and ~35k handshake timeouts a second — its baseline had been
learned from the storm itself."""

from __future__ import annotations

from console.alarms.tracking import CalmBaseline, calm_second
from console.protocol import Totals
from tests.fleet_builders import CALM_TOTALS

LEARN_S = 30.0
TAU_S = 300.0
CPU_LINE = 75.0


def storm_totals(**fields: float) -> Totals:
    """regional-outage at 02:02:41: 44.4k attempts/s, 9.1k accepted, 35.3k timed out, CPU 100 %."""
    values = {
        "attempts_per_s": 44_435.0,
        "accepts_per_s": 9_141.0,
        "timeouts_per_s": 35_294.0,
        "max_cpu_pct": 100.0,
    }
    return Totals(**(CALM_TOTALS | values | fields))


def calm_totals(**fields: float) -> Totals:
    return Totals(**(CALM_TOTALS | {"max_cpu_pct": 30.0} | fields))


def feed(baseline: CalmBaseline, start_s: float, seconds: int, totals: Totals) -> None:
    for i in range(seconds):
        baseline.observe(
            start_s + i, totals.attempts_per_s, over_line=False, calm=calm_second(totals, CPU_LINE)
        )


def test_a_second_with_timeouts_rejections_or_a_hot_node_is_no_calm_second() -> None:
    assert calm_second(calm_totals(), CPU_LINE)
    assert not calm_second(storm_totals(), CPU_LINE)
    assert not calm_second(storm_totals(timeouts_per_s=0.0), CPU_LINE)  # still at 100 % CPU
    assert not calm_second(calm_totals(timeouts_per_s=20.0), CPU_LINE)  # 20 % of 100 attempts/s wasted
    assert not calm_second(calm_totals(rejects_per_s=40.0), CPU_LINE)  # admission shedding: a queue
    assert not calm_second(calm_totals(max_cpu_pct=75.5), CPU_LINE)  # over the pause line
    # every node restarting: 331k attempts/s, none answered — no timeout, no 503, no CPU, and no calm
    assert not calm_second(calm_totals(attempts_per_s=331_760.0, accepts_per_s=0.0), CPU_LINE)
    # noise is not a storm: a trickle under the reconnect floor, or under 1 % of the attempts
    assert calm_second(calm_totals(timeouts_per_s=5.0, attempts_per_s=20.0), CPU_LINE)
    assert calm_second(calm_totals(attempts_per_s=5000.0, accepts_per_s=4960.0), CPU_LINE)
    # a frame whose totals do not say the hottest CPU: the nodes' hottest, as the caller read it
    assert not calm_second(calm_totals(max_cpu_pct=0.0), CPU_LINE, hottest_cpu_pct=100.0)


def test_attached_mid_storm_nothing_is_learned_until_the_fleet_is_calm() -> None:
    baseline = CalmBaseline(LEARN_S, TAU_S)
    feed(baseline, 60, 120, storm_totals())
    assert baseline.level_per_s is None  # two minutes of storm taught nothing
    assert not baseline.calm_seen
    feed(baseline, 180, 10, calm_totals())
    assert baseline.calm_seen and baseline.level_per_s is None  # learning, from its first calm second
    feed(baseline, 190, 30, calm_totals())
    assert baseline.level_per_s == 100.0


def test_a_storm_that_is_no_rate_spike_does_not_move_the_baseline() -> None:
    """calm → storm → calm: a storm at 2× the calm rate is under the 10× alarm line, so the old average
    followed it (its seconds taught "storms are normal"); its timeouts say it is no calm second."""
    baseline = CalmBaseline(LEARN_S, TAU_S)
    feed(baseline, 0, 40, calm_totals())
    assert baseline.level_per_s == 100.0
    feed(baseline, 40, 600, storm_totals(attempts_per_s=200.0, accepts_per_s=100.0, timeouts_per_s=100.0))
    assert baseline.level_per_s == 100.0  # frozen at the last calm value
    feed(baseline, 640, 60, calm_totals(attempts_per_s=110.0, accepts_per_s=110.0))
    level = baseline.level_per_s
    assert level is not None and 100.0 < level < 110.0  # calm seconds teach it again, slowly


def test_storm_seconds_inside_the_learning_period_teach_nothing() -> None:
    baseline = CalmBaseline(LEARN_S, TAU_S)
    feed(baseline, 0, 5, calm_totals())
    feed(baseline, 5, 25, storm_totals())  # 25 of the 30 s: more than the quartile could ignore
    feed(baseline, 30, 2, calm_totals())
    assert baseline.level_per_s == 100.0


def test_a_configured_baseline_needs_no_calm_second() -> None:
    baseline = CalmBaseline(LEARN_S, TAU_S, configured_per_s=1333.0)
    feed(baseline, 0, 10, storm_totals())
    assert baseline.level_per_s == 1333.0


def test_a_storm_that_begins_as_the_learning_period_ends_is_judged_against_the_calm() -> None:
    """regional-outage: 30 calm seconds, then every node restarts at once. The storm's first second closed
    no learning period (it taught nothing, being no calm second), and the reconnect_rate_high alarm, at 37 s
    before, never fired."""
    baseline = CalmBaseline(LEARN_S, TAU_S)
    feed(baseline, 1, 30, calm_totals())
    assert baseline.level_per_s is None
    feed(baseline, 31, 1, storm_totals())
    assert baseline.level_per_s == 100.0
