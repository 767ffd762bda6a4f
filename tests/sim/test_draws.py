"""The kernel's own draws match numpy's: the same numbers from the same stream (bit for bit), so a run
does not depend on which of the two made them."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from console.sim.wheel import binom, integer_below


@njit
def _draw_below(rng, n, count):
    out = np.empty(count, dtype=np.int64)
    for j in range(count):
        out[j] = integer_below(rng, n)
    return out


@njit
def _draw_integers(rng, n, count):
    out = np.empty(count, dtype=np.int64)
    for j in range(count):
        out[j] = rng.integers(0, n)
    return out


@pytest.mark.parametrize("n", [1, 2, 7, 480, 1_000_003])
def test_integer_below_is_rng_integers(n: int) -> None:
    mine, numbas = np.random.default_rng(11), np.random.default_rng(11)
    assert np.array_equal(_draw_below(mine, n, 5_000), _draw_integers(numbas, n, 5_000))
    assert mine.random() == numbas.random()  # and the streams are still in step
    values = _draw_below(mine, n, 5_000)
    assert values.min() >= 0 and values.max() < n


@njit
def _draw_binom(rng, n, p, count):
    out = np.empty(count, dtype=np.int64)
    for j in range(count):
        out[j] = binom(rng, n, p)
    return out


@njit
def _draw_binomial(rng, n, p, count):
    out = np.empty(count, dtype=np.int64)
    for j in range(count):
        out[j] = rng.binomial(n, p)
    return out


@pytest.mark.parametrize("p", [1e-4, 0.03, 0.3, 0.5, 0.7, 0.999])
def test_small_binomials_are_numbas(p: float) -> None:
    """`binom` draws few trials its own way (no exp and log a draw) — the same results, in step."""
    for n in range(1, 25):
        mine, numbas = np.random.default_rng(n), np.random.default_rng(n)
        assert np.array_equal(_draw_binom(mine, n, p, 2_000), _draw_binomial(numbas, n, p, 2_000)), n
        assert mine.random() == numbas.random()
