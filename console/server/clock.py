"""The fleet clock's pace: how many fleet seconds each frame interval should advance. Pure."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from console.errors import InputError

#: Above 100× the simulator cannot keep up at full scale anyway, and a console could not follow.
MAX_SPEED = 100.0


def check_speed(speed: float, field: str = "speed") -> float:
    """`field`: what the user set it as (`--speed` on the command line, `speed` in the clock's body)."""
    if not (0 < speed <= MAX_SPEED) or math.isnan(speed):
        raise InputError(field, speed, f"fleet seconds per wall second in (0, {MAX_SPEED:g}]")
    return float(speed)


@dataclass
class FleetClock:
    """Speed and pause, and the fraction of a fleet second still owed at speeds below 1.

    `speed` is fleet seconds per frame interval (one wall second outside tests). At speed 0.5 every second
    frame advances one fleet second; at speed 10 every frame advances ten. When the backend cannot keep
    up, the shortfall is dropped rather than owed: the fleet runs slower than asked and frames still leave
    on time (`effective_speed` says by how much).
    """

    speed: float = 1.0
    paused: bool = False
    _owed_s: float = 0.0
    _recent: deque[int] = field(default_factory=lambda: deque(maxlen=10))

    def __post_init__(self) -> None:
        self.speed = check_speed(self.speed)

    def set(self, paused: bool | None = None, speed: float | None = None) -> None:
        if speed is not None:
            self.speed = check_speed(speed)
        if paused is not None:
            self.paused = paused

    def due_seconds(self) -> int:
        """Fleet seconds to advance for the frame now due (0 while paused)."""
        if self.paused:
            return 0
        self._owed_s += self.speed
        due = math.floor(self._owed_s + 1e-9)
        self._owed_s -= due
        return due

    def record(self, advanced: int) -> None:
        """Note how many fleet seconds a frame really advanced (for `effective_speed`)."""
        self._recent.append(advanced)

    @property
    def effective_speed(self) -> float | None:
        if not self._recent:
            return None
        return sum(self._recent) / len(self._recent)
