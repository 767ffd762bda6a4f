"""Guarded actions driven by real key presses against a fake fleet API (issue #4, section 4): the form,
its inline validation, the dry run, each level's dialog (a wrong typed name refused), the outcome, the audit
panel, and actions disabled with the reason shown."""

from __future__ import annotations

import io
import math
import re

import pytest
from rich.console import Console
from textual.widgets import Button, Input, Label

from console.client.actions import ActionAnswer
from console.errors import InputError
from console.guards import Thresholds
from console.model.actions.answer import read_answer, what_would_pass
from console.model.actions.form import Prefill, parse_form
from console.protocol import ActionKind
from console.ui.app import ConsoleApp
from console.ui.scenes import SCENES_BY_NAME, fed_model, frozen_clock
from console.ui.screens.action_form import ActionForm
from console.ui.screens.audit import AuditScreen
from console.ui.screens.main import MainScreen
from console.ui.screens.verdict_dialog import VerdictDialog
from console.ui.widgets.alarms_panel import AlarmsPanel

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, fleet_ready
from .fake_actions import THRESHOLDS, FakeFleetApi

NODE = "gw-0000"  # under the cursor when the console opens (sorted by id)


def shown(widget) -> str:
    """The text a Static shows, tables included."""
    console = Console(width=200, file=io.StringIO(), color_system=None)
    console.print(widget.content)
    return console.file.getvalue()


def acting_app(
    api: FakeFleetApi | None, read_only: bool = False, scene_name: str = "storm", recorder=None
) -> ConsoleApp:
    scene = SCENES_BY_NAME[scene_name]
    model = fed_model(scene.seconds, scene.storm_at_s)
    now_s = frozen_clock(model)
    return ConsoleApp(
        model=model,
        clock=lambda: now_s,
        admin=api.client() if api else None,
        read_only=read_only,
        remember_theme=False,
        action_recorder=recorder,
        guard_thresholds=THRESHOLDS,  # the fake fleet's: the console's planner and it agree
    )


def with_rollout(app: ConsoleApp, state: str, **status: object) -> None:
    """The newest frame with its rollout in `state` (the scenes' fleets run none), and `status`'s fields."""
    from console.protocol import RolloutState, RolloutStatus

    frame = app.model.frame
    assert frame is not None
    rollout = RolloutStatus.model_validate({**status, "state": RolloutState(state)})
    app.model.frame = frame.model_copy(update={"rollout": rollout})


async def open_form(app: ConsoleApp, pilot, key: str, what: str) -> ActionForm:
    """Press `key` and wait for an action form: the action's own, or the one a closed dialog returns to."""
    await pilot.press(key)
    await wait_for(lambda: isinstance(app.screen, ActionForm), what=what)
    await pilot.pause()
    return app.screen


async def open_drain_form(app: ConsoleApp, pilot) -> ActionForm:
    return await open_form(app, pilot, "d", "the drain form")


async def form_again(app: ConsoleApp, form: ActionForm) -> ActionForm:
    """The form the flow brings back after `form` was sent (a refusal, a dry run closed)."""
    await wait_for(
        lambda: isinstance(app.screen, ActionForm) and app.screen is not form, what="the form again"
    )
    return app.screen


async def drain_dialog(app: ConsoleApp, pilot, rate: str, key: str, what: str) -> VerdictDialog:
    """The drain form with `rate` typed, sent with `key` (enter, ctrl+d): the verdict dialog it opens."""
    form = await open_drain_form(app, pilot)
    await set_rate(form, pilot, rate)
    await pilot.press(key)
    await wait_for(lambda: isinstance(app.screen, VerdictDialog), what=what)
    return app.screen


async def set_rate(form: ActionForm, pilot, rate: str) -> None:
    field = form.query_one("#field-rate_per_s", Input)
    field.focus()
    field.value = ""
    await pilot.press(*rate)


async def test_drain_form_is_prefilled_by_the_planner_and_an_ok_drain_applies():
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        assert form.values() == {
            "rate_per_s": "120",
            "deadline_s": "600",
            "hint_min_ms": "1000",
            "hint_max_ms": "16000",
        }
        assert "server's drain planner" in shown(form.query_one("#form-source"))
        await pilot.press("enter")
        await wait_for(lambda: api.applied, what="the drain applied")
        assert api.sent == [
            (
                "POST",
                f"/v1/nodes/{NODE}/drain",
                {"rate_per_s": 120.0, "deadline_s": 600.0, "hint_ms": [1000, 16000]},
            )
        ]
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        assert app.actions.outcomes[-1].answer.outcome.value == "applied"
        assert any("applied" in n.message for n in app._notifications)


async def test_the_fleet_behind_an_open_form_keeps_updating():
    """An operator deciding in the form sees the fleet as it is now (it froze at the form's opening)."""
    from console.model.link import LinkState, LinkStatus
    from console.ui.widgets.header import FleetHeader

    app = acting_app(FakeFleetApi())
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        await open_drain_form(app, pilot)
        app.feed(LinkStatus(LinkState.RECONNECTING, attempt=2, next_in_s=3.0, at_s=app.clock()))
        await pilot.pause()
        main = next(screen for screen in app.screen_stack if isinstance(screen, MainScreen))
        assert isinstance(app.screen, ActionForm)
        assert "reconnecting (attempt 2, next in 3.0 s)" in str(main.query_one(FleetHeader).render())


async def test_inline_validation_names_the_field_and_the_range_and_sends_nothing():
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await set_rate(form, pilot, "-5")
        label = form.query_one("#form-error")
        error = shown(label).strip()
        assert error.startswith("✖ rate (closes/s): '-5'") and "> 0 and ≤ 1,000,000,000" in error
        dialog = form.query_one("Vertical").content_region  # wrapped inside the dialog, not cut at its edge
        assert label.region.right <= dialog.right and label.size.width * label.size.height >= len(error)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is form and api.sent == []
        await set_rate(form, pilot, "100")
        hint_max = form.query_one("#field-hint_max_ms", Input)
        hint_max.value = "500"  # below the minimum
        await pilot.pause()
        error = shown(form.query_one("#form-error"))
        assert error.strip() == "✖ hint min 1000 is above max 500; expected min ≤ max", error
        await pilot.press("escape")
        await pilot.pause()
        assert api.sent == []


async def test_dry_run_shows_the_verdict_applies_nothing_and_returns_to_the_form():
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await set_rate(form, pilot, "150")
        await pilot.click("#dry-run")
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dry-run verdict")
        dialog = app.screen
        assert dialog.dry_run and dialog.asks is None
        assert "hint_window_ms" in shown(dialog.query_one("#checks"))
        assert api.sent[-1][2]["dry_run"] is True and api.applied == []
        await open_form(app, pilot, "escape", "back on the form")
        assert app.screen.values()["rate_per_s"] == "150"  # what was typed survives the dry run


async def test_a_refusal_by_the_server_returns_to_the_form_with_what_was_typed():
    """A 422 naming a field (a bound only the server knows: the fleet's size) is the form's business: the
    form comes back with the values typed, the server's words inline and the field focused."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        await open_form(app, pilot, "R", "the rollout form")
        form = app.screen
        batch = form.query_one("#field-batch_size", Input)
        batch.focus()
        batch.value = "500"
        await pilot.press("ctrl+d")
        again = await form_again(app, form)
        await pilot.pause()
        assert again.values()["batch_size"] == "500" and api.applied == []
        assert "the server refused: batch_size: 500 is not allowed" in shown(again.query_one("#form-error"))
        assert app.focused is again.query_one("#field-batch_size", Input)
        again.query_one("#field-batch_size", Input).value = "5"  # typing takes over from the server's words
        await pilot.pause()
        assert shown(again.query_one("#form-error")).strip() == ""
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")


async def test_a_refusal_naming_no_field_of_the_form_is_a_notification_not_a_form_again():
    """Halt with no rollout running: the server's 422 names `rollout`, which nothing in the (empty) halt
    form can change — so it is said, and the operator is back on the fleet, not trapped in the form."""
    api = FakeFleetApi(rollout_idle=True)
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        with_rollout(app, "running")  # as the console saw it; the server's fleet has stopped it since
        await open_form(app, pilot, "h", "the halt form")
        await pilot.press("enter")
        await wait_for(lambda: app.actions.outcomes, what="the server's answer")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        assert any("nothing to halt" in n.message for n in app._notifications) and api.applied == []


async def test_confirm_level_asks_enter_or_y_and_resends_with_the_token():
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        dialog = await drain_dialog(app, pilot, "150", "enter", "the confirm dialog")
        assert dialog.asks.value == "confirm"
        checks = shown(dialog.query_one("#checks"))
        assert "▲ FAIL" in checks and "✓ pass" in checks and "18,750" in checks  # value, limit, pass and fail
        assert "without" in shown(dialog.query_one("#forecast"))
        await pilot.press("y")
        await wait_for(lambda: api.applied, what="the confirmed drain")
        assert api.sent[-1][2]["confirm"] == {"token": "tok-1", "typed": None}


async def test_typed_level_refuses_a_wrong_name_then_accepts_the_node_id():
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        dialog = await drain_dialog(app, pilot, "250", "enter", "the typed dialog")
        assert dialog.asks.value == "typed"
        await pilot.press("y")  # a confirm key does not pass for a typed name: it is typed into the field
        await pilot.press(*"gw-0001", "enter")
        await pilot.pause()
        assert app.screen is dialog
        error = shown(dialog.query_one("#typed-error"))
        assert "refused" in error and NODE in error
        assert len(api.sent) == 1 and api.applied == []  # nothing sent for a wrong name
        field = dialog.query_one("#typed", Input)
        assert field.value == ""  # typed again from the start: a retype was appended to the refused name
        await pilot.press(*NODE, "enter")
        await wait_for(lambda: api.applied, what="the typed drain")
        assert api.sent[-1][2]["confirm"] == {"token": "tok-1", "typed": NODE}


async def test_typed_level_says_what_would_pass_above_the_name_to_type():
    """`stormdeck act` printed what would pass of a typed verdict; the dialog said it only of a blocked one,
    and left the operator to find the limits in the table. Said the same (`what_would_pass`), over the
    question, and for a typed dry run too (it asks nothing, as `act --dry-run` prints it)."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        dialog = await drain_dialog(app, pilot, "250", "enter", "the typed dialog")
        hints = what_would_pass(dialog.verdict)
        assert hints and "survivor_cpu_vs_pause_pct ≤ 75" in hints[0]
        ask = shown(dialog.query_one("#ask")).splitlines()
        assert ask[0] == "What would pass: " + "; ".join(hints)
        assert ask[-1] == f"type {NODE} and Enter to apply it · Esc cancels"  # the question, by the input
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        dry = await drain_dialog(app, pilot, "250", "ctrl+d", "the typed dry run")
        ask = shown(dry.query_one("#ask")).splitlines()
        # On-call walk: "Esc closes" read as closing the action; Esc goes back to the form, as typed.
        assert ask == ["What would pass: " + "; ".join(what_would_pass(dry.verdict)), "Esc: back to the form"]
        assert api.applied == []


