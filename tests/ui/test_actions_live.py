"""The console's guarded actions against the real fleet API write side (console.server, on loopback): the
form pre-filled by the server's drain planner, an ok drain applied and seen in the frames, a blocked drain
with what would pass, a viewer refused, and the server's audit log in the panel."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from console.client.actions import ActionClient
from console.client.stream import StreamClient
from console.guards import Thresholds
from console.protocol import NodeState
from console.ui.app import ConsoleApp
from console.ui.screens.action_form import ActionForm
from console.ui.screens.audit import AuditScreen
from console.ui.screens.change_check import ChangeCheck
from console.ui.screens.main import MainScreen
from console.ui.screens.verdict_dialog import VerdictDialog
from tests.actions.conftest import calm_simulation, start_acting
from tests.server.conftest import TOKENS

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, fleet_ready

NODE = "gw-000"  # the first node by id: under the cursor when the console opens


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels() -> None:
    """Compile (or load) the simulator's kernels before a server starts (see tests/actions/conftest.py)."""
    sim = calm_simulation()
    sim.step()


@pytest.fixture
def acting(tmp_path):
    acting = start_acting(tmp_path, forecast_horizon_s=5)
    yield acting
    acting.server.stop()


def console_on(url: str, role: str) -> ConsoleApp:
    token = TOKENS[role]
    return ConsoleApp(source=StreamClient(url, token), admin=ActionClient(url, token), remember_theme=False)


async def drain_form(app: ConsoleApp, pilot) -> ActionForm:
    await wait_for(lambda: NODE in app.model.nodes, timeout_s=20, what="frames from the server")
    await fleet_ready(app)
    await pilot.press("d")
    await wait_for(lambda: isinstance(app.screen, ActionForm), what="the drain form")
    await pilot.pause()
    return app.screen


async def test_an_ok_drain_is_applied_and_the_frames_show_it(acting):
    app = console_on(acting.url, "operator")
    async with app.run_test(size=SIZE) as pilot:
        form = await drain_form(app, pilot)
        assert "server's drain planner" in str(form.prefill.source)
        planned_rate = float(form.values()["rate_per_s"])
        assert planned_rate > 0
        await pilot.press("enter")
        await wait_for(lambda: app.actions.outcomes, timeout_s=10, what="the server's answer")
        outcome = app.actions.outcomes[-1].answer
        assert outcome.outcome.value == "applied", outcome.message
        # frames come every 50 ms (a fleet second each): a small node may be drained within a second
        await wait_for(
            lambda: app.model.nodes[NODE].state in (NodeState.DRAINING, NodeState.DRAINED),
            timeout_s=10,
            what="the node draining in the frames",
        )
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        await pilot.press("L")
        await wait_for(lambda: isinstance(app.screen, AuditScreen), what="the audit panel")
        table = app.screen.query_one("#audit-table")
        await wait_for(lambda: table.row_count >= 1, what="the server's audit record")
        newest = [str(cell) for cell in table.get_row_at(0)]
        assert newest[2] == "drain" and newest[3] == NODE and "applied" in newest[5]


async def test_a_drain_far_above_the_safe_rate_is_blocked_with_what_would_pass(acting):
    app = console_on(acting.url, "operator")
    async with app.run_test(size=SIZE) as pilot:
        form = await drain_form(app, pilot)
        field = form.query_one("#field-rate_per_s", Input)
        field.value = "900000"
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), timeout_s=10, what="the verdict")
        dialog = app.screen
        assert dialog.verdict.level.value == "blocked"
        ask = dialog.query_one("#ask").content
        assert "What would pass" in str(ask) and "closes/s" in str(ask)
        await pilot.press("escape")
        await wait_for(
            lambda: isinstance(app.screen, ActionForm) and app.screen is not form, what="the form again"
        )
        assert app.screen.values()["rate_per_s"] == "900000"
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        assert app.model.nodes[NODE].state is NodeState.READY


