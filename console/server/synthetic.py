"""The console's synthetic storm (`console.client.synthetic`) served as a fleet backend.

For `stormdeck bench server`: a 2000-node stream at almost no CPU, so what is measured is the server's
transport, not the simulator. One synthetic fleet serves the console's benchmark, its screenshots and
this one.
"""

from __future__ import annotations

import asyncio

from console.client.synthetic import SyntheticFleet
from console.guards import Thresholds
from console.protocol import Event, FleetSnapshot, Frame, Source
from console.server.backend import RunningCounts, Tick, fold_frames


class SyntheticBackend:
    source = Source.SIMULATOR
    clock_control = True

    def __init__(self, nodes: int = 2000, seed: int = 7, storm_at_s: float | None = None) -> None:
        self._fleet = SyntheticFleet(nodes=nodes, seed=seed, storm_at_s=storm_at_s)
        self.fleet_name = self._fleet.fleet
        self._counts = RunningCounts()

    def _second(self) -> tuple[Frame, list[Event]]:
        frame = Frame.model_validate(self._fleet.next_frame())
        self._counts.add(frame.totals)
        frame.totals = self._counts.stamp(frame.totals)
        events = [Event.model_validate(event) for event in self._fleet.events_at(frame.time_s)]
        return frame, events

    async def start(self) -> FleetSnapshot:
        frame, _ = await asyncio.to_thread(self._second)
        return FleetSnapshot.of_frame(frame, self.fleet_name, self.source)

    async def tick(self, fleet_seconds: int, budget_s: float) -> Tick:
        return await asyncio.to_thread(self._advance, fleet_seconds)

    def _advance(self, fleet_seconds: int) -> Tick:
        frames: list[Frame] = []
        events: list[Event] = []
        for _ in range(max(1, fleet_seconds)):
            frame, new_events = self._second()
            frames.append(frame)
            events.extend(new_events)
        folded = fold_frames(frames, (Thresholds().cpu_abort_pct,))  # the abort line's spells too
        return Tick(folded, events, FleetSnapshot.of_frame(folded, self.fleet_name, self.source), len(frames))

    async def close(self) -> None:
        return None