async def test_blocked_level_says_why_and_what_would_pass_and_applies_nothing():
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await set_rate(form, pilot, "500")
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the blocked dialog")
        ask = shown(app.screen.query_one("#ask"))
        assert "blocked" in ask and "≤ 120 closes/s" in ask and "drain_pacing_per_s ≤ 300" in ask
        assert "Esc: back to the form" in ask
        await pilot.press("enter")  # Enter does not apply a blocked action
        await pilot.pause()
        await pilot.press("escape")
        # Real-fleet pass: Esc left the operator on the fleet, and `d` again re-planned over what was typed;
        # the next move is to type what would pass, so the form comes back as it was sent.
        again = await form_again(app, form)
        assert again.values()["rate_per_s"] == "500" and again.refusal is None
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        assert api.applied == [] and len(api.sent) == 1


async def test_audit_panel_shows_the_servers_records():
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        with_rollout(app, "running")
        await open_form(app, pilot, "h", "the halt form")  # halt: no parameters, always ok
        await pilot.press("enter")
        await wait_for(lambda: api.applied, what="the halt")
        assert api.sent[-1][:2] == ("POST", "/v1/rollout/halt")
        await pilot.press("L")
        await wait_for(lambda: isinstance(app.screen, AuditScreen), what="the audit panel")
        table = app.screen.query_one("#audit-table")
        await wait_for(lambda: table.row_count == 1, what="the audit record")
        assert "halt" in str(table.get_row_at(0)[2])
        detail = shown(app.screen.query_one("#audit-detail")).strip()
        assert detail == api.audit[-1]["detail"] and detail  # the highlighted record's detail, whole
        # One record is one record (user pass: "1 newest records").
        note = shown(app.screen.query_one("#audit-note")).strip()
        assert note == "GET /v1/audit · 1 newest record", note


def border_lines(widget) -> tuple[str, str]:
    """A boxed widget's top and bottom borders as drawn: its title and subtitle, as cut to fit."""
    lines = [
        "".join(segment.text for segment in strip)
        for strip in widget.render_lines(widget.region.reset_offset)
    ]
    return lines[0], lines[-1]


@pytest.mark.parametrize("size", [(80, 24), (120, 36), (160, 48)])
async def test_the_rollout_box_says_its_name_and_its_keys_whole_at_every_size(size):
    """At 80×24 the title read "rollout & admission · act…", at 120×36 "… actions R h r a c (…": the keys
    it was there to list were cut. The name stays the title; the fleet's action keys are the box's footer
    (its bottom border), "(? lists them)" too where it fits — at 80 columns the screen's footer says "? help"."""
    app = acting_app(FakeFleetApi())
    async with app.run_test(size=size) as pilot:
        await fleet_ready(app)
        await pilot.pause()
        top, bottom = border_lines(app.screen.query_one("#rollout-box"))
        assert "…" not in top + bottom, (top, bottom)
        assert "rollout & admission" in top, top
        assert "actions R h r a c" in bottom, bottom
        if size != (80, 24):
            assert "actions R h r a c (? lists them)" in bottom, bottom
        if size == (160, 48):  # made narrow with no frame coming (a paused replay), the keys still fit
            await pilot.resize_terminal(80, 24)
            box = app.screen.query_one("#rollout-box")
            await wait_for(lambda: "…" not in border_lines(box)[1], what="the keys to fit 80 columns")
            assert border_lines(box)[1].endswith(" actions R h r a c ─╯"), border_lines(box)


@pytest.mark.parametrize("size", [(80, 24), (120, 36), (160, 48)])
@pytest.mark.parametrize("why", ["read-only", "viewer"])
async def test_with_actions_off_the_rollout_box_says_so_and_why_whole_at_every_size(size, why):
    """At 80×24 the title read "▲ actions off: no fleet A…" (a replay's "read-only con…", a viewer's "a
    viewer's…"): why was cut. The warning leads the title; why is said whole in the title where it fits
    beside the box's name, else in the box's footer (its bottom border, where the keys are when actions
    are on), in fewer words where the whole does not fit; made narrow with no frame coming (a paused
    replay), they are chosen again."""
    app = acting_app(FakeFleetApi(), read_only=why == "read-only")
    if why == "viewer":
        app.model.role = "viewer"  # the stream's hello said so
    full = "read-only console" if why == "read-only" else "a viewer's token: it may watch, not act"
    said = full if size != (80, 24) or why == "read-only" else "viewer token: watch only"
    async with app.run_test(size=size) as pilot:
        await fleet_ready(app)
        app.refresh_views()
        await pilot.pause()
        box = app.screen.query_one("#rollout-box")
        top, bottom = border_lines(box)
        assert "…" not in top + bottom, (top, bottom)
        assert "▲ actions off" in top, top
        assert said in top or said in bottom, (top, bottom)
        if size == (160, 48):
            await pilot.resize_terminal(80, 24)
            await wait_for(
                lambda: "…" not in "".join(border_lines(box)), what="the borders to fit 80 columns"
            )
            top, bottom = border_lines(box)
            assert "▲ actions off" in top and ("read-only console" in bottom or "viewer token" in bottom)


