"""Calm nodes take a second's arrivals at once (kernel `_calm_nodes`, `_settle_calm`).

Which nodes qualify and the limits that keep the shortcut exact are a pure function, tested here directly;
that the shortcut changes nothing a run shows is the reference cross-check's `calm` case
(tests/sim/test_reference_crosscheck.py), and the test below makes sure that case does go through it.
"""

from __future__ import annotations

import math

import numpy as np

from console.sim import kernel as k
from console.sim.engine import Simulation
from console.sim.scenario_loader import build_scenario
from tests.sim.test_reference_crosscheck import CALM

HOLD = 1e-4  # CPU share of a tick per held connection
HANDSHAKE = 0.02  # CPU share of a tick per handshake: 50 a tick on an idle node


def fleet(held: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One population, nodes holding `held`, all ready and in rotation with equal weights."""
    n = len(held)
    conn = np.array([held], dtype=np.int64)
    node_f = np.zeros((k.NF_FIELDS, n))
    node_f[k.NF_STATE] = k.READY
    node_f[k.NF_WEIGHT] = 1.0
    fleet_f = np.zeros(k.FF_FIELDS)
    fleet_f[k.FF_HOLD_COST] = HOLD
    fleet_f[k.FF_HS_COST] = HANDSHAKE
    return conn, node_f, fleet_f


def calm(conn: np.ndarray, node_f: np.ndarray, fleet_f: np.ndarray) -> tuple[tuple, np.ndarray, np.ndarray]:
    n = conn.shape[1]
    calm_weights, rest_weights = np.zeros(n), np.zeros(n)
    limits = k._calm_nodes(n, conn, node_f, fleet_f, node_f[k.NF_WEIGHT].copy(), calm_weights, rest_weights)
    return limits, calm_weights, rest_weights


def test_only_ready_nodes_with_room_and_nothing_queued_are_calm() -> None:
    conn, node_f, fleet_f = fleet([1000, 1000, 1000, 1000, 1000, 9900])
    node_f[k.NF_HOT, 1] = 1.0  # consistent hashing piles reconnects onto it
    node_f[k.NF_RATE, 2] = 5.0  # a token bucket: admission depends on when in the second
    node_f[k.NF_QUEUE, 3] = 0.5  # handshakes still queued
    node_f[k.NF_STATE, 4] = k.DRAINING
    node_f[k.NF_WEIGHT, 4] = 0.0
    # node 5: 9900 held leave a hundredth of a tick, half a handshake.
    (calm_sum, rest_sum, _, _), calm_weights, rest_weights = calm(conn, node_f, fleet_f)
    assert calm_weights.tolist() == [1.0, 0, 0, 0, 0, 0]
    assert rest_weights.tolist() == [0, 1.0, 1.0, 1.0, 0, 1.0]
    assert (calm_sum, rest_sum) == (1.0, 4.0)


def test_no_calm_node_means_no_limits() -> None:
    conn, node_f, fleet_f = fleet([1000, 1000])
    node_f[k.NF_RATE] = 5.0
    assert calm(conn, node_f, fleet_f)[0] == (0.0, 2.0, 0, 0)


def test_a_tick_may_bring_what_keeps_every_calm_node_six_sigmas_below_its_spare_handshakes() -> None:
    conn, node_f, fleet_f = fleet([1000, 3000, 1000, 1000])
    (calm_sum, _, per_tick, per_second), _, _ = calm(conn, node_f, fleet_f)
    assert calm_sum == 4.0

    def fits(arrivals: int, held: int) -> bool:
        spare = (1.0 - held * HOLD) / HANDSHAKE * (1.0 - k.CALM_HOLD_MARGIN)
        share = arrivals / 4.0
        return share + k.CALM_SIGMAS * math.sqrt(share) + 1.0 <= spare

    # The node holding 3000 has the least spare (35 handshakes a tick): it sets the limit.
    assert fits(per_tick, 3000) and not fits(per_tick + 1, 3000)
    assert fits(per_tick + 1, 1000)
    # A second may bring what costs a quarter of that node's spare CPU when held.
    spare_3000 = (1.0 - 3000 * HOLD) / HANDSHAKE
    assert per_second == int(k.CALM_HOLD_MARGIN * spare_3000 * HANDSHAKE / HOLD)


def test_a_connection_ceiling_limits_the_second() -> None:
    conn, node_f, fleet_f = fleet([1000, 1000])
    node_f[k.NF_CEILING] = [1200.0, 1500.0]
    (_, _, _, per_second), _, _ = calm(conn, node_f, fleet_f)
    assert per_second == 200


def test_the_cross_checked_calm_case_goes_both_ways() -> None:
    """Its seconds have calm nodes, and in some of them a tick brings more than they may take, so the
    second goes on tick by tick: both ways are what the cross-check compares with the per-client reference.
    (A 100 ms bin holding more than ten ticks' limit had a tick over it.)"""
    sim = Simulation(build_scenario(CALM), seed=0)
    n = CALM["nodes"]["count"]
    calm_seconds = broken_seconds = 0
    for _ in range(40):
        (calm_sum, _, per_tick, _), _, _ = calm(sim.conn[:, :n], sim.node_f[:, :n], sim.fleet_f)
        result = sim.step()
        if calm_sum > 0:
            calm_seconds += 1
            broken_seconds += int(result.bins.max()) > 10 * per_tick
    assert calm_seconds >= 30
    assert broken_seconds >= 1
