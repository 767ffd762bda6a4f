"""The fleet clock's pace. Pure."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.errors import InputError
from console.server.clock import FleetClock, check_speed


@pytest.mark.parametrize("speed", [0, -1, 100.01, math.nan, math.inf])
def test_speed_outside_0_to_100_is_refused(speed: float) -> None:
    with pytest.raises(InputError) as caught:
        check_speed(speed)
    assert caught.value.field == "speed" and "(0, 100]" in caught.value.allowed


def test_half_speed_advances_every_second_frame() -> None:
    clock = FleetClock(speed=0.5)
    assert [clock.due_seconds() for _ in range(6)] == [0, 1, 0, 1, 0, 1]


def test_paused_advances_nothing_and_resumes() -> None:
    clock = FleetClock(speed=10)
    clock.set(paused=True)
    assert clock.due_seconds() == 0
    clock.set(paused=False, speed=3)
    assert clock.due_seconds() == 3


@given(st.floats(min_value=0.01, max_value=100), st.integers(min_value=1, max_value=200))
def test_over_many_frames_the_fleet_keeps_the_speed(speed: float, frames: int) -> None:
    clock = FleetClock(speed=speed)
    advanced = sum(clock.due_seconds() for _ in range(frames))
    assert abs(advanced - speed * frames) < 1.0


def test_effective_speed_reports_a_shortfall() -> None:
    clock = FleetClock(speed=10)
    for advanced in (10, 4, 4, 6):
        clock.record(advanced)
    assert clock.effective_speed == 6.0
