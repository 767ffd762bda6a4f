"""Chart specifications from the model: what the wave and connections charts draw. No widgets here."""

from __future__ import annotations

import numpy as np

from console.alarms.rules import LockstepWaves
from console.figures import beside_limit
from console.model.downsample import downsample
from console.model.history import FleetModel
from console.model.thresholds import SEVERITY_LEVEL, GaugeThresholds, Level
from console.ui.widgets.plot import ChartSpec, Series

#: issue #2: 1 is a smooth smear; 4 or more (`lockstep_index_max`) is lockstep waves.
LOCKSTEP_WAVES = GaugeThresholds.lockstep_index_max
LOCKSTEP_BUNCHED = 2.0
_MINUTES = (-10.0, -8.0, -6.0, -4.0, -2.0, 0.0)


def lockstep_reading(
    index: float | None, line: float = LOCKSTEP_WAVES, brief: bool = False
) -> tuple[str, Level]:
    """At the alarm's line the chart says LOCKSTEP at the alarm's level (`LockstepWaves.SEVERITY`): it said
    ✖ (critical) beside the panel's ▲ lockstep_waves (warning). Under it, "bunched" is the console's
    early hint (as a gauge's warning line) and shares the glyph; the word tells them apart. `brief`: for a
    narrow box, where "(too quiet to judge)" cut the lines' legend after it to "── st…"."""
    if index is None:  # not measured
        return "too quiet" if brief else "lockstep — (too quiet to judge)", Level.UNKNOWN
    if index >= line:
        return f"LOCKSTEP {beside_limit(index, line, 1)}", SEVERITY_LEVEL[LockstepWaves.SEVERITY]
    bunched = min(LOCKSTEP_BUNCHED, line)
    if index >= bunched:  # kept under the line it has not reached ("4.1" under 4.06 read as past it)
        return f"bunched {beside_limit(index, line, 1, also=[bunched])}", Level.WARNING
    return f"smear {beside_limit(index, bunched, 1)}", Level.OK


def line_colour(model: FleetModel, now_s: float | None) -> str:
    """The data line's colour key: past the stale line (`FleetModel.stale_s`) the lines are the last
    frames', drawn muted — in their live colour a dead fleet's last storm read as the fleet now."""
    return "stale" if now_s is not None and model.stale_s(now_s) is not None else "line"


def wave_spec(model: FleetModel, columns: int, now_s: float | None = None) -> ChartSpec:
    """Attempts per 100 ms over the last 60 s, max per plotted column; baseline and admission as lines
    (the data line muted once the view at `now_s` is stale)."""
    bins = model.chart_wave_bins()
    bin_s = model.wave_bin_ms / 1000.0
    positions, peaks = downsample(bins, columns, how="max")
    x = (positions - bins.size + 1) * bin_s
    hlines = []
    baseline = model.baseline_per_bin()
    if baseline is not None:
        hlines.append((baseline, "baseline"))
    capacity = model.admission_capacity_per_bin()
    if capacity is not None:
        hlines.append((capacity, "capacity"))
    top = max([float(np.nanmax(peaks)) if np.isfinite(peaks).any() else 1.0, *(y for y, _ in hlines)])
    gaps = tuple(
        (float(x[i]), "gap")
        for i in range(1, len(peaks))
        if np.isnan(peaks[i]) and not np.isnan(peaks[i - 1])
    )
    return ChartSpec(
        series=(Series(x, peaks, line_colour(model, now_s)),),
        hlines=tuple(hlines),
        vlines=gaps,
        x_label="seconds ago",
        y_label="attempts / 100 ms",
        x_lim=(-60.0, 0.0),
        y_lim=(0.0, top * 1.1),
    )


def connections_spec(model: FleetModel, columns: int, now_s: float | None = None) -> ChartSpec:
    """Total connections over the last 10 minutes; gaps drawn as dotted lines (the line muted once the view
    at `now_s` is stale).

    The x axis counts frames back from the newest, each as the fleet time one frame covers, not by each
    frame's own time: a server that restarts its history restarts its clock, and the chart must not fold
    back on itself. (Counted as the wall-clock frame interval, a `--speed 10` simulator's "last 10 min"
    held 100 fleet minutes beside a wave chart and a fleet clock in fleet time.)
    """
    conns = model.totals.connections.values()
    if conns.size == 0 or model.frame is None:
        return ChartSpec(x_label="minutes ago", y_label="connections", x_lim=(-10.0, 0.0), x_ticks=_MINUTES)
    step_min = model.fleet_s_per_frame() / 60.0
    positions, values = downsample(conns, columns, how="mean")
    x = (positions - (conns.size - 1)) * step_min
    gaps = tuple(((float(i) - (conns.size - 1)) * step_min, "gap") for i in np.nonzero(np.isnan(conns))[0])
    finite = values[np.isfinite(values)]
    low = float(finite.min()) if finite.size else 0.0
    high = float(finite.max()) if finite.size else 1.0
    pad = max((high - low) * 0.1, high * 0.01, 10.0)
    return ChartSpec(
        series=(Series(x, values, line_colour(model, now_s)),),
        vlines=gaps,
        x_label="minutes ago",
        y_label="connections",
        x_lim=(-10.0, 0.0),
        y_lim=(max(0.0, low - pad), high + pad),
        x_ticks=_MINUTES,
    )