async def test_a_viewer_console_says_it_cannot_act_before_anything_is_sent(acting):
    """Found with two operators and a viewer: the viewer's console offered every action and learnt it
    could not only from the 403 of its first one. The stream's hello names the token's role."""
    app = console_on(acting.url, "viewer")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: NODE in app.model.nodes, timeout_s=20, what="frames from the server")
        await fleet_ready(app)
        assert app.actions.disabled_reason == "a viewer's token: it may watch, not act"
        box = app.screen.query_one("#rollout-box")  # the warning in its title, why in its footer
        assert "▲ actions off" in str(box.border_title)
        assert "a viewer's token: it may watch, not act" in str(box.border_subtitle), box.border_subtitle
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)  # no form to fill in vain
    assert acting.audit.tail(1) == []  # nothing was sent


async def test_a_403_turns_the_actions_off_and_the_console_says_why(acting):
    # An older server's hello names no role: the first refused action says it instead.
    app = console_on(acting.url, "viewer")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: NODE in app.model.nodes, timeout_s=20, what="frames from the server")
        app.model.role = None
        form = await drain_form(app, pilot)
        assert isinstance(form, ActionForm)
        await pilot.press("enter")
        await wait_for(lambda: app.actions.disabled_reason is not None, timeout_s=10, what="the 403")
        assert "403" in app.actions.disabled_reason


async def test_c_adds_capacity_after_confirming_a_large_add_and_the_nodes_provision(acting):
    app = console_on(acting.url, "operator")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: len(app.model.nodes) == 8, timeout_s=20, what="frames from the server")
        await fleet_ready(app)
        await pilot.press("c")
        await wait_for(lambda: isinstance(app.screen, ActionForm), what="the add-capacity form")
        await pilot.pause()
        form = app.screen
        # Pre-filled from the server's capacity record (GET /v1/capacity), not a blind 1.
        source = str(form.query_one("#form-source").content)
        assert "no capacity record" not in source and "35 %" in source, source
        count = form.query_one("#field-count", Input)
        count.value = "0"
        await pilot.pause()
        said = str(form.query_one("#form-error").content)  # named inline, in the fleet's range; nothing sent
        assert "nodes to add: '0' is not allowed" in said and "[1, 64] (room left in the fleet" in said, said
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is form and acting.simulation.n_nodes == 8
        assert form.prefill.values["count"] == "1"  # the node that restores the headroom budget
        count.value = "6"  # 6 of 8 nodes: over the 50 % line, the server asks to confirm
        await pilot.press("enter")
        # More than the pre-fill: the console shows before → after first; Enter sends it.
        await wait_for(lambda: isinstance(app.screen, ChangeCheck), what="the console's check")
        assert [(c.before, c.after) for c in app.screen.changes] == [("1", "6")]
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), timeout_s=10, what="the verdict")
        dialog = app.screen
        assert dialog.verdict.level.value == "confirm" and dialog.verdict.action == "add_capacity"
        assert dialog.verdict.projections["ready_in_s"] == 240
        await pilot.press("y")
        await wait_for(lambda: app.actions.outcomes, timeout_s=10, what="the server's answer")
        assert app.actions.outcomes[-1].answer.outcome.value == "applied"
        await wait_for(lambda: len(app.model.nodes) == 14, timeout_s=10, what="the new nodes in the frames")
        provisioning = [n for n in app.model.nodes.values() if n.state is NodeState.PROVISIONING]
        assert len(provisioning) == 6


def test_the_help_and_palette_offer_add_capacity() -> None:
    from console.ui.commands import ACTIONS, console_commands
    from console.ui.screens.help import binding_rows
    from console.ui.screens.main import MainScreen

    rows = binding_rows("fleet", MainScreen.BINDINGS)
    assert ("fleet", "c", "capacity") in rows
    titles = {title: help_text for title, help_text, _ in console_commands([])}
    assert "provision more nodes" in titles["Action: add capacity"]
    assert [key for key, *_ in ACTIONS].count("c") == 1


async def another_operator_sets_admission(url: str, **settings) -> None:
    """A second operator (the admin's token, its own name in the audit log) changes admission."""
    colleague = ActionClient(url, TOKENS["admin"])
    try:
        answer = await colleague.send("PUT", "/v1/admission", {"retry_after_s": [1.0, 30.0], **settings})
    finally:
        await colleague.aclose()
    assert answer.status == 200, answer.body


