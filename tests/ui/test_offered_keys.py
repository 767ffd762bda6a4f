"""Keys offered only for the actions the fleet can take (console.model.offered): on a `stormdeck controller`
over a nodes file whose nodes have no restart command (max_nodes 0), the fleet screen's footer listed
"R rollout … c capacity" and the rollout box's border "actions R h r a c", though R and c could only be
refused and no rollout could exist for h and r. Now those keys are not drawn in the footers or the border;
help lists them with why they are not on this fleet; pressed, they still answer with why, as before. A
frame that does not say (an older server) offers every key, and each frame's word is read again."""

from __future__ import annotations

import re

import pytest
from textual.widgets import Footer

from console.model.link import Received
from console.protocol import RolloutState, RolloutStatus, UnavailableReason
from console.ui.app import ConsoleApp
from console.ui.screens.help import HelpScreen
from console.ui.screens.main import MainScreen

from ..client.fake_fleet_server import wait_for
from .conftest import fleet_ready
from .fake_actions import FakeFleetApi
from .test_actions import acting_app, border_lines, open_form
from .test_narrow import shown_keys

SIZES = [(80, 24), (120, 36)]
WORDS = "restart: 'gw-0000' is not allowed; expected a node with a restart command in the nodes file"
CANNOT_ROLL_OUT = RolloutStatus(unavailable=WORDS, unavailable_reason=UnavailableReason.NO_RESTART_COMMAND)
#: The footer's words for the keys a fleet that can neither roll out nor grow is not offered.
NOT_OFFERED = {"R rollout", "h halt", "r resume", "c capacity"}


def feed(app: ConsoleApp, **said: object) -> None:
    """A new frame, the newest one's but for what it says of the fleet (`rollout`, `max_nodes`, `nodes`)."""
    frame = app.model.frame
    assert frame is not None
    app.feed(Received(frame.model_copy(update={"seq": app.model.last_seq + 1, **said}), app.clock()))


def footer_words(app: ConsoleApp) -> set[str]:
    return {f"{key.key_display} {key.description}" for key in shown_keys(app.screen.query_one(Footer))}


def rollout_footer(app: ConsoleApp) -> str:
    return border_lines(app.screen.query_one("#rollout-box"))[1]


def box_keys(app: ConsoleApp) -> str:
    """The keys the rollout box's bottom border offers ("R h r a c")."""
    said = re.search(r"actions ([A-Za-z ]+?)(?: \(| ─)", rollout_footer(app))
    assert said is not None, rollout_footer(app)
    return said[1]


def offered_only(app: ConsoleApp) -> bool:
    """The footer is drawn, and draws none of the keys the fleet cannot take."""
    words = footer_words(app)
    return bool(words) and not words & NOT_OFFERED


def drawn_without(app: ConsoleApp, key: str) -> bool:
    words = footer_words(app)
    return bool(words) and key not in words


def told(app: ConsoleApp, start: str) -> bool:
    return any(n.message.startswith(start) for n in app._notifications)


@pytest.mark.parametrize("size", SIZES)
async def test_a_fleet_that_can_neither_roll_out_nor_grow_offers_neither_key(size) -> None:
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=size) as pilot:
        await fleet_ready(app)
        feed(app, rollout=CANNOT_ROLL_OUT, max_nodes=0)
        await wait_for(lambda: offered_only(app), what="R h r c off the footer")
        said = footer_words(app)
        # what the fleet can do, and how to leave and find help, are said whole
        assert {"d drain", "u undrain", "a admission", "q quit", "? help"} <= said, said
        await wait_for(lambda: box_keys(app) == "a", what="the box's keys: admission only")
        assert "…" not in rollout_footer(app), rollout_footer(app)

        # pressed, they still say why and send nothing
        await pilot.press("R")
        await wait_for(lambda: told(app, "this fleet cannot start a rollout — "), what="R's answer")
        await pilot.press("c")
        await wait_for(lambda: told(app, "this fleet cannot add capacity — it adds no nodes"), what="c's")
        assert isinstance(app.screen, MainScreen) and api.sent == []

        # help lists them, each with why it is not on this fleet
        await pilot.press("question_mark")
        await wait_for(lambda: isinstance(app.screen, HelpScreen), what="help")
        fleet = {key: does for where, key, does in app.screen.key_rows() if where == "fleet"}
        assert fleet["R"].endswith("— not on this fleet: no restart command"), fleet["R"]
        assert fleet["c"].endswith("— not on this fleet: it adds no nodes"), fleet["c"]
        for key in "hr":
            assert "not on this fleet: it cannot start a rollout" in fleet[key], fleet[key]
        assert "not on this fleet" not in fleet["a"] + fleet["d"], fleet


