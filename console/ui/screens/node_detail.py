"""One node: its series over 5 minutes, drain progress while draining, and its recent events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import numpy as np
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Vertical
from textual.reactive import reactive
from textual.widgets import Static

from console.errors import StormdeckError
from console.model.admission import node_admission_readings
from console.model.downsample import downsample
from console.model.drain_seen import CancelledDrain, cancelled_drain
from console.model.gauges import node_level, shedding_nodes
from console.model.history import NODE_HISTORY_S, FleetModel, stale_note
from console.model.node_detail import (
    ServerHistory,
    ended_drain,
    joined_events,
    joined_series,
    parse_node_detail,
)
from console.model.nodes import handshake_p99_text
from console.model.offered import keys_not_offered
from console.model.thresholds import Level
from console.model.units import FLEET_CLOCK, ClockFace, duration
from console.protocol import AdmissionInForce, Event, NodeState, NodeStatus
from console.ui.charts import line_colour
from console.ui.commands import action_bindings, not_offered_bindings
from console.ui.intents import ScreenReady
from console.ui.screens.fleet_view import FleetView
from console.ui.themes import LEVEL_GLYPHS, Palette
from console.ui.widgets.footer import ConsoleFooter
from console.ui.widgets.header import FleetHeader
from console.ui.widgets.plot import ChartSpec, PlotextChart, Series, plot_columns

#: Fetches `GET /v1/nodes/{id}`: (the payload, the model's frames_applied when it answered).
NodeFetch = Callable[[str], Awaitable[tuple[Any, int]]]

#: (metric, chart title with unit)
DETAIL_CHARTS = (
    ("connections", "connections"),
    ("cpu_pct", "CPU %"),
    ("accepts_per_s", "accepts / s"),
    ("rejects_per_s", "503s / s"),
    ("timeouts_per_s", "timeouts / s"),
    ("handshake_p99_ms", "handshake p99 (ms)"),
)
#: Below this many rows the charts take turns, a row of three at a time (→ ←): at 80×24 the six in two rows
#: had boxes four rows high, and each figure was cut under its plot — no tick row, no "minutes ago" —
#: with two of its rows left for the plot. A row of three there has nine: the plot, its time axis and unit.
CHARTS_ALL_AT_ONCE_ROWS = 36
CHARTS_A_TURN = 3
CHART_TURNS = -(-len(DETAIL_CHARTS) // CHARTS_A_TURN)


def chart_turn_marker(turn: int) -> str:
    """The bottom border of a turn's last chart: which turn it is, and the key to the other charts."""
    key = "→ next" if turn + 1 < CHART_TURNS else "← back"
    return f"charts {turn + 1}/{CHART_TURNS} · {key}"


def turn_binding(key: str, step: int, word: str) -> Binding:
    """Off the footer, full at 80 columns: the charts' border says the key where they take turns; help
    says when they do."""
    when = f"under {CHARTS_ALL_AT_ONCE_ROWS} rows the charts take turns, {CHARTS_A_TURN} at a time"
    return Binding(
        key, f"turn_charts({step})", f"{word} charts", show=False, tooltip=f"{word} charts ({when})"
    )


