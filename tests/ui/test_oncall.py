"""What an on-call engineer reads and trusts: alarm values that follow the fleet, an alarm cursor that stays
on the alarm it is on, gauges that read whole."""

from __future__ import annotations

import json
import re
import time

import pytest
from textual.containers import VerticalScroll
from textual.widget import Widget

from console.alarms.base import short_label
from console.client.decode import StreamDecoder
from console.client.synthetic import SyntheticFleet
from console.model.alarm_source import console_model
from console.model.alarms import alarm_rows
from console.model.link import LinkState, LinkStatus, Received
from console.protocol import Alarm, Severity
from console.ui.app import ConsoleApp
from console.ui.widgets.alarms_panel import COLUMNS, AlarmMessage, AlarmsPanel
from console.ui.widgets.gauges import GaugeBox
from console.ui.widgets.node_table import COLUMNS as NODE_COLUMNS
from console.ui.widgets.node_table import NodeTable

from .conftest import SIZE, fleet_ready

WALL_S = 1_800_000_000.0
RULE, STATE = COLUMNS.index("rule"), COLUMNS.index("state")


class FedFleet:
    """The synthetic fleet and a console model fed from it, second by second."""

    def __init__(self, storm_at_s: float = 40) -> None:
        self.fleet = SyntheticFleet(nodes=48, seed=7, storm_at_s=storm_at_s)
        self.decoder = StreamDecoder()
        self.model = console_model()
        self.second = 0
        self.model.apply(Received(self.decoder.feed(json.dumps(self.fleet.hello())), WALL_S))
        self.model.apply(LinkStatus(LinkState.LIVE, at_s=WALL_S))

    def items(self, seconds: int) -> list[Received]:
        out = []
        for _ in range(seconds):
            self.second += 1
            for raw in self.fleet.next_messages():
                message = self.decoder.feed(raw)
                assert message is not None
                out.append(Received(message, WALL_S + self.second))
        return out

    def feed_model(self, seconds: int) -> None:
        for item in self.items(seconds):
            self.model.apply(item)


def shown_values(panel: AlarmsPanel) -> dict[str, str]:
    """rule name → the "value vs limit" cell, for the active alarms on screen."""
    values = {}
    for row in range(panel.row_count):
        cells = panel.get_row_at(row)
        if "cleared" not in str(cells[STATE]):
            values[str(cells[RULE])] = str(cells[COLUMNS.index("value vs limit")])
    return values


async def test_alarm_values_follow_the_fleet_not_the_second_they_were_raised():
    """The engine updates an active alarm in place; the panel kept showing the value it was raised with
    (seen live: headroom_low '17 < 35' beside a headroom gauge reading 15 %)."""
    fed = FedFleet()
    fed.feed_model(44)
    app = ConsoleApp(model=fed.model, clock=lambda: WALL_S + fed.second + 0.4)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        panel = app.screen.query_one(AlarmsPanel)
        first = shown_values(panel)
        assert first
        changed = False
        for _ in range(20):
            for item in fed.items(1):
                app.feed(item)
            await pilot.pause()
            # One row a rule: node_down's alarms on several down nodes are one row ("max 5 s").
            now = {row.name: row.value for row in alarm_rows(app.model.alarms.active())}
            changed = changed or any(now.get(name, value) != value for name, value in first.items())
            assert shown_values(panel) == now, f"fleet second {fed.second}"
        assert changed  # the values did move while the alarms stayed up


async def test_the_alarm_cursor_stays_on_its_alarm_when_a_new_one_arrives_above_it(storm_app):
    """`a` acknowledges the alarm under the cursor: a new alarm sorting above it used to slide under the
    cursor between the operator reading the row and pressing the key, and `a` acknowledged that one."""
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        log = storm_app.model.alarms
        panel = storm_app.screen.query_one(AlarmsPanel)
        panel.focus()
        active = log.active()
        assert len(active) >= 2
        await pilot.press("down")
        chosen = active[1]
        assert str(panel.get_row_at(panel.cursor_row)[RULE]) == chosen.alarm.name
        newcomer = newcomer_alarm(storm_app.model.frame.time_s, "abnormal closes")
        log.update([entry.alarm for entry in active] + [newcomer], storm_app.model.frame.time_s)
        storm_app.refresh_views()
        await pilot.pause()
        assert str(panel.get_row_at(panel.cursor_row)[RULE]) == chosen.alarm.name
        await pilot.press("a")
        await pilot.pause()
        acked = {entry.alarm.name for entry in log.active() if entry.acknowledged}
        assert acked == {chosen.alarm.name}
        # the acknowledged alarm sinks below the new ones, and the cursor goes with it
        assert str(panel.get_row_at(panel.cursor_row)[RULE]) == chosen.alarm.name
        assert "acked" in str(panel.get_row_at(panel.cursor_row)[STATE])