async def test_an_admission_form_opened_before_a_colleagues_change_does_not_silently_undo_it(acting):
    """Found with two consoles on one fleet: alice opened the admission form (rate 1000 per node), bob cut
    the rate to 700 a moment later, alice raised the burst a little and pressed Enter — and her form, which
    replaces every setting, put the rate back to 1000, nothing shown (1000/700 is not a 'big change').
    Now the console shows what moved in the fleet under the form before sending; Esc goes back to the
    form with the fleet's new values where nothing was typed, what was typed kept."""
    await another_operator_sets_admission(acting.url, rate_per_s=1000.0, burst=1000)
    app = console_on(acting.url, "operator")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: NODE in app.model.nodes, timeout_s=20, what="frames from the server")
        await fleet_ready(app)
        await wait_for(
            lambda: app.model.frame.admission.rate_per_s == 1000.0, timeout_s=10, what="the fleet's rate"
        )
        await pilot.press("a")
        await wait_for(lambda: isinstance(app.screen, ActionForm), what="the admission form")
        await pilot.pause()
        form = app.screen
        assert form.values()["rate_per_s"] == "1000"
        await another_operator_sets_admission(acting.url, rate_per_s=700.0, burst=1000)
        await wait_for(
            lambda: app.model.frame.admission.rate_per_s == 700.0, timeout_s=10, what="bob's rate in frames"
        )
        form.query_one("#field-burst", Input).value = "1500"  # not a big change: no check of its own
        await pilot.press("enter")
        await wait_for(
            lambda: isinstance(app.screen, ChangeCheck) or app.actions.outcomes, what="a check or an answer"
        )
        assert acting.simulation.admission.rate_per_s == 700.0, "the colleague's rate was undone"
        check = app.screen
        assert isinstance(check, ChangeCheck)
        [moved] = check.changes
        assert (moved.label.split(" ")[0], moved.before, moved.after) == ("rate", "700", "1000")
        assert (
            "changed in the fleet since this form was filled" in moved.why and "puts that back" in moved.why
        )
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, ActionForm) and app.screen is not form, what="the form")
        await pilot.pause()
        assert app.screen.values()["rate_per_s"] == "700" and app.screen.values()["burst"] == "1500"
        await pilot.press("enter")
        await wait_for(lambda: app.actions.outcomes, timeout_s=10, what="the server's answer")
        assert app.actions.outcomes[-1].answer.outcome.value == "applied"
        admission = acting.simulation.admission
        assert (admission.rate_per_s, admission.burst) == (700.0, 1500)


async def test_the_open_audit_panel_shows_a_colleagues_action_and_keeps_the_cursor_on_its_record(acting):
    """Found with two consoles on one fleet: alice had the audit panel (L) open while bob halted the
    rollout and carol ran a dry run from the CLI; her panel still showed its first page until she closed
    it and pressed L again. An open panel now asks the server again every few seconds; the record under
    the cursor stays under it when newer ones arrive above."""
    await another_operator_sets_admission(acting.url, rate_per_s=1000.0)
    app = console_on(acting.url, "operator")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: NODE in app.model.nodes, timeout_s=20, what="frames from the server")
        await pilot.press("L")
        await wait_for(lambda: isinstance(app.screen, AuditScreen), what="the audit panel")
        table = app.screen.query_one("#audit-table")
        await wait_for(lambda: table.row_count == 1, what="the colleague's first record")
        assert table.cursor_row == 0
        await another_operator_sets_admission(acting.url, rate_per_s=700.0)
        await wait_for(lambda: table.row_count == 2, timeout_s=10, what="the colleague's new record")
        newest = [str(cell) for cell in table.get_row_at(0)]
        assert newest[1] == "admin-person" and newest[2] == "admission" and "applied" in newest[5]
        assert table.cursor_row == 1  # still on the record it was on


