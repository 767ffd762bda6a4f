"""Reconnect waves: attempts per 100 ms bin, and how bunched they are.

`lockstep_index` is the one definition used by the simulator's summary, the console's lockstep indicator
and the load generator's report. 1 means a smooth smear; 4 or more means waves (issue #2).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Attempts a 2 s window must hold before its peak counts: below this, one stray attempt is a "wave".
MIN_WINDOW_ATTEMPTS = 50


#: The window a bin is judged against, ms.
WINDOW_MS = 2000


def lockstep_index(
    attempts: Sequence[int] | np.ndarray,
    bin_ms: int = 100,
    window_ms: int = WINDOW_MS,
    min_window_attempts: int = MIN_WINDOW_ATTEMPTS,
) -> float:
    """The largest ratio of one bin to the mean of the `window_ms` centred on it.

    Only bins whose whole window lies inside the series count, and only windows holding at least
    `min_window_attempts`. Returns 0.0 when no window qualifies (no storm to judge).
    """
    bins = np.asarray(attempts, dtype=np.float64)
    width = max(1, round(window_ms / bin_ms))
    if width % 2 == 0:
        width += 1  # centred: the bin itself plus the same number on each side
    if bins.size < width:
        return 0.0
    cumulative = np.concatenate(([0.0], np.cumsum(bins)))
    window_sums = cumulative[width:] - cumulative[:-width]
    centre = bins[width // 2 : width // 2 + window_sums.size]
    valid = window_sums >= max(min_window_attempts, 1)
    if not np.any(valid):
        return 0.0
    ratios = centre[valid] / (window_sums[valid] / width)
    return float(ratios.max())


def lockstep_text(index: float) -> str:
    """A lockstep index as every text report writes it (the after-action report, `sim run`'s summary,
    `loadgen`'s): 0 is `lockstep_index`'s "no window held enough attempts", not a reading — "0.00" read as
    smoother than a smooth smear, where the console's chart says too quiet to judge."""
    if index <= 0:
        return f"— (too quiet to judge: no {_seconds(WINDOW_MS)} window held {MIN_WINDOW_ATTEMPTS} attempts)"
    return f"{index:.2f} (1 = smooth smear, ≥ 4 = waves)"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} s"