async def test_read_only_disables_actions_and_says_why():
    app = acting_app(FakeFleetApi(), read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        app.refresh_views()
        title = str(app.screen.query_one("#rollout-box").border_title)
        assert "actions off: read-only console" in title
        await pilot.press("d")
        # The key starts the action's worker, which answers with a notification and returns (no form),
        # whenever it runs: `pilot.pause()` does not wait for a worker.
        await wait_for(
            lambda: any("read-only" in n.message for n in app._notifications), what="the read-only notice"
        )
        assert isinstance(app.screen, MainScreen)


async def test_a_viewer_token_is_refused_and_actions_say_so_afterwards():
    api = FakeFleetApi(role="viewer")
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        with_rollout(app, "running")
        await open_form(app, pilot, "h", "the halt form")
        await pilot.press("enter")
        await wait_for(lambda: app.actions.disabled_reason is not None, what="the 403")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        await fleet_ready(app)
        app.refresh_views()
        box = app.screen.query_one("#rollout-box")  # why: in the title, or its footer when long
        assert "▲ actions off" in str(box.border_title)
        assert "the server refused (403): a viewer token?" in str(box.border_subtitle), box.border_subtitle
        sent = len(api.sent)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and len(api.sent) == sent


async def test_a_is_admission_on_the_table_and_acknowledge_in_the_alarms_panel():
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        await open_form(app, pilot, "a", "the admission form")
        assert app.screen.kind is ActionKind.ADMISSION
        assert app.screen.values()["retry_after_max_s"] == "30"
        # The hint a blank field shows says "blank: unlimited" within its width (it was cut off at the end).
        for name in ("rate_per_s", "burst", "max_connections"):
            field = app.screen.query_one(f"#field-{name}", Input)
            hint = field.placeholder
            assert hint.startswith("blank: unlimited, or ")
            assert "unlimited" in hint[: field.content_size.width], (hint, field.content_size.width)
        await pilot.press("escape")
        await pilot.pause()
        unacked = app.model.alarms.unacknowledged
        await pilot.press("tab")  # as the README says: Tab to the alarms panel
        await pilot.pause()
        assert isinstance(app.focused, AlarmsPanel)
        await pilot.press("a")
        await pilot.pause()
        assert app.model.alarms.unacknowledged == unacked - 1
        assert isinstance(app.screen, MainScreen)


async def test_node_detail_drains_its_own_node():
    api = FakeFleetApi(offers_plan=False)
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        app.open_node("gw-0003")
        await pilot.pause()
        form = await open_drain_form(app, pilot)
        assert form.node_id == "gw-0003"
        assert "no planner" in shown(form.query_one("#form-source"))  # no server plan, no capacity


def test_parse_form_and_read_answer_are_pure():
    call = parse_form(
        ActionKind.ADMISSION,
        None,
        {
            "rate_per_s": "",
            "burst": "300",
            "max_connections": "",
            "retry_after_min_s": "2",
            "retry_after_max_s": "40",
        },
    )
    assert call.method == "PUT" and call.path == "/v1/admission"
    assert call.body == {
        "rate_per_s": None,
        "burst": 300,
        "max_connections": None,
        "retry_after_s": [2.0, 40.0],
    }
    answer = read_answer(
        ActionAnswer(
            422, {"type": "urn:stormdeck:problem:invalid", "detail": "rate_per_s: -1", "field": "rate_per_s"}
        )
    )
    assert answer.outcome.value == "refused" and answer.field_name == "rate_per_s"
    applied = read_answer(
        ActionAnswer(202, {"applied": True, "message": "drain gw-1: applied", "audit_seq": 12})
    )
    assert (applied.outcome.value, applied.audit_seq) == (
        "applied",
        12,
    )  # the recording's link to the stream's
    from .fake_actions import drain_verdict

    blocked = drain_verdict("gw-0001", 500.0, (1000, 16000))
    assert blocked.level.value == "blocked"
    assert any("120" in hint for hint in what_would_pass(blocked))


def test_the_fake_fleet_judges_a_drain_with_the_real_guard():
    """The fake fleet API built its drain verdicts by hand, without the projections the real guard returns
    (`suggested_rate_per_s`, `suggested_cpu_margin_pct`): its dialogs said an older server's hint. It
    judges with `judge_drain` now, over a fleet where each level is still one rate away, and suggests the
    rate its drain planner offers."""
    from .fake_actions import SAFE_RATE, drain_verdict

    names = [
        "survivor_cpu_vs_pause_pct",
        "survivor_cpu_vs_abort_pct",
        "reconnect_rate_per_s",
        "drain_pacing_per_s",
        "headroom_after_pct",
        "concurrent_drains",
        "force_closed_at_safe_rate",
        "force_close_burst_per_s",
        "force_close_drop_pct",
        "hint_window_ms",
        "offline_at_once_pct",
        "force_closed_at_deadline",
    ]
    levels = {100.0: "ok", 120.0: "ok", 150.0: "confirm", 250.0: "typed", 300.0: "typed", 500.0: "blocked"}
    for rate, level in levels.items():
        verdict = drain_verdict(NODE, rate, (1000, 16000))
        assert (verdict.level.value, [c.name for c in verdict.checks]) == (level, names), rate
        assert verdict.projections["suggested_rate_per_s"] == SAFE_RATE  # the planner's rate (the plan's)
        assert verdict.projections["survivors"] == 47
    typed = drain_verdict(NODE, 250.0, (1000, 16000))
    assert typed.typed_expected == NODE
    assert [c.name for c in typed.checks if not c.ok] == ["survivor_cpu_vs_pause_pct", "hint_window_ms"]
    blocked = drain_verdict(NODE, 500.0, (1000, 16000))
    assert what_would_pass(blocked)[-1] == (
        f"a drain at ≤ {SAFE_RATE:g} closes/s per node (largest safe rate) passes these checks"
    )
    assert "drain_pacing_per_s ≤ 300 (now 500)" in what_would_pass(blocked)
    # Bad input as the server says it: a node out of rotation, a hint beyond the fleet's reach.
    with pytest.raises(InputError, match="hint_ms"):
        drain_verdict(NODE, 100.0, (1000, 20_000))


async def test_attempts_and_confirmations_go_to_the_recording_without_tokens():
    api = FakeFleetApi()
    recorded = []
    app = acting_app(api, recorder=recorded.append)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await set_rate(form, pilot, "150")
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the confirm dialog")
        await pilot.press("y")
        await wait_for(lambda: len(recorded) == 3, what="three records")
    asked, confirmation, applied = recorded
    assert (asked.type, asked.outcome, asked.status) == ("action", "needs_confirmation", 409)
    assert asked.verdict.level.value == "confirm" and asked.verdict.confirm_token is None
    assert (confirmation.type, confirmation.answer) == ("confirmation", "confirmed")
    assert (applied.outcome, applied.target, applied.status) == ("applied", NODE, 202)
    assert "confirm" not in applied.request and applied.request["rate_per_s"] == 150.0
    assert asked.time_s == app.model.frame.time_s


def test_add_capacity_prefill_brings_headroom_to_the_budget_once_ready():
    from console.guards import FleetCapacity, Thresholds
    from console.model.actions.capacity import add_capacity_prefill

    from ..fleet_builders import frame, nodes

    capacity = FleetCapacity(
        handshakes_per_s=1500, cpu_pct_per_handshake_per_s=0.07, connections_per_node=50_000
    )
    # 10 nodes holding 35 k of 50 k: 30 % headroom; 350 k ÷ 0.65 = 538 k of capacity needed, so 1 node.
    tight = frame(100.0, fleet=nodes(10, connections=35_000))
    prefill = add_capacity_prefill(tight, "f", capacity, Thresholds())
    assert prefill.values == {"count": "1"} and "35 %" in prefill.source
    assert parse_form(ActionKind.ADD_CAPACITY, None, prefill.values).body == {"count": 1}
    roomy = frame(100.0, fleet=nodes(10, connections=20_000))
    assert "already" in add_capacity_prefill(roomy, "f", capacity, Thresholds()).source
    assert add_capacity_prefill(tight, "f", None, Thresholds()).values == {"count": "1"}


def test_the_fake_fleet_judges_rollouts_with_the_real_guards():
    """The fake answered a rollout start, halt or resume with an empty verdict (no checks, action "rollout"):
    the dialogs showed what no server says. Now the real judge_rollout_* over its fleet, as for drains."""
    from console.guards import judge_rollout_halt, judge_rollout_resume, judge_rollout_start
    from console.protocol import RolloutRequest

    from .fake_actions import GROWABLE, rollout_fleet

    start = {"batch_size": 2, "interval_s": 90, "dry_run": True}
    expected = {
        "/v1/rollout": judge_rollout_start(
            rollout_fleet("idle"), GROWABLE, RolloutRequest(batch_size=2, interval_s=90), THRESHOLDS
        ),
        "/v1/rollout/halt": judge_rollout_halt(rollout_fleet("running")),
        "/v1/rollout/resume": judge_rollout_resume(rollout_fleet("paused"), THRESHOLDS),
    }
    for path, judged in expected.items():
        status, answer = FakeFleetApi()._act(path, start if path == "/v1/rollout" else {"dry_run": True})
        assert status == 200 and answer["verdict"] == judged.model_dump(mode="json"), path
        assert answer["verdict"]["action"].startswith("rollout_") and answer["verdict"]["checks"], answer
    status, answer = FakeFleetApi(rollout_idle=True)._act("/v1/rollout/resume", {"dry_run": True})
    assert status == 422 and answer["field"] == "rollout", answer


def test_a_slow_drain_plan_is_prefilled_at_its_own_rate():
    """0.0689/s is what the planner allows: the form must not round it up to 0.1 (a refused drain)."""
    from console.model.actions.drain import drain_prefill_from_plan

    plan = {"rate_per_s": 0.0689, "deadline_s": 600.0, "hint_ms": (1000, 2000), "limited_by": "survivor_cpu"}
    assert drain_prefill_from_plan(plan, "planner").values["rate_per_s"] == "0.0689"
    none_safe = {**plan, "rate_per_s": 0.0}
    prefill = drain_prefill_from_plan(none_safe, "planner")
    assert (
        prefill.values["rate_per_s"] == ""
        and "no safe rate now (limited by the busiest survivor's CPU)" in prefill.source
    )
    # The planner's limit in the operator's words (user pass on fleet up: "limited by survivor_cpu").
    assert drain_prefill_from_plan(plan, "planner").source == (
        "planner: largest safe rate, limited by the busiest survivor's CPU"
    )


def test_the_drain_form_of_the_last_node_in_rotation_says_none_would_take_its_clients():
    """It opened on "no safe rate now (limited by the busiest survivor's CPU) — … add capacity" for a node
    with no survivor. Every limit a planner names has the form's words; a newer server's unknown one is
    named as it is, with no remedy guessed for it."""
    from console.guards.drain import LIMITED_BY
    from console.model.actions.drain import PLAN_LIMITS, drain_prefill_from_plan

    assert set(PLAN_LIMITS) == set(LIMITED_BY)
    plan = {"rate_per_s": 0.0, "deadline_s": 600.0, "hint_ms": (1000, 2000), "cpu_margin_pct": 5.0}
    last = drain_prefill_from_plan({**plan, "limited_by": "no_survivors"}, "planner")
    assert last.values["rate_per_s"] == "" and last.source == (
        "planner: no safe rate now (no node would be left in rotation to take its clients) — any drain is "
        "blocked; undrain another node, or restart one that is down, first"
    )
    # Held back by the fleet's hint reach: what would widen the window, not capacity.
    reach = drain_prefill_from_plan({**plan, "hint_ms": (1000, 1500), "limited_by": "hint_reach"}, "planner")
    assert reach.values["rate_per_s"] == "" and "capacity would not" in reach.source
    assert "hints reach further" in reach.source and "blocked" not in reach.source
    newer = drain_prefill_from_plan({**plan, "limited_by": "moon_phase"}, "planner")
    assert newer.source == (
        "planner: no safe rate now (limited by moon_phase) — a drain's verdict says what would pass"
    )


def test_the_drain_form_says_the_cpu_margin_the_planner_kept():
    """Seen on fleet up: the form said "largest safe rate, limited by the busiest survivor's CPU" of a rate
    on the pause line, and a dry run seconds later was typed at 75.1 %. The planner now keeps a margin under
    the line (the plan's `cpu_margin_pct`), and the form says so where the margin set the rate."""
    from console.model.actions.drain import drain_prefill_from_plan

    plan = {
        "rate_per_s": 405.0,
        "deadline_s": 600.0,
        "hint_ms": (1000, 5050),
        "limited_by": "survivor_cpu",
        "cpu_margin_pct": 5.0,
    }
    assert drain_prefill_from_plan(plan, "planner").source == (
        "planner: largest safe rate less a 5-point CPU margin, limited by the busiest survivor's CPU"
    )
    # The survivors' spare admission set the rate: the margin took nothing off it, and is not said.
    paced = {**plan, "limited_by": "drain_pacing"}
    assert drain_prefill_from_plan(paced, "planner").source == (
        "planner: largest safe rate, limited by the survivors' spare admission"
    )
    # ... under the operator's admission limit: named, as the guards name it — the limit to raise.
    limited = {**paced, "admission_limit_per_s": 2.0}
    assert drain_prefill_from_plan(limited, "planner").source == (
        "planner: largest safe rate, limited by the survivors' spare admission, under their admission limit "
        "of 2/s a node"
    )
    # (a limit carried where the survivors' CPU set the rate is not what slows it: unsaid)
    cpu = drain_prefill_from_plan({**plan, "admission_limit_per_s": 2.0}, "planner")
    assert "admission limit" not in cpu.source, cpu.source
    # Within the margin of the line already: no rate keeps it, and a slow drain is not blocked — not said so.
    none = drain_prefill_from_plan({**plan, "rate_per_s": 0.0}, "planner")
    assert none.values["rate_per_s"] == "" and none.source == (
        "planner: no safe rate now (no rate keeps the busiest survivor's CPU 5 points under the pause line) "
        "— add capacity or wait for the fleet to calm"
    )


def test_what_would_pass_names_the_planners_rate_with_its_cpu_margin():
    """The hint named the largest safe rate on the pause line; typed back on a live fleet, whose CPU moves a
    few points a second, it was refused again. It now names the verdict's suggested rate, the planner's,
    and says what it is as the drain form does: the margin the thresholds set, not a written-in 5."""
    from console.guards import Thresholds, judge_drain, plan_drain
    from console.protocol import DrainRequest

    from ..guards.fleets import LOOPBACK, loopback_fleet

    request = DrainRequest(rate_per_s=2000, deadline_s=600, hint_ms=(1000, 30_000))
    for margin in (5.0, 10.0):
        # (an offline line the loopback node's third does not cross: the CPU margin sets the rate)
        thresholds = Thresholds(drain_plan_cpu_margin_pct=margin, connections_drop_pct=50)
        blocked = judge_drain(loopback_fleet(9.8), LOOPBACK, "node-2", request, thresholds)
        rate = plan_drain(loopback_fleet(9.8), LOOPBACK, "node-2", thresholds).rate_per_s
        assert blocked.level.value == "blocked" and 0 < rate < 434
        assert what_would_pass(blocked)[-1] == (
            f"a drain at ≤ {rate:g} closes/s per node (largest safe rate less a {margin:g}-point CPU margin) "
            "passes these checks"
        )
    # The survivors' spare admission set the rate: the margin took nothing off it, and is not said.
    paced = blocked.model_copy(
        update={
            "projections": {**blocked.projections, "suggested_rate_per_s": 170, "suggested_cpu_margin_pct": 0}
        }
    )
    assert (
        what_would_pass(paced)[-1]
        == "a drain at ≤ 170 closes/s per node (largest safe rate) passes these checks"
    )
    # Within the margin of the line already: a slow drain passes at this second's CPU, none keeps the margin.
    near = blocked.model_copy(
        update={
            "projections": {**blocked.projections, "suggested_rate_per_s": 0, "suggested_cpu_margin_pct": 5}
        }
    )
    assert what_would_pass(near)[-1] == (
        "no drain rate keeps the busiest survivor's CPU 5 points under the pause line (≤ 434 closes/s per node "
        "passes at this second's CPU): add capacity or wait for the fleet to calm"
    )
    # No room at all: as before.
    none = near.model_copy(update={"projections": {**near.projections, "largest_safe_rate_per_s": 0}})
    assert (
        what_would_pass(none)[-1] == "no drain rate is safe now: add capacity or wait for the fleet to calm"
    )


def test_what_would_pass_names_the_rotation_a_rollout_or_the_last_drain_needs():
    """The dialog's "What would pass" lists the blocking checks as it lists any: a rollout with no node in
    rotation (it was bad input, "batch_size: expected 1 … 0"), and a drain of the last node in rotation."""
    from console.guards import judge_drain, judge_rollout_start
    from console.protocol import DrainRequest, RolloutRequest

    from ..guards.fleets import CAPACITY, fleet, out_of_rotation

    start = judge_rollout_start(out_of_rotation(), CAPACITY, RolloutRequest(batch_size=1, interval_s=30))
    assert what_would_pass(start) == ["nodes_in_rotation ≥ 1 (now 0)"]
    # A first batch of every node in rotation: the one reason, not a survivors' pacing limit of 0 beside it.
    every = judge_rollout_start(fleet(3), CAPACITY, RolloutRequest(batch_size=3, interval_s=30))
    assert what_would_pass(every) == ["nodes_in_rotation_after ≥ 1 (now 0)"]
    last = judge_drain(
        fleet(1), CAPACITY, "gw-000", DrainRequest(rate_per_s=1, deadline_s=600, hint_ms=(1000, 2000))
    )
    # The one reason, with no survivor's CPU or pacing limit and no rate: none would pass with no node left.
    assert what_would_pass(last) == ["nodes_in_rotation_after ≥ 1 (now 0)"]


async def test_the_blocked_dialog_of_a_first_batch_of_every_node_in_rotation_names_the_one_reason():
    """The server's verdict on a start whose first batch takes every node in rotation, in the dialog: its
    table held survivor_cpu_vs_pause_pct "—" and drain_pacing_per_s "≤ 0" FAILs beside the reason. Now one
    row fails, and the question names it alone."""
    from console.guards import judge_rollout_start
    from console.protocol import RolloutRequest

    from ..guards.fleets import CAPACITY, fleet

    verdict = judge_rollout_start(fleet(3), CAPACITY, RolloutRequest(batch_size=3, interval_s=30))
    app = acting_app(FakeFleetApi())
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        app.push_screen(VerdictDialog("rollout start", verdict, app.palette, back_to_form=True))
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the blocked dialog")
        await pilot.pause()
        rows = shown(app.screen.query_one("#checks")).splitlines()
        failing = [row.split("│")[1].strip() for row in rows if "FAIL" in row]
        assert failing == ["nodes_in_rotation_after"], rows
        assert not [row for row in rows if "survivor_cpu" in row or "drain_pacing" in row]
        assert shown(app.screen.query_one("#ask")).splitlines() == [
            "✖ blocked: nothing applied. What would pass: nodes_in_rotation_after ≥ 1 (now 0)",
            "Esc: back to the form",
        ]
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")


async def test_undrain_on_a_ready_node_says_so_without_a_form():
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        await pilot.press("u")  # gw-0000, ready
        # The key starts the action's worker, which answers with a notification: waited for, as a condition.
        await wait_for(
            lambda: any(
                n.message == f"{NODE} is ready: only a draining or drained node undrains"
                for n in app._notifications
            ),
            what="the undrain refusal",
        )
        assert isinstance(app.screen, MainScreen) and api.sent == []
        draining = next(n.id for n in app.model.nodes.values() if n.state.value == "draining")
        app.open_node(draining)
        await pilot.pause()
        await pilot.press("d")  # draining already: no drain form with a meaningless rate
        await wait_for(
            lambda: any(
                n.message == f"{draining} is draining: only a ready node drains (u undrains it)"
                for n in app._notifications
            ),
            what="the drain refusal",
        )
        await open_form(app, pilot, "u", "the undrain form of a draining node")


def test_a_check_that_only_warns_reads_note_not_fail():
    from console.guards.verdict import check
    from console.model.actions.answer import check_mark
    from console.protocol import VerdictLevel

    warn = check("cpu_now_pct", 97.7, 75, fails_to=VerdictLevel.OK, why="new nodes serve only later")
    block = check("drain_pacing_per_s", 500, 300, fails_to=VerdictLevel.BLOCKED, why="pacing")
    fine = check("drain_pacing_per_s", 100, 300, fails_to=VerdictLevel.BLOCKED, why="pacing")
    assert [check_mark(c) for c in (warn, block, fine)] == ["note", "FAIL", "pass"]


async def test_two_enters_at_once_send_one_request_and_keep_the_console():
    """Key repeat or a busy machine delivers both Enters before the form is gone: the second dismissed it
    again after the request had left, and the console crashed (ScreenStackError)."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await set_rate(form, pilot, "150")
        form.on_input_submitted(None)  # both in one turn of the loop, as a held Enter does
        form.on_input_submitted(None)
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the confirm dialog")
        dialog = app.screen
        dialog.action_confirm()
        dialog.action_confirm()
        await wait_for(lambda: api.applied, what="the confirmed drain")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, MainScreen)
        assert [body.get("confirm") is None for _, _, body in api.sent] == [True, False]


async def test_enter_does_not_close_a_dry_run_so_a_second_enter_cannot_apply_it():
    """The dry run says "Esc: back to the form"; Enter closed it too, and the form's Enter behind it applied the
    action the operator had only meant to try."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        dialog = await drain_dialog(app, pilot, "100", "ctrl+d", "the dry run")
        await pilot.press("enter", "enter", "enter")
        assert app.screen is dialog and api.applied == [] and len(api.sent) == 1
        await open_form(app, pilot, "escape", "back on the form")
        assert api.applied == []


async def test_an_action_from_the_palette_waits_for_the_open_one():
    """Starting another action (the palette reaches over a dialog) replaced the open flow: its dialog
    stayed on screen, took the typed name, and sent nothing."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        dialog = await drain_dialog(app, pilot, "150", "enter", "the confirm dialog")
        app.action_act("admission")
        await pilot.pause()
        assert app.screen is dialog  # no admission form over it
        await pilot.press("y")
        await wait_for(lambda: api.applied, what="the confirmed drain")
        assert api.sent[-1][2]["confirm"] == {"token": "tok-1", "typed": None}


async def test_quitting_over_an_open_form_asks_for_a_second_quit():
    """Ctrl+Q over a form quit at once: what was typed was lost, and with it the embedded fleet."""
    app = acting_app(FakeFleetApi())
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        await open_drain_form(app, pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, ActionForm)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running


async def test_back_from_a_dry_run_the_field_being_tuned_keeps_the_focus():
    """After Esc on a dry run the form came back focused on its first field: the operator, tuning the
    ceiling, typed into the rate instead (and applied it)."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        await open_form(app, pilot, "a", "the admission form")
        await pilot.pause()
        form = app.screen
        ceiling = form.query_one("#field-max_connections", Input)
        ceiling.focus()
        ceiling.value = ""
        await pilot.press(*"1100")
        rate = form.values()["rate_per_s"]
        await pilot.press("ctrl+d")
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dry run")
        await pilot.press("escape")
        await form_again(app, form)
        await pilot.pause()
        assert app.screen.focused is not None and app.screen.focused.id == "field-max_connections"
        await pilot.press("backspace", "backspace", "backspace", "backspace", *"900")
        assert app.screen.values()["max_connections"] == "900"
        assert app.screen.values()["rate_per_s"] == rate


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_every_form_field_shows_its_whole_hint_and_its_buttons(size):
    """The admission form's hint was cut at the field's edge ("blank: unlimited, or a number > 0 and ≤").
    User pass at 80×24: cut again ("… a number > 0 and"), and the form's buttons went under the footer."""
    from console.model.actions.form import FORMS

    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=size) as pilot:
        await fleet_ready(app)
        for kind, fields in FORMS.items():
            if not fields:
                continue
            app.push_screen(ActionForm(kind, NODE if kind.needs_node else None, Prefill({}, "")))
            await pilot.pause()
            for spec in fields:
                field = app.screen.query_one(f"#field-{spec.name}", Input)
                assert field.content_size.width >= len(spec.placeholder()), (kind, spec.name)
            above_the_footer = app.screen.region.bottom - 1
            for button in app.screen.query(Button):
                assert button.region.height == 3 and button.region.bottom <= above_the_footer, (
                    kind,
                    button.id,
                )
            app.pop_screen()


