"""Chart specs from the model, and the plotext widget's output: width-fitted, lines, gaps, units."""

from __future__ import annotations

import numpy as np
import pytest

from console.model import FleetModel, Received
from console.ui.charts import connections_spec, lockstep_reading, wave_spec
from console.ui.scenes import fed_model, frozen_clock
from console.ui.widgets.plot import build_chart, nice_ticks, plot_columns, tick_labels

COLORS = {"line": "#4ea1ff", "baseline": "#5fd787", "capacity": "#ffb454", "gap": "#7a8595"}


def test_wave_spec_fits_the_plot_and_draws_baseline_and_capacity():
    model = fed_model(70, storm_at_s=40)
    spec = wave_spec(model, columns=plot_columns(60))
    (series,) = spec.series
    assert series.y.size <= plot_columns(60)
    assert np.nanmax(series.y) == np.nanmax(model.wave_bins.values())  # the peak survives
    assert {key for _, key in spec.hlines} == {"baseline", "capacity"}
    assert "100 ms" in spec.y_label and "seconds" in spec.x_label


def test_a_gap_in_the_stream_is_drawn_on_both_charts():
    model = fed_model(30, storm_at_s=None)
    gap_frame = model.frame.model_copy(update={"seq": model.last_seq + 5, "time_s": model.frame.time_s + 5})
    model.apply(Received(gap_frame, 0.0))
    assert wave_spec(model, 200).vlines
    assert connections_spec(model, 200).vlines


def test_built_chart_has_units_and_the_requested_size():
    model = fed_model(50, storm_at_s=40)
    text = build_chart(wave_spec(model, plot_columns(70)), 70, 12, COLORS, "#d8dee9")
    lines = text.plain.split("\n")
    assert len(lines) == 12 and max(len(line) for line in lines) <= 70
    assert "attempts / 100 ms" in text.plain and "seconds ago" in text.plain
    assert all(span.style.bgcolor is None for span in text.spans)  # the theme's background shows


def test_an_empty_model_still_draws_axes():
    text = build_chart(connections_spec(FleetModel(), 40), 40, 8, COLORS, "#d8dee9")
    assert "minutes ago" in text.plain


def test_ticks_are_round_and_labelled_in_operator_units():
    assert tick_labels(nice_ticks(0, 45_000, 4)) == ["0", "20.0k", "40.0k"]
    assert tick_labels(nice_ticks(0, 1, 4)) == ["0.0", "0.5", "1.0"]
    # A narrow band around a thousand: distinct labels on one scale, not "990, 1.0k, 1.0k".
    assert tick_labels([990.0, 1000.0, 1010.0]) == ["0.99k", "1.00k", "1.01k"]
    assert tick_labels([1_250_000.0, 1_260_000.0]) == ["1.25M", "1.26M"]
    assert tick_labels([450_000.0]) == ["450.0k"]  # one tick: no step to resolve
    narrow = tick_labels(nice_ticks(1_000_000, 1_000_300))  # a step under 0.1 % of the scale
    assert len(set(narrow)) == len(narrow) and narrow[0] == "1,000,000"


def test_the_chart_says_lockstep_at_the_level_of_the_alarm() -> None:
    """User pass: the wave chart read "✖ LOCKSTEP 16.4" (critical) while the alarms panel listed
    "▲ lockstep_waves" (warning) in the same frame. The chart's line and level are the rule's."""
    from console.alarms import AlarmEngine, Thresholds
    from console.model.thresholds import SEVERITY_LEVEL, GaugeThresholds
    from tests.alarms.test_rules import spiky
    from tests.fleet_builders import series

    engine = AlarmEngine()
    for frame in series(0, 30, attempts=spiky):
        engine.update(frame)
    (alarm,) = engine.active
    assert lockstep_reading(16.4)[1] is SEVERITY_LEVEL[alarm.severity]
    assert lockstep_reading(4.0)[0].startswith("LOCKSTEP")
    line = GaugeThresholds.from_shared(Thresholds().replace(lockstep_index_max=8.0)).lockstep_index_max
    assert lockstep_reading(6.0, line)[0].startswith("bunched")


def test_lockstep_readings_under_a_line_do_not_read_as_over_it():
    # "bunched 4.1" under a line of 4.06 read as past it; "smear 2.0" at 1.96 as past the bunched hint.
    word, figure = lockstep_reading(4.055, 4.06)[0].split()
    assert word == "bunched" and float(figure) < 4.06, figure
    word, figure = lockstep_reading(1.96)[0].split()
    assert word == "smear" and float(figure) < 2.0, figure
    assert lockstep_reading(2.5)[0] == "bunched 2.5"
    assert lockstep_reading(1.1)[0] == "smear 1.1"


