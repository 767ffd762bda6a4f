"""Reconnect waves: attempts per 100 ms bin, and how bunched they are.

`lockstep_index` is the one definition used by the simulator's summary, the console's lockstep indicator
and the load generator's report. 1 means a smooth smear; 4 or more means waves (issue #2); None, not measured.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Attempts a 2 s window must hold before its peak counts: below this, chance alone makes "waves". Attempts
#: smeared smoothly (each at a uniform moment, as clients back at a random point of their hint) fall in a
#: window's centre bin as Binomial(n, 1/21); at the alarm's line (4× the mean) over its 30 s (300 bins),
#: the chance that some bin reaches it is at most 3 % with 50 attempts a window (300 × the tail), 3e-4 with
#: 80, 1.4e-5 with 100 (tests/test_waves.py). At 50 a 300-client loopback fleet's drain raised
#: lockstep_waves 4.38 > 4 with bins of ~3 (review); 100 — five a bin — keeps a smear under the line in all
#: but one 30 s window of ~70 000, and a real wave of a small fleet still reads (300 in one bin over 5).
MIN_WINDOW_ATTEMPTS = 100


#: The window a bin is judged against, ms.
WINDOW_MS = 2000


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} s"


TOO_QUIET = f"too quiet to judge: no {_seconds(WINDOW_MS)} window held {MIN_WINDOW_ATTEMPTS} attempts"


def lockstep_index(
    attempts: Sequence[int] | np.ndarray,
    bin_ms: int = 100,
    window_ms: int = WINDOW_MS,
    min_window_attempts: int = MIN_WINDOW_ATTEMPTS,
) -> float | None:
    """The largest ratio of one bin to the mean of the `window_ms` centred on it.

    Only bins whose whole window lies inside the series count, and only windows holding at least
    `min_window_attempts`. None when no window qualifies: not measured.
    It was 0.0, which read as measured and smoother than a smooth smear (1).
    """
    bins = np.asarray(attempts, dtype=np.float64)
    width = window_bins(bin_ms, window_ms)
    if bins.size < width:
        return None
    cumulative = np.concatenate(([0.0], np.cumsum(bins)))
    window_sums = cumulative[width:] - cumulative[:-width]
    centre = bins[width // 2 : width // 2 + window_sums.size]
    valid = window_sums >= max(min_window_attempts, 1)
    if not np.any(valid):
        return None
    ratios = centre[valid] / (window_sums[valid] / width)
    return float(ratios.max())


def bins_in(window_s: float, bin_ms: int = 100) -> int:
    """The wave bins `window_s` seconds hold: the lockstep_waves alarm and the wave chart's LOCKSTEP look
    back over the same ones (`lockstep_window_s`). The chart's 60 s beside the alarm's 30 s read LOCKSTEP
    14.6 beside lockstep_waves 10.5 > 4."""
    return max(1, round(window_s * 1000 / bin_ms))


def to_hundredths(index: float | None) -> float | None:
    """An index as the reports keep it (`sim run --json`, the report, `loadgen`): to a hundredth; None,
    not measured, stays None."""
    return None if index is None else round(index, 2)


def window_bins(bin_ms: int = 100, window_ms: int = WINDOW_MS) -> int:
    """Bins in the window a bin is judged against: centred, so the bin plus as many on each side."""
    width = max(1, round(window_ms / bin_ms))
    return width + 1 if width % 2 == 0 else width


def lockstep_text(index: float | None, unmeasured: str = "") -> str:
    """A lockstep index as every text report writes it (the after-action report, `sim run`'s summary,
    `loadgen`'s): None is not measured, said with why (`unmeasured`, else too quiet) — "0.00" read as
    smoother than a smooth smear, where the console's chart says too quiet to judge."""
    if index is None:
        return f"— ({unmeasured or TOO_QUIET})"
    return f"{index:.2f} (1 = smooth smear, ≥ 4 = waves)"