def critical_alarm(name: str, since_s: float, value: float, limit: float, message: str) -> Alarm:
    """A critical fleet alarm as its rule raises it (no node)."""
    return Alarm(
        name=name, severity=Severity.CRITICAL, since_s=since_s, value=value, limit=limit, message=message
    )


def node_down_alarm(since_s: float) -> Alarm:
    """gw-017 down 12 s: a node's alarm, its node in the "where" column."""
    return Alarm(
        name="node_down",
        severity=Severity.WARNING,
        since_s=since_s,
        value=12.0,
        limit=None,
        message="gw-017 down 12 s",
        node="gw-017",
    )


def newcomer_alarm(since_s: float, message: str) -> Alarm:
    """A critical alarm not among the storm's own, raised at `since_s`."""
    return critical_alarm("abnormal_closes_rising", since_s, 50.0, 5.0, message)


def visible_lines(widget: Widget) -> list[str]:
    """The widget's lines as drawn on screen, text only."""
    return [
        "".join(segment.text for segment in strip)
        for strip in widget.render_lines(widget.region.reset_offset)
    ]


def row_line(panel: AlarmsPanel, row: int) -> int:
    """The index in `visible_lines(panel)` of `row`'s first line: under the header, after the rows above
    it (a cleared row takes two lines where the panel shows the times), less what is scrolled away."""
    return 1 + sum(above.height for above in panel.ordered_rows[:row]) - round(panel.scroll_y)


def cell_shown(cell: object, lines: list[str], first: int) -> bool:
    """Whether each line of a cell (two in a cleared row's value, state and times) is on its row's lines."""
    return all(part in lines[first + index] for index, part in enumerate(str(cell).split("\n")))


def rule_drawn(rule: object, line: str) -> bool:
    """Whether a row's line draws its rule whole: its name, or its short label (a narrow panel) — never
    a name cut ("drain_inflow_k…")."""
    return any(f" {said} " in f" {line} " for said in (str(rule), short_label(str(rule))))


def gauge_lines(app: ConsoleApp, key: str) -> list[str]:
    return visible_lines(app.screen.query_one(f"#gauge-{key}", GaugeBox))


async def test_at_80_columns_each_gauge_keeps_its_detail_line(storm_app):
    """A 12-cell gauge wrapped its first line (the value and its sparkline, or 'accepts · 503s') onto the
    second, and the detail — Δ60s, the 503 share — was gone. Then it was cut with an ellipsis, and the
    figure went with it ('503 share 8…'): now a 12-cell gauge says its detail briefly, whole."""
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        conn = gauge_lines(storm_app, "connections")
        assert "█" in conn[1]
        details = {key: gauge_lines(storm_app, key)[2] for key in ("connections", "accepts", "drain_inflow")}
        # (the storm scene's fleet is 8.5 % under its minute's peak: said from the peak, as its alarm judges)
        assert "peak −8.5 %" in details["connections"], details["connections"]
        # (the scene's 503s are its admission's, 150/s a node: they warn, as its 4.1 % of timeouts do, and
        # the timeouts — no one's choice — are said first)
        assert "t/o 1.6k/s" in details["accepts"], details["accepts"]
        assert "kill at 0.6" in details["drain_inflow"]
        assert not any("…" in line for line in details.values())
        assert all(len(line) == len(conn[0]) for line in conn)  # nothing spilled out of the box
        await pilot.resize_terminal(160, 48)  # room again: the whole detail
        await pilot.pause()
        # (the storm's handshake timeouts and, second, its 503s: `_accepts_gauge`'s 28-cell form)
        assert "t/o 1.6k/s · 503s 84.1 %" in gauge_lines(storm_app, "accepts")[2]
        assert "kill switch 0.6" in gauge_lines(storm_app, "drain_inflow")[2]


async def test_at_80_columns_each_gauge_says_what_it_is_whole(storm_app):
    """User pass at 80×24: the titles read "connectio…", "accepts/s…" (the second figure, 503/s, unnamed) and
    "drain÷inf…". A 16-cell box titles itself in 10 cells: the short label; with room, the whole one."""
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        keys = ("connections", "attempts", "accepts", "headroom", "drain_inflow")
        titles = {key: gauge_lines(storm_app, key)[0] for key in keys}
        assert not any("…" in title for title in titles.values()), titles
        assert "503" in titles["accepts"] and "conns" in titles["connections"], titles
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert "accepts/s · 503/s" in gauge_lines(storm_app, "accepts")[0]
        assert "connections" in gauge_lines(storm_app, "connections")[0]


