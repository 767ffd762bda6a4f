"""The console on the terminals on-call engineers have: no colour (no-color.org), 16 colours, small sizes."""

from __future__ import annotations

import pytest

from console.ui.app import ConsoleApp
from console.ui.scenes import SCENES_BY_NAME, fed_model, frozen_clock
from console.ui.screens.node_detail import NodeDetailScreen
from console.ui.widgets.node_table import NodeTable
from console.ui.widgets.too_small import TooSmallNotice

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


async def test_a_terminal_too_small_is_told_so_and_the_console_comes_back_whole():
    """At 40×12 the gauges read "✖ 1…" and "✓ 2…", at 60×20 a node's connections "2," of 2,xxx: a cut
    figure reads as another figure. Below 80×24 the fleet screen says what it needs instead; grown again,
    it is whole, the node table focused (Enter still opens a node)."""
    app = storm_console()
    async with app.run_test(size=(160, 48)) as pilot:
        await fleet_ready(app)
        screen = app.screen
        table = screen.query_one(NodeTable)
        notice = screen.query_one(TooSmallNotice)
        assert not notice.display and table.has_focus
        for width, height in ((40, 12), (60, 20), (79, 24), (80, 23)):
            await pilot.resize_terminal(width, height)
            await pilot.pause()
            assert notice.display and not screen.query_one("#body").display
            said = str(notice.render())
            assert f"{width}×{height}" in said and "80×24" in said, said
            assert notice.region.right <= width
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not notice.display and screen.query_one("#body").display
        assert table.has_focus
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, NodeDetailScreen)
