"""The gauges of a meltdown as drawn, at 80, 120 and 200 columns: the handshake timeouts and the CPU's
headroom said in every width, nothing cut.

Reviewer (regional-outage drill at 02:02:41, 200×50): "✓ 44.4k 1.0× steady (42.8k/s)", "✓ 9.1k · 0 503 share
0.0 %", headroom "✓ 97 %", while every node read 100 % CPU with ~35k timeouts a second; the node table's
t/o/s column, the only place they showed, is cut at 120 columns."""

from __future__ import annotations

import pytest

from console.model import FleetModel, Received
from console.ui.app import ConsoleApp
from console.ui.scenes import frozen_clock
from console.ui.widgets.gauges import GaugeBox
from tests.fleet_builders import HOT, MELTDOWN, series

from .conftest import fleet_ready


def meltdown_app() -> ConsoleApp:
    model = FleetModel()
    for frame in series(60, 100, fleet=HOT, **MELTDOWN):  # attached after the power cut
        model.apply(Received(frame, frame.time_s))
    now_s = frozen_clock(model)
    return ConsoleApp(model=model, clock=lambda: now_s)


def gauge_text(app: ConsoleApp, key: str) -> list[str]:
    box = app.screen.query_one(f"#gauge-{key}", GaugeBox)
    return ["".join(s.text for s in strip) for strip in box.render_lines(box.region.reset_offset)]


@pytest.mark.parametrize(
    ("size", "timeouts", "headroom", "attempts"),
    [
        ((80, 24), "t/o 35.3k/s", "CPU 100 %", "no calm yet"),
        ((120, 36), "t/o 35.3k/s (79.4 %)", "CPU 100 %", "no calm yet"),
        (
            (200, 50),
            "t/o 35.3k/s (79.4 %) · 503s 0.0 %",
            "CPU 100 % · warn 50 % · budget 35 %",
            "no calm second to judge by",
        ),
    ],
)
async def test_a_meltdown_says_its_timeouts_and_its_cpu_in_every_width(
    size, timeouts, headroom, attempts
) -> None:
    app = meltdown_app()
    async with app.run_test(size=size):
        await fleet_ready(app)
        accepts = gauge_text(app, "accepts")
        assert "✖" in accepts[1] and timeouts in accepts[2], accepts
        room = gauge_text(app, "headroom")
        assert "✖ 0 %" in room[1] and headroom in room[2], room
        assert attempts in gauge_text(app, "attempts")[2]
        assert "steady" not in "".join(gauge_text(app, "attempts"))
        for key in ("accepts", "headroom", "attempts"):
            assert not any("…" in line for line in gauge_text(app, key)), key
