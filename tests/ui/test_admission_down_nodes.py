"""The admission form during the incident it exists for (found on a real 3-node fleet, one node SIGSTOPped,
alarms saying "shed with admission"): `a`, a rate, Enter gave only "admission: refused", the typed values
lost, and no way to apply to the nodes that answer. Now the fleet's refusal is shown in full, with the
answering nodes offered as a confirmed follow-up (as the big-change check asks: Enter or y sends, Esc or n
back to the form, what was typed kept). And the form keeps what the operator did not change: a setting
the nodes run differently is asked for, never sent as the fleet's over theirs."""

from __future__ import annotations

from textual.widgets import Input

from console.protocol import AdmissionSettings
from console.ui.screens.change_check import ChangeCheck
from console.ui.screens.main import MainScreen

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, fleet_ready
from .fake_actions import FakeFleetApi
from .test_actions import acting_app, form_again, open_form, shown

DOWN = "gw-0047"
ANSWERING = [f"gw-{i:04d}" for i in range(47)]


async def test_a_refusal_for_a_node_down_is_said_whole_and_offers_the_answering_nodes():
    api = FakeFleetApi(down=(DOWN,))
    app = acting_app(api)  # the storm: admission 150/s per node, burst 300, ceiling 40,000
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_form(app, pilot, "a", "the admission form")
        await pilot.press("ctrl+u", *"100", "enter")
        await wait_for(lambda: isinstance(app.screen, ChangeCheck), what="the offer")
        offer = app.screen
        title = shown(offer.query_one("#change-title"))
        assert "nodes: gw-0047 does not answer its admin API (down): a fleet-wide admission change" in title
        assert "or wait for gw-0047 to answer; nothing applied" in title  # the server's words, whole
        rows = shown(offer.query_one("#changes"))
        assert "every node → 47 nodes (answering)" in rows and "gw-0047 keeps its settings" in rows
        assert "apply it to the 47 answering nodes" in shown(offer.query_one("#change-ask"))
        assert [body.get("nodes") for _, _, body in api.sent] == [None] and api.applied == []

        await pilot.press("n")  # back to the form: what was typed kept, the refusal in it, in full
        form = await form_again(app, form)
        await pilot.pause()
        assert form.values()["rate_per_s"] == "100"
        error = shown(form.query_one("#form-error"))
        assert "the server refused: nodes: gw-0047 does not answer its admin API (down)" in error
        assert "or wait for gw-0047 to answer; nothing applied" in " ".join(error.split())

        await pilot.press("enter")  # the same again, and this time the answering nodes are taken
        await wait_for(lambda: isinstance(app.screen, ChangeCheck), what="the offer again")
        await pilot.press("y")
        await wait_for(lambda: api.applied, what="the admission on the answering nodes")
        kind, body = api.applied[-1]
        assert kind == "admission" and body["nodes"] == ANSWERING
        assert (body["rate_per_s"], body["burst"], body["max_connections"]) == (100.0, 300, 40_000)
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        assert any(n.title == "admission on 47 nodes" for n in app._notifications)  # (not "admission")


async def test_a_setting_the_nodes_run_differently_is_asked_for_not_lifted():
    """n1, n2 at burst 20 of their own: typing only a rate sent the fleet's burst over theirs ("burst 20
    on 2 nodes → unlimited"). The form leaves such a setting blank and asks for it; what it does send is
    still checked when it changes much."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        frame = app.model.frame
        assert frame is not None and frame.admission is not None
        own = frame.admission.model_copy(update={"burst": 20, "nodes": ["gw-0000", "gw-0001"]})
        app.model.frame = frame.model_copy(
            update={"admission_overrides": [AdmissionSettings.model_validate(own)]}
        )
        form = await open_form(app, pilot, "a", "the admission form")
        assert form.values()["burst"] == "" and form.values()["rate_per_s"] == "150"
        assert "the nodes differ in burst: 20 on gw-0000, gw-0001, 300 on 46 nodes" in shown(
            form.query_one("#form-source")
        )
        await pilot.press("ctrl+u", *"100", "enter")
        await pilot.pause()
        error = " ".join(shown(form.query_one("#form-error")).split())
        assert error.startswith(
            "✖ burst is required: the fleet's nodes run different values of it (20 on gw-0000, gw-0001, 300 "
            "on 46 nodes): give one for them all"
        ), error
        assert app.screen is form and api.sent == []
        assert app.focused is form.query_one("#field-burst", Input)
        await pilot.press(*"20", "enter")
        await wait_for(lambda: isinstance(app.screen, ChangeCheck), what="the big-change check")
        said = shown(app.screen.query_one("#changes"))
        assert "300 elsewhere → 20" in said and api.sent == []  # (what changes: still checked)
        await pilot.press("y")
        await wait_for(lambda: api.applied, what="the admission applied")
        assert api.applied[-1][1]["burst"] == 20 and api.applied[-1][1]["rate_per_s"] == 100.0
