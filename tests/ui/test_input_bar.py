"""The fleet screen's filter bar and the replay's seek bar are one widget (`InputBar`): an input, what its
keys do beside it, an error line over it only while there is an error. They were two copies of the same
shape, each with its CSS and its error method; at 80×24 each is one row, as before."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input, Label

from console.model.nodes import NodeFilter, NodeQuery
from console.record.reader import RecordingReader
from console.record.replay import ReplaySource
from console.ui.app import ConsoleApp
from console.ui.replay import ReplayApp
from console.ui.scenes import SCENES_BY_NAME, fed_model, frozen_clock
from console.ui.widgets.input_bar import InputBar

from ..client.fake_fleet_server import wait_for
from .conftest import fleet_ready
from .test_oncall import visible_lines
from .test_replay import shown_time, write_recording

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


def typed_at_once(app: ConsoleApp, text: str) -> None:
    """`text` as a terminal delivers it in one read (a fast typist, `tmux send-keys`, a paste): parsed by the
    driver's own parser and queued together, no key waiting for the one before it to be handled — as
    `pilot.press` waits."""
    from textual._xterm_parser import XTermParser

    for event in XTermParser().feed(text):
        event.set_sender(app)
        app.post_message(event)


#: (the app, the bar's key, what is typed straight after it, what the field then holds): every character a
#: key of the screen's own — the fleet's `s` sorts, `d` drains, `a` sets admission…, the replay's digits
#: choose its speed, its `g` opens the seek — and a backspace (`\x7f`) among them, to apply in its place.
TYPED_AHEAD = {
    "filter": ("filter", "/", "state:drainingg\x7f,down", "state:draining,down"),
    "seek": ("seek", "g", "1:455\x7f", "1:45"),
    "filter in a replay": ("seek", "/", "id:gw-00*", "id:gw-00*"),
}


@pytest.mark.parametrize("case", list(TYPED_AHEAD))
async def test_keys_typed_straight_after_the_bar_s_key_go_into_it(case: str, tmp_path: Path) -> None:
    """`g1:45` Enter in one `tmux send-keys` changed the replay's speed (the digits) and failed the seek; a
    fast `/sd` sorted the nodes and asked to drain one. The keys typed after the bar's went to the node
    table, then up to the screen's bindings (test: none of them in the field). Every key after the bar's
    key is text, in order, and Enter, in the same read, applies it."""
    kind, opening, typed, meant = TYPED_AHEAD[case]
    name = BARS["seek" if opening == "g" else "filter"][1]
    async with bar_app(kind, tmp_path, (120, 36)) as (app, pilot):
        screen = app.screen
        query = app.query_state
        speed = app.replay.status().speed if isinstance(app, ReplayApp) else None
        field = screen.query_one(f"#{name}", Input)
        typed_at_once(app, opening + typed)
        await wait_for(lambda: field.has_focus, what="the field focused")
        await pilot.pause()
        assert field.value == meant, field.value
        assert app.screen is screen and app.query_state == query  # no action's form opened, not sorted
        if speed is not None:
            assert app.replay.status().speed == speed
        await pilot.press("escape")
        await wait_for(lambda: not field.has_focus, what="the bar closed")

        typed_at_once(app, opening + typed + "\r")
        if name == "filter":
            await wait_for(lambda: app.query_state != query, what="the filter applied")
            assert app.query_state == NodeQuery(query.sort_key, query.descending, NodeFilter.parse(meant))
        else:
            with RecordingReader(tmp_path / "session.sdrec") as reader:
                target = reader.frame_at(reader.index_at(105.0)).time_s
            await wait_for(lambda: shown_time(app) == target, what="the frame at 1:45")
            assert app.replay.status().speed == speed
        await wait_for(lambda: not field.has_focus, what="the focus back on the nodes")
        assert app.screen is screen


#: (the bar's kind, what is typed in one read, what the key after Enter or Esc does on the screen)
TYPED_AFTER = {
    "filter, Enter then j": ("filter", "/state:down\rj", "cursor"),
    # (ESC then a character, in one read, is that character with Alt: the keys are queued as parsed apart)
    "filter, Esc then s": ("filter", ["/id:gw", events.Key("escape", "\x1b"), "s"], "sort"),
    "seek, Enter then j": ("seek", "g1:45\rj", "cursor"),
}


@pytest.mark.parametrize("case", list(TYPED_AFTER))
async def test_keys_typed_straight_after_enter_or_esc_go_to_the_nodes_not_the_closed_bar(
    case: str, tmp_path: Path
) -> None:
    """`/state:down` Enter `j` in one read: the `j` went into the filter field, hidden by then (the focus
    moved back to the node table only once the screen handled Enter), and was lost — the cursor did not
    move. Enter and Esc hand the focus back as they are read: the keys after them are the table's."""
    kind, typed, effect = TYPED_AFTER[case]
    name = BARS[kind][1]
    async with bar_app(kind, tmp_path, (120, 36)) as (app, _pilot):
        screen = app.screen
        table = screen.query_one("#nodes")
        field = screen.query_one(f"#{name}", Input)
        query = app.query_state
        for read in [typed] if isinstance(typed, str) else typed:
            if isinstance(read, events.Key):
                app.post_message(read)
            else:
                typed_at_once(app, read)
        await wait_for(lambda: table.has_focus, what="the focus back on the nodes")
        if effect == "sort":  # (the key's action comes as a message after it: waited for, not slept)
            await wait_for(lambda: app.query_state.sort_key != query.sort_key, what="the nodes sorted")
        else:
            await wait_for(lambda: table.cursor_index == 1, what="the cursor on the next node")
        assert "j" not in field.value and not field.value.endswith("s"), field.value