async def test_typing_keeps_the_focus_where_the_operator_types_and_submit_goes_to_the_bad_field():
    """Found in review: the inline check focused the first bad field on every keystroke — rate emptied,
    Tab, "900" gave deadline "9" and rate "00"; in the rollout form a Backspace in the interval sent the
    focus back to a bad batch. Errors show inline as one types; only Enter (or a dry run) moves the focus."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        assert app.focused is form.query_one("#field-rate_per_s", Input)
        await pilot.press("end", *["backspace"] * 6, "tab", "9", "0", "0")
        await pilot.pause()
        assert form.values()["rate_per_s"] == "" and form.values()["deadline_s"] == "900"
        assert app.focused is form.query_one("#field-deadline_s", Input)
        assert "rate (closes/s) is empty" in shown(form.query_one("#form-error"))  # said inline all the same
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is form and api.sent == []
        assert app.focused is form.query_one("#field-rate_per_s", Input)  # submitted: to the bad field
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")

        form = await open_form(app, pilot, "R", "the rollout form")
        await pilot.press(*"1.5", "tab", "backspace")
        await pilot.pause()
        assert app.focused is form.query_one("#field-interval_s", Input)
        await pilot.press(*"60")
        assert form.values()["interval_s"] == "60" and form.values()["batch_size"] == "1.5"
        await pilot.press("ctrl+d")  # a dry run is a submit too: the bad batch gets the focus
        await pilot.pause()
        assert app.screen is form and api.sent == []
        assert app.focused is form.query_one("#field-batch_size", Input)


async def test_a_confirmation_asked_again_says_the_verdict_changed():
    """Found in review: the fleet moved between the typed verdict and the typed name; the server refused
    the token (409, the verdict changed) and the console showed an identical dialog with new numbers and
    no word, so the operator could not tell why it asked again."""
    api = FakeFleetApi(verdict_moves=True)
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        first = await drain_dialog(app, pilot, "250", "enter", "the typed dialog")
        assert first.asks.value == "typed" and not first.query("#verdict-message")  # first ask: no word
        await pilot.press(*NODE, "enter")
        await wait_for(
            lambda: isinstance(app.screen, VerdictDialog) and app.screen is not first, what="asked again"
        )
        again = app.screen
        said = shown(again.query_one("#verdict-message"))
        assert "asked again, nothing applied" in said and "the verdict changed since it was issued" in said
        assert "newly failing: headroom_after_pct" in said and "confirm_token" not in said
        assert api.applied == []
        await pilot.press(*NODE, "enter")  # confirming the new verdict applies it
        await wait_for(lambda: api.applied, what="the typed drain")
        assert api.sent[-1][2]["confirm"]["typed"] == NODE


async def test_q_over_an_open_action_asks_as_ctrl_q_does_but_is_typed_into_a_field():
    """Found in review: `q` did nothing over a form or a verdict dialog (help lists it "anywhere"); only
    Ctrl+Q warned. Outside an input it now warns the same way and a second press quits; in an input
    (a form field, the typed name) it is a q."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await pilot.press("end", "q")  # the rate field has the focus: typed
        await pilot.pause()
        assert form.values()["rate_per_s"] == "120q" and app.is_running
        assert not any("an action is open" in n.message for n in app._notifications)
        await pilot.press("ctrl+u")  # (Input: delete to the start)
        await pilot.press(*"250", "enter")
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the typed dialog")
        dialog = app.screen
        await pilot.press("q")  # the typed name has the focus: typed
        await pilot.pause()
        assert dialog.query_one("#typed", Input).value == "q" and app.is_running
        dialog.set_focus(None)  # off the input: q is the app's quit, which asks first
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and app.screen is dialog
        assert any("an action is open" in n.message for n in app._notifications)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running and api.applied == []


