"""When frames stop, the data panels say they show old data, without a new frame to redraw them; when frames
come back, they are live again by themselves (operator pass: the fleet API stopped, only the header said it,
and the gauges kept their green ✓ as if live)."""

from __future__ import annotations

from rich.style import Style

from console.model.link import LinkState, LinkStatus
from console.ui.app import ConsoleApp
from console.ui.widgets.alarms_panel import AlarmsPanel
from console.ui.widgets.node_table import NodeTable
from console.ui.widgets.plot import PlotextChart

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, fleet_ready
from .test_oncall import STATE, WALL_S, FedFleet, gauge_lines, visible_lines

GAUGES = ("connections", "attempts", "accepts", "headroom", "drain_inflow")
PANELS = ("#nodes-box", "#wave-box", "#conn-box", "#alarms-box", "#rollout-box")
CHARTS = ("#wave-chart", "#conn-chart")


def state_cells(app: ConsoleApp) -> list[str]:
    """The node table's state column as drawn, row by row (under its header)."""
    return [line[12:26] for line in visible_lines(app.screen.query_one(NodeTable))[1:] if line.strip()]


def titles(app: ConsoleApp) -> list[str]:
    return [str(app.screen.query_one(panel).border_title) for panel in PANELS]


def frames_resume(app: ConsoleApp, fed: FedFleet, now: list[float]) -> None:
    """The link is live again 12 fleet seconds on, and its next frame arrives (`now[0]`: the wall clock)."""
    fed.second += 12
    items = fed.items(1)
    now[0] = items[-1].at_s + 0.4
    app.feed(LinkStatus(LinkState.LIVE, at_s=now[0]))
    for item in items:
        app.feed(item)


