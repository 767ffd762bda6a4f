"""SVG snapshots of the console's main states: seeded synthetic fleet, frozen clock (console.ui.scenes).

Every accepted snapshot was looked at (rendered to PNG) before it was committed.
"""

from __future__ import annotations

import pytest

from console.ui.scenes import SCENES_BY_NAME, Scene, scene_app

from .conftest import fleet_ready

SNAPSHOT_SCENES = (
    "calm",
    "storm",
    "node-detail",
    "light",
    "high-contrast",
    "help",
    "storm-80x24",
    "node-detail-80x24",
)


def settled(scene: Scene, *more_keys: str):
    async def settle(pilot) -> None:
        await fleet_ready(pilot.app)  # `pilot.pause()` alone could return first, and this drew nothing
        # The keys are pressed here, not by snap_compare after this: a screen they open (the node detail)
        # is drawn once it is ready, which the screenshot taken straight after the keys did not wait for.
        await pilot.press(*scene.keys)
        await fleet_ready(pilot.app)
        await pilot.press(*more_keys)
        pilot.app.refresh_views()
        await pilot.pause()

    return settle


@pytest.mark.parametrize("name", SNAPSHOT_SCENES)
def test_scene(name, snap_compare, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    scene = SCENES_BY_NAME[name]
    assert snap_compare(scene_app(scene), terminal_size=scene.size, run_before=settled(scene))


def test_node_detail_80x24_second_turn_of_charts(snap_compare, monkeypatch, tmp_path):
    """→ brings the second row of charts: 503s, timeouts and handshake p99, each with its time axis."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    scene = SCENES_BY_NAME["node-detail-80x24"]
    assert snap_compare(scene_app(scene), terminal_size=scene.size, run_before=settled(scene, "right"))
