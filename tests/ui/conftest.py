from __future__ import annotations

import pytest
from textual.widgets import Input

from console.ui.app import ConsoleApp
from console.ui.scenes import SCENES_BY_NAME, fed_model, frozen_clock

from ..client.fake_fleet_server import wait_for

SIZE = (160, 48)


async def fleet_ready(app: ConsoleApp, timeout_s: float = 10.0) -> None:
    """Until the fleet view on top has its children and the app may draw into it (`MainScreen.ready`,
    `NodeDetailScreen.ready`); then draws the model into it, as the screen's `ScreenReady` will.

    The screen sets `ready` after its first refresh, not when its messages are processed: on a loaded
    machine `pilot.pause()` returned before it, `refresh_views()` then drew nothing, and a title was None;
    a key pressed then found no node under the cursor. The draw here is the one `ScreenReady` asks for,
    made now: the wait can end before that message is handled, and the table would still be empty.
    """
    await wait_for(lambda: app.fleet_screen() is not None, timeout_s, what="the fleet screen ready")
    app.refresh_views()


@pytest.fixture(autouse=True)
def isolated_config(tmp_path, monkeypatch):
    """Themes remembered by a test land in a temporary XDG config, never the developer's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "stormdeck" / "console.toml"


@pytest.fixture
def storm_app() -> ConsoleApp:
    scene = SCENES_BY_NAME["storm"]
    model = fed_model(scene.seconds, scene.storm_at_s)
    now_s = frozen_clock(model)
    return ConsoleApp(model=model, clock=lambda: now_s)


def steady_cursors(app: ConsoleApp) -> None:
    """Stop the focused inputs' cursors blinking, shown, before a snapshot of a screen that has them.

    The cursor blinks every 0.5 s from the focus: on a loaded machine the screenshot came after the
    first blink and the typed dialog's snapshot differed from the accepted one by its hidden cursor.
    """
    for field in app.screen.query(Input):
        field.cursor_blink = False  # Textual leaves a cursor that stops blinking visible


def event_lines(screen) -> list[str]:
    """A node screen's recent events as drawn (inside the box's border), text only: the events are a table
    (time, kind, message that wraps under itself), so its `render()` is not the text."""
    events = screen.query_one("#events")
    drawn = [
        "".join(segment.text for segment in strip)
        for strip in events.render_lines(events.region.reset_offset)
    ]
    return [line[2:-2].rstrip() for line in drawn[1:-1]]
