"""The console on the terminals on-call engineers have: no colour (no-color.org), 16 colours, small sizes."""

from __future__ import annotations

import pytest

from console.ui.app import ConsoleApp
from console.ui.scenes import SCENES_BY_NAME, fed_model, frozen_clock

from .conftest import fleet_ready


def storm_console() -> ConsoleApp:
    scene = SCENES_BY_NAME["storm"]
    model = fed_model(scene.seconds, scene.storm_at_s)
    now_s = frozen_clock(model)
    return ConsoleApp(model=model, clock=lambda: now_s, remember_theme=False)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_no_color_draws_every_panel(monkeypatch, size):
    """NO_COLOR=1 is read when the app is made (Textual's Monochrome filter). The alarms panel's hidden
    columns (width 0) drew an unstyled empty segment the filter could not take: a traceback at start."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = storm_console()
    async with app.run_test(size=size) as pilot:
        await fleet_ready(app)
        await pilot.pause()
        assert app.no_color
        screen = app.export_screenshot()
        assert "✖" in screen and "✓" in screen  # levels still told apart, by glyph