@pytest.mark.parametrize("size", [SIZE, (120, 36)])
async def test_each_alarm_shows_its_rule_node_and_value(storm_app, size):
    """The panel is 62 cells at 160 columns: with a row reading 'acked' or 'cleared' the last column was cut
    ('0.149 <'), and that column was the value. At 120 columns (46 cells) the value was never seen, after
    the time and the state. Now the rule, its node and its value come first; where a long rule's name
    leaves them no room the rules are drawn by their short labels, whole words (`SHORT_LABELS`)."""
    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        log = storm_app.model.alarms
        active = [entry.alarm for entry in log.active()]
        widest = max(active, key=lambda alarm: len(alarm.name))
        log.update([alarm for alarm in active if alarm is not widest], storm_app.model.frame.time_s)
        await pilot.press("A")
        await pilot.pause()
        panel = storm_app.screen.query_one(AlarmsPanel)
        lines = visible_lines(panel)
        column = COLUMNS.index("value vs limit")
        shown = 0
        for row in range(panel.row_count):
            cells = panel.get_row_at(row)
            line = lines[row_line(panel, row)]
            assert rule_drawn(cells[RULE], line), line
            assert cell_shown(cells[column], lines, row_line(panel, row)), line
            assert str(cells[COLUMNS.index("where")]) in line, line
            shown += 1
        rows = alarm_rows([*log.active(), *log.past()])  # node_down's several nodes are one row
        assert shown == len(rows) and any(line.startswith(" · ") for line in lines)  # the cleared one
        if size == SIZE:  # (narrower, the state's word is cut: its glyph and weight still say it)
            assert any("cleared" in line for line in lines)


async def test_at_80_by_24_the_alarms_and_the_nodes_keep_their_rows(storm_app):
    """At 80×24 the two fixed-height charts left the alarms box nothing but its borders ("4 active", not one
    of them readable) and the node table one row. Below 36 rows the connections chart gives way."""
    from console.ui.widgets.node_table import NodeTable

    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        screen = storm_app.screen
        active = storm_app.model.alarms.active()
        assert len(active) >= 3
        lines = visible_lines(screen.query_one(AlarmsPanel))
        readable = [e for e in active if any(rule_drawn(e.alarm.name, line) for line in lines)]
        assert len(readable) >= 3
        nodes = screen.query_one(NodeTable)
        assert len([line for line in visible_lines(nodes) if "gw-" in line]) >= 4
        # CPU, the abort criterion, is among the columns a node table 45 cells wide shows.
        assert "cpu %" in visible_lines(nodes)[0]
        assert screen.query_one("#wave-box").region.height >= 10
        assert not screen.query_one("#conn-box").display
        # The connections count and its drop (from the peak, as its alarm judges it) stay in the gauge.
        assert "peak −8.5 %" in gauge_lines(storm_app, "connections")[2]
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert screen.query_one("#conn-box").display


async def test_at_80_columns_the_help_screen_fits_the_screen(storm_app):
    """The help box was 90 cells wide whatever the screen: at 80 columns its right border, scrollbar and
    the end of every 'does' were past the edge."""
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        await pilot.press("question_mark")
        await pilot.pause()
        box = storm_app.screen.query_one(VerticalScroll)
        assert box.region.x >= 0 and box.region.right <= 80


async def test_the_node_sparkline_shows_five_fleet_minutes_on_a_sped_up_simulator():
    """The 'last 5 min' column drew 300 frames: 50 fleet minutes at --speed 10."""
    from console.ui.widgets.node_table import NodeTable

    from .test_charts import sped_up_model

    model = sped_up_model(300, 10.0)
    app = ConsoleApp(model=model, clock=lambda: 310.0)
    async with app.run_test(size=SIZE):
        await fleet_ready(app)
        table = app.screen.query_one(NodeTable)
        assert table._spark(table.rows[0].id).size == 30  # 30 frames of 10 s


async def test_the_alarms_panel_says_what_the_alarm_under_the_cursor_said(storm_app):
    """A value against its limit ("15.3 < 35") does not say what is wrong nor what to do; each alarm's
    message does ("… no restart is safe; add capacity instead"), and the panel never showed it."""
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        panel = storm_app.screen.query_one(AlarmsPanel)
        said = storm_app.screen.query_one(AlarmMessage)
        active = storm_app.model.alarms.active()
        assert len(active) >= 2

        def message_of_row() -> str:
            name = str(panel.get_row_at(panel.cursor_row)[RULE])
            return next(entry.alarm.message for entry in active if entry.alarm.name == name)

        def said_of_row() -> str:  # (after the rule's whole name where the rows say their short labels)
            cells = panel.get_row_at(panel.cursor_row)
            return f"{cells[RULE]}: {message_of_row()}" if cells[RULE].short else message_of_row()

        assert said.display and said.message == said_of_row()
        panel.focus()
        await pilot.press("down")
        await pilot.pause()
        assert said.message == said_of_row() and message_of_row() != active[0].alarm.message


