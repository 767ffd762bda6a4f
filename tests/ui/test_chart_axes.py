"""Every chart the console draws keeps its time axis — ticks and the unit they count in — and says the unit
of its values, at 80×24 as at 120×36. The reviewer's 80×24 node detail drew six charts in boxes four rows
high: the figure was cut under its plot, and no chart said when its points were."""

from __future__ import annotations

import re

import pytest
from textual.widget import Widget

from console.model.link import Received
from console.protocol import Event
from console.ui.screens.node_detail import DETAIL_CHARTS, NodeDetailScreen
from console.ui.widgets.plot import PlotextChart, plot_columns

from ..client.fake_fleet_server import wait_for
from .conftest import fleet_ready

SIZES = [(80, 24), (120, 36)]
#: Unit in the value's words: what a node chart's box title must say beside its metric.
VALUE_UNITS = {
    "connections": "connections",
    "cpu_pct": "%",
    "accepts_per_s": "/ s",
    "rejects_per_s": "/ s",
    "timeouts_per_s": "/ s",
    "handshake_p99_ms": "(ms)",
}


def drawn_lines(widget: Widget) -> list[str]:
    """The screen's rows as drawn where `widget` is, its children's too (a box's own `render_lines` is its
    border and background only)."""
    region = widget.region
    rows = widget.screen._compositor.render_strips()[region.y : region.bottom]
    return ["".join(segment.text for segment in strip)[region.x : region.right] for strip in rows]


def inside(line: str) -> str:
    return line.strip("│ ")


def time_axis(lines: list[str], first: int, unit: str) -> bool:
    """A tick row from `first` to now (`-5 … 0`), with the row under it naming the unit (`minutes ago`)."""
    ticks = re.compile(rf"{first}(\s+-\d+)*\s+0")
    return any(
        ticks.fullmatch(inside(line)) and unit in lines[row + 1] for row, line in enumerate(lines[:-1])
    )


def on_screen(widget: Widget) -> bool:
    """Drawn, and whole: inside the screen, and not cut by a box too short for it."""
    screen = widget.screen.region
    return widget.display and widget.region.height > 0 and screen.contains_region(widget.region)


def drawn_at_width(app, metrics) -> bool:
    """Each chart is laid out on screen and its points fill its width: two a cell, as many as the history
    has (`plot_columns`). (A hidden chart's is no width: its four points would pass for fitted.)"""
    charts = [app.screen.query_one(f"#chart-{metric}", PlotextChart) for metric in metrics]
    return all(
        chart.content_size.width > 0
        and chart.spec.series[0].x.size
        == min(app.model.frames_applied, plot_columns(chart.content_size.width))
        for chart in charts
    )


def figure_whole(chart: PlotextChart) -> bool:
    """The chart's box shows every row of the figure it drew: a box shorter than the chart's min-height
    cut the tick row and the unit's under the plot."""
    box = chart.parent
    assert isinstance(box, Widget)
    return chart.region.height > 0 and box.content_region.contains_region(chart.region)