async def test_the_panels_say_stale_when_frames_stop_and_live_when_they_come_back():
    fed = FedFleet(storm_at_s=None)  # calm: every gauge ✓
    fed.feed_model(45)
    now = [WALL_S + fed.second + 0.4]
    app = ConsoleApp(model=fed.model, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        await pilot.pause()
        live = {key: gauge_lines(app, key) for key in GAUGES}
        assert any(lines[1].lstrip("│ ").startswith("✓") for lines in live.values()), live
        assert not any("stale" in "".join(lines) for lines in live.values())
        assert any(cell.startswith("✓") for cell in state_cells(app)), state_cells(app)
        assert not any("stale" in title for title in titles(app))

        # The server is gone: the link reconnects, and no frame comes for 12 s. Only the clock moves.
        app.feed(LinkStatus(LinkState.RECONNECTING, attempt=1, next_in_s=2.0, at_s=now[0]))
        now[0] = WALL_S + fed.second + 12.4
        await wait_for(
            lambda: "stale 12 s" in "".join(gauge_lines(app, "connections")), what="the gauges to say stale"
        )
        for key in GAUGES:
            lines = gauge_lines(app, key)
            assert lines[1].lstrip("│ ").startswith("·"), lines  # no level: neither ✓ nor ✖
            assert live[key][1].split()[2] in lines[1], (live[key], lines)  # the value still shown
            assert "stale 12 s" in lines[2], lines
        assert all("stale — last frame 12 s ago" in title for title in titles(app)), titles(app)
        assert state_cells(app) and all(cell.startswith("·") for cell in state_cells(app)), state_cells(app)

        # Frames come back: everything is live again, with no key pressed.
        frames_resume(app, fed, now)
        await wait_for(
            lambda: "stale" not in "".join(gauge_lines(app, "connections")), what="the gauges to be live"
        )
        assert not any("stale" in "".join(gauge_lines(app, key)) for key in GAUGES)
        assert any(gauge_lines(app, key)[1].lstrip("│ ").startswith("✓") for key in GAUGES)
        assert not any("stale" in title for title in titles(app)), titles(app)
        assert any(cell.startswith("✓") for cell in state_cells(app)), state_cells(app)


async def test_a_held_replay_is_not_marked_stale():
    """A paused replay sends no frames on purpose: the header says "paused", and so do the panels — not stale."""
    fed = FedFleet(storm_at_s=None)
    fed.feed_model(45)
    now = [WALL_S + fed.second + 0.4]
    app = ConsoleApp(model=fed.model, clock=lambda: now[0])
    app.model.apply(LinkStatus(LinkState.PAUSED, reason="paused", at_s=now[0], replay_speed=1.0))
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        now[0] += 60
        app._tick()
        app.refresh_views()
        await pilot.pause()
        assert not any("stale" in "".join(gauge_lines(app, key)) for key in GAUGES)
        assert not any("stale" in title for title in titles(app))


async def test_a_node_s_detail_says_stale_too():
    """The detail's summary carried the node's level glyph from the last frame, as the table's rows did;
    its charts kept their live line colour after the main screen's had turned muted."""
    from console.ui.screens.node_detail import NodeDetailScreen

    fed = FedFleet(storm_at_s=None)
    fed.feed_model(45)
    now = [WALL_S + fed.second + 0.4]
    app = ConsoleApp(model=fed.model, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        node_id = next(iter(app.model.nodes))
        app.open_node(node_id)
        await fleet_ready(app)
        await pilot.pause()
        assert isinstance(app.screen, NodeDetailScreen)

        def summary() -> str:
            return "\n".join(visible_lines(app.screen.query_one("#summary")))

        assert f"{node_id}  ✓" in summary(), summary()
        line, muted = app.palette.chart["line"].lower(), app.palette.chart["stale"].lower()
        detail_charts = [f"#{chart.id}" for chart in app.screen.query(PlotextChart)]
        assert detail_charts
        for chart_id in detail_charts:
            assert line in chart_colours(app, chart_id) and muted not in chart_colours(app, chart_id)
        now[0] += 12
        await wait_for(lambda: "stale — last frame 12 s ago" in summary(), what="the detail to say stale")
        assert "✓" not in summary() and "· " in summary(), summary()
        await pilot.pause()
        for chart_id in detail_charts:
            assert muted in chart_colours(app, chart_id) and line not in chart_colours(app, chart_id), (
                chart_id
            )


def chart_colours(app: ConsoleApp, chart_id: str) -> set[str]:
    """The colours the chart is drawn in, as painted (its lines, axes and labels)."""
    text = app.screen.query_one(chart_id, PlotextChart).render()
    return {
        span.style.color.get_truecolor().hex
        for span in text.spans
        if isinstance(span.style, Style) and span.style.color is not None
    }


def alarm_states(app: ConsoleApp) -> list[tuple[str, bool]]:
    """The active alarms' state cells as drawn: (word, dimmed)."""
    panel = app.screen.query_one(AlarmsPanel)
    cells = [panel.get_row_at(row)[STATE] for row in range(panel.row_count)]
    return [
        (str(cell), bool(cell.style and Style.parse(str(cell.style)).dim))
        for cell in cells
        if "cleared" not in str(cell)  # (a cleared row's, on two lines at 160 columns: "raised", "cleared")
    ]


def alarm_log(app: ConsoleApp) -> tuple[object, ...]:
    log = app.model.alarms
    return log.version, [(e.key, e.acknowledged, e.cleared_at_s, e.reading) for e in log.active()]


async def test_stale_charts_are_muted_and_stale_alarms_say_they_are_the_last_frame_s():
    """With the fleet API gone the chart lines kept their live colour and the alarms panel its "NEW"
    alarms under a plain title — an alarm from a frame 40 s old read as firing now. Past the stale line
    the lines are muted and the alarms titled and dimmed as of the last frame; the log itself is untouched,
    and the next frame brings everything back as it was."""
    fed = FedFleet(storm_at_s=30)  # a storm: alarms raised, and lines on both charts
    fed.feed_model(60)
    now = [WALL_S + fed.second + 0.4]
    app = ConsoleApp(model=fed.model, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        await pilot.pause()
        chart = app.palette.chart
        line, muted = chart["line"].lower(), chart["stale"].lower()
        for chart_id in CHARTS:
            assert line in chart_colours(app, chart_id) and muted not in chart_colours(app, chart_id)
        live_states = alarm_states(app)
        assert live_states and not any(dimmed for _, dimmed in live_states), live_states
        alarms_title = str(app.screen.query_one("#alarms-box").border_title)
        assert "stale" not in alarms_title
        log = alarm_log(app)

        app.feed(LinkStatus(LinkState.RECONNECTING, attempt=1, next_in_s=2.0, at_s=now[0]))
        now[0] = WALL_S + fed.second + 12.4
        await wait_for(
            lambda: "stale" in str(app.screen.query_one("#alarms-box").border_title),
            what="the alarms panel to say stale",
        )
        await pilot.pause()
        title = str(app.screen.query_one("#alarms-box").border_title)
        assert "stale — last frame 12 s ago" in title and alarms_title.split(" · ")[0] in title, title
        for chart_id in CHARTS:
            assert muted in chart_colours(app, chart_id) and line not in chart_colours(app, chart_id)
        stale_states = alarm_states(app)
        assert [word for word, _ in stale_states] == [
            word for word, _ in live_states
        ]  # same alarms, same states
        assert all(dimmed for _, dimmed in stale_states), stale_states
        assert alarm_log(app) == log

        frames_resume(app, fed, now)
        await wait_for(
            lambda: "stale" not in str(app.screen.query_one("#alarms-box").border_title),
            what="the alarms panel to be live",
        )
        await pilot.pause()
        for chart_id in CHARTS:
            assert line in chart_colours(app, chart_id) and muted not in chart_colours(app, chart_id)
        assert alarm_states(app) and not any(dimmed for _, dimmed in alarm_states(app)), alarm_states(app)