async def test_with_the_alarms_panel_focused_each_message_is_read_whole(storm_app):
    """The message box was 2 lines: "… and 17 more: halt the rollout and" — what to do was cut off. Tab to
    the panel and every alarm's message shows whole (found in review)."""
    async with storm_app.run_test(size=(120, 36)) as pilot:  # (a 46-cell panel: messages of 3–5 lines)
        await fleet_ready(storm_app)
        panel = storm_app.screen.query_one(AlarmsPanel)
        said = storm_app.screen.query_one(AlarmMessage)
        panel.focus()
        for row in range(panel.row_count):
            panel.move_cursor(row=row)
            await pilot.pause()
            name = str(panel.get_row_at(row)[RULE])
            # A rule on several nodes (node_down) is one row saying the worst one's message.
            message = next(r.message for r in alarm_rows(storm_app.model.alarms.active()) if r.name == name)
            # (under its rule; where the rows say their short labels, after the rule's whole name)
            named = f"{name}: {message}" if panel.get_row_at(row)[RULE].short else message
            assert " ".join(visible_lines(said)[1:]).split() == named.split(), name


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_new_alarm_is_what_the_unfocused_panel_shows_not_a_cleared_one(storm_app, size):
    """Seen live at 160×48 and 80×24 (a real fleet, one node killed after a rollout's alarms had cleared):
    the cursor, never moved by the operator, had stayed on the first alarm raised, and followed it into the
    past — so the line under the panel kept saying "Total connections fell 14.0 % … (300 → 258)" of an
    alarm cleared minutes before, and at 80×24 the panel, scrolled to keep that row in view, showed three
    cleared rows under "1 active · 1 new": the new node_down was out of sight. Holding the cursor on its
    alarm is for `a`, which acts only in a focused panel; unfocused, the panel shows its first row."""
    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        log = storm_app.model.alarms
        panel = storm_app.screen.query_one(AlarmsPanel)
        assert not panel.has_focus and panel.cursor_row == 0
        log.update([], storm_app.model.frame.time_s)  # every alarm clears: the rows are the past
        storm_app.refresh_views()
        await pilot.pause()
        newcomer = newcomer_alarm(storm_app.model.frame.time_s, "abnormal closes are rising")
        log.update([newcomer], storm_app.model.frame.time_s)
        storm_app.refresh_views()
        await pilot.pause()
        assert str(panel.get_row_at(panel.cursor_row)[RULE]) == "abnormal_closes_rising"
        assert "NEW" in str(panel.get_row_at(panel.cursor_row)[STATE])
        assert any(rule_drawn("abnormal_closes_rising", line) for line in visible_lines(panel))
        # (at 80×24 the row says its short label: the line under the panel names the rule whole)
        said = storm_app.screen.query_one(AlarmMessage).message
        assert said in (newcomer.message, f"abnormal_closes_rising: {newcomer.message}"), said


@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
async def test_a_node_alarm_names_its_node_beside_a_long_rule_name(storm_app, size):
    """The "where" column was the last: with `drain_inflow_kill_switch` listed (24 cells) it fell past the
    panel's edge at 160 columns, and node_down read without its node, the first thing an operator needs.
    The node now follows the rule; where a long rule name leaves no room the rules are drawn by their
    short labels (whole words), never the node given way — at 80×24 it is drawn in the value's cells, on
    its line or over it, and the value still shows. A fleet alarm about a few nodes (cpu_abort) names its
    worst node there too."""
    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        log = storm_app.model.alarms
        now_s = storm_app.model.frame.time_s
        kept = [entry.alarm for entry in log.active() if entry.alarm.name != "node_down"]
        assert len(kept) >= 3
        long_named = [
            Alarm(
                name="drain_inflow_kill_switch",
                severity=Severity.CRITICAL,
                since_s=now_s,
                value=0.42,
                limit=0.6,
                message="drain ÷ inflow under the kill switch",
            ),
            Alarm(
                name="cpu_abort",
                severity=Severity.CRITICAL,
                since_s=now_s,
                value=93.0,
                limit=80.0,
                message="CPU over the abort line",
                nodes=["gw-031", "gw-005", "gw-012"],
            ),
            Alarm(
                name="history_unreachable",
                severity=Severity.WARNING,
                since_s=now_s,
                value=31.0,
                limit=30.0,
                message="gw-003 cannot reach Redis",
                nodes=["gw-003"],
            ),
            node_down_alarm(now_s),
        ]
        log.update([*kept, *long_named], now_s)
        storm_app.refresh_views()
        await pilot.pause()
        panel = storm_app.screen.query_one(AlarmsPanel)
        panel.focus()
        where = {"node_down": "gw-017", "cpu_abort": "gw-031 +2", "history_unreachable": "gw-003"}
        named = set()
        for row in range(panel.row_count):  # the cursor brings each row into view at 80×24
            panel.move_cursor(row=row, animate=False)
            deadline = time.monotonic() + 5
            while not 1 <= row_line(panel, row) < panel.size.height:
                assert time.monotonic() < deadline, f"row {row} never came into view"
                await pilot.pause()
            cells = panel.get_row_at(row)
            rule = str(cells[RULE])
            lines = visible_lines(panel)
            line = lines[row_line(panel, row)]
            assert rule_drawn(rule, line), line  # its name or its label, whole: never "drain_inflow_k…"
            if rule in where and "cleared" not in str(cells[STATE]):
                assert where[rule] in line, line
                named.add(rule)
            value = COLUMNS.index("value vs limit")
            if row_line(panel, row) + len(str(cells[value]).split("\n")) <= panel.size.height:
                assert re.search(r"\d", str(cells[value])), str(cells[value])
                assert cell_shown(cells[value], lines, row_line(panel, row)), (str(cells[value]), lines)
            if size == (160, 50):  # room for every column, each one whole
                for column in range(len(COLUMNS)):
                    if column != RULE:
                        assert cell_shown(cells[column], lines, row_line(panel, row)), (COLUMNS[column], line)
        assert named == set(where)
        if size == (160, 50):
            assert all(label in visible_lines(panel)[0] for label in COLUMNS)


