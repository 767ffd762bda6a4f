"""The simulator's rollout drains each batch node at the rate the request asks for (`drain_rate_per_s`),
the scenario's own deadline kept; without one, at the scenario's `rollout.drain_rate_per_s`, as before."""

from __future__ import annotations

import pytest

from console.errors import InputError
from console.protocol import ActionKind, ActionRequest, NodeState, RolloutMode, RolloutRequest
from console.server.actions import FleetAction
from console.server.simulator import SimulatorBackend, apply_action

#: 4 nodes of 1 000 clients and no churn (its closes would count), the scenario's batch drain 40/s a node over 600 s.
OVERRIDES = ["nodes.count=4", "clients.count=4000", "clients.churn_per_min=0", "rollout.drain_rate_per_s=40"]


async def _draining_after_start(drain_rate_per_s: float | None) -> list:
    simulator = SimulatorBackend.from_scenario("graceful-drain", OVERRIDES, seed=3)
    await simulator.start()
    sim = simulator.simulation
    apply_action(sim, FleetAction(ActionKind.ROLLOUT_HALT, ActionRequest()))  # the scheduled one
    start = RolloutRequest(
        batch_size=2, interval_s=5, mode=RolloutMode.DRAIN, drain_rate_per_s=drain_rate_per_s
    )
    apply_action(sim, FleetAction(ActionKind.ROLLOUT_START, start))
    await simulator.tick(1, budget_s=60.0)  # the batch starts
    frame = (await simulator.tick(3, budget_s=60.0)).frame  # three whole seconds of its drain
    return [node for node in frame.nodes if node.state is NodeState.DRAINING]


async def test_a_batch_drains_at_the_rate_asked_for() -> None:
    draining = await _draining_after_start(15.0)
    assert len(draining) == 2, draining
    for node in draining:
        assert node.drain is not None and node.drain.rate_per_s == 15.0
        assert node.drain.deadline_at_s - node.drain.started_at_s == 600.0  # the scenario's deadline
        assert node.closes_per_s == pytest.approx(15.0, abs=1.0), node


async def test_without_one_a_batch_drains_at_the_scenarios_rate() -> None:
    draining = await _draining_after_start(None)
    assert [node.drain.rate_per_s for node in draining if node.drain] == [40.0, 40.0]
    assert all(node.closes_per_s == pytest.approx(40.0, abs=1.0) for node in draining), draining


def test_the_engine_refuses_a_rate_not_above_zero_naming_the_field() -> None:
    simulator = SimulatorBackend.from_scenario("graceful-drain", OVERRIDES, seed=3)
    sim = simulator.simulation
    sim.rollout.halt()
    with pytest.raises(InputError) as refused:
        sim.rollout.start(1, 5.0, RolloutMode.DRAIN, 75.0, drain_rate_per_s=0.0)
    assert refused.value.field == "drain_rate_per_s" and "> 0" in refused.value.allowed
