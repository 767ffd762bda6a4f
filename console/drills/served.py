"""A drill served over the fleet API (`stormdeck drill NAME --serve`, issue #5, section 2, "Instructor").

The simulation is the drill's (`drill_scenario`: its overrides, its timeline as the scenario's events,
which the engine fires between seconds). What a trainee at `stormdeck attach` also needs to read — the
drill's story ("04:00 maintenance window opens"), its hints as they fall due, and its end — goes into the
stream as events, before the frame of the second they belong to. Injections come from the instructor
(`stormdeck inject`), through the simulator backend's checked, audited path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from console.drills.schema import Drill
from console.protocol import Event, Frame, ServedDrill
from console.server.actions import FleetAction
from console.server.backend import Tick
from console.server.simulator import SimulatorBackend


class DrillNarrator:
    """The drill's own events, each once, as fleet time passes (pure: fed the time, returns events)."""

    def __init__(self, drill: Drill, duration_s: float) -> None:
        self.drill = drill
        self.duration_s = duration_s
        self._timeline = sorted(drill.timeline, key=lambda entry: entry.at_s)
        self._hints = sorted(drill.hints, key=lambda hint: hint.after_s)
        #: The end event, once told: a hello after it carries it (a trainee attaching late reads the end).
        self.ended: Event | None = None

    def due(
        self, time_s: float, first_done: Mapping[str, float] | None = None, frame: Frame | None = None
    ) -> list[Event]:
        """Events for everything that happened before fleet second `time_s` (a frame's time: the second
        that just ran, from `time_s - 1`, fired the timeline entries at or before its start). A hint the
        trainee's actions made moot (first_done: action → first fleet time applied) is not told. `frame`: the
        fleet's newest, which a hint's counts are read from (`Hint.said`)."""
        drill = self.drill
        events: list[Event] = []
        while self._timeline and self._timeline[0].at_s < time_s:
            entry = self._timeline.pop(0)
            events.append(
                Event(
                    time_s=entry.at_s,
                    kind="drill",
                    message=f"{drill.human_time(entry.at_s)} {entry.say}",
                    data={"drill": drill.name, "action": entry.action, "params": dict(entry.params)},
                )
            )
        while self._hints and self._hints[0].after_s <= time_s:
            hint = self._hints.pop(0)
            if hint.moot(first_done or {}):
                continue
            events.append(
                Event(time_s=hint.after_s, kind="hint", message=hint.said(frame), data={"drill": drill.name})
            )
        if self.ended is None and time_s >= self.duration_s:
            self.ended = Event(
                time_s=self.duration_s,
                kind="drill",
                message=f"{drill.human_time(self.duration_s)} the drill's time is up ({drill.title})",
                data={"drill": drill.name, "ended": True},
            )
            events.append(self.ended)
        return events


class DrillBackend(SimulatorBackend):
    """The simulator backend of a served drill: the same ticks, actions and injections, plus the
    drill's narration in the stream."""

    def __init__(self, drill: Drill, backend: SimulatorBackend) -> None:
        super().__init__(backend.simulation, backend.forecast_horizon_s, backend.overrides)
        self.drill = drill
        self.narrator = DrillNarrator(drill, backend.simulation.scenario.duration_s)
        self.first_done: dict[str, float] = {}  # action → the fleet time it first took effect
        self.hot_lines = backend.hot_lines
        #: Told the drill's end event once, as it goes into the stream (`drill --serve` says it on its
        #: terminal: the instructor learned the end from a trainee).
        self.on_ended: Callable[[Event], None] | None = None
        for objective in drill.objectives:  # the drill's abort criteria, read each second at any speed
            if objective.kind == "halt_within":
                self.watch_cpu_line(float(objective.params["cpu_pct"]))

    @classmethod
    def from_drill(cls, drill: Drill, overrides: Sequence[str] = (), seed: int | None = None) -> DrillBackend:
        from console.drills.headless import drill_scenario
        from console.sim.engine import Simulation

        simulation = Simulation(drill_scenario(drill, overrides), seed=seed)
        return cls(drill, SimulatorBackend(simulation, overrides=overrides))

    def served_drill(self) -> ServedDrill:
        """What the stream's hello says of the drill: its clock, its briefing for a trainee's console, and
        its end once told."""
        return self.drill.served(self.narrator.duration_s, self.narrator.ended)

    async def apply(self, action: FleetAction) -> None:
        await super().apply(action)
        self.first_done.setdefault(action.kind.value, self.simulation.time_s)

    async def tick(self, fleet_seconds: int, budget_s: float) -> Tick:
        tick = await super().tick(fleet_seconds, budget_s)
        told = self.narrator.due(tick.frame.time_s, self.first_done, tick.frame)
        if not told:
            return tick
        for event in told:
            if event.data.get("ended") and self.on_ended is not None:
                self.on_ended(event)
        return dataclasses.replace(tick, events=[*told, *tick.events])