def test_the_node_is_never_what_gives_way():
    """Glyph 3, rule 25 (its short label 11), where 10, value 15, state 8, raised 8 cells (gaps included).
    A rule's name is never cut: where it leaves the figures no room, the short labels; the node never
    gives way — at 80 columns (29 cells) it is drawn in the value's cells, so the value still shows."""
    from console.ui.widgets.alarms_panel import layout

    natural = [2, 24, 9, 14, 7, 7]
    label = 10  # (`SHORT_LABEL_MAX`: "conns drop")

    def shape(
        room: int, widths: list[int] = natural, all_fleet: bool = False
    ) -> tuple[list[int], bool, bool]:
        drawn = layout(widths, label, room, all_fleet)
        return drawn.widths, drawn.labelled, drawn.merged

    assert shape(80) == ([3, 25, 10, 15, 8, 8], False, False)  # room: all whole, the names too
    # 62 cells (160 columns): the whole names would cost the times; the labels keep every column
    assert shape(62) == ([3, 11, 10, 15, 8, 8], True, False)
    # 46 cells (120 columns): the labels, the node and value whole, the rest not shown (never half a figure)
    assert shape(46) == ([3, 11, 10, 15, 0, 0], True, False)
    assert shape(53) == ([3, 25, 10, 15, 0, 0], False, False)  # the whole names where they do as well
    # 29 cells (80 columns): the node drawn with the value, in the room the label leaves
    assert shape(29) == ([3, 11, 0, 15, 0, 0], True, True)
    # every row the fleet's: "where" gives way first, the names whole while the figures fit beside them
    fleet = [2, 24, 5, 14, 7, 7]
    assert shape(62, fleet, True) == ([3, 25, 0, 15, 8, 8], False, False)  # (160 columns)
    assert shape(46, fleet, True) == ([3, 11, 0, 15, 8, 8], True, False)  # (120: the labels keep the times)
    assert shape(44, fleet, True) == ([3, 25, 0, 15, 0, 0], False, False)  # (no times either way: names)
    assert shape(29, fleet, True) == ([3, 11, 0, 15, 0, 0], True, False)  # (no node: columns)
    assert shape(28, fleet, True) == ([3, 11, 0, 14, 0, 0], True, True)  # (a scrollbar: its value wraps)


def test_a_node_and_its_value_share_a_cell_whole():
    """At 80 columns the node is drawn in the value's cells: beside it where both fit, else over it; a
    value too wide for a line puts its "was" over its reading — no figure parted from its unit or cut."""
    from console.ui.widgets.alarms_panel import merged_value

    assert merged_value("gw-017", "12 s", 14) == "gw-017 12 s"
    assert merged_value("gw-031 +2", "93.1 > 80 %", 14) == "gw-031 +2\n93.1 > 80 %"
    assert merged_value("fleet", "8.54 > 5 %", 14) == "8.54 > 5 %"  # (a fleet row: its value alone)
    assert merged_value("fleet", "was 0.149 < 0.6", 14) == "was\n0.149 < 0.6"
    assert merged_value("5 nodes", "max 12 s", 14) == "5 nodes\nmax 12 s"


async def test_a_node_with_no_handshakes_shows_no_p99(storm_app):
    """User pass: real nodes with no handshakes in the window read "p99 ms 0" (the node reports 0 for
    none): no handshake is not a fast one. The table shows "—", a node with handshakes its p99."""
    model = storm_app.model
    frame = model.frame
    quiet = frame.nodes[0].model_copy(update={"accepts_per_s": 0.0, "handshake_p99_ms": 0.0})
    busy = frame.nodes[1].model_copy(update={"accepts_per_s": 40.0, "handshake_p99_ms": 12.0})
    model.apply(
        Received(
            frame.model_copy(
                update={
                    "seq": frame.seq + 1,
                    "time_s": frame.time_s + 1,
                    "nodes": [quiet, busy, *frame.nodes[2:]],
                }
            ),
            (model.received_at_s or 0.0) + 1,
        )
    )
    async with storm_app.run_test(size=(160, 48)) as pilot:
        await fleet_ready(storm_app)
        await pilot.pause()
        lines = visible_lines(storm_app.screen.query_one(NodeTable))
        assert lines[0].split()[-2:] == ["p99", "ms"], lines[0]
        (quiet_line,) = [line for line in lines if f"{quiet.id} " in line]
        (busy_line,) = [line for line in lines if f"{busy.id} " in line]
        assert quiet_line.split()[-1] == "—", quiet_line
        assert busy_line.split()[-1] == "12", busy_line


