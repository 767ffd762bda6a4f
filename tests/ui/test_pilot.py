"""The console driven by real key presses: navigation, sort, filter, detail, help, theme, alarms, quit."""

from __future__ import annotations

import itertools
import tomllib

import pytest

from console.model.link import Received
from console.ui.screens.help import HelpScreen, binding_rows
from console.ui.screens.main import MainScreen
from console.ui.screens.node_detail import NodeDetailScreen
from console.ui.widgets.alarms_panel import AlarmsPanel
from console.ui.widgets.node_table import COLUMNS, NodeTable

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, fleet_ready
from .fake_actions import FakeFleetApi
from .test_actions import acting_app


async def test_cursor_moves_and_survives_new_frames_and_resorting(storm_app):
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        table = storm_app.screen.query_one(NodeTable)
        assert table.has_focus and table.cursor_id == "gw-0000"
        for _ in range(30):
            await pilot.press("down")
        assert table.cursor_id == "gw-0030"
        assert table.scroll_y > 0  # the cursor scrolled the table
        scroll_before = table.scroll_y
        # a new frame arrives: same node under the cursor, same scroll
        fleet_frame = storm_app.model.frame.model_copy(update={"seq": storm_app.model.last_seq + 1})
        storm_app.feed(Received(fleet_frame, storm_app.clock()))
        await pilot.pause()
        assert table.cursor_id == "gw-0030" and table.scroll_y == scroll_before
        await pilot.press("s")  # sort by state: the cursor follows the node, not the row number
        await pilot.pause()
        assert table.cursor_id == "gw-0030"
        assert table.rows[table.cursor_index].id == "gw-0030"
        await pilot.press("end")
        assert table.cursor_index == len(table.rows) - 1
        await pilot.press("home")
        assert table.cursor_index == 0


async def test_s_cycles_the_sort_and_a_header_click_sorts_by_that_column(storm_app):
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        table = storm_app.screen.query_one(NodeTable)
        assert storm_app.query_state.sort_key == "id"
        await pilot.press("s", "s")
        assert storm_app.query_state.sort_key == "connections" and storm_app.query_state.descending
        conns = [n.connections for n in table.rows]
        assert conns == sorted(conns, reverse=True)
        await pilot.press("S")
        assert not storm_app.query_state.descending
        # the "cpu %" header: each column is its width and a space
        cpu_x = sum(column.width + 1 for column in itertools.takewhile(lambda c: c.name != "cpu", COLUMNS))
        await pilot.click(NodeTable, offset=(cpu_x + 2, 0))
        await pilot.pause()
        assert storm_app.query_state.sort_key == "cpu_pct"
        cpu = [n.cpu_pct for n in table.rows]
        assert cpu == sorted(cpu, reverse=True)


async def test_slash_filters_and_a_bad_filter_is_refused_then_retyped(storm_app):
    """Enter ends a filter either way, as it ends a seek: left open with its error, the box took the
    operator's next `q` as text. The error is a notification; `/` brings the bad filter back, selected,
    beside its error."""
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        table = storm_app.screen.query_one(NodeTable)
        total = len(table.rows)
        await pilot.press("slash")
        await pilot.press(*"state:sleepy", "enter")
        await pilot.pause()
        assert len(table.rows) == total  # nothing applied
        assert not storm_app.screen.query_one("#filter-bar").has_class("-open") and table.has_focus
        assert any("state" in n.message and n.severity == "error" for n in storm_app._notifications)
        await pilot.press("slash")
        await pilot.pause()
        field = storm_app.screen.query_one("#filter")
        assert field.has_focus and field.selected_text == "state:sleepy"
        error = str(storm_app.screen.query_one("#filter-error").render())
        assert "state" in error and "expected" in error
        await pilot.press(*"state:down", "enter")  # typing replaces the selected bad filter
        await pilot.pause()
        assert 0 < len(table.rows) < total
        assert {n.state.value for n in table.rows} == {"down"}
        assert table.has_focus  # back on the table
        await pilot.press("exclamation_mark")  # alarming only, on top of state:down
        await pilot.pause()
        assert storm_app.query_state.filter.alarming_only


