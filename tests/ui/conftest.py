from __future__ import annotations

import pytest

from console.ui.app import ConsoleApp
from console.ui.scenes import SCENES_BY_NAME, fed_model, frozen_clock

from ..client.fake_fleet_server import wait_for

SIZE = (160, 48)


async def fleet_ready(app: ConsoleApp, timeout_s: float = 10.0) -> None:
    """Until the fleet view has its children and the app may draw into it (`MainScreen.ready`).

    The screen sets `ready` after its first refresh, not when its messages are processed: on a loaded
    machine `pilot.pause()` returned before it, `refresh_views()` then drew nothing, and a title was None.
    """
    await wait_for(lambda: app.fleet_screen() is not None, timeout_s, what="the fleet screen ready")


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