async def shown_chart(screen: NodeDetailScreen, pilot, metric: str) -> Widget:
    """The box of `metric`'s chart, brought on screen as an operator would: with → when the charts take
    turns (a short terminal), never more presses than there are charts."""
    box = screen.query_one(f"#box-{metric}")
    for _ in DETAIL_CHARTS:
        if on_screen(box):
            break
        await pilot.press("right")
        await pilot.pause()
    return box


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize(
    ("events", "crowded"),
    [(2, False), (6, False), (6, True)],
    ids=["two-events", "six-events", "six-events-draining-redis-away"],
)
async def test_every_node_chart_keeps_its_time_axis_and_value_unit(
    storm_app, size, events: int, crowded: bool
) -> None:
    """`crowded`: the most the other boxes take — a drain's progress over three lines at 80 columns, the
    summary's history warning, six events."""
    node = next(iter(storm_app.model.nodes))
    now_s = storm_app.clock()
    if crowded:
        node = next(node.id for node in storm_app.model.nodes.values() if node.drain is not None)
        why = "Redis at redis://127.0.0.1:6379/0: ConnectionError: Connection refused"
        away = storm_app.model.nodes[node].model_copy(update={"history_unreachable": why})
        storm_app.model.nodes[node] = away
    for second in range(events):  # the events box grows to its most (six) and takes rows from the charts
        event = Event(time_s=40 + second, kind="action", node=node, message=f"note {second}")
        storm_app.feed(Received(event, now_s))
    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        storm_app.open_node(node)
        await fleet_ready(storm_app)
        await pilot.pause()
        screen = storm_app.screen
        assert isinstance(screen, NodeDetailScreen)
        for metric, title in DETAIL_CHARTS:
            box = await shown_chart(screen, pilot, metric)
            chart = box.query_one(PlotextChart)
            assert on_screen(box), (metric, box.region)
            assert figure_whole(chart), (metric, chart.region, box.content_region)
            lines = drawn_lines(box)
            assert time_axis(lines, -5, "minutes ago"), (metric, lines)
            assert box.border_title == title and VALUE_UNITS[metric] in title
            # the value axis: at least two round ticks, the lowest of them zero
            labels = [inside(line).split("┤")[0].strip() for line in lines if "┤" in line]
            assert len([label for label in labels if label]) >= 2 and labels[-1] in ("0", "0.0"), lines


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
async def test_the_fleet_charts_keep_their_time_axis(storm_app, size) -> None:
    """The wave chart counts seconds back to now; the connections chart minutes, where it is shown (below
    36 rows it gives way to the alarms and the node table, the gauge keeping the count: README)."""
    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        await pilot.pause()
        wave = storm_app.screen.query_one("#wave-box")
        assert on_screen(wave) and figure_whole(wave.query_one(PlotextChart))
        assert time_axis(drawn_lines(wave), -60, "seconds ago"), drawn_lines(wave)
        assert "attempts per 100 ms" in str(wave.border_title)
        connections = storm_app.screen.query_one("#conn-box")
        if size[1] < 36:
            assert not connections.display
            return
        assert on_screen(connections) and figure_whole(connections.query_one(PlotextChart))
        assert time_axis(drawn_lines(connections), -10, "minutes ago"), drawn_lines(connections)
        assert "connections" in str(connections.border_title)


async def open_first_node(app, pilot) -> None:
    await fleet_ready(app)
    app.open_node(next(iter(app.model.nodes)))
    await fleet_ready(app)
    await pilot.pause()


async def test_the_charts_brought_on_screen_are_drawn_at_their_width(storm_app) -> None:
    """A turn's charts were drawn while hidden, fitted to no width (four points): shown, they are drawn again
    at the width they have, with no new frame (a paused replay, a quiet fleet)."""
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await open_first_node(storm_app, pilot)
        screen = storm_app.screen
        later_metrics = [metric for metric, _ in DETAIL_CHARTS[3:]]
        later = [screen.query_one(f"#chart-{metric}", PlotextChart) for metric in later_metrics]
        assert not any(chart.parent.display for chart in later)  # the second turn's, hidden
        await pilot.press("right")
        await wait_for(lambda: drawn_at_width(storm_app, later_metrics), 5.0, what="the shown charts drawn")
        assert screen.query_one(f"#box-{DETAIL_CHARTS[-1][0]}").border_subtitle == "charts 2/2 · ← back"
        await pilot.press("right")  # no third turn: the second stays
        assert screen.chart_turn == 1
        await pilot.press("left")
        assert screen.chart_turn == 0 and not any(chart.parent.display for chart in later)


async def test_a_taller_terminal_shows_every_chart_at_its_width(storm_app) -> None:
    """Grown past 36 rows the charts stop taking turns: the hidden turn's, drawn at no width, are drawn
    again at theirs, with no new frame; the turn's marker goes."""
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await open_first_node(storm_app, pilot)
        await pilot.resize_terminal(120, 36)
        metrics = [metric for metric, _ in DETAIL_CHARTS]
        await wait_for(lambda: drawn_at_width(storm_app, metrics), 5.0, what="every chart drawn")
        for metric in metrics:
            box = storm_app.screen.query_one(f"#box-{metric}")
            assert box.display and not box.border_subtitle