async def test_a_one_key_typo_over_a_prefill_is_checked_before_it_changes_the_fleet():
    """Found in review: the form selects its pre-filled value, so `a`, `2`, Enter cut admission to 2 per
    node and an ok verdict applied it at once, nothing shown; `c`, `30`, Enter added 30 nodes. A big
    change (a limit cut below half, raised above double, set or lifted; more nodes than the pre-fill)
    now shows before → after in the console first: Enter sends it, Esc goes back to the form."""
    from console.ui.screens.change_check import ChangeCheck

    api = FakeFleetApi()
    app = acting_app(api)  # the storm: admission 150/s per node, burst 300, ceiling 40,000
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_form(app, pilot, "a", "the admission form")
        await pilot.press("2", "enter")
        await wait_for(lambda: isinstance(app.screen, ChangeCheck), what="the console's check")
        said = shown(app.screen.query_one("#changes"))
        assert "rate (new conns/s per node)" in said and "150 → 2" in said and "1.3 % of now" in said
        assert "burst" not in said and api.sent == []  # only what changed much
        await pilot.press("escape")  # back to the form, what was typed kept, focus where it was
        form = await form_again(app, form)
        await pilot.pause()
        assert form.values()["rate_per_s"] == "2" and api.sent == []
        assert app.focused is form.query_one("#field-rate_per_s", Input)
        await pilot.press("ctrl+u", *"100", "enter")  # a third less: no check, applied
        await wait_for(lambda: api.applied, what="the admission applied")
        assert api.sent[-1][2]["rate_per_s"] == 100.0
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")

        form = await open_form(app, pilot, "c", "the add-capacity form")
        suggested = form.values()["count"]
        await pilot.press("ctrl+d")  # a dry run applies nothing: no check
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dry run")
        await pilot.press("escape")
        form = await form_again(app, form)
        await pilot.pause()
        await pilot.press("ctrl+u", *"30", "enter")
        await wait_for(lambda: isinstance(app.screen, ChangeCheck), what="the console's check")
        said = shown(app.screen.query_one("#changes"))
        assert f"{suggested} → 30" in said and f"more than the {suggested} pre-filled" in said
        await pilot.press("enter")  # meant: sent, and the server judges it (it asks to confirm)
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the server's verdict")
        assert api.sent[-1][2] == {"count": 30}