async def test_q_after_a_refused_filter_quits(storm_app):
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        await pilot.press("slash", *"state:sleepy", "enter", "q")
        await wait_for(lambda: storm_app._exit, what="q quits after a refused filter")
        assert storm_app.screen.query_one("#filter").value == "state:sleepy"  # the q was not typed into it


async def test_enter_opens_node_detail_and_escape_returns(storm_app):
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert isinstance(storm_app.screen, NodeDetailScreen)
        assert storm_app.screen.node_id == "gw-0002"
        await fleet_ready(storm_app)  # the detail screen draws once it is ready, as the fleet view does
        storm_app.refresh_views()
        summary = str(storm_app.screen.query_one("#summary").render())
        assert "gw-0002" in summary and "conns" in summary
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(storm_app.screen, MainScreen)


async def test_a_node_that_cannot_reach_its_redis_says_so_in_its_row_and_its_detail(storm_app):
    """A real node whose history (Redis) does not answer turns arriving clients away with 1013; nothing on
    the console said so. Its row warns (and 'alarming only' keeps it); its detail says why."""
    from console.model.gauges import node_level
    from console.model.thresholds import Level
    from tests.fleet_builders import node

    why = "Redis at redis://127.0.0.1:6379/0: ConnectionError: Connection refused"
    limits = storm_app.model.thresholds
    assert node_level(node("gw-0002"), limits) is Level.OK
    assert node_level(node("gw-0002", history_unreachable=why), limits) is Level.WARNING
    away = storm_app.model.nodes["gw-0002"].model_copy(update={"history_unreachable": why})
    storm_app.model.nodes["gw-0002"] = away
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        storm_app.push_screen(NodeDetailScreen("gw-0002"))
        await pilot.pause()
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        summary = str(storm_app.screen.query_one("#summary").render())
        assert "▲ history unreachable, arriving clients get 1013 and live messages wait — " + why in summary


async def test_at_80x24_a_node_detail_gives_its_charts_the_rows_its_events_do_not_need(storm_app):
    """User pass at 80×24: "no events for this node yet" held an 8-row box (6 rows blank) while each chart
    had two rows to plot in. The events box is as tall as its lines, up to 8 rows (5 where the charts take
    turns); the turn's three charts have the rest: their frame, rows of plot, the ticks and the unit."""
    quiet = next(node for node in storm_app.model.nodes if not storm_app.model.node_events(node, limit=20))
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        storm_app.open_node(quiet)
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        events = storm_app.screen.query_one("#events")
        assert "no events for this node yet" in str(events.render())
        assert events.region.height == 3
        shown = [box for box in storm_app.screen.query(".chart-box") if box.display]
        assert len(shown) == 3 and all(box.region.height >= 11 for box in shown), [
            box.region.height for box in shown
        ]


async def test_draining_node_detail_shows_drain_progress(storm_app):
    draining = next(n.id for n in storm_app.model.nodes.values() if n.drain is not None)
    async with storm_app.run_test(size=SIZE):
        await fleet_ready(storm_app)
        storm_app.open_node(draining)
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        drain = str(storm_app.screen.query_one("#drain").render())
        for word in ("remaining", "rate", "ETA", "deadline"):
            assert word in drain


async def test_help_lists_every_binding_and_command(storm_app):
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(storm_app.screen, HelpScreen)
        listed = {key for _, bindings in storm_app.screen.sections for key in (b.key for b in bindings)}
        for binding in (
            *storm_app.BINDINGS,
            *MainScreen.BINDINGS,
            *NodeTable.BINDINGS,
            *AlarmsPanel.BINDINGS,
        ):
            assert binding.key in listed
        titles = [title for title, _ in storm_app.screen.commands]
        assert (
            "Theme: light" in titles
            and "Quit" in titles
            and "Sort by cpu %" in titles
            and "Sort by 503/s" in titles
        )
        await pilot.press("escape")
        assert isinstance(storm_app.screen, MainScreen)