def drain_text(
    node: NodeStatus,
    now_fleet_s: float,
    ended: Event | None = None,
    clock: ClockFace = FLEET_CLOCK,
    cancelled: CancelledDrain | None = None,
) -> Text:
    """The drain's progress; `ended`: the event that ended it when the node went down, `cancelled`: the
    undrain that put it back in rotation, each said instead of "not draining" (a drain that vanished with
    its node, or was cancelled with `u`, read as if there had been none). Its times read on `clock`."""
    drain = node.drain
    text = Text(no_wrap=True)
    if drain is None and ended is not None:
        text.append(f"drain ended at {clock.text(ended.time_s)}  ", style="bold")
        text.append(ended.message.split(": ", 1)[-1])
        return text
    if drain is None and cancelled is not None:
        text.append(f"drain cancelled at {clock.text(cancelled.at_s)}  ", style="bold")
        closed = f"{cancelled.closed:,} closed, " if cancelled.closed is not None else ""
        text.append(f"{closed}back in rotation")
        return text
    if drain is None:
        text.append("not draining", style="dim")
        return text
    if node.state is NodeState.DRAINED:
        # A real node keeps its drain's progress once empty (it still closes late arrivals): done, said
        # as done — "draining … ETA 0s, deadline in 9m 20s" under a "drained" header read as under way.
        text.append("drained  ", style="bold")
        achieved = drain.achieved_rate_per_s
        pace = f"{achieved:.1f}/s ({drain.rate_per_s:g}/s asked)" if achieved else f"{drain.rate_per_s:g}/s"
        if drain.forced:
            # The pace was that of the paced ones only: "closed 147 at 2.0/s … 137 force-closed" read as
            # 147 closed at 2/s (review; `achieved_rate_per_s` leaves the forced out).
            paced = drain.closed - drain.forced
            text.append(
                f"closed {drain.closed:,}: {paced:,} at {pace}, {drain.forced:,} force-closed at the deadline  "
            )
        else:
            text.append(f"closed {drain.closed:,} at {pace}  ")
        if drain.remaining:
            text.append(f"closing {drain.remaining:,} late arrivals  ")
        text.append(f"hint {drain.hint_ms[0]}–{drain.hint_ms[1]} ms")
        return text
    text.append("draining  ", style="bold")
    text.append(f"remaining {drain.remaining:,}  rate {drain.rate_per_s:g}/s  ")
    eta = (
        drain.eta_s
        if drain.eta_s is not None
        else (drain.remaining / drain.rate_per_s if drain.rate_per_s else None)
    )
    text.append(f"ETA {duration(eta) if eta is not None else '—'}  ")
    text.append(
        f"deadline in {duration(drain.deadline_at_s - now_fleet_s)} (at {clock.text(drain.deadline_at_s)})  "
    )
    text.append(f"hint {drain.hint_ms[0]}–{drain.hint_ms[1]} ms")
    if eta is not None and now_fleet_s + eta > drain.deadline_at_s:
        text.append("  ▲ will force-close at the deadline", style="bold")
    return text


def node_readings(node: NodeStatus) -> list[str]:
    """The summary's figures, each with its unit; no handshake p99 is "—", with no unit after it."""
    p99 = handshake_p99_text(node)
    return [
        f"conns {node.connections:,}",
        f"cpu {node.cpu_pct:.1f} %",
        f"acc {node.accepts_per_s:.0f}/s",
        f"503 {node.rejects_per_s:.0f}/s",
        f"t/o {node.timeouts_per_s:.0f}/s",
        "p99 —" if p99 == "—" else f"p99 {p99} ms",
    ]


def append_readings(text: Text, readings: list[str], room: int | None, style: str = "") -> None:
    """`readings` after what `text` holds, a new line begun between two readings where the next would
    pass `room` cells: at 80 columns the line wrapped inside one ("t/o" / "36/s", "p99 —" / "ms")."""
    used = text.cell_len - text.plain.rfind("\n") - 1
    for reading in readings:
        piece = f"   {reading}"
        if room is not None and used + len(piece) > room:
            text.append("\n")
            piece, used = reading, 0
        text.append(piece, style=style)
        used += len(piece)


