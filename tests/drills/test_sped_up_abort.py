"""A node-based criterion read from a sped-up source's frames (`sim serve --speed N`: one frame per wall
second, each folding N fleet seconds) is met at the fleet second one frame a second meets it.

Found last session: a folded frame carries one second of nodes (its last), so at ×60 thundering-herd's abort
criterion (a serving node above 80 % CPU for 30 s) was first met at 240 s, against 161 s at one frame a
second — the drill's "halted within 90 s" objective was scored against the wrong time, and the console's
`cpu_abort` alarm was raised late too. A folded frame now says, for each earlier second, which serving nodes
were over the abort line (`Frame.folded_hot`).
"""

from __future__ import annotations

import asyncio

from console.alarms import AlarmEngine
from console.drills.live import DrillProgress
from console.drills.schema import load_drill
from console.drills.served import DrillBackend
from console.protocol import Event, Frame

Change = tuple[float, str, str]  # (fleet time, "raised" | "cleared", alarm name)


def cpu_abort_changes(events: list[Event]) -> list[Change]:
    return [(e.time_s, e.data["change"], e.data["name"]) for e in events if e.data["name"] == "cpu_abort"]


def served_frames(backend: DrillBackend, every: int, until_s: float) -> list[Frame]:
    """What the drill's server sends at ×`every`: its first frame is second 1, then one per `every` s."""

    async def serve() -> list[Frame]:
        frames = [(await backend.tick(1, 60.0)).frame]
        while frames[-1].time_s < until_s:
            frames.append((await backend.tick(every, 60.0)).frame)
        return frames

    return asyncio.run(serve())


def test_a_drills_abort_criterion_is_met_at_the_same_fleet_second_at_x60() -> None:
    drill = load_drill("thundering-herd")
    halt = next(i for i, objective in enumerate(drill.objectives) if objective.kind == "halt_within")
    one_a_second = DrillProgress(drill, end_s=300.0)
    for frame in served_frames(DrillBackend.from_drill(drill), 1, 300.0):
        one_a_second.add_frame(frame)
    criterion = one_a_second.measures.abort_criterion(halt)
    assert criterion is not None and criterion[0] < 200.0  # 161 s, measured

    sped_up = DrillProgress(drill, end_s=300.0)
    for frame in served_frames(DrillBackend.from_drill(drill), 60, 300.0):
        sped_up.add_frame(frame)
    assert sped_up.measures.abort_criterion(halt) == criterion  # was (240.0, …)


def test_the_consoles_cpu_abort_alarm_raises_and_clears_at_the_same_fleet_seconds_at_x60() -> None:
    drill = load_drill("thundering-herd")
    one_a_second, sped_up = AlarmEngine(), AlarmEngine()
    expected = [
        change
        for frame in served_frames(DrillBackend.from_drill(drill), 1, 600.0)
        for change in cpu_abort_changes(one_a_second.update(frame))
    ]
    assert expected and expected[0][1] == "raised"
    got = [
        change
        for frame in served_frames(DrillBackend.from_drill(drill), 60, 600.0)
        for change in cpu_abort_changes(sped_up.update(frame))
    ]
    assert got == [change for change in expected if change[0] <= 601.0]