#: A server judging with lines other than the console's defaults (the server's environment: e.g.
#: STORMDECK_CPU_PAUSE_PCT=60): one drain at a time, a 60 % pause line, a hint window 10× as wide per close/s.
SERVER_LINES = Thresholds(max_concurrent_drains=1, cpu_pause_pct=60, hint_spread_per_s_max=10)


async def test_the_forms_are_prefilled_against_the_servers_thresholds_not_the_consoles(tmp_path):
    """The console kept its own (default) thresholds for every prefill: the rollout form said "batch 2 …
    drain mode pauses at 75 %" on a server whose guards judge one drain at a time and a 60 % line, and
    the server refused the values it had been handed (typed: pause_cpu_pct; blocked: concurrent_drains).
    The form now asks the server (GET /v1/thresholds), and its values pass the server's guards."""
    from console.guards.drain import planned_hint_ms

    from .test_actions import set_rate, shown

    acting = start_acting(tmp_path, forecast_horizon_s=5, thresholds=SERVER_LINES)
    app = console_on(acting.url, "operator")
    assert app.actions.thresholds == Thresholds()  # the console's own lines differ from the server's
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(lambda: NODE in app.model.nodes, timeout_s=20, what="frames from the server")
            await fleet_ready(app)
            await pilot.press("R")
            await wait_for(lambda: isinstance(app.screen, ActionForm), what="the rollout form")
            await pilot.pause()
            form = app.screen
            assert form.values()["pause_cpu_pct"] == "60" and form.values()["batch_size"] == "1"
            note = shown(form.query_one("#form-source"))
            assert "60 %" in note and "75 %" not in note and "console's thresholds" not in note, note
            await pilot.press("ctrl+d")
            await wait_for(lambda: isinstance(app.screen, VerdictDialog), timeout_s=10, what="the verdict")
            assert app.screen.verdict.level.value == "ok", app.screen.verdict
            await pilot.press("escape")
            await wait_for(lambda: isinstance(app.screen, ActionForm), what="the form again")
            await pilot.press("escape")
            await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
            # The drain's hint window follows a typed rate by the server's hint_spread_per_s_max.
            form = await drain_form(app, pilot)
            await set_rate(form, pilot, "60")
            await pilot.pause()
            hint_max_ms = acting.backend.capacity().hint_max_ms
            low, high = planned_hint_ms(60, SERVER_LINES, hint_max_ms)
            assert (low, high) != planned_hint_ms(60, Thresholds(), hint_max_ms)
            assert (form.values()["hint_min_ms"], form.values()["hint_max_ms"]) == (str(low), str(high))
    finally:
        acting.server.stop()
        acting.audit.close()


async def test_the_consoles_own_actions_are_recorded_under_its_tokens_name(acting):
    """Review: one token, three names — the console recorded its own drain as `console` (replay's audit
    panel, the report, the replay bar), the server's audit log and the stream's `action` event name the
    token's holder (`operator-person (operator)`), and a CLI call with the same token read as that. The
    console's records now name the holder the server names (the hello says it)."""
    from console.record.records import ActionRecord

    recorded: list[object] = []
    token = TOKENS["operator"]
    app = ConsoleApp(
        source=StreamClient(acting.url, token),
        admin=ActionClient(acting.url, token),
        remember_theme=False,
        action_recorder=recorded.append,
    )
    async with app.run_test(size=SIZE) as pilot:
        await drain_form(app, pilot)
        await pilot.press("enter")
        await wait_for(lambda: app.actions.outcomes, timeout_s=10, what="the server's answer")
        assert app.actions.outcomes[-1].answer.outcome.value == "applied"
        told = lambda: [e for e in app.model.events if e.kind == "action" and "actor" in e.data]  # noqa: E731
        await wait_for(told, timeout_s=10, what="the stream's action event")
    actions = [record for record in recorded if isinstance(record, ActionRecord)]
    audited = acting.audit.tail(1)[0]
    assert audited["actor"] == "operator-person"
    assert [record.actor for record in actions] == [audited["actor"]]
    assert told()[-1].data["actor"] == audited["actor"]