async def test_the_verdict_dialog_footer_shows_its_own_keys_not_the_fleets():
    """Found in review: the verdict dialog had no footer, so the main screen's showed through it — d drain,
    R rollout, q quit — keys that do nothing there. Now its own: Esc, and Enter/y where they confirm."""
    from textual.widgets._footer import FooterKey

    def footer(dialog: VerdictDialog) -> set[str]:
        return {key.description for key in dialog.query(FooterKey)}

    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        dialog = await drain_dialog(app, pilot, "150", "enter", "the confirm dialog")
        await pilot.pause()
        assert footer(dialog) == {"cancel", "apply"}  # the question's words (test_verdict_keys: each kind)
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        dialog = await drain_dialog(app, pilot, "100", "ctrl+d", "the dry run")
        await pilot.pause()
        # A dry run asks nothing: Enter is not offered, and Esc goes back to the form, as its question says.
        assert footer(dialog) == {"back to the form"}
        await pilot.press("enter")
        assert app.screen is dialog and api.applied == []


def test_a_forecast_that_moves_less_than_one_percent_draws_flat():
    """Found in review: each forecast row was scaled to its own spread, so 1,299,262–1,299,965 (a 0.05 %
    change) drew as a cliff ▁▁▁████ and a constant 100–100 as a half bar. Within ~1 % of the level a row
    draws flat; a real change still spans the scale."""
    from console.ui.screens.verdict_dialog import forecast_text
    from console.ui.themes import load_themes

    from .fake_actions import drain_verdict

    def run(conns, cpu, tries):
        return {"connections": conns, "cpu_max_pct_series": cpu, "attempts_per_s": tries}

    steady = [1_299_262 + (703 if s >= 30 else 0) for s in range(60)]  # +0.05 % half-way
    flat = [100.0] * 60
    falling = [1000.0 - 10 * s for s in range(60)]  # −59 %: a real change
    forecast = {
        "horizon_s": 60,
        "tick_ms": 10.0,
        "without_action": run(steady, flat, falling),
        "with_action": run(steady, flat, falling),
    }
    verdict = drain_verdict(NODE, 100.0, (1000, 16000)).model_copy(update={"forecast": forecast})
    palette = next(iter(load_themes(()).values())).palette
    rows = {}
    for line in forecast_text(verdict, palette).plain.splitlines()[1:]:
        label, without, acted, scale = re.fullmatch(
            r"(.{12}) without (.{30})  with (.{30})  (.*)", line
        ).groups()
        rows[label.strip()] = (without, acted, scale)
    without, acted, scale = rows["connections"]
    assert set(without + acted) == {"▁"} and scale == "1,299,262–1,299,965"
    without, acted, scale = rows["max CPU %"]
    assert set(without + acted) == {"▁"} and scale == "100–100"
    without, _, _ = rows["attempts/s"]
    assert without[0] == "█" and without[-1] == "▁"


def planner_without_a_safe_rate() -> tuple[FakeFleetApi, ConsoleApp]:
    """A fleet whose drain planner finds no safe rate now: the drain form's rate is pre-filled empty."""
    api = FakeFleetApi()
    api.plan_rate = 0.0
    return api, acting_app(api)


async def test_when_no_drain_rate_is_safe_the_form_offers_none():
    """Found in review: with no safe rate the drain form pre-filled 0.1 closes/s — read as the planner's
    suggestion, and blocked. Now the rate is left empty and the form says there is no safe rate."""
    api, app = planner_without_a_safe_rate()
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        assert form.values()["rate_per_s"] == "" and form.values()["deadline_s"] == "600"
        note = shown(form.query_one("#form-source"))
        assert "no safe rate now (limited by the survivors' spare admission)" in note and "0.1" not in note
        await pilot.press("enter")  # nothing to send until a rate is typed
        await pilot.pause()
        assert app.screen is form and api.sent == []
        assert "rate (closes/s) is empty; expected" in shown(form.query_one("#form-error"))


async def test_with_no_safe_rate_the_drain_form_opens_calm_and_says_why():
    """Found in review: with no safe rate the drain form opened already showing "✖ rate (closes/s): '' is
    not allowed" — an error before the operator had typed anything. It now opens with the rate empty and
    the planner's reason (here the survivors' CPU, their spare admission fine); the error comes on submit."""
    api, app = planner_without_a_safe_rate()
    api.plan_limited_by, api.plan_cpu_margin_pct = "survivor_cpu", 5.0
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await pilot.pause()
        assert form.values()["rate_per_s"] == ""
        assert shown(form.query_one("#form-error")).strip() == ""
        note = shown(form.query_one("#form-source"))
        assert (
            "no safe rate now (no rate keeps the busiest survivor's CPU 5 points under the pause line)"
            in (" ".join(note.split()))
        ), note
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is form and api.sent == []
        error = " ".join(shown(form.query_one("#form-error")).split())
        assert "✖ rate (closes/s) is empty; expected a number > 0" in error and "''" not in error


async def test_the_rollout_mode_is_accepted_in_any_case():
    """Found in review: mode is free text and 'Drain' was refused ('expected drain or abrupt')."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_form(app, pilot, "R", "the rollout form")
        mode = form.query_one("#field-mode", Input)
        mode.focus()
        await pilot.press("ctrl+u", *"Drain")
        await pilot.pause()
        assert shown(form.query_one("#form-error")).strip() == ""
        await pilot.press("enter")
        await wait_for(lambda: api.sent, what="the rollout sent")
        assert api.sent[-1][2]["mode"] == "drain"


async def test_a_rate_typed_where_the_planner_offered_none_is_sent():
    """Found in a user pass: with no safe rate the form pre-fills the rate empty; a rate typed there and
    Enter closed the form and nothing happened — the check for fleet changes under the form parsed the
    empty pre-fill, raised, and the flow's worker swallowed it. An empty pre-fill is no value before."""
    api, app = planner_without_a_safe_rate()
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await set_rate(form, pilot, "100")
        await pilot.press("enter")
        await wait_for(lambda: api.applied, what="the drain applied")
        assert api.sent[-1][2]["rate_per_s"] == 100.0
        assert any("applied" in n.message for n in app._notifications)


async def test_a_failure_in_the_action_flow_is_said_not_swallowed(monkeypatch, caplog):
    """Whatever raises in the act/confirm flow: an error notification naming the action and what failed,
    and a log record with the traceback — never a form that closes on nothing."""
    import console.ui.actions

    def broken(*_args, **_kwargs):
        raise RuntimeError("the check fell over")

    monkeypatch.setattr(console.ui.actions, "big_changes", broken)
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        await open_drain_form(app, pilot)
        await pilot.press("enter")
        await wait_for(
            lambda: any(n.severity == "error" for n in app._notifications), what="the error notification"
        )
        said = next(n for n in app._notifications if n.severity == "error")
        assert "RuntimeError: the check fell over" in said.message and "drain" in said.title
        assert isinstance(app.screen, MainScreen) and api.applied == []
    assert any("the check fell over" in r.getMessage() or r.exc_info for r in caplog.records)


async def test_a_prefilled_hint_window_follows_the_rate_an_edited_one_stays():
    """Found in a user pass: the planner's hint window (1000:2000 with no safe rate) stayed as the operator
    typed a rate of 833, and the server's own check failed (hint_window_ms 1,000 ≥ 8,330). Untouched, the
    window is re-derived with the drain guard's rule (console.guards.drain.planned_hint_ms): from 1000 ms,
    as wide as the rate needs — rate ÷ hint_spread_per_s_max seconds, at least hint_window_min_ms — and no
    longer than the fleet's longest hint. Edited by the operator, it is theirs."""
    from console.guards.drain import hint_window_needed_ms

    api, app = planner_without_a_safe_rate()
    thresholds = app.actions.thresholds
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await set_rate(form, pilot, "60")
        await pilot.pause()
        expected_high = 1000 + math.ceil(hint_window_needed_ms(60, thresholds))
        assert expected_high < 16000  # within the fleet's longest hint: the rule's own width
        assert (form.values()["hint_min_ms"], form.values()["hint_max_ms"]) == ("1000", str(expected_high))
        assert "re-derived" in shown(form.query_one("#form-source"))
        await set_rate(form, pilot, "833")  # beyond the fleet's longest hint (16 s): capped there
        await pilot.pause()
        assert form.values()["hint_max_ms"] == "16000"
        form.query_one("#field-hint_max_ms", Input).value = "9000"  # the operator's own window
        await set_rate(form, pilot, "50")
        await pilot.pause()
        assert form.values()["hint_max_ms"] == "9000"
        await pilot.press("enter")
        await wait_for(lambda: api.sent, what="the drain sent")
        assert api.sent[-1][2]["hint_ms"] == [1000, 9000]