def events_grid(events: list[Event], clock: ClockFace = FLEET_CLOCK) -> Table:
    """The events, one a row: a message too long for the line wraps under its own first word (at 80
    columns it wrapped to column 0, under the time, and read as another event)."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)  # the time
    grid.add_column(no_wrap=True, min_width=11)  # the kind
    grid.add_column(ratio=1, overflow="fold")  # the message; fold only a word longer than the line
    for event in events:
        grid.add_row(f"{clock.text(event.time_s)} ", event.kind, event.message)  # two cells after the time
    return grid


def series_spec(
    values: np.ndarray, columns: int, fleet_s_per_frame: float = 1.0, colour: str = "line"
) -> ChartSpec:
    """One of the node's metrics over its history; `colour` is the line's chart colour key (`line_colour`:
    muted while the view is stale, as the main screen's charts)."""
    positions, points = downsample(values, columns, how="mean")
    x = (positions - values.size + 1) * fleet_s_per_frame / 60.0
    finite = points[np.isfinite(points)]
    high = float(finite.max()) if finite.size else 1.0
    return ChartSpec(
        series=(Series(x, points, colour),),
        x_label="minutes ago",
        x_lim=(-NODE_HISTORY_S / 60.0, 0.0),
        x_ticks=tuple(float(m) for m in range(-NODE_HISTORY_S // 60, 1)),
        y_lim=(0.0, max(high * 1.15, 1.0)),
    )


class NodeDetailScreen(FleetView):
    DEFAULT_CSS = """
    NodeDetailScreen #summary { height: auto; padding: 0 1; }
    NodeDetailScreen #drain { height: auto; padding: 0 1; border: round $panel-lighten-2; border-title-color: $foreground; }
    NodeDetailScreen #charts { grid-size: 3 2; height: 1fr; }
    NodeDetailScreen .chart-box {
        border: round $panel-lighten-2; border-title-color: $foreground; border-subtitle-color: $text-muted;
    }
    NodeDetailScreen #events { height: auto; max-height: 8; border: round $panel-lighten-2; padding: 0 1; border-title-color: $foreground; }
    NodeDetailScreen.-charts-take-turns #charts { grid-size: 3 1; }
    /* three events, not six: with six the row of charts had two rows of plot left at 80x24 */
    NodeDetailScreen.-charts-take-turns #events { max-height: 5; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,backspace", "app.pop_screen", "back"),
        *action_bindings(),
        turn_binding("right", 1, "next"),
        turn_binding("left", -1, "previous"),
    ]

    def __init__(self, node_id: str, fetch: NodeFetch | None = None) -> None:
        super().__init__()
        self.node_id = node_id
        self._fetch = fetch
        self.server_history: ServerHistory | None = None

    #: Which row of charts is shown while they take turns (`CHARTS_ALL_AT_ONCE_ROWS`).
    chart_turn: reactive[int] = reactive(0, init=False)

    def compose(self) -> ComposeResult:
        yield FleetHeader(id="header")
        yield Static(id="summary")
        yield Static(id="drain")
        with Grid(id="charts"):
            for metric, title in DETAIL_CHARTS:
                with Vertical(classes="chart-box", id=f"box-{metric}") as box:
                    box.border_title = title
                    yield PlotextChart(id=f"chart-{metric}")
        yield Static(id="events")
        # Keys that do not fit give way whole; Esc back the last of them, then quit and help.
        yield ConsoleFooter(essential=("app.pop_screen",))

    def on_mount(self) -> None:
        self.query_one("#drain").border_title = "drain progress"
        self.query_one("#events").border_title = "recent events"
        self.call_after_refresh(self._ready)
        if self._fetch is not None:
            self.run_worker(self._load_server_history(), name="node-history", exit_on_error=False)

    async def _load_server_history(self) -> None:
        """Ask the server for the minutes this console did not see; a failure is a note, not a crash."""
        assert self._fetch is not None
        try:
            payload, frames_applied = await self._fetch(self.node_id)
        except StormdeckError as error:
            self.notify(f"history from the server: {error}", severity="warning")
            return
        self.server_history = parse_node_detail(payload, frames_applied)
        self.post_message(ScreenReady())

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < CHARTS_ALL_AT_ONCE_ROWS, "-charts-take-turns")
        self._show_chart_turn()

    def action_turn_charts(self, step: int) -> None:
        if self.has_class("-charts-take-turns"):
            self.chart_turn = min(max(self.chart_turn + step, 0), CHART_TURNS - 1)

    def watch_chart_turn(self) -> None:
        self._show_chart_turn()

    def _show_chart_turn(self) -> None:
        taking_turns = self.has_class("-charts-take-turns")
        for index, (metric, _) in enumerate(DETAIL_CHARTS):
            box = self.query_one(f"#box-{metric}")
            turn, place = divmod(index, CHARTS_A_TURN)
            box.display = not taking_turns or turn == self.chart_turn
            last = place == CHARTS_A_TURN - 1 or index == len(DETAIL_CHARTS) - 1
            box.border_subtitle = chart_turn_marker(turn) if taking_turns and last else ""
        # Drawn while hidden, the charts shown now were fitted to no width (four points): drawn again once
        # laid out — a paused replay or a quiet fleet brings no frame that would.
        self.call_after_refresh(self.post_message, ScreenReady())

    def show_model(
        self,
        model: FleetModel,
        now_s: float,
        palette: Palette,
        actions_off: str | None = None,
        clock: ClockFace = FLEET_CLOCK,
        time_s: float | None = None,
    ) -> None:
        """`clock`: how fleet times read — the header's, the events' and the drain's (in a drill, the
        drill's clock)."""
        self.show_header(model, now_s, palette, clock, time_s)
        node = model.nodes.get(self.node_id)
        summary = Text(no_wrap=True)
        summary.append(f"{self.node_id}  ", style="bold")
        stale = model.stale_s(now_s)
        if stale is not None:  # as the main screen's panels: the last frame's readings, too old to judge
            summary.append(f"{stale_note(stale)}  ", style=palette.level_style(Level.CRITICAL, bold=True))
        if node is None:
            summary.append("not in the latest frame", style=palette.level_style(Level.UNKNOWN))
        else:
            shedding = self.node_id in shedding_nodes(model.frame)
            level = Level.UNKNOWN if stale is not None else node_level(node, model.thresholds, shedding)
            summary.append(
                f"{LEVEL_GLYPHS[level]} {node.state.value}", style=palette.level_style(level, bold=True)
            )
            room = self.query_one("#summary", Static).content_size.width or None
            append_readings(summary, node_readings(node), room, style="dim" if stale is not None else "")
            # What this node admits, and whose setting it is: a per-node one showed nowhere (found in review).
            in_force = AdmissionInForce.of(model.frame) if model.frame else None
            admission = node_admission_readings(in_force, self.node_id)
            if admission:  # (only where some node runs its own: else the rollout & admission box says it)
                first, *rest = admission
                summary.append(f"\n{first}", style="dim" if stale is not None else "")
                own = in_force is not None and in_force.overridden(self.node_id)
                append_readings(summary, rest, room, style="bold" if own and stale is None else "dim")
            if node.history_unreachable:
                summary.append(
                    # What it costs first: the error after it may run past a narrow screen.
                    f"\n{LEVEL_GLYPHS[Level.WARNING]} history unreachable, arriving clients get 1013 and live "
                    f"messages wait — {node.history_unreachable}",
                    style=palette.level_style(Level.WARNING),
                )
        self.query_one("#summary", Static).update(summary)
        now_fleet = model.frame.time_s if model.frame else 0.0
        # More than the box shows: the drain's end may sit under a few later events.
        recent = joined_events(self.server_history, model.node_events(self.node_id, limit=20), limit=20)
        drain_box = self.query_one("#drain", Static)
        if node is None:
            drain_box.update(Text("—"))
        else:
            cancelled = cancelled_drain(node, recent, model.drains_seen.get(self.node_id))
            drain_box.update(drain_text(node, now_fleet, ended_drain(node, recent), clock, cancelled))
        drain_box.border_subtitle = (
            "d drain · u undrain"
            if actions_off is None
            else f"[{palette.levels[Level.WARNING]}]▲ actions off: {actions_off}[/]"
        )
        # As the fleet screen's footer: the fleet's keys only for what it can take, read again each frame
        not_offered = keys_not_offered(model.frame, model.drill_ended is not None)
        self.query_one(ConsoleFooter).hide(not_offered_bindings(not_offered))
        step_s = model.fleet_s_per_frame()
        colour = line_colour(model, now_s)
        for metric, _ in DETAIL_CHARTS:
            chart = self.query_one(f"#chart-{metric}", PlotextChart)
            seen = model.node_history(self.node_id, metric)
            values = joined_series(self.server_history, seen, model.frames_applied, metric)
            chart.show(
                series_spec(values, plot_columns(chart.content_size.width), step_s, colour),
                palette.chart,
                palette.foreground,
            )
        self.query_one("#events", Static).update(
            events_grid(recent[:6], clock) if recent else Text("no events for this node yet", style="dim")
        )
