from __future__ import annotations

import pytest

from console.ui.app import ConsoleApp
from console.ui.scenes import SCENES_BY_NAME, fed_model, frozen_clock

SIZE = (160, 48)


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