async def help_rows(app, pilot) -> list[tuple[str, str, str]]:
    """The help screen's rows (where, key, what it does), opened with `?` once the fleet is shown."""
    from console.ui.screens.help import binding_rows

    await fleet_ready(app)
    await pilot.press("question_mark")
    await pilot.pause()
    assert isinstance(app.screen, HelpScreen)
    return [row for where, b in app.screen.sections for row in binding_rows(where, b)]


async def test_help_says_q_is_typed_in_a_form_field_and_ctrl_q_asks_again():
    """Found in a user pass: help listed `q` in the action form as "quit (asks again…)", but in a field
    (where a form's keys go) q is typed; Ctrl+Q is the key that asks again. Same for the typed name."""
    app = acting_app(FakeFleetApi())  # (actions on: with them off, no form opens and help says so)
    async with app.run_test(size=SIZE) as pilot:
        rows = await help_rows(app, pilot)
        for where in ("action form", "verdict"):
            said = {key: does for at, key, does in rows if at == where}
            assert "asks again" in said["ctrl+q"], where
            assert "typed" in said["q"] and "asks again" not in said["q"].split(";")[-1], where


#: The sections of the keys an action opens: its form, the big-change check and the verdict dialog.
FORM_SECTIONS = ("action form", "big change", "verdict")


async def test_with_actions_off_help_says_once_that_no_form_opens_and_why():
    """Help listed the action form's, the big-change check's and the verdict's keys in full (Enter applies,
    ^d dry run, y confirms…) on a console whose actions are off — no fleet API, `--read-only`, a viewer's
    token — where the fleet's action keys each say "— actions off: …" and no form ever opens. With
    actions off, one row says no form opens and why; with them on, every key of the three, as before."""
    for app, off in (
        (acting_app(None), "no fleet API"),
        (acting_app(FakeFleetApi(), read_only=True), "read-only console"),
    ):
        async with app.run_test(size=SIZE) as pilot:
            rows = await help_rows(app, pilot)
        forms = [row for row in rows if row[0] in FORM_SECTIONS]
        assert len(forms) == 1, forms
        (_, key, does) = forms[0]
        assert key == "" and does.endswith(f"— actions off: {off}"), forms
        assert all(word in does for word in ("form", "big-change", "verdict")), does
    app = acting_app(FakeFleetApi())
    async with app.run_test(size=SIZE) as pilot:
        rows = await help_rows(app, pilot)
    listed = {where for where, *_ in rows}
    assert set(FORM_SECTIONS) <= listed, listed
    assert not any("actions off" in does for where, _, does in rows if where in FORM_SECTIONS), rows


async def test_help_says_ctrl_q_quits_anywhere(storm_app):
    """User pass: Ctrl+C shows Textual's "Press ctrl+q to quit", but help named Ctrl+Q only under the
    action form; anywhere it said `q`, which a text field (the filter, a seek) takes as text."""
    async with storm_app.run_test(size=SIZE) as pilot:
        rows = await help_rows(storm_app, pilot)
        anywhere = {key: does for at, key, does in rows if at == "anywhere"}
        assert anywhere["q"] == "quit" and "quit" in anywhere["ctrl+q"] and "field" in anywhere["ctrl+q"]


async def test_theme_switch_by_key_and_palette_is_remembered(storm_app, isolated_config):
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        assert storm_app.theme == "dark"
        await pilot.press("t")
        await pilot.pause()
        assert storm_app.theme != "dark" and storm_app.palette.name == storm_app.theme
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Theme: high-contrast")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert storm_app.theme == "high-contrast"
    assert tomllib.loads(isolated_config.read_text())["theme"] == "high-contrast"


