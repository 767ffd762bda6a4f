"""The fleet screen's filter bar and the replay's seek bar are one widget (`InputBar`): an input, what its
keys do beside it, an error line over it only while there is an error. They were two copies of the same
shape, each with its CSS and its error method; at 80×24 each is one row, as before."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.widgets import Input, Label

from console.record.reader import RecordingReader
from console.record.replay import ReplaySource
from console.ui.app import ConsoleApp
from console.ui.replay import ReplayApp
from console.ui.scenes import SCENES_BY_NAME, fed_model, frozen_clock
from console.ui.widgets.input_bar import InputBar

from ..client.fake_fleet_server import wait_for
from .conftest import fleet_ready
from .test_oncall import visible_lines
from .test_replay import write_recording

#: bar → (the key that opens it, its id, what is typed that it takes, what it refuses, its keys said)
BARS = {
    "filter": ("slash", "filter", "state:down", "state:sleepy", "Enter applies · Esc closes"),
    "seek": ("g", "seek", "1:30", "99:99", "Enter seeks · Esc closes"),
}


@asynccontextmanager
async def bar_app(
    kind: str, tmp_path: Path, size: tuple[int, int] = (80, 24)
) -> AsyncIterator[tuple[ConsoleApp, object]]:
    """The fleet screen (the storm scene) for the filter, a paused replay for the seek; at 80×24."""
    if kind == "filter":
        scene = SCENES_BY_NAME["storm"]
        model = fed_model(scene.seconds, scene.storm_at_s)
        now_s = frozen_clock(model)
        app: ConsoleApp = ConsoleApp(model=model, clock=lambda: now_s, remember_theme=False)
        async with app.run_test(size=size) as pilot:
            await fleet_ready(app)
            yield app, pilot
        return
    with RecordingReader(write_recording(tmp_path / "session.sdrec")) as reader:
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=size) as pilot:
            await fleet_ready(app)
            yield app, pilot


def drawn(widget) -> list[str]:
    return [line.strip() for line in visible_lines(widget)]


def rows(bar: InputBar) -> int:
    """The rows the bar takes on screen (a hidden widget keeps the size it last had)."""
    return bar.outer_size.height if bar.display else 0


@pytest.mark.parametrize("kind", list(BARS))
async def test_the_bar_is_one_row_says_its_keys_while_typing_and_its_error_only_while_there_is_one(
    kind: str, tmp_path: Path
) -> None:
    key, name, takes, refuses, keys_said = BARS[kind]
    async with bar_app(kind, tmp_path) as (app, pilot):
        bar = app.screen.query_one(f"#{name}-bar", InputBar)
        field = bar.query_one(f"#{name}", Input)
        keys = bar.query_one(f"#{name}-keys", Label)
        error = bar.query_one(f"#{name}-error", Label)
        assert rows(bar) == 0  # closed: no row at all

        await pilot.press(key, *takes[:2])
        await pilot.pause()
        assert field.has_focus and rows(bar) == 1, bar.outer_size
        assert keys.region.y == field.region.y == bar.region.y and keys.region.right <= 80
        assert drawn(keys) == [keys_said]
        assert drawn(field)[0].startswith(takes[:2]), drawn(field)

        await pilot.press("escape", key, *refuses, "enter")  # refused: the bar closes, the error kept
        await wait_for(lambda: rows(bar) == 0, what="the bar closed on Enter")
        await pilot.press(key)  # back beside its error, what was typed selected
        # (its error wrapped: two lines at 80 columns, `test_the_error_line_is_read_whole`)
        await wait_for(lambda: error.display and rows(bar) == 1 + len(drawn(error)) > 1, what="the error")
        assert drawn(error)[0].startswith("✖ "), drawn(error)
        assert error.region.bottom == field.region.y  # over the input, the keys still beside it
        assert field.value == refuses and field.selected_text == refuses
        assert keys.region.y == field.region.y and drawn(keys) == [keys_said]

        await pilot.press("escape")  # closed: the error goes with it
        await wait_for(lambda: rows(bar) == 0, what="the bar closed on Esc")
        await pilot.press(key)
        await wait_for(lambda: rows(bar) == 1, what="the bar again, one row")
        assert not error.display and str(error.render()) == ""


#: bar → what it refuses with its longest words: a value out of a clock's range, a comparison the filter has
#: no form for (100 and 139 characters with the ✖).
LONG_REFUSALS = {"filter": "cpu>80", "seek": "4:99"}


def refusal(kind: str) -> str:
    """What the bar's error line says for `LONG_REFUSALS[kind]`: the parser's own words."""
    from console.errors import InputError
    from console.model.nodes import NodeFilter
    from console.model.timeline import parse_clock

    parse = NodeFilter.parse if kind == "filter" else parse_clock
    with pytest.raises(InputError) as refused:
        parse(LONG_REFUSALS[kind])
    return f"✖ {refused.value}"


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
@pytest.mark.parametrize("kind", list(BARS))
async def test_the_error_line_is_read_whole(kind: str, size: tuple[int, int], tmp_path: Path) -> None:
    """At 80×24 the replay's seek read "✖ time: '4:99' is not allowed; expected M:SS or H:MM:SS with minutes
    and second" — cut at the screen's edge, the range it names half gone (the filter's "no comparisons — s
    sorts by a column" even at 120 columns). The error line wraps at words, every word on screen."""
    key, name, *_ = BARS[kind]
    width = size[0]
    async with bar_app(kind, tmp_path, size) as (app, pilot):
        bar = app.screen.query_one(f"#{name}-bar", InputBar)
        error = bar.query_one(f"#{name}-error", Label)
        field = bar.query_one(f"#{name}", Input)
        await pilot.press(key, *LONG_REFUSALS[kind], "enter", key)
        await wait_for(lambda: error.display and rows(bar) > 1, what="the bar beside its error")
        await pilot.pause()
        lines = drawn(error)
        assert " ".join(lines) == refusal(kind), lines
        assert error.region.right <= width and all(len(line) <= width for line in visible_lines(error))
        assert rows(bar) == len(lines) + 1 and error.region.bottom == field.region.y  # the input under it