async def test_a_node_just_over_the_abort_cpu_does_not_read_as_on_it(storm_app):
    """80.04 % printed "80.0" in red beside the abort line of 80 (the rule is *over* 80): the table gives it
    the places that tell it from the line, as the alarms and gauges do (console.figures.beside_limit)."""
    model = storm_app.model
    frame = model.frame
    hot = frame.nodes[0].model_copy(update={"cpu_pct": 80.04})
    model.apply(
        Received(
            frame.model_copy(
                update={"seq": frame.seq + 1, "time_s": frame.time_s + 1, "nodes": [hot, *frame.nodes[1:]]}
            ),
            (model.received_at_s or 0.0) + 1,
        )
    )
    async with storm_app.run_test(size=(160, 48)) as pilot:
        await fleet_ready(storm_app)
        await pilot.pause()
        (line,) = [
            line for line in visible_lines(storm_app.screen.query_one(NodeTable)) if f"{hot.id} " in line
        ]
        assert " 80.04 " in line, line


def test_a_drained_node_s_detail_says_the_drain_is_done_not_that_it_is_draining():
    """User pass on `fleet up`: node-2 drained at 10/s, its detail's header said "drained" while the drain
    box under it went on saying "draining  remaining 0 … ETA 0 s  deadline in 9 min 20 s" — a real node keeps
    its drain's progress after it empties (it still closes late arrivals), and the box read it as under
    way. It now says the drain is done: what it closed, at what rate, and no deadline to count down."""
    from console.protocol import DrainProgress, NodeState
    from console.ui.screens.node_detail import drain_text
    from tests.fleet_builders import node

    progress = DrainProgress(
        remaining=0,
        rate_per_s=10.0,
        hint_ms=(1000, 2000),
        started_at_s=116.0,
        deadline_at_s=716.0,
        eta_s=0.0,
        closed=295,
        forced=0,
        achieved_rate_per_s=9.93,
    )
    drained = node("node-2", NodeState.DRAINED, connections=0).model_copy(update={"drain": progress})
    shown = drain_text(drained, 155.0).plain
    assert shown.startswith("drained  ") and "deadline" not in shown and "ETA" not in shown, shown
    assert "closed 295 at 9.9/s (10/s asked)" in shown and "hint 1000–2000 ms" in shown, shown

    forced = progress.model_copy(update={"closed": 300, "forced": 40})
    shown = drain_text(drained.model_copy(update={"drain": forced}), 800.0).plain
    # the pace is the paced ones': "closed 300 at 9.9/s … 40 force-closed" read as 300 closed at 9.9/s
    assert "closed 300: 260 at 9.9/s (10/s asked), 40 force-closed at the deadline" in shown, shown

    draining = drained.model_copy(update={"state": NodeState.DRAINING})
    assert drain_text(draining, 155.0).plain.startswith("draining  ")  # under way: as before


def test_s_sorts_by_the_next_column_to_the_right():
    """User pass on `fleet up`: `s` went node → state → conns → acc/s, past the cpu % column beside
    conns (CPU moved left of the sparkline, the sort order stayed), and reached it only after t/o/s —
    though `s` is "the next column, in the table's order"."""
    from console.model.nodes import NodeQuery

    sortable = [column.key for column in NODE_COLUMNS if column.key]
    query, visited = NodeQuery(), []
    for _ in sortable:
        visited.append(query.sort_key)
        query = query.next_sort()
    assert visited == sortable and query.sort_key == sortable[0]


