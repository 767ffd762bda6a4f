"""The headroom gauge says its warning line, not only its budget: yellow at 42 % beside "budget 35 %" left
the operator guessing why (trainee reviewer). In every width the line that sets the colour is said."""

from __future__ import annotations

import pytest

from console.model import FleetModel, Level, Received, fleet_gauges
from console.ui.app import ConsoleApp
from console.ui.scenes import frozen_clock
from tests.fleet_builders import nodes, series

from .conftest import fleet_ready
from .test_meltdown_gauges import gauge_text

#: Nodes at 30 % CPU: the connection headroom is the gauge's figure.
COOL = nodes(4, cpu_pct=30.0)


def headroom_app(headroom_pct: float, fleet=COOL) -> ConsoleApp:
    model = FleetModel()
    for frame in series(60, 5, fleet=fleet, headroom_pct=headroom_pct):
        model.apply(Received(frame, frame.time_s))
    now_s = frozen_clock(model)
    return ConsoleApp(model=model, clock=lambda: now_s)


def test_the_gauge_says_the_warning_line_with_the_budget() -> None:
    model = FleetModel()
    for frame in series(60, 5, fleet=COOL, headroom_pct=42.0):
        model.apply(Received(frame, frame.time_s))
    headroom = {g.key: g for g in fleet_gauges(model)}["headroom"]
    assert headroom.level is Level.WARNING
    assert headroom.detail == "warn 50 % · budget 35 %", headroom.detail


@pytest.mark.parametrize(
    ("size", "said"),
    [((80, 24), "under 50 %"), ((120, 36), "warn 50, budget 35 %"), ((160, 40), "warn 50 % · budget 35 %")],
)
async def test_a_yellow_headroom_says_its_line_in_every_width(size, said) -> None:
    app = headroom_app(42.0)
    async with app.run_test(size=size):
        await fleet_ready(app)
        room = gauge_text(app, "headroom")
        assert "▲ 42 %" in room[1] and said in room[2], room
        assert not any("…" in line for line in room)


@pytest.mark.parametrize(
    ("size", "said"), [((80, 24), "CPU 70 %"), ((200, 50), "CPU 70 % · warn 50 % · budget 35 %")]
)
async def test_a_hot_fleets_headroom_keeps_its_cpu_first(size, said) -> None:
    app = headroom_app(60.0, fleet=nodes(4, cpu_pct=70.0))
    async with app.run_test(size=size):
        await fleet_ready(app)
        room = gauge_text(app, "headroom")
        assert "30 %" in room[1] and said in room[2], room