async def test_a_dry_run_brings_the_form_back_saying_why_its_hint_moved():
    """Found in review: with no safe rate (the note: "no safe rate now"), 833 typed, dry-ran: on Esc the form
    showed hint max 9330 where it had been pre-filled 2000, and its note said only the planner's "no safe
    rate now" — the window the console re-derived for the rate, unsaid. The form that comes back keeps it
    and says why; a window the operator typed over is theirs and nothing is said of it."""
    _api, app = planner_without_a_safe_rate()
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        before = form.values()["hint_max_ms"]
        await set_rate(
            form, pilot, "60"
        )  # (833 would need more than this fleet's longest hint, its pre-fill)
        await pilot.pause()
        derived = form.values()["hint_max_ms"]
        assert derived != before
        await pilot.press("ctrl+d")
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dry run")
        await pilot.press("escape")
        again = await form_again(app, form)
        await pilot.pause()
        assert again.values()["hint_max_ms"] == derived
        note = shown(again.query_one("#form-source"))
        assert "no safe rate now" in note and "hint window re-derived for 60 closes/s" in note, note
        # Typed over, the window is the operator's: back from a dry run, nothing says it was re-derived.
        again.query_one("#field-hint_max_ms", Input).value = "12000"
        await pilot.press("ctrl+d")
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the second dry run")
        await pilot.press("escape")
        third = await form_again(app, again)
        await pilot.pause()
        assert third.values()["hint_max_ms"] == "12000"
        assert "re-derived" not in shown(third.query_one("#form-source"))


def test_the_re_derived_hint_passes_the_servers_own_hint_check():
    """The user pass's numbers: at 833 closes/s the planner's rule gives 1000:9330 (a window of 8,330 ms,
    what the guard's hint_window_ms check asks), where the pre-filled 1000:2000 failed."""
    from console.guards import Thresholds, judge_drain
    from console.model.actions.drain import DrainHintRule
    from console.protocol import DrainRequest
    from tests.guards.fleets import CAPACITY, fleet

    rule = DrainHintRule(Thresholds())
    assert rule.for_rate(833) == (1000, 9330) and rule.for_rate(0.5) == (1000, 2000)
    assert DrainHintRule(Thresholds(), hint_max_ms=5000).for_rate(833) == (1000, 5000)
    assert "1000 × rate ÷ 100" in rule.describe()

    def hint_check(hint_ms):
        request = DrainRequest(rate_per_s=833, deadline_s=600, hint_ms=hint_ms)
        verdict = judge_drain(fleet(48), CAPACITY, "gw-017", request)
        return next(c for c in verdict.checks if c.name == "hint_window_ms").ok

    assert not hint_check((1000, 2000)) and hint_check(rule.for_rate(833))


async def test_halt_or_resume_a_rollout_that_cannot_is_answered_here_nothing_sent():
    """Found in a user pass: `h` on a halted rollout opened a form and sent it; the server refused it
    ("'halted' is not allowed; expected a running or paused rollout") and the audit log held a failed
    action. As for an undrain of a ready node, the console says so itself and sends nothing."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        # Review: the words the server's refusal has (`nothing_to`), with the console's keys and clock.
        done = {"batch": 8, "batches": 8, "completed_at_s": 750.0}
        for state, key, said in (
            (
                "halted",
                "h",
                "halt rollout: nothing to halt — the rollout is halted already, at batch 8 of 8; resume it "
                "(r); nothing sent",
            ),
            (
                "idle",
                "h",
                "halt rollout: nothing to halt — no rollout has started on this fleet; start one (R); "
                "nothing sent",
            ),
            (
                "completed",
                "h",
                "halt rollout: nothing to halt — the rollout completed at 0:12:30 (batch 8 of 8); start a new "
                "one (R); nothing sent",
            ),
            (
                "completed",
                "r",
                "resume rollout: nothing to resume — the rollout completed at 0:12:30 (batch 8 of 8); start "
                "a new one (R); nothing sent",
            ),
            (
                "running",
                "r",
                "resume rollout: nothing to resume — the rollout is running, at batch 8 of 8; nothing sent",
            ),
        ):
            with_rollout(app, state, **done)
            await pilot.press(key)
            await wait_for(lambda said=said: any(n.message == said for n in app._notifications), what=said)
            assert isinstance(app.screen, MainScreen)
        assert api.sent == []
        with_rollout(app, "paused")
        await open_form(app, pilot, "h", "the halt form of a paused rollout")


async def test_a_blocked_verdict_is_not_covered_by_its_own_notification_until_closed():
    """User pass at 120×40: the blocked dialog opened under an error toast saying what its own heading
    says, and the toast covered the end of "What would pass: … a drain at ≤ N closes/s passes" — the line
    an operator needs. The notification now follows the dialog, as a trace once it is closed."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=(120, 40)) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await set_rate(form, pilot, "500")
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the blocked dialog")
        await pilot.pause()
        assert not [n.message for n in app._notifications], "a toast over the blocked dialog"
        await pilot.press("escape")
        await form_again(app, form)
        await wait_for(lambda: any("blocked" in n.title for n in app._notifications), what="the trace")
        assert api.applied == [] and len(api.sent) == 1


async def test_the_admission_form_sent_untouched_says_nothing_changed_and_sends_nothing():
    """Found in review: Enter on the admission form as it opened applied, and audited, an empty change. The
    form says so in place and sends nothing — the fleet's values typed again too (150.0 for 150); a dry
    run still judges them, and a real change still goes."""
    api = FakeFleetApi()
    app = acting_app(api)  # the storm: admission 150/s per node, burst 300, ceiling 40,000
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_form(app, pilot, "a", "the admission form")
        for keys in (("enter",), ("ctrl+u", *"150.0", "enter")):
            await pilot.press(*keys)
            await pilot.pause()
            assert app.screen is form and api.sent == [], keys
            said = str(form.query_one("#form-error", Label).render())
            assert "nothing to apply: these are the fleet's current settings" in said, said
        await pilot.press("ctrl+d")  # a dry run judges the settings as they stand
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dry run")
        assert api.sent[-1][2].get("dry_run") is True and not api.applied
        await pilot.press("escape")
        form = await form_again(app, form)
        await pilot.pause()
        await pilot.press("ctrl+u", *"120", "enter")
        await wait_for(lambda: api.applied, what="the admission applied")
        assert api.sent[-1][2]["rate_per_s"] == 120.0


async def test_keys_that_arrive_together_go_to_the_field_tab_moved_to():
    """User pass over tmux: "Tab Tab 77" arriving in one read (a fast typist, a slow ssh link, a paste)
    typed 77 into the form's first field — Tab was the screen's ordinary binding, run only after the
    focused field had taken the keys behind it — and the focus then moved on to an empty ceiling."""
    from textual import events

    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_form(app, pilot, "a", "the admission form")
        before = form.values()
        for key, character in (("tab", "\t"), ("tab", "\t"), ("7", "7"), ("7", "7")):
            app.post_message(events.Key(key, character))  # in one go: no wait between them
        await wait_for(lambda: form.values() != before, what="the keys typed")
        await pilot.pause()
        typed = {name: value for name, value in form.values().items() if value != before[name]}
        assert typed == {"max_connections": "77"}, typed  # (Tab selects a field's value: typing replaces it)
        assert app.focused is form.query_one("#field-max_connections", Input)
        for key, character in (("shift+tab", None), ("1", "1")):
            app.post_message(events.Key(key, character))
        await wait_for(lambda: form.values()["burst"] != before["burst"], what="the key typed")
        assert form.values()["burst"] == "1", form.values()


async def test_backspaces_that_arrive_with_the_digits_behind_them_delete_before_the_digits_go_in():
    """User pass over tmux: '-5' in the drain form's rate, then 'BSpace BSpace 99999' in one read gave
    '-5999', not '99999': the digits went in at once and the backspaces, the field's own bindings, ran
    only once they had bubbled up to the app — deleting the 9s typed after them."""
    from textual import events

    app = acting_app(FakeFleetApi())
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await set_rate(form, pilot, "-5")
        burst = [("backspace", None), ("backspace", None)] + [("9", "9")] * 5 + [("left", None), ("1", "1")]
        for key, character in burst:
            app.post_message(events.Key(key, character))
        for _ in range(len(burst) * 4):  # each key's bubbling, if any, is a few hops of the message queues
            await pilot.pause()
        assert form.values()["rate_per_s"] == "999919", form.values()


async def test_a_dry_run_key_that_arrives_with_the_digits_before_it_judges_the_digits():
    """User pass over tmux: "0" typed over the capacity form's 1 and Ctrl+D in one read dry-ran count 1
    (the audit log said so) while the field then showed 0 — Ctrl+D, a priority binding, ran before the
    field had taken the key ahead of it, so the verdict judged what was there before."""
    from textual import events

    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        await set_rate(form, pilot, "12")
        await pilot.pause()
        burst = [("backspace", None), ("backspace", None), ("3", "3"), ("4", "4"), ("ctrl+d", None)]
        for key, character in burst:
            app.post_message(events.Key(key, character))  # in one go: no wait between them
        await wait_for(lambda: api.sent, what="the dry run sent")
        _, _, body = api.sent[-1]
        assert body["dry_run"] is True and body["rate_per_s"] == 34, body
        # The hint window the console keeps following the rate follows the rate sent, not the one before.
        assert form.hint_rule is not None
        assert tuple(body["hint_ms"]) == form.hint_rule.for_rate(34.0), body


