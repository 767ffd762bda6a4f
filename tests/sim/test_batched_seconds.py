"""`Simulation.steps()` runs the seconds in which nothing once-a-second happens in one kernel call. It must
be invisible: the same seconds, draw for draw, as one `step()` at a time — across the timeline's events,
rollout batches, restarts, drains and the provisioning of added nodes, where it has to stop batching."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from numba import njit

from console.bench.sim import scaled_overrides
from console.sim import kernel as k
from console.sim.engine import SecondResult, Simulation
from console.sim.scenario_loader import load_scenario


def one_at_a_time(sim: Simulation, seconds: int) -> list[SecondResult]:
    return [sim.step() for _ in range(seconds)]


def batched(sim: Simulation, seconds: int) -> tuple[list[SecondResult], list[int]]:
    results: list[SecondResult] = []
    sizes = []
    while len(results) < seconds:
        got = sim.steps(seconds - len(results))
        sizes.append(len(got))
        results.extend(got)
    return results, sizes


def assert_same(a: list[SecondResult], b: list[SecondResult]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.time_s == y.time_s and x.seq == y.seq
        assert np.array_equal(x.node_out, y.node_out), x.time_s
        assert np.array_equal(x.fleet_out, y.fleet_out), x.time_s
        assert np.array_equal(x.bins, y.bins), x.time_s
        assert np.array_equal(x.connections, y.connections), x.time_s
        assert np.array_equal(x.states, y.states), x.time_s
        assert x.flow == y.flow, x.time_s
        assert [e.message for e in x.events] == [e.message for e in y.events], x.time_s


@pytest.mark.parametrize(
    ("name", "overrides", "seconds"),
    [
        # Rollout batches every 90 s, restarts, a halt and 200 nodes provisioned at 690 s.
        ("thundering-herd", scaled_overrides(100_000), 1500),
        ("socketio-lockstep", [], 600),
        ("resync-cliff", ["clients.count=200000"], 900),
        # Drains under way: every second is its own call.
        ("graceful-drain", ["clients.count=400000", "nodes.capacity_connections=40000"], 400),
    ],
)
def test_batched_seconds_equal_single_seconds(name: str, overrides: list[str], seconds: int) -> None:
    scenario = load_scenario(name, overrides)
    single = one_at_a_time(Simulation(scenario, keep_history=False), seconds)
    together, sizes = batched(Simulation(scenario, keep_history=False), seconds)
    assert_same(single, together)
    if name != "graceful-drain":
        assert max(sizes) > 1  # it did batch somewhere (otherwise this test shows nothing)


def test_a_batch_stops_before_the_next_timeline_event_and_rollout_batch() -> None:
    sim = Simulation(load_scenario("thundering-herd", scaled_overrides(100_000)), keep_history=False)
    ends = []
    while sim.time_s < 700:
        results = sim.steps(10_000)
        ends.append(results[-1].time_s)
    # Batches start at 30, 120, 210 … (every 90 s) and the halt comes at 690 s: no call runs past one.
    for due in (30.0, 120.0, 210.0, 300.0, 690.0):
        assert due in ends, (due, ends)


@njit
def _write_through(values, i):
    view = k.borrowed(values)
    view[i] = 7.0
    return view.sum()


def test_borrowed_views_share_memory_and_count_no_references() -> None:
    values = np.zeros(5)
    before = sys.getrefcount(values)
    assert _write_through(values, 2) == 7.0
    assert values[2] == 7.0  # the same memory
    for _ in range(100):
        _write_through(values, 3)
    assert sys.getrefcount(values) == before  # nothing leaked, nothing over-released
