"""The simulator as a fleet API backend: `console.sim.engine.Simulation` behind `FleetBackend`.

The engine is CPU-heavy (milliseconds to tens of milliseconds a fleet second at 13 M clients) and
releases the GIL in its numba kernels, so it always runs in a worker thread. One lock serializes every
use of the simulation — ticks now, actions and forecasts (#4) later — because it is not thread-safe.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from console.protocol import WAVE_BIN_MS, Event, FleetSnapshot, Frame, RolloutStatus, Source, Waves
from console.server.backend import Tick

if TYPE_CHECKING:
    from console.sim.engine import Simulation

T = TypeVar("T")


class SimulatorBackend:
    source = Source.SIMULATOR
    clock_control = True

    def __init__(self, simulation: Simulation) -> None:
        self.simulation = simulation
        self.fleet_name = simulation.fleet_name
        self._lock = asyncio.Lock()

    @classmethod
    def from_scenario(cls, scenario: str, overrides: list[str], seed: int | None = None) -> SimulatorBackend:
        """Load a scenario by name or path (raises `InputError` for a bad name or override)."""
        from console.sim.engine import Simulation
        from console.sim.scenario import load_scenario

        return cls(Simulation(load_scenario(scenario, overrides), seed=seed))

    async def exclusive(self, work: Callable[..., T], *args: object) -> T:
        """Run `work(*args)` on the simulation in a worker thread, with nothing else touching it."""
        async with self._lock:
            return await asyncio.to_thread(work, *args)

    async def start(self) -> FleetSnapshot:
        return await self.exclusive(self.simulation.snapshot)

    async def tick(self, fleet_seconds: int, budget_s: float) -> Tick:
        return await self.exclusive(self._advance, fleet_seconds, budget_s)

    async def close(self) -> None:
        return None

    def _advance(self, fleet_seconds: int, budget_s: float) -> Tick:
        # Worker thread. At least one second always advances; beyond that, stop when the budget is spent
        # so the frame still leaves on time (the clock then reports a lower effective speed). Only the
        # last second becomes protocol records: the others contribute their wave bins and events.
        started = time.perf_counter()
        simulation = self.simulation
        bins: list[int] = []
        events: list[Event] = []
        seconds = 0
        while True:
            result = simulation.step()
            seconds += 1
            bins.extend(result.bins.tolist())
            events.extend(result.events)
            if seconds >= fleet_seconds or time.perf_counter() - started >= budget_s:
                break
        frame = simulation.frame(result).model_copy(
            update={"waves": Waves(bin_ms=WAVE_BIN_MS, attempts=bins), "span_s": float(seconds)}
        )
        snapshot = snapshot_of(frame, self.fleet_name, self.source)
        return Tick(frame, events, snapshot, seconds, time.perf_counter() - started)


def snapshot_of(frame: Frame, fleet_name: str, source: Source) -> FleetSnapshot:
    """The snapshot showing the same moment as `frame` (without building the node records twice)."""
    return FleetSnapshot.model_construct(
        api_version=frame.api_version,
        fleet=fleet_name,
        source=source,
        time_s=frame.time_s,
        nodes=frame.nodes,
        totals=frame.totals,
        rollout=frame.rollout or RolloutStatus(),
        admission=frame.admission,
        alarms=[],
        seq=None,
        epoch=None,
    )
