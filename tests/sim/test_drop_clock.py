"""A lagging node is visited when its drop clock says, not every tick (kernel `_ticks_to_next_drop`,
`_drops_given_some`): the same law as a binomial each tick, fewer visits.

The two draws are checked against their closed forms; the whole — which visits use the clock, which a
plain binomial, when a clock is stale — against the per-tick binomial itself (`FF_DROP_CLOCK` = 0) on
the `demo` scenario, whose rollout keeps restarting lagging nodes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from console.sim import kernel as k
from console.sim.engine import Simulation
from console.sim.scenario_loader import load_scenario

P_DROP = 0.02


def test_the_clock_is_geometric_in_ticks_with_any_drop() -> None:
    rng = np.random.default_rng(1)
    held = 40
    log_keep = math.log1p(-P_DROP)
    ticks = np.array([k._ticks_to_next_drop(rng, held, log_keep) for _ in range(40_000)])
    any_drop = 1.0 - (1.0 - P_DROP) ** held  # a tick with at least one of `held` dropping
    assert ticks.min() >= 1
    for t in (1, 2, 5):
        expected = (1.0 - any_drop) ** (t - 1) * any_drop
        assert np.mean(ticks == t) == pytest.approx(expected, abs=4.0 * math.sqrt(expected / ticks.size))
    assert k._ticks_to_next_drop(rng, 0, log_keep) == k.NEVER


def test_drops_given_some_follow_the_binomial_given_at_least_one() -> None:
    rng = np.random.default_rng(2)
    held = 60
    log_keep = math.log1p(-P_DROP)
    drawn = np.array([k._drops_given_some(rng, held, P_DROP, log_keep) for _ in range(40_000)])
    assert drawn.min() >= 1 and drawn.max() <= held
    pmf = stats.binom.pmf(np.arange(1, held + 1), held, P_DROP)
    pmf /= pmf.sum()
    observed = np.bincount(drawn, minlength=held + 1)[1:]
    # Chi-square over the cells with enough expected counts, the tail pooled into the last.
    expected = pmf * drawn.size
    cells = int(np.flatnonzero(expected >= 5).max()) + 1
    obs = np.append(observed[: cells - 1], observed[cells - 1 :].sum())
    exp = np.append(expected[: cells - 1], expected[cells - 1 :].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-4


def run_totals(drop_clock: bool, seeds: range) -> np.ndarray:
    scenario = load_scenario("demo")
    rows = []
    for seed in seeds:
        sim = Simulation(scenario, seed=seed, keep_history=False)
        sim.fleet_f[k.FF_DROP_CLOCK] = 1.0 if drop_clock else 0.0
        drops = attempts = 0.0
        lowest = math.inf
        for result in sim.run(int(scenario.duration_s)):
            assert result.node_totals is not None
            drops += float(result.node_totals[k.ON_DROPS])
            attempts += float(result.node_totals[k.ON_ATTEMPTS])
            lowest = min(lowest, result.connections_total)
        rows.append((drops, attempts, lowest))
    return np.array(rows)


def test_the_clock_drops_what_a_binomial_every_tick_drops() -> None:
    """16 seeds each: the drops (~63 k a run, sd ~300), the attempts and the connections' low point. A
    clock left over from an earlier lagging spell (a node restarted, then lagging again) dropped 1.4 %
    too few: t ≈ 8."""
    clock = run_totals(True, range(16))
    every_tick = run_totals(False, range(100, 116))
    assert clock[:, 0].mean() > 10_000  # the scenario does lag
    for column, what in enumerate(("drops", "attempts", "lowest connections")):
        t = stats.ttest_ind(clock[:, column], every_tick[:, column], equal_var=False).statistic
        assert abs(t) < 4.5, (what, clock[:, column].mean(), every_tick[:, column].mean(), t)
