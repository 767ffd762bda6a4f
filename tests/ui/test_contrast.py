"""Text on screen reads at WCAG AA (4.5:1) in every theme: each run of text in a screenshot against the cell
colour behind it. Box drawing, chart glyphs and the separators between columns are graphics, not text, and
are left out; so is what a modal screen dims behind itself (only the dialog's own cells are read).

Found by this check when it was written: the light theme's footer keys (accent on the panel, 3.97:1), the
node detail's box titles (the border's colour, 2.0:1), an input's placeholder ("type 'gw-0000' to confirm",
3.4:1) and the verdict dialog's dimmed "Esc closes" (3.1:1).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

import pytest
from textual.containers import Vertical
from textual.geometry import Region

from console.ui.scenes import SCENES_BY_NAME, fed_model, frozen_clock

from .conftest import SIZE, fleet_ready, steady_cursors
from .fake_actions import FakeFleetApi
from .test_action_snapshots import open_verdict_dialog
from .test_actions import acting_app
from .test_themes import contrast

THEMES = ("dark", "light", "high-contrast", "colorblind")
AA_TEXT = 4.5
#: Textual's SVG: a cell is 12.2 px wide and 24.4 px tall; a row's text baseline sits 18.5 px under its top.
CELL_W, CELL_H, BASELINE = 12.2, 24.4, 18.5
GRAPHICS = set("─│┌┐└┘├┤┬┴┼╭╮╰╯━┃┏┓┗┛╇╈═║╔╗╚╝▁▂▃▄▅▆▇█▀▔▏▕▊▎▌▐·•") | {chr(c) for c in range(0x2800, 0x2900)}


@dataclass(frozen=True)
class LowRun:
    text: str
    ratio: float
    foreground: str
    background: str


def low_contrast_text(svg: str, region: Region | None = None) -> list[LowRun]:
    """Runs of text in a Textual SVG screenshot under 4.5:1 against the cell behind them (within `region`,
    in cells, when given)."""
    fills = {m[1]: m[2] for m in re.finditer(r"\.(terminal(?:-\d+)?-r\d+) \{ fill: (#[0-9a-fA-F]{6})", svg)}
    backgrounds: dict[int, list[tuple[float, float, str]]] = {}
    for m in re.finditer(r'<rect fill="(#[0-9a-fA-F]{6})" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"', svg):
        row = round((float(m[3]) - 1.5) / CELL_H)
        backgrounds.setdefault(row, []).append((float(m[2]), float(m[4]), m[1]))
    low = []
    for m in re.finditer(
        r'<text class="(terminal(?:-\d+)?-r\d+)" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg
    ):
        text = html.unescape(m[4]).replace("\xa0", " ")
        x, row = float(m[2]), round((float(m[3]) - BASELINE - 1.5) / CELL_H)
        column = round(x / CELL_W)
        if region is not None and not region.contains(column, row):
            continue
        if not any(ch not in GRAPHICS and not ch.isspace() for ch in text) or m[1] not in fills:
            continue
        behind = next(
            (fill for left, width, fill in backgrounds.get(row, []) if left <= x + 0.1 < left + width), None
        )
        if behind is None:
            continue
        ratio = contrast(fills[m[1]], behind)
        if ratio < AA_TEXT:
            low.append(LowRun(text.strip(), round(ratio, 2), fills[m[1]], behind))
    return low


def scene_app_in(theme: str, scene_name: str):
    from console.ui.app import ConsoleApp

    scene = SCENES_BY_NAME[scene_name]
    model = fed_model(scene.seconds, scene.storm_at_s)
    now_s = frozen_clock(model)
    return ConsoleApp(model=model, theme_name=theme, clock=lambda: now_s, remember_theme=False)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("scene_name", ["storm", "node-detail"])
async def test_fleet_screens_text_reads_in_every_theme(scene_name, theme):
    scene = SCENES_BY_NAME[scene_name]
    app = scene_app_in(theme, scene_name)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        await pilot.press(*scene.keys)
        await fleet_ready(app)
        app.refresh_views()
        await pilot.pause()
        svg = app.export_screenshot()
    assert low_contrast_text(svg) == []


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("level", ["ok", "typed", "blocked"])
async def test_verdict_dialogs_read_in_every_theme(level, theme):
    """Each level's dialog: the typed one's placeholder says what to type; a blocked one says "Esc closes";
    a dry run says nothing was applied."""
    app = acting_app(FakeFleetApi(), scene_name="calm")
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        app.theme = theme
        await open_verdict_dialog(app, pilot, level)
        dialog = app.screen.query_one(Vertical).region
        svg = app.export_screenshot()
    assert low_contrast_text(svg, dialog) == []


async def open_field_with_keys(app, pilot, key: str, field_id: str) -> tuple[Region, str]:
    """Opens the input `key` opens (`#field_id`, its keys beside it at `#field_id-keys`), cursors steady:
    the region of the input and its keys (both shown), and the screen as SVG."""
    await fleet_ready(app)
    await pilot.press(key)
    await pilot.pause()
    steady_cursors(app)
    field = app.screen.query_one(f"#{field_id}").region
    keys = app.screen.query_one(f"#{field_id}-keys").region
    assert field.width > 0 and keys.width > 0
    return field.union(keys), app.export_screenshot()


@pytest.mark.parametrize("theme", THEMES)
async def test_the_filter_placeholder_reads_in_every_theme(theme):
    """The filter's placeholder ("state:draining,down  id:gw-* …") and its keys beside it read."""
    app = scene_app_in(theme, "storm")
    async with app.run_test(size=SIZE) as pilot:
        region, svg = await open_field_with_keys(app, pilot, "slash", "filter")
    assert low_contrast_text(svg, region) == []


#: The rollout box's footer (its bottom border): the fleet's action keys when actions are on, drawn in the
#: border's colour they would be as faint as the node detail's box titles were (2.0:1); with actions off, why,
#: where the title has no room for it (80×24), in the title's warning colour.
ROLLOUT_FOOTERS = {
    "action keys": ({}, SIZE, "actions R h r a c"),
    "actions off": ({"read_only": True}, (80, 24), "read-only console"),
}


@pytest.mark.parametrize("footer", list(ROLLOUT_FOOTERS))
@pytest.mark.parametrize("theme", THEMES)
async def test_the_rollout_box_s_footer_reads_in_every_theme(theme, footer):
    options, size, text = ROLLOUT_FOOTERS[footer]
    app = acting_app(FakeFleetApi(), **options)
    async with app.run_test(size=size) as pilot:
        await fleet_ready(app)
        app.theme = theme
        app.refresh_views()
        await pilot.pause()
        box = app.screen.query_one("#rollout-box").region
        svg = app.export_screenshot()
    assert text in svg.replace("&#160;", " ")
    assert low_contrast_text(svg, box) == []


@pytest.mark.parametrize("theme", THEMES)
async def test_the_seek_placeholder_and_its_keys_read_in_every_theme(theme, tmp_path):
    """The replay's seek: its example times in the placeholder, "Enter seeks · Esc closes" beside it."""
    from console.record.reader import RecordingReader
    from console.record.replay import ReplaySource
    from console.ui.replay import ReplayApp

    from .test_replay import write_recording

    with RecordingReader(write_recording(tmp_path / "session.sdrec")) as reader:
        replay = ReplaySource(reader, paused=True, clock=lambda: 1000.0)
        app = ReplayApp(replay, theme_name=theme, remember_theme=False)
        async with app.run_test(size=SIZE) as pilot:
            region, svg = await open_field_with_keys(app, pilot, "g", "seek")
    assert low_contrast_text(svg, region) == []
