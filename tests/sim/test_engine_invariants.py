"""Invariants of the count engine that the per-client reference holds by construction.

Each client is in exactly one place (a node or the timing wheel), and an attempt due "now" happens now,
not a wheel's turn later. Where the engine breaks one, the test says how (strict xfail: a fix turns it red
so the marker goes).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console.policies import POLICIES
from console.sim import kernel as k
from console.sim.engine import Simulation
from console.sim.scenario_loader import build_scenario
from tests.sim.reference import ReferenceFleet
from tests.sim.test_reference_crosscheck import (
    DRAIN,
    HONOURS_RETRY_AFTER,
    IGNORES_RETRY_AFTER,
    STORM,
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


def test_engine_retries_a_zero_delay_on_the_next_tick() -> None:
    sim = Simulation(build_scenario(ZERO_DELAY_CHURN), seed=0)
    seconds = [sim.step() for _ in range(20)]
    assert sum(s.fleet_out[k.OF_DISCONNECTS] for s in seconds) > 1000
    # The engine: ~1,800 clients (every churned one) are still waiting for the wheel to come round.
    assert seconds[-1].connections.sum() == 10_000


# --- the same invariants over generated single-population fleets ---------------------------------------

single_population_fleets = st.fixed_dictionaries(
    {
        "duration_s": st.just(30),
        "clients": st.fixed_dictionaries(
            {
                "count": st.integers(0, 3000),
                "churn_per_min": st.sampled_from([0, 50, 600]),
                "resume_window_s": st.sampled_from([1, 120]),
                "populations": st.tuples(
                    st.fixed_dictionaries(
                        {
                            "policy": st.sampled_from(sorted(POLICIES)),
                            "honours_hints": st.booleans(),
                            "connect_timeout_s": st.sampled_from([0.5, 3, 10]),
                            "stable_period_s": st.sampled_from([1, 30]),
                        }
                    )
                ).map(list),
            }
        ),
        "nodes": st.fixed_dictionaries(
            {
                "count": st.integers(1, 5),
                "capacity_connections": st.sampled_from([500, 5000]),
                "handshakes_per_s": st.sampled_from([20, 300, 3000]),
                "accept_backlog": st.sampled_from([10, 20_000]),
                "overload_after_s": st.sampled_from([0, 2]),
                "restart_s": st.sampled_from([2, 10]),
            }
        ),
        "admission": st.fixed_dictionaries(
            {
                "rate_per_s": st.sampled_from([0, 30, 500]),
                "burst": st.sampled_from([0, 20]),
                "max_connections": st.sampled_from([0, 400]),
            }
        ),
        "resync": st.fixed_dictionaries({"capacity_per_s": st.sampled_from([0, 50])}),
        "events": st.lists(
            st.one_of(
                st.fixed_dictionaries(
                    {
                        "at_s": st.integers(0, 10),
                        "action": st.just("disconnect_fraction"),
                        "fraction": st.sampled_from([0.3, 1.0]),
                    }
                ),
                st.fixed_dictionaries(
                    {
                        "at_s": st.integers(0, 10),
                        "action": st.just("restart_nodes"),
                        "nodes": st.integers(1, 2),
                    }
                ),
            ),
            max_size=3,
        ),
    }
).filter(  # a restart names nodes the fleet has (checked when the scenario loads)
    lambda fleet: all(event.get("nodes", 0) <= fleet["nodes"]["count"] for event in fleet["events"])
)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=single_population_fleets, seed=st.integers(0, 2**32))
def test_single_population_fleets_keep_every_client_and_their_fresh_counts(data: dict, seed: int) -> None:
    scenario = build_scenario(data)
    sim = Simulation(scenario, seed=seed)
    for _ in range(15):
        sim.step()
        assert offline_and_connected(sim) == scenario.clients.count
        assert (sim.conn >= 0).all() and (sim.wheel >= 0).all()
        assert ((sim.fresh >= 0) & (sim.fresh <= sim.conn)).all()
        # The fleet-wide fresh mix counts exactly the fresh connections it stands for.
        assert (sim.fresh_by_state >= 0).all()
        assert sim.fresh_by_state.sum(axis=1).tolist() == sim.fresh.sum(axis=1).tolist()


@settings(max_examples=15, deadline=None, derandomize=True)
@given(data=single_population_fleets, seed=st.integers(0, 2**32))
def test_the_reference_keeps_every_client_in_one_place(data: dict, seed: int) -> None:
    fleet = ReferenceFleet(build_scenario(data), seed)
    for _ in range(8):
        fleet.step()
        waiting = [c for clients in fleet.wheel.values() for c in clients]
        assert len(waiting) == len(set(waiting))
        connected = fleet.node_of >= 0
        assert sorted(waiting) == np.flatnonzero(~connected).tolist()
        assert not (fleet.fresh & ~connected).any()