def test_lockstep_reading_levels():
    assert lockstep_reading(13.6)[0].startswith("LOCKSTEP")
    assert lockstep_reading(2.5)[0].startswith("bunched")
    assert lockstep_reading(1.1)[0].startswith("smear")
    assert "too quiet" in lockstep_reading(None)[0]  # not measured (it was 0.0)


def sped_up_model(frames: int, fleet_s_per_frame: float) -> FleetModel:
    """A model fed the way `sim serve --speed N` feeds it: a frame a wall second, N fleet seconds each."""
    model = fed_model(1, storm_at_s=None)
    first = model.frame
    for i in range(1, frames):
        frame = first.model_copy(
            update={"seq": first.seq + i, "time_s": first.time_s + i * fleet_s_per_frame}
        )
        model.apply(Received(frame, float(i)))
    return model


def test_the_connections_chart_counts_fleet_minutes_on_a_sped_up_simulator():
    """At --speed 10 each frame is 10 fleet seconds: the chart's 'minutes ago' counted wall minutes (a frame
    a second), so 'last 10 min' held 100 fleet minutes beside the fleet clock and the wave chart."""
    model = sped_up_model(120, 10.0)  # 1190 fleet seconds ≈ 20 fleet minutes
    (series,) = connections_spec(model, columns=1000).series
    assert series.x[-1] == 0.0
    assert series.x[0] == pytest.approx(-119 * 10 / 60)  # the oldest frame, ~19.8 fleet minutes ago
    (live,) = connections_spec(fed_model(30, storm_at_s=None), columns=1000).series
    assert live.x[0] == pytest.approx(-29 / 60)  # a live fleet: a second a frame


@pytest.mark.parametrize("spec_of", [wave_spec, connections_spec])
def test_a_stale_view_draws_its_chart_lines_in_the_stale_colour(spec_of):
    """Past the stale line the lines are the last frames', not the fleet's now: drawn in the theme's stale
    (muted) colour; the reference lines and gaps keep theirs. A live view draws as before."""
    model = fed_model(50, storm_at_s=40)
    crit = model.thresholds.stale_crit_s
    live = spec_of(model, 200, frozen_clock(model))
    assert [series.color for series in live.series] == ["line"]
    stale = spec_of(model, 200, frozen_clock(model, crit + 2))
    assert [series.color for series in stale.series] == ["stale"]
    assert [key for _, key in stale.hlines] == [key for _, key in live.hlines]
    assert np.array_equal(stale.series[0].y, live.series[0].y, equal_nan=True)  # the same data, muted


@pytest.mark.parametrize("height", [4, 5, 6, 7, 8, 10])
def test_a_flat_zero_line_is_labelled_zero_on_a_short_chart(height):
    """On-call walk, node detail at 80×24: the 503s/s and timeouts/s charts of a healthy node drew their
    zero line on the row labelled "0.5" (and "1.0" one row shorter): three ticks for two rows, the later
    label written over the lower. The ticks are thinned to the rows the plot has, the lowest kept."""
    from console.ui.screens.node_detail import series_spec

    colors = {"line": "#4ea1ff"}
    chart = build_chart(series_spec(np.zeros(300), plot_columns(22)), 22, height, colors, "#d8dee9")
    rows = chart.plain.splitlines()
    (line_row,) = [row for row in rows if "⠒" in row]
    label = line_row.split("┤")[0].split("│")[0].strip()
    assert label in ("", "0", "0.0"), rows


@pytest.mark.parametrize("width", range(24, 130, 3))
def test_the_axis_labels_never_run_together(width: int) -> None:
    """At 80 columns the wave chart's last row read "attempts / 100 ms seconds ago", one phrase: plotext
    puts the y label at the left and centres the x label, and cuts the y label where it reaches it
    ("attempts /seconds ago"). Where they would not stand apart the y label goes (the box title says
    it); the x label, the time axis, always stays."""
    model = fed_model(50, storm_at_s=40)
    spec = wave_spec(model, plot_columns(width))
    last = build_chart(spec, width, 10, COLORS, "#d8dee9").plain.split("\n")[-1]
    assert spec.x_label in last, last
    before = last[: last.index(spec.x_label)]
    assert before.strip() in ("", spec.y_label) and (not before.strip() or before.endswith("   ")), last
