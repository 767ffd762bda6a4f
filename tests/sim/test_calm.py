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


def calm(
    conn: np.ndarray, node_f: np.ndarray, fleet_f: np.ndarray, due_tick: float = 0.0, due_second: float = 0.0
) -> tuple[tuple, np.ndarray, np.ndarray]:
    n = conn.shape[1]
    calm_weights, rest_weights = np.zeros(n), np.zeros(n)
    weights = node_f[k.NF_WEIGHT].copy()
    roots = np.zeros(n), np.zeros(n)  # (the kernel's scratch room)
    limits = k._calm_nodes(
        n, conn, node_f, fleet_f, weights, calm_weights, rest_weights, *roots, due_tick, due_second
    )
    return limits, calm_weights, rest_weights


def fits(arrivals: int, share: float, room: float) -> bool:
    """A node with `share` of the arrivals stays six sigmas (plus one) inside `room`."""
    mean = arrivals * share
    return mean + k.CALM_SIGMAS * math.sqrt(mean) + 1.0 <= room


def spare(held: int) -> float:
    """Handshakes a tick a node holding `held` can serve."""
    return (1.0 - held * HOLD) / HANDSHAKE


def test_only_ready_nodes_with_room_and_nothing_queued_are_calm() -> None:
    conn, node_f, fleet_f = fleet([1000, 1000, 1000, 1000, 1000, 9900])
    node_f[k.NF_HOT, 1] = 1.0  # consistent hashing piles reconnects onto it
    node_f[k.NF_RATE, 2] = 5.0  # a token bucket: admission depends on when in the second
    node_f[k.NF_QUEUE, 3] = 0.5  # handshakes still queued
    node_f[k.NF_STATE, 4] = k.DRAINING
    node_f[k.NF_WEIGHT, 4] = 0.0
    # node 5: 9900 held leave a hundredth of a tick, half a handshake: not even one arrival fits.
    (calm_sum, rest_sum, _, _), calm_weights, rest_weights = calm(conn, node_f, fleet_f)
    assert calm_weights.tolist() == [1.0, 0, 0, 0, 0, 0]
    assert rest_weights.tolist() == [0, 1.0, 1.0, 1.0, 0, 1.0]
    assert (calm_sum, rest_sum) == (1.0, 4.0)


def test_no_calm_node_means_no_limits() -> None:
    conn, node_f, fleet_f = fleet([1000, 1000])
    node_f[k.NF_RATE] = 5.0
    assert calm(conn, node_f, fleet_f)[0] == (0.0, 2.0, 0, 0)


def test_the_limits_keep_every_calm_node_six_sigmas_inside_its_room() -> None:
    conn, node_f, fleet_f = fleet([1000, 3000, 1000, 1000])
    (calm_sum, _, per_tick, per_second), _, _ = calm(conn, node_f, fleet_f)
    assert calm_sum == 4.0
    # A tick: the handshakes served at once, a quarter kept back. The node holding 3000 has the least.
    tick_room = spare(3000) * (1.0 - k.CALM_HOLD_MARGIN)
    assert fits(per_tick, 0.25, tick_room) and not fits(per_tick + 1, 0.25, tick_room)
    # A second: what it gains may cost that quarter when held.
    second_room = k.CALM_HOLD_MARGIN * spare(3000) * HANDSHAKE / HOLD
    assert fits(per_second, 0.25, second_room) and not fits(per_second + 1, 0.25, second_room)


def test_a_connection_ceiling_limits_the_second() -> None:
    conn, node_f, fleet_f = fleet([1000, 1000])
    node_f[k.NF_CEILING] = [1200.0, 1500.0]
    (_, _, _, per_second), _, _ = calm(conn, node_f, fleet_f)
    assert fits(per_second, 0.5, 200) and not fits(per_second + 1, 0.5, 200)


def test_a_node_too_loaded_for_its_share_of_what_is_due_stays_out() -> None:
    """One node near its limit set the whole fleet's: after the outage's storm one node holding more than
    the rest cut the calm limit below a second's churn, and every second fell back to ticks."""
    conn, node_f, fleet_f = fleet([1000, 1000, 1000, 8000])  # 8000 held: 10 handshakes a tick, 7.5 kept
    (_, _, per_tick, _), calm_weights, _ = calm(conn, node_f, fleet_f)
    assert calm_weights.tolist() == [1.0, 1.0, 1.0, 1.0]  # nothing due: all in, and the loaded one limits
    assert fits(per_tick, 0.25, spare(8000) * 0.75) and per_tick < 20
    (calm_sum, _, per_tick, _), calm_weights, _ = calm(conn, node_f, fleet_f, due_tick=20.0, due_second=400.0)
    assert calm_weights.tolist() == [1.0, 1.0, 1.0, 0.0] and calm_sum == 3.0
    assert per_tick >= 20  # the other three take a third each of 20 a tick, and more


def test_the_cross_checked_calm_case_goes_both_ways() -> None:
    """Most of its seconds are calm, and in one a tick brings more than the calm nodes may take (the
    drain's deadline force-closes clients that return within the second), so what waited is settled and
    the second goes on tick by tick: both ways are what the cross-check compares with the per-client
    reference. Judged as the kernel judges, from what the wheel says is due; a 100 ms bin holding more
    than ten ticks' limit had a tick over it."""
    sim = Simulation(build_scenario(CALM), seed=0)
    n = CALM["nodes"]["count"]
    ticks_per_s = round(1000 / sim.scenario.tick_ms)
    event_seconds = {event["at_s"] for event in CALM["events"]}  # applied in the step: not in the wheel yet
    calm_seconds = broken_seconds = 0
    for second in range(40):
        due_second, due_tick = k._due_soon(sim.wheel, int(sim.fleet_f[k.FF_TICK]), ticks_per_s)
        expected_tick = max(due_tick, 2.0 * due_second / ticks_per_s)
        (calm_sum, _, per_tick, _), _, _ = calm(
            sim.conn[:, :n], sim.node_f[:, :n], sim.fleet_f, expected_tick, due_second
        )
        result = sim.step()
        if calm_sum > 0 and second not in event_seconds:
            calm_seconds += 1
            broken_seconds += int(result.bins.max()) > 10 * per_tick
    assert calm_seconds >= 30
    assert broken_seconds >= 1  # the deadline's second


def test_nodes_too_slow_for_one_handshake_a_tick_beside_the_margin_are_never_calm() -> None:
    """The shortcut for such fleets (the benchmarks' scaled-down runs) gives the answer the pass node by
    node gives just past its bound: an idle node serving 1/0.75 × 3/4 = 1 handshake a tick, or 1.01."""
    conn, node_f, fleet_f = fleet([0, 10, 1000])
    for cost in (0.75, 0.74):
        fleet_f[k.FF_HS_COST] = cost
        (calm_sum, rest_sum, per_tick, per_second), calm_weights, rest_weights = calm(conn, node_f, fleet_f)
        assert (calm_sum, per_tick, per_second) == (0.0, 0, 0), cost
        assert calm_weights.tolist() == [0.0, 0.0, 0.0] and rest_weights.tolist() == [1.0, 1.0, 1.0]
        assert rest_sum == 3.0
