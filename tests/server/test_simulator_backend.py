"""The simulator behind the backend protocol: folding fleet seconds into one frame, and the time budget."""

from __future__ import annotations

from console.protocol import WAVE_BIN_MS, FleetSnapshot
from console.server.backend import FleetBackend
from console.server.simulator import SimulatorBackend

SMALL = ["nodes.count=6", "clients.count=10000", "rollout.batch_size=2"]


def backend() -> SimulatorBackend:
    return SimulatorBackend.from_scenario("thundering-herd", SMALL, seed=3)


async def test_it_is_a_fleet_backend_and_starts_at_zero() -> None:
    simulator = backend()
    assert isinstance(simulator, FleetBackend)
    snapshot = await simulator.start()
    assert isinstance(snapshot, FleetSnapshot)
    assert snapshot.fleet == "thundering-herd" and len(snapshot.nodes) == 6


async def test_several_fleet_seconds_fold_into_one_frame_keeping_every_bin() -> None:
    simulator = backend()
    started_at_s = (await simulator.start()).time_s
    tick = await simulator.tick(5, budget_s=60.0)
    assert tick.fleet_seconds == 5 and tick.frame.span_s == 5.0
    assert tick.frame.time_s == started_at_s + 5 and tick.snapshot.time_s == started_at_s + 5
    assert len(tick.frame.waves.attempts) == 5 * 1000 // WAVE_BIN_MS
    assert tick.snapshot.nodes is tick.frame.nodes  # one set of node records for both


async def test_a_spent_budget_stops_after_one_second() -> None:
    simulator = backend()
    started_at_s = (await simulator.start()).time_s
    tick = await simulator.tick(50, budget_s=0.0)
    assert tick.fleet_seconds == 1 and tick.frame.time_s == started_at_s + 1


async def test_the_same_seed_gives_the_same_frames() -> None:
    first, second = backend(), backend()
    await first.start()
    await second.start()
    one = await first.tick(3, budget_s=60.0)
    two = await second.tick(3, budget_s=60.0)
    assert one.frame.waves.attempts == two.frame.waves.attempts
    assert one.frame.totals == two.frame.totals


def test_the_guards_are_told_the_batch_drain_the_simulator_applies() -> None:
    """Found in review: the rollout guard judged a batch drained over its own 600 s window, whatever the
    fleet applied. The capacity record now says the drain `_start_batch` gives each batch node."""
    from console.protocol import ActionRequest, RolloutMode, RolloutRequest
    from console.server.actions import ActionKind, FleetAction
    from console.server.simulator import apply_action

    simulator = SimulatorBackend.from_scenario(
        "graceful-drain",
        ["nodes.count=4", "clients.count=4000", "rollout.drain_rate_per_s=40"],
        seed=3,
    )
    capacity = simulator.capacity()
    assert (capacity.batch_drain_rate_per_s, capacity.batch_drain_deadline_s, capacity.restart_s) == (
        40,
        600,
        10,
    )
    sim = simulator.simulation
    sim.step()
    apply_action(
        sim, FleetAction(ActionKind.ROLLOUT_HALT, ActionRequest())
    )  # the scheduled one, not started yet
    start = RolloutRequest(batch_size=2, interval_s=5, mode=RolloutMode.DRAIN)
    apply_action(sim, FleetAction(ActionKind.ROLLOUT_START, start))
    sim.step()
    applied = [(d.rate_per_s, d.deadline_at_s - d.started_at_s) for d in sim.drains.values()]
    assert applied == [(capacity.batch_drain_rate_per_s, capacity.batch_drain_deadline_s)] * 2


def test_a_scenario_without_a_rollout_tells_the_default_batch_drain() -> None:
    overrides = ["nodes.count=4", "clients.count=4000", "rollout.enabled=false"]
    simulator = SimulatorBackend.from_scenario("graceful-drain", overrides, seed=3)
    assert simulator.simulation.scenario.rollout is None
    capacity = simulator.capacity()
    assert (capacity.batch_drain_rate_per_s, capacity.batch_drain_deadline_s) == (833.0, 600.0)
