"""What the fleet API server serves: a backend that produces one tick of frames and events at a time.

The simulator is one backend (`console.server.simulator`); the controller over real gateway nodes (#6)
is another. The server owns everything a client sees of time and order — `seq`, `epoch`, the pacing at
one frame per wall second, the resume history, the per-node history — so a backend only has to answer
"what is the fleet like now, after this much fleet time?".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from console.protocol import Event, FleetSnapshot, Frame, Source, Waves


@dataclass(frozen=True)
class Tick:
    """The result of advancing a backend: what a client sees for one frame interval."""

    frame: Frame  # the fleet after the tick; `seq`/`epoch` are overwritten by the server
    events: list[Event]
    snapshot: FleetSnapshot  # the same moment as `frame`, for `GET /v1/fleet`
    fleet_seconds: int = 1  # fleet seconds the tick covered (may fall short of what was asked)
    compute_s: float = field(default=0.0, compare=False)  # wall time the backend spent on it


@runtime_checkable
class FleetBackend(Protocol):
    """A source of fleet state for the API server.

    `tick` is awaited once per frame interval and never concurrently with itself. A backend that cannot
    change its clock (a real fleet) sets `clock_control = False` and ignores `fleet_seconds`.
    The write side (#4) adds the actions to this protocol; they too are awaited, so a backend can
    serialize them against `tick` (the simulator holds one lock for both).
    """

    fleet_name: str
    source: Source
    clock_control: bool

    async def start(self) -> FleetSnapshot:
        """Prepare and return the fleet's state before the first tick."""
        ...

    async def tick(self, fleet_seconds: int, budget_s: float) -> Tick:
        """Advance up to `fleet_seconds` (at least one), stopping early once `budget_s` of wall time is
        spent."""
        ...

    async def close(self) -> None: ...


def fold_frames(frames: Sequence[Frame]) -> Frame:
    """One frame standing for several fleet seconds: the last second's figures plus every wave bin.

    At speed > 1 the server sends one frame per wall second, not one per fleet second, so a client is not
    flooded; the wave chart and the lockstep index still see every 100 ms bin (issue #3, section 1).
    """
    if not frames:
        raise ValueError("fold_frames needs at least one frame")
    last = frames[-1]
    if len(frames) == 1:
        return last
    bins: list[int] = []
    for frame in frames:
        bins.extend(frame.waves.attempts)
    span_s = sum(frame.span_s for frame in frames)
    waves = Waves(bin_ms=last.waves.bin_ms, attempts=bins)
    return last.model_copy(update={"waves": waves, "span_s": span_s})


def still_frame(frame: Frame) -> Frame:
    """The frame sent while the clock stands still: the same fleet, no new wave bins, a span of 0 s.

    Frames keep leaving at one per wall second while paused, so a console can tell a paused fleet (fresh
    frames, `span_s` 0) from a dead link (no frames).
    """
    waves = Waves(bin_ms=frame.waves.bin_ms, attempts=[])
    return frame.model_copy(update={"waves": waves, "span_s": 0.0})
