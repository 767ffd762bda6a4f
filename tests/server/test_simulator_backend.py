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