async def test_a_rollout_the_fleet_cannot_run_is_refused_at_the_key_saying_why():
    """User pass on `fleet up`: R opened the rollout form, took the operator's numbers, and only the
    submit was refused ("fleet up cannot roll out"). The fleet says so in every frame
    (`rollout.unavailable`): the console refuses at the key with its words, and opens no form."""
    from console.protocol import RolloutStatus

    api = FakeFleetApi()
    app = acting_app(api)
    why = "restart: 'node-1' is not allowed; expected a node with a restart command; `fleet up` …"
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        frame = app.model.frame
        assert frame is not None
        app.model.frame = frame.model_copy(update={"rollout": RolloutStatus(unavailable=why)})
        await pilot.press("R")
        said = f"this fleet cannot start a rollout — {why}; nothing sent"
        await wait_for(lambda: any(n.message == said for n in app._notifications), what=said)
        assert isinstance(app.screen, MainScreen) and api.sent == []
        with_rollout(app, "idle")  # a fleet that can (or an older server, which does not say)
        await open_form(app, pilot, "R", "the rollout form")


async def test_capacity_the_fleet_cannot_add_is_refused_at_the_key_saying_why():
    """User pass on a `stormdeck controller` over a nodes file (no provisioner: frames say `max_nodes` 0):
    c opened the add-capacity form pre-filled "2 — the nodes that bring headroom to 35 % once ready", and
    only Enter drew "fleet 'loopback' cannot add capacity". The frame says so: refused at the key with
    why and what this fleet can do instead (console.model.actions.refusals.cannot_add_capacity), no form, nothing
    sent — as R on a fleet that cannot roll out. A fleet at its most is refused the same way; one with room
    (or an older server, which does not say) gets the form."""
    from console.model.actions.refusals import cannot_add_capacity

    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        frame = app.model.frame
        assert frame is not None
        nodes = list(app.model.nodes.values())
        for max_nodes, why in (
            (0, "adds no nodes: start "),
            (len(nodes), f"is at its most, {len(nodes)} nodes"),
        ):
            app.model.frame = frame.model_copy(update={"max_nodes": max_nodes})
            said = cannot_add_capacity(max_nodes, nodes)
            assert said is not None and said.startswith(f"this fleet cannot add capacity — it {why}"), said
            await pilot.press("c")
            await wait_for(lambda said=said: any(n.message == said for n in app._notifications), what=said)
            assert isinstance(app.screen, MainScreen) and api.sent == []
        app.model.frame = frame.model_copy(update={"max_nodes": None})
        await open_form(app, pilot, "c", "the add-capacity form")


async def test_a_count_below_one_is_named_in_the_form_with_the_fleets_range():
    """Maintenance-window pass: 5000 in the add-capacity form said the fleet's range ("[1, 64] (room left in
    the fleet: 64 of 84 nodes)"), 0 the form's own bound ("an integer ≥ 1 and ≤ 10,000") — a range this fleet
    cannot take. Both go through the same check, in the same words."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_form(app, pilot, "c", "the add-capacity form")
        said = {}
        for typed in ("999", "0"):
            await pilot.press("ctrl+u", *typed)
            await pilot.pause()
            said[typed] = str(form.query_one("#form-error", Label).render())
        assert "nodes to add: '0' is not allowed" in said["0"] and "10,000" not in said["0"], said
        assert said["0"].split("expected ")[1] == said["999"].split("expected ")[1], said
        assert "room left in the fleet" in said["0"]
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is form and api.sent == []


async def test_a_count_beyond_the_fleets_room_is_named_in_the_form_before_any_big_change_check():
    """Maintenance-window run: 999 typed into the add-capacity form drew no error as typed, then "a big
    change — is this what you meant?", and only after y the server's 422 ("expected an integer in [1, 64]
    (room left in the fleet: 64 of 84 nodes)"). The console has the capacity record: it says so at once."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_form(app, pilot, "c", "the add-capacity form")
        await pilot.press("ctrl+u", *"999")
        await pilot.pause()
        said = str(form.query_one("#form-error", Label).render())
        assert "nodes to add" in said and "999" in said and "room left in the fleet" in said, said
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is form and api.sent == []


async def test_a_node_action_waits_for_the_node_table_to_be_seen():
    """Below 80×24 the node table is hidden (`TooSmallNotice`), its cursor on a row nobody sees: `d` opened a
    drain of that node. A node action needs a node the operator can see; fleet-wide ones still open."""
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=(60, 20)) as pilot:
        await fleet_ready(app)
        await pilot.press("d")

        def said() -> bool:
            return any("put the cursor on a node first" in n.message for n in app._notifications)

        await wait_for(lambda: said() or isinstance(app.screen, ActionForm), what="the drain's answer")
        assert isinstance(app.screen, MainScreen), f"{app.screen} opened for a node nobody sees"
        assert not api.sent
        await pilot.press("a")  # admission: the fleet's, no node needed
        await wait_for(lambda: isinstance(app.screen, ActionForm), what="the admission form")
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        await pilot.press("d")
        await wait_for(lambda: isinstance(app.screen, ActionForm), what="the drain form, the table seen")


async def test_the_form_says_enter_applies_it_in_its_footer_and_the_help():
    """On-call walk: the drain form's footer read "^d dry run  esc cancel" and the help's action form rows
    the same — Enter, the key that applies it, was said nowhere. Listed in both, and it still applies."""
    from console.ui.screens.help import binding_rows

    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(app)
        form = await open_drain_form(app, pilot)
        shown = {key: active.binding.description for key, active in form.active_bindings.items()}
        assert shown.get("enter") == "apply" and form.active_bindings["enter"].binding.show, shown
        rows = binding_rows("action form", list(ActionForm.BINDINGS))
        assert ("action form", "⏎ enter", "apply") in rows, rows
        await pilot.press("enter")
        await wait_for(lambda: api.sent, what="the drain sent")


async def test_the_rollout_form_starts_from_a_batch_the_guards_pass_and_the_dialog_names_the_batch():
    """Real 3-node fleet at 50 % headroom: R pre-filled a batch of 2, Ctrl+D gave "✖ BLOCKED … batch_connections
    2,016 ≤ 1,016" and "what would pass" read "batch_connections ≤ 1,016 (now 2,016)", never the batch to
    type. The form now starts from the largest batch the guards pass over the newest frame (here the fleet's
    own 48 nodes take the usual 2), and a start blocked on the batch's room says "batch size ≤ 1 (now 2)"."""
    from console.guards import judge_rollout_start
    from console.model.actions.rollout import rollout_prefill
    from console.protocol import RolloutRequest

    from ..guards.fleets import CAPACITY, fleet
    from .fake_actions import GROWABLE

    half = fleet(count=3, connections=25_000)
    verdict = judge_rollout_start(half, CAPACITY, RolloutRequest(batch_size=2, interval_s=90))
    app = acting_app(FakeFleetApi())
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_form(app, pilot, "R", "the rollout form")
        expected = rollout_prefill(app.model.frame, app.model.fleet, GROWABLE, THRESHOLDS)
        assert form.values()["batch_size"] == expected.values["batch_size"], expected
        assert "75 % pause line" in shown(form.query_one("#form-source"))
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        app.push_screen(VerdictDialog("rollout start", verdict, app.palette, back_to_form=True))
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the blocked dialog")
        await pilot.pause()
        ask = shown(app.screen.query_one("#ask"))
        assert "What would pass: batch size ≤ 1 (now 2)" in ask, ask
        assert "batch_connections ≤" not in ask, ask
        await pilot.press("escape")


async def test_the_add_capacity_form_counts_to_the_servers_headroom_budget():
    """The budget the nodes to add restore is the one the server's guards judge with (GET /v1/thresholds),
    not the console's: here the server's 50 % where the console holds the seed's 35 %."""
    from console.model.actions.capacity import add_capacity_prefill

    from .fake_actions import GROWABLE

    served = THRESHOLDS.replace(headroom_min_pct=50.0)
    app = acting_app(FakeFleetApi(thresholds=served))
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_form(app, pilot, "c", "the add-capacity form")
        expected = add_capacity_prefill(app.model.frame, app.model.fleet, GROWABLE, served)
        ours = add_capacity_prefill(app.model.frame, app.model.fleet, GROWABLE, THRESHOLDS)
        assert expected.values != ours.values  # the two budgets ask for different counts here
        assert form.values() == expected.values
        note = shown(form.query_one("#form-source"))
        assert "50 %" in note and "35 %" not in note and "console's thresholds" not in note, note


async def test_without_the_servers_thresholds_the_forms_use_the_consoles_and_say_so():
    """An older server (or controller) answers GET /v1/thresholds 404: the forms are pre-filled against the
    console's own lines, as before, and the note says so — the server may judge with others."""
    from console.model.actions.rollout import rollout_prefill

    from .fake_actions import GROWABLE

    app = acting_app(FakeFleetApi(offers_thresholds=False, thresholds=Thresholds(cpu_pause_pct=60)))
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        form = await open_form(app, pilot, "R", "the rollout form")
        assert form.values() == rollout_prefill(app.model.frame, app.model.fleet, GROWABLE, THRESHOLDS).values
        assert form.values()["pause_cpu_pct"] == "75"
        note = shown(form.query_one("#form-source"))
        assert "console's thresholds" in note and "GET /v1/thresholds" in note, note
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        form = await open_form(app, pilot, "c", "the add-capacity form")
        assert "console's thresholds" in shown(form.query_one("#form-source"))
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        # The drain's values are the server's plan; the hint window re-derived as the rate changes is the
        # console's rule, and says whose lines it uses.
        form = await open_drain_form(app, pilot)
        assert "console's thresholds" not in shown(form.query_one("#form-source"))
        await set_rate(form, pilot, "60")
        await pilot.pause()
        note = shown(form.query_one("#form-source"))
        assert "re-derived" in note and "console's thresholds" in note, note
