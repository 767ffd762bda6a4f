"""Invariants of the count engine that the per-client reference holds by construction.

Each client is in exactly one place (a node or the timing wheel), and an attempt due "now" happens now,
not a wheel's turn later. Where the engine breaks one, the test says how (strict xfail: a fix turns it red
so the marker goes).
"""

from __future__ import annotations

from typing import Any

import pytest

from console.sim import kernel as k
from console.sim.engine import Simulation
from console.sim.scenario import build_scenario
from tests.sim.reference import ReferenceFleet
from tests.sim.test_reference_crosscheck import (
    DRAIN,
    HONOURS_RETRY_AFTER,
    IGNORES_RETRY_AFTER,
    POPULATION_SPLIT,
    STORM,
    ZERO_TICK_DELAY,
    restart,
)


def offline_and_connected(sim: Simulation) -> int:
    return int(sim.conn.sum() + sim.wheel.sum())


@pytest.mark.parametrize(
    ("data", "seconds"),
    [
        (STORM, 30),
        (restart([HONOURS_RETRY_AFTER]), 30),
        (DRAIN, 20),
        pytest.param(
            restart([HONOURS_RETRY_AFTER | {"share": 0.6}, IGNORES_RETRY_AFTER | {"share": 0.4}]),
            30,
            marks=pytest.mark.xfail(strict=True, reason=POPULATION_SPLIT),
            id="two-populations-restart",
        ),
        pytest.param(
            DRAIN
            | {
                "clients": {
                    "count": 4000,
                    "populations": [
                        {"policy": "grpc", "share": 0.5, "honours_hints": True},
                        {"policy": "equal_jitter", "share": 0.5, "honours_hints": False},
                    ],
                }
            },
            20,
            marks=pytest.mark.xfail(strict=True, reason=POPULATION_SPLIT),
            id="two-populations-drain",
        ),
    ],
)
def test_every_client_is_on_a_node_or_in_the_wheel(data: dict[str, Any], seconds: int) -> None:
    scenario = build_scenario(data)
    sim = Simulation(scenario, seed=0)
    for _ in range(seconds):
        sim.step()
        assert offline_and_connected(sim) == scenario.clients.count, sim.time_s


ZERO_DELAY_CHURN = {
    # Every connection closes now and then (1 % a second) and its client retries after exactly 0 ms.
    "duration_s": 30,
    "clients": {
        "count": 10_000,
        "churn_per_min": 6000,
        "populations": [{"policy": "fixed", "params": {"delay_ms": 0}}],
    },
    "nodes": {"count": 4},
}


def test_reference_retries_a_zero_delay_on_the_next_tick() -> None:
    fleet = ReferenceFleet(build_scenario(ZERO_DELAY_CHURN), seed=0)
    seconds = [fleet.step() for _ in range(20)]
    assert sum(s.closes.sum() for s in seconds) > 1000  # churn happened...
    assert seconds[-1].connections.sum() == 10_000  # ...and everyone came straight back


@pytest.mark.xfail(strict=True, reason=ZERO_TICK_DELAY)
def test_engine_retries_a_zero_delay_on_the_next_tick() -> None:
    sim = Simulation(build_scenario(ZERO_DELAY_CHURN), seed=0)
    seconds = [sim.step() for _ in range(20)]
    assert sum(s.fleet_out[k.OF_DISCONNECTS] for s in seconds) > 1000
    # The engine: ~1,800 clients (every churned one) are still waiting for the wheel to come round.
    assert seconds[-1].connections.sum() == 10_000