async def test_a_cleared_alarms_message_says_it_cleared(storm_app):
    """Operator pass: a cleared connections_drop under the cursor still said "Total connections fell … :
    clients are failing to reconnect." in the present tense, under a row that reads `cleared`."""
    async with storm_app.run_test(size=SIZE) as pilot:
        await fleet_ready(storm_app)
        log = storm_app.model.alarms
        was = log.active()[0].alarm
        log.update([], storm_app.model.frame.time_s)  # every alarm clears: the rows are the past
        storm_app.refresh_views()
        panel = storm_app.screen.query_one(AlarmsPanel)
        panel.focus()
        await pilot.pause()
        rows = [str(panel.get_row_at(row)[RULE]) for row in range(panel.row_count)]
        panel.move_cursor(row=rows.index(was.name))
        await pilot.pause()
        said = storm_app.screen.query_one(AlarmMessage).message.removeprefix(f"{was.name}: ")  # (a label row)
        assert said.startswith("Cleared ") and said.endswith(
            f" — at its worst, 0:00:45: {was.worst_message}"
        ), said


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_cleared_alarm_says_when_it_cleared_and_how_long_it_lasted(storm_app, size):
    """Seen live at 160×48: "· drain_inflow_kill_s… fleet was 0.149 < 0.6 cleared 0:00:11" — the time was
    when it was raised, and read as when it cleared; when it cleared and how long it held were nowhere. With
    room for the times (160 columns) a cleared row takes two lines: raised and cleared, each with its time,
    and how long it lasted under its value — in the columns it had, the rule's name cut no further. At 80×24
    (rule and node only) its rows stay one line each, and the line under the panel says it."""
    from console.ui.widgets.alarms_panel import layout

    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        log = storm_app.model.alarms
        was = next(entry.alarm for entry in log.active() if entry.alarm.name == "connections_drop")
        assert was.since_s == 40
        log.update([entry.alarm for entry in log.active() if entry.alarm is not was], 65.0)
        storm_app.refresh_views()
        panel = storm_app.screen.query_one(AlarmsPanel)
        panel.focus()
        await pilot.pause()
        rows = [str(panel.get_row_at(row)[RULE]) for row in range(panel.row_count)]
        cleared = rows.index(was.name)
        panel.move_cursor(row=cleared)
        await pilot.pause()
        said = storm_app.screen.query_one(AlarmMessage).message
        # Its words and figure at its worst (12.1 % at 0:00:40), not its last (8.54 %): review on a loopback
        # fleet, "was 6.43 > 5 %" after a 44 % drop.
        assert was.worst_value is not None and was.worst_value > was.value
        whole = f"Cleared 0:01:05 after 25 s (raised 0:00:40) — at its worst, 0:00:40: {was.worst_message}"
        # (where the rows say their short labels — 80×24 — after the rule's whole name)
        assert said in (whole, f"connections_drop: {whole}"), said
        lines = visible_lines(panel)
        heights = [row.height for row in panel.ordered_rows]
        if size == (80, 24):
            # No line given to times the panel cannot show: a row's second line is its value's, under its
            # node or its "worst" (`merged_value`).
            value = COLUMNS.index("value vs limit")
            assert not panel.ordered_columns[COLUMNS.index("raised")].width
            assert heights == [
                len(str(panel.get_row_at(row)[value]).split("\n")) for row in range(len(heights))
            ]
            return
        first = row_line(panel, cleared)
        assert heights[cleared] == 2
        assert lines[first].rstrip().endswith("raised  0:00:40"), lines[first]
        assert re.search(r"lasted 25 s +cleared 0:01:05$", lines[first + 1].rstrip()), lines[first + 1]
        assert "worst 12.1 > 5 %" in lines[first]
        # The rule's column is as wide as with the row on one line ("cleared 0:00:40").
        shown = alarm_rows(log.active()) + alarm_rows(log.past())
        natural = [
            2,
            max(len(row.name) for row in shown),
            max(len(row.where) for row in shown),
            max(len(row.value) for row in shown),
            len("cleared"),
            len("0:00:40"),
        ]
        label = max(len(row.label) for row in shown)
        assert (
            panel.ordered_columns[RULE].width == layout(natural, label, panel.size.width, False).widths[RULE]
        )


# 124 columns: the edge falls in "503/s"'s title, not in its leading blanks
@pytest.mark.parametrize("size", [(80, 24), (120, 36), (124, 36)])
async def test_the_node_table_shows_only_whole_columns(storm_app, size):
    """On-call walk, loopback fleet: at 120×36 the table's edge cut "503/s" to "50" — a header that reads
    as a figure — and at 80×24 the sparkline to its first three cells, the oldest: a drained node with no
    connections showed "███". A column that does not fit whole is not drawn; the rest of the line is blank."""
    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        await pilot.pause()
        table = storm_app.screen.query_one(NodeTable)
        lines = visible_lines(table)
        width = table.scrollable_content_region.width
        used = 0
        shown = []
        for column in NODE_COLUMNS:
            if used + column.width > width:
                break
            shown.append(column)
            used += column.width + 1
        assert shown, width
        assert width < sum(column.width + 1 for column in NODE_COLUMNS), width  # (some column is left out)
        cut_at = sum(column.width + 1 for column in shown)
        assert lines[0][cut_at:].strip() == "", (width, lines[0])
        for line in lines[1:]:
            assert line[cut_at:].strip() == "", line


async def test_at_80_by_24_the_filter_bar_leaves_the_node_table_its_rows(storm_app):
    """On-call walk: `/` at 80×24 left the node table one row — the filter's input (3 rows) and an empty
    error line under the table. Open, the bar takes the input's row only, and no empty line."""
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        await pilot.pause()
        table = storm_app.screen.query_one(NodeTable)
        closed_rows = table.scrollable_content_region.height
        await pilot.press("slash")
        await pilot.pause()
        bar = storm_app.screen.query_one("#filter-bar")
        assert bar.outer_size.height == 1, bar.outer_size
        assert table.scrollable_content_region.height == closed_rows - 1


