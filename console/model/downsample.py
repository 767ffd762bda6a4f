"""Fit a series to a plot's width without hiding what matters.

Waves are down-sampled by the maximum of each column, not the mean: a lockstep spike one bin wide is the
whole point of the chart and must not be averaged into a smear.
"""

from __future__ import annotations

import numpy as np


def downsample(values: np.ndarray, columns: int, how: str = "max") -> tuple[np.ndarray, np.ndarray]:
    """(positions, values): at most `columns` points; positions are fractional indices into `values`.

    NaN (a gap) survives only when a whole column is NaN, so a gap stays visible at any width.
    """
    n = values.size
    if n == 0 or columns <= 0:
        return np.empty(0), np.empty(0)
    if n <= columns:
        return np.arange(n, dtype=np.float64), values.astype(np.float64)
    edges = np.linspace(0, n, columns + 1).astype(np.intp)
    values = values.astype(np.float64)
    starts = edges[:-1]
    if how == "max":
        out = np.fmax.reduceat(values, starts)  # fmax skips NaN; NaN only where a whole column is
    else:
        finite = ~np.isnan(values)
        counts = np.add.reduceat(finite.astype(np.float64), starts)
        sums = np.add.reduceat(np.where(finite, values, 0.0), starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(counts > 0, sums / counts, np.nan)
    positions = (edges[:-1] + edges[1:] - 1) / 2.0
    return positions, out


def finite_runs(x: np.ndarray, y: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split a series at NaNs into runs a line may join; a chart draws each run separately."""
    finite = np.isfinite(y)
    runs: list[tuple[np.ndarray, np.ndarray]] = []
    start = None
    for i, ok in enumerate(finite):
        if ok and start is None:
            start = i
        elif not ok and start is not None:
            runs.append((x[start:i], y[start:i]))
            start = None
    if start is not None:
        runs.append((x[start:], y[start:]))
    return runs


#: A sparkline of connections spans at least 5 % of the value: smaller moves are noise; a drain or a
#: restart (all of it) still fills the cell's height.
SPARK_MIN_SPAN_SHARE = 0.05


def spark_blocks(
    values: np.ndarray, width: int, bounds: tuple[float, float] | None = None, min_span_share: float = 0.0
) -> str:
    """A one-line sparkline of `width` cells (▁…█), by mean per cell; blank where there is no data.
    `bounds` (low, high) sets a shared scale, so two series side by side compare honestly.
    `min_span_share`: the scale spans at least this share of the series' size, centred on it, so a ±0.1 %
    wobble of 27,000 connections reads as the flat line it is, not as full ▁→█ swings."""
    blocks = "▁▂▃▄▅▆▇█"
    _, cells = downsample(values, width, how="mean")
    finite = cells[np.isfinite(cells)]
    if finite.size == 0:
        return " " * width
    low, high = bounds if bounds is not None else (float(finite.min()), float(finite.max()))
    least = min_span_share * max(abs(low), abs(high))
    if high - low < least:
        middle = (low + high) / 2
        low, high = middle - least / 2, middle + least / 2
    span = high - low
    chars = []
    for value in cells:
        if not np.isfinite(value):
            chars.append(" ")
        elif span <= 0:  # a flat line: on the floor when it is nothing (a new node's 0 connections)
            chars.append(blocks[0] if value == 0 else blocks[3])
        else:
            chars.append(blocks[min(7, max(0, int((value - low) / span * 7.999)))])
    return "".join(chars).rjust(width)
