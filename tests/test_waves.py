"""`console.waves.lockstep_index`'s minimum: the fewest attempts a 2 s window holds before its bins count."""

from __future__ import annotations

import math

from console.guards import Thresholds
from console.waves import MIN_WINDOW_ATTEMPTS, lockstep_index, window_bins


def chance_smear_reads_waves(attempts: int, line: float, bins: int) -> float:
    """The chance, at most, that a smooth smear of `attempts` in one window (each at a uniform moment)
    puts `line` × the window's mean in its centre bin, somewhere among `bins` (a union bound)."""
    width = window_bins()
    least = math.ceil(line * attempts / width - 1e-9)
    p = 1 / width
    tail = sum(math.comb(attempts, k) * p**k * (1 - p) ** (attempts - k) for k in range(least, attempts + 1))
    return min(1.0, bins * tail)


def test_the_minimum_keeps_a_smooth_smear_from_reading_as_waves() -> None:
    """At the alarm's line (4) over its window (30 s: 300 bins), a smear at the minimum reads as waves
    less than once in 10 000 windows; at the old minimum (50) it did in one of ~30."""
    t = Thresholds()
    bins = round(t.lockstep_window_s * 10)
    assert chance_smear_reads_waves(MIN_WINDOW_ATTEMPTS, t.lockstep_index_max, bins) < 1e-4
    assert chance_smear_reads_waves(50, t.lockstep_index_max, bins) > 1e-2


def test_a_window_under_the_minimum_is_not_judged() -> None:
    quiet = [2] * 10 + [12] + [2] * 10  # 52 attempts: 12 is 4.8× their mean
    assert lockstep_index(quiet) is None
    loud = [x * 4 for x in quiet]
    assert lockstep_index(loud) == 12 * 4 / (sum(loud) / 21)