async def test_acknowledging_an_alarm(storm_app):
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        active = storm_app.model.alarms.active()
        assert active and not active[0].acknowledged
        storm_app.screen.query_one(AlarmsPanel).focus()
        await pilot.press("a")
        await pilot.pause()
        assert storm_app.model.alarms.unacknowledged == len(active) - 1
        await pilot.press("A")
        assert storm_app.model.alarms.unacknowledged == 0


async def test_q_quits_cleanly(storm_app):
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        await pilot.press("q")
        await pilot.pause()
    assert storm_app.return_code == 0


async def test_node_detail_fills_in_the_history_the_console_did_not_see(storm_app):
    import httpx

    from console.client.admin import AdminClient

    node_id = "gw-0002"
    samples = [{"connections": 5000 + i, "cpu_pct": 10.0} for i in range(280)]

    def server(request: httpx.Request) -> httpx.Response:
        assert request.url.path == f"/v1/nodes/{node_id}"
        return httpx.Response(200, json={"node": {"id": node_id}, "history": samples, "events": []})

    storm_app.admin = AdminClient("http://fleet", "t", transport=httpx.MockTransport(server))
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        storm_app.open_node(node_id)
        await pilot.pause()
        screen = storm_app.screen
        await wait_for(lambda: screen.server_history is not None, what="the server's node history")
        assert screen.server_history.length == 280
        seen = storm_app.model.node_history(node_id, "connections").size
        assert seen < 280  # the storm scene holds 46 frames; the server's 280 samples are what is drawn


async def test_mouse_selects_a_row_and_a_double_click_opens_it(storm_app):
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        table = storm_app.screen.query_one(NodeTable)
        await pilot.click(NodeTable, offset=(3, 4))  # header is line 0: line 4 is the fourth node
        await pilot.pause()
        assert table.cursor_id == "gw-0003"
        await pilot.double_click(NodeTable, offset=(3, 6))
        await pilot.pause()
        assert isinstance(storm_app.screen, NodeDetailScreen) and storm_app.screen.node_id == "gw-0005"


async def test_malformed_messages_are_shown_in_the_header(storm_app):
    from console.model.link import Malformed
    from console.ui.widgets.header import FleetHeader

    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        storm_app.feed(Malformed("totals: Field required", storm_app.clock()))
        storm_app.feed(Malformed("message: invalid JSON", storm_app.clock()))
        await pilot.pause()
        header = str(storm_app.screen.query_one(FleetHeader).render())
        assert "malformed 2 (message: invalid JSON)" in header


async def test_a_failing_stream_source_is_shown_not_a_frozen_live_link(storm_app):
    from console.model import LinkState

    class Broken:
        async def run(self, sink) -> None:
            raise RuntimeError("decoder exploded")

    storm_app.source = Broken()
    async with storm_app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: storm_app.model.link.state is LinkState.STOPPED, what="the stopped link")
        await pilot.pause()
        assert "decoder exploded" in storm_app.model.link.describe(storm_app.clock())