@pytest.mark.parametrize("quiet", [True, False])
async def test_at_80_columns_the_node_detail_summary_keeps_each_figure_with_its_unit(storm_app, quiet):
    """On-call walk, loopback fleet at 80×24: the node's summary wrapped as "… p99 —" / "ms" — a unit on a
    line of its own, under a figure that is no figure. Each reading stays whole on its line (the line breaks
    between readings), and a node with no handshakes reads "p99 —", no unit."""
    from console.ui.screens.node_detail import NodeDetailScreen

    node_id = "gw-0002"
    node = storm_app.model.nodes[node_id]
    update = {"accepts_per_s": 0.0} if quiet else {"accepts_per_s": 1234.0, "handshake_p99_ms": 1234.0}
    storm_app.model.nodes[node_id] = node.model_copy(update={**update, "rejects_per_s": 1234.0})
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        storm_app.push_screen(NodeDetailScreen(node_id))
        await pilot.pause()
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        lines = [line.strip() for line in visible_lines(storm_app.screen.query_one("#summary"))]
        readings = ["conns [\\d,]+", "cpu [\\d.]+ %", "acc \\d+/s", "503 1234/s", "t/o \\d+/s"]
        readings.append("p99 —$" if quiet else "p99 1234 ms")
        for reading in readings:
            assert any(re.search(reading, line) for line in lines), (reading, lines)
        assert not any(re.match("(ms|%|/s)\\b", line) for line in lines), lines


async def test_a_refused_filter_is_named_once(storm_app):
    """On-call walk: "cpu>1" was refused as "filter: filter: 'cpu>1' is not allowed; …" — the field was the
    filter itself, and the notification named it again."""
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        await pilot.press("slash", *"cpu>1", "enter")
        await pilot.pause()
        (said,) = [n.message for n in storm_app._notifications if n.severity == "error"]
        assert said.startswith("filter: 'cpu>1' is not allowed"), said


def test_the_filter_s_example_pattern_is_this_fleet_s_own() -> None:
    """On-call walk on the loopback fleet: the filter's example was `id:gw-00*`, which matches none of its
    nodes (`node-1` …). The example is the first node's id up to its digits."""
    from console.ui.screens.main import id_example

    assert id_example("node-1") == "node-*"
    assert id_example("gw-0002") == "gw-*"
    assert id_example("42") == "4*"  # (an id of digits only: its first one)
    assert id_example("edge") == "edge*"


async def test_the_filter_s_placeholder_gives_this_fleet_s_example(storm_app):
    """On-call walk: "Enter applies, Esc closes" was only the placeholder, gone at the first key typed: it is
    beside the input now (the bar's shape, one row at 80×24, is `InputBar`'s: test_input_bar). The
    placeholder gives the example pattern, this fleet's own."""
    from textual.widgets import Input

    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        await pilot.press("slash")
        await pilot.pause()
        field = storm_app.screen.query_one("#filter", Input)
        assert "id:gw-*" in field.placeholder, field.placeholder
        assert "Enter" not in field.placeholder and "Esc" not in field.placeholder
        assert "id:gw-*" in visible_lines(field)[0], visible_lines(field)


@pytest.mark.parametrize("focused", [False, True])
async def test_at_80_by_24_every_alarm_row_shows_its_value_against_its_limit(storm_app, focused):
    """Review: `python -m console` at 80×24 showed "✖ connections_drop", "✖ headroom_low" and ten blank
    cells, and Tab to the panel changed nothing — while README says each rule shows "its value against its
    limit first, so a narrow panel still shows them". Each row now says its rule's short label, whole, and
    its value against its limit; the line under the panel names the rule whole."""
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        panel = storm_app.screen.query_one(AlarmsPanel)
        if focused:
            await pilot.press("tab")
            await pilot.pause()
            assert panel.has_focus
        lines = visible_lines(panel)
        value = COLUMNS.index("value vs limit")
        rows = alarm_rows(storm_app.model.alarms.active()) + alarm_rows(storm_app.model.alarms.past())
        on_screen = [
            row
            for row in range(panel.row_count)
            if row_line(panel, row) >= 1
            and row_line(panel, row) + panel.ordered_rows[row].height <= len(lines)
        ]
        assert len(on_screen) >= 3
        for row in on_screen:
            cells = panel.get_row_at(row)
            # (its value vs its limit, as the model says it: beside its node or under it, its "was" over it)
            said_values = {row.value for row in rows if row.name == str(cells[RULE])}
            assert any(said in " ".join(str(cells[value]).split("\n")) for said in said_values), str(
                cells[value]
            )
            assert cell_shown(cells[value], lines, row_line(panel, row)), (str(cells[value]), lines)
            assert f" {short_label(str(cells[RULE]))} " in lines[row_line(panel, row)], lines
        said = storm_app.screen.query_one(AlarmMessage).message
        assert said.startswith(f"{panel.get_row_at(panel.cursor_row)[RULE]}: "), said