@pytest.mark.parametrize("size", SIZES)
async def test_the_keys_follow_what_each_frame_says(size) -> None:
    """An older server (the fields null) is offered every key, as before; a fleet whose capacity runs out at
    its max_nodes loses c at that frame, and gets it back when a node goes."""
    app = acting_app(FakeFleetApi())
    async with app.run_test(size=size) as pilot:
        await fleet_ready(app)
        await wait_for(lambda: box_keys(app) == "R h r a c", what="every key, as before")
        nodes = app.model.frame.nodes
        feed(app, max_nodes=len(nodes) + 1)  # room for one more
        await pilot.pause()
        assert app.model.frame.max_nodes == len(nodes) + 1  # (drawn)
        assert box_keys(app) == "R h r a c" and not app.screen.not_offered, rollout_footer(app)
        feed(app, max_nodes=len(nodes))  # at its most
        await wait_for(lambda: box_keys(app) == "R h r a", what="c off the border")
        assert "c capacity" not in footer_words(app)
        await pilot.press("c")
        await wait_for(lambda: told(app, "this fleet cannot add capacity — it is at its most"), what="c's")
        feed(app, max_nodes=len(nodes), nodes=nodes[:-1])  # a node gone: room again
        await wait_for(lambda: box_keys(app) == "R h r a c", what="c back on the border")
        if size == (120, 36):  # (at 80 columns the footer has no room for c anyway)
            await wait_for(lambda: "c capacity" in footer_words(app), what="c back in the footer")
        feed(app, max_nodes=len(nodes), nodes=nodes)
        await wait_for(lambda: box_keys(app) == "R h r a", what="c off again")
        feed(app, max_nodes=None)  # an older server: says nothing, offered everything
        await wait_for(lambda: box_keys(app) == "R h r a c", what="every key again")
        await open_form(app, pilot, "c", "the add-capacity form")


async def test_halt_and_resume_stay_while_a_rollout_exists_on_a_fleet_that_cannot_start_one() -> None:
    """h and r act on a rollout that exists: where none can start, they are off until one is running,
    paused or halted (R stays off: a start is still refused)."""
    app = acting_app(FakeFleetApi())
    async with app.run_test(size=(120, 36)):
        await fleet_ready(app)
        feed(app, rollout=CANNOT_ROLL_OUT.model_copy(update={"state": RolloutState.PAUSED}))
        await wait_for(lambda: drawn_without(app, "R rollout"), what="R off the footer")
        assert {"h halt", "r resume", "c capacity"} <= footer_words(app)
        assert box_keys(app) == "h r a c", rollout_footer(app)
        feed(app, rollout=CANNOT_ROLL_OUT)  # idle again: nothing to halt or resume, nor can there be
        await wait_for(lambda: drawn_without(app, "h halt"), what="h off the footer")
        assert box_keys(app) == "a c", rollout_footer(app)


@pytest.mark.parametrize("size", SIZES)
async def test_node_detail_offers_only_what_the_fleet_can_take(size) -> None:
    app = acting_app(FakeFleetApi())
    async with app.run_test(size=size) as pilot:
        await fleet_ready(app)
        feed(app, rollout=CANNOT_ROLL_OUT, max_nodes=0)
        app.open_node(next(iter(app.model.nodes)))
        await fleet_ready(app)
        await pilot.pause()
        await wait_for(lambda: offered_only(app), what="R h r c off the node's footer")
        assert {"esc back", "d drain", "u undrain", "q quit", "? help"} <= footer_words(app)
        feed(app, rollout=RolloutStatus(), max_nodes=None)  # says nothing: every key, as before
        await wait_for(lambda: "R rollout" in footer_words(app), what="R back in the node's footer")