async def test_an_alarm_waiting_to_clear_reads_clearing_not_new(storm_app):
    """User pass: "✖ drain_inflow_kill_switch 0.322 < 0.6 NEW" beside a drain÷inflow gauge at ✓ 46.87 —
    the alarm was only waiting out clear_after_s. The panel says it was 0.322 and is clearing."""
    from console.protocol import Alarm, Severity

    async with storm_app.run_test(size=(160, 50)) as pilot:
        await fleet_ready(storm_app)
        log = storm_app.model.alarms
        time_s = storm_app.model.frame.time_s
        log.update(
            [
                Alarm(
                    name="drain_inflow_kill_switch",
                    severity=Severity.CRITICAL,
                    since_s=time_s - 3,
                    value=0.322,
                    limit=0.6,
                    message="m",
                    clearing_since_s=time_s - 1,
                )
            ],
            time_s,
        )
        panel = storm_app.screen.query_one(AlarmsPanel)
        panel.show(log.active(), log.past(), storm_app.palette, log.version)
        await pilot.pause()
        cells = [str(cell) for cell in panel.get_row_at(0)]
        assert cells[1:5] == ["drain_inflow_kill_switch", "fleet", "was 0.322 < 0.6", "clearing"]


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_an_alarm_held_from_an_earlier_second_says_so_and_since_when(storm_app, size):
    """Reviewer, at 120 columns: a lockstep_waves row's figure read as now while the alarm waited to clear,
    its value the last reading that held. The row says "was", at 80 and 120 columns too, and the line under
    the panel when it stopped holding: the time a narrow panel has no column for."""
    from console.model.units import FLEET_CLOCK
    from console.protocol import Alarm, Severity

    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        log = storm_app.model.alarms
        time_s = storm_app.model.frame.time_s
        held = Alarm(
            name="lockstep_waves",
            severity=Severity.WARNING,
            since_s=time_s - 20,
            value=10.5,
            limit=4.0,
            message="Reconnects arrive in lockstep waves",
            clearing_since_s=time_s - 2,
        )
        log.update([held], time_s)  # (the storm's others clear: listed under it, they crowd the panel)
        panel = storm_app.screen.query_one(AlarmsPanel)
        panel.show(log.active(), log.past(), storm_app.palette, log.version)
        await pilot.pause()
        drawn = "\n".join(strip.text for strip in panel.render_lines(panel.region.reset_offset))
        row = next(line for line in drawn.splitlines() if "lockstep" in line)
        assert "was 10.5 > 4" in row or ("was" in drawn and "10.5 > 4" in drawn), drawn
        assert "10.5 > 4" in drawn and "NEW" not in row
        said = panel.selected_message
        assert f"not held since {FLEET_CLOCK.text(time_s - 2)}" in said, said
        assert said.endswith("Reconnects arrive in lockstep waves"), said


async def test_node_detail_says_what_the_node_admits_and_whose_setting_it_is(storm_app):
    """Found in review: admission set on some nodes (`PUT /v1/admission` with `nodes`) showed nowhere — not
    in the panel, not on the node. The node's detail says what it runs, and that it is its own."""
    from console.protocol import AdmissionSettings

    frame = storm_app.model.frame
    assert frame is not None and frame.admission is not None
    own = AdmissionSettings(rate_per_s=5.0, burst=10, max_connections=300, retry_after_s=(1.0, 30.0))
    storm_app.model.frame = frame.model_copy(
        update={"admission_overrides": [own.model_copy(update={"nodes": ["gw-0002"]})]}
    )
    fleet_rate = frame.admission.rate_per_s
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        said = {}
        for node_id in ("gw-0002", "gw-0003"):
            storm_app.push_screen(NodeDetailScreen(node_id))
            await pilot.pause()
            await fleet_ready(storm_app)
            storm_app.refresh_views()
            said[node_id] = " ".join(str(storm_app.screen.query_one("#summary").render()).split())
            storm_app.pop_screen()
            await pilot.pause()
    assert (
        "admission 5/s per node burst 10 ceiling 300 per node Retry-After 1–30 s "
        f"set on this node; elsewhere {fleet_rate:g}/s per node"
    ) in said["gw-0002"], said
    assert f"admission {fleet_rate:g}/s per node" in said["gw-0003"], said
    assert "the fleet's; 1 node runs its own" in said["gw-0003"], said


async def test_f1_opens_help_as_question_mark_does(storm_app):
    """Reviewer: F1 did nothing — the key many terminal programs open help with."""
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(storm_app.screen, HelpScreen)
        listed = [row for where, b in storm_app.screen.sections for row in binding_rows(where, b)]
        assert any(key == "? / f1" for _, key, _ in listed), listed
