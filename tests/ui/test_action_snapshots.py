"""A snapshot of each level's verdict dialog (ok as a dry run, confirm, typed, blocked), of the drain
form, and of the add-capacity confirmation, against the fake fleet API. Every accepted snapshot was looked
at (rendered to PNG) first."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from console.ui.screens.action_form import ActionForm
from console.ui.screens.change_check import ChangeCheck
from console.ui.screens.verdict_dialog import VerdictDialog

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, fleet_ready, steady_cursors
from .fake_actions import FakeFleetApi
from .test_actions import acting_app, open_drain_form, set_rate

#: level → (rate typed into the drain form, dry run)
LEVELS = {"ok": ("100", True), "confirm": ("150", False), "typed": ("250", False), "blocked": ("500", False)}


async def open_verdict_dialog(app, pilot, level: str) -> None:
    """The drain form sent at `level`'s rate (a dry run for `ok`), and its verdict dialog open and still."""
    rate, dry_run = LEVELS[level]
    form = await open_drain_form(app, pilot)
    await set_rate(form, pilot, rate)
    await pilot.press("ctrl+d" if dry_run else "enter")
    await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dialog")
    steady_cursors(app)
    await pilot.pause()


@pytest.mark.parametrize("level", list(LEVELS))
def test_verdict_dialog(level, snap_compare):
    app = acting_app(FakeFleetApi(), scene_name="calm")  # see test_drain_form

    async def open_dialog(pilot) -> None:
        await fleet_ready(app)
        await open_verdict_dialog(app, pilot, level)

    assert snap_compare(app, terminal_size=SIZE, run_before=open_dialog)


def test_drain_form(snap_compare):
    # The calm fleet: an empty alarms panel behind the dialogs (the storm's one, full of alarms, is now and
    # then scrolled sideways when the snapshot is taken, which is main's alarms panel, not the dialog).
    app = acting_app(FakeFleetApi(), scene_name="calm")

    async def open_form(pilot) -> None:
        await fleet_ready(app)
        await open_drain_form(app, pilot)
        assert isinstance(app.screen, ActionForm)
        await set_rate(app.screen, pilot, "0")  # the inline message, naming the field and the range
        steady_cursors(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=open_form)


def test_add_capacity_confirmation(snap_compare):
    """`c`, 30 nodes on the drill's 48 (over the 50 % line): the confirm dialog with when the nodes are
    ready, the headroom then, and the warning to shed load meanwhile (the fleet is hot)."""
    app = acting_app(FakeFleetApi(), scene_name="calm")

    async def open_dialog(pilot) -> None:
        await fleet_ready(app)
        await pilot.press("c")
        # The form is pushed by the action's worker and composed after: wait for its field, not the screen.
        await wait_for(
            lambda: isinstance(app.screen, ActionForm) and app.screen.query("#field-count"),
            what="the add-capacity form",
        )
        field = app.screen.query_one("#field-count", Input)
        field.value = "30"
        await pilot.press("enter")
        # 30 is more than the pre-fill: the console shows before → after first; Enter sends it.
        await wait_for(lambda: isinstance(app.screen, ChangeCheck), what="the console's check")
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dialog")
        steady_cursors(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=open_dialog)


async def _admission_refused_for_a_node_down(app, pilot) -> None:
    """`a`, 100 per node, Enter on a fleet whose gw-0047 does not answer: the fleet's refusal, and the
    answering nodes offered."""
    await fleet_ready(app)
    await pilot.press("a")
    await wait_for(lambda: isinstance(app.screen, ActionForm), what="the admission form")
    await pilot.pause()
    await pilot.press("ctrl+u", *"100", "enter")
    await wait_for(
        lambda: isinstance(app.screen, ChangeCheck) and "refused" in app.screen.headline, what="the offer"
    )
    steady_cursors(app)
    await pilot.pause()


def test_admission_offers_the_answering_nodes(snap_compare):
    app = acting_app(FakeFleetApi(down=("gw-0047",)), scene_name="calm")

    async def offered(pilot) -> None:
        await _admission_refused_for_a_node_down(app, pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=offered)


def test_admission_form_says_the_fleets_refusal_whole(snap_compare):
    """The offer declined: back to the form, 100 kept, the refusal in it in full."""
    app = acting_app(FakeFleetApi(down=("gw-0047",)), scene_name="calm")

    async def declined(pilot) -> None:
        await _admission_refused_for_a_node_down(app, pilot)
        offer = app.screen
        await pilot.press("n")
        await wait_for(
            lambda: isinstance(app.screen, ActionForm) and app.screen is not offer, what="the form"
        )
        steady_cursors(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=declined)
