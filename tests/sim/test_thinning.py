"""Churn and ageing are drawn fleet-wide (kernel `_thin`): each connection is chosen with probability q,
exactly, whichever of its two ways is taken — one fleet-wide binomial and that many distinct connections
drawn by rejection (q × the largest node < 1), or one binomial a node.

Fixed seeds, so deterministic; ALPHA says how unlikely a correct sampler would be to fail with a fresh one.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from console.sim import kernel as k

ALPHA = 1e-3
DRAWS = 20_000


def thinned(values: np.ndarray, q: float, seed: int) -> np.ndarray:
    """DRAWS × nodes: how many of each node's units `_thin` chose, draw by draw."""
    rng = np.random.default_rng(seed)
    picks = np.zeros(values.size, dtype=np.int64)
    touched = np.zeros(values.size, dtype=np.int64)
    chosen = np.zeros((DRAWS, values.size), dtype=np.int64)
    for d in range(DRAWS):
        tally = np.zeros((2, 1, 3), dtype=np.int64)
        k._tally(values.reshape(1, -1), k.TALLY_CONN, values.size, tally)
        n_touched = k._thin(
            rng, values.reshape(1, -1), 0, values.size, q, picks, touched, tally, k.TALLY_CONN
        )
        assert sorted(touched[:n_touched].tolist()) == np.flatnonzero(picks).tolist()  # each node once
        chosen[d] = picks
        picks[:] = 0
    return chosen


@pytest.mark.parametrize(
    ("q", "way"),
    [(0.004, "units"), (0.05, "a binomial a node")],  # q × largest node (100): 0.4 and 5
)
def test_each_node_gets_a_binomial_share_and_never_more_than_it_has(q: float, way: str) -> None:
    values = np.array([0, 5, 100, 3, 0, 50, 1], dtype=np.int64)
    chosen = thinned(values, q, seed=7)
    assert (chosen <= values).all() and (chosen >= 0).all(), way
    assert not chosen[:, values == 0].any()
    # Per node and in total: the mean of Binomial(n, q), within a Bonferroni z bound.
    columns = [(values[i], chosen[:, i]) for i in np.flatnonzero(values)] + [
        (values.sum(), chosen.sum(axis=1))
    ]
    bound = stats.norm.ppf(1 - ALPHA / (2 * len(columns)))
    for n, sample in columns:
        z = (sample.mean() - n * q) / np.sqrt(n * q * (1 - q) / DRAWS)
        assert abs(z) < bound, f"{way}: n={n}, mean {sample.mean():.4f}, expected {n * q:.4f}, z={z:.2f}"
    # The total's spread is a binomial's, not a Poisson's or a sum of dependent picks'.
    total = chosen.sum(axis=1)
    n = values.sum()
    ratio = total.var(ddof=1) / (n * q * (1 - q))
    low, high = stats.chi2.ppf([ALPHA / 2, 1 - ALPHA / 2], DRAWS - 1) / (DRAWS - 1)
    assert low < ratio < high, f"{way}: variance ratio {ratio:.3f} outside [{low:.3f}, {high:.3f}]"


def test_units_are_drawn_without_replacement_even_when_most_are_taken() -> None:
    # q close to 1 on a small fleet: the rejection must still never take a unit twice.
    values = np.array([2, 0, 1], dtype=np.int64)
    chosen = thinned(values, 0.3, seed=11)  # q × largest = 0.6: the units way
    assert (chosen <= values).all()
    assert (chosen.sum(axis=1) == 3).any()  # every unit taken at once happens (0.3³ = 2.7 %)
