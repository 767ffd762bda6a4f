"""Drill mode's objectives panel beside the fleet's panels: at 80×24, 120×36 and beyond, the trainee sees
the alarms (what a drill trains on), some node rows and every objective's standing and name.

A reviewer found the panel (above the footer, the whole width) pushing the others off the screen: at
120×36 the alarms box kept its header and no row, at 80×24 the node table was gone. Asserted here on what
the screen draws (`drawn`), not on the widgets' regions alone: a widget pushed out of its container keeps
a region that another widget is drawn over.

The packaged drills, fed the synthetic fleet (12 nodes, the storm at 40 s: five alarms), 45 s in.
"""

from __future__ import annotations

import re

import pytest
from textual.widget import Widget

from console.alarms.base import short_label
from console.drills.live import DrillProgress
from console.drills.schema import load_drill
from console.ui.drill import DrillApp, DrillScreen
from console.ui.widgets.alarms_panel import RULE, AlarmsPanel
from console.ui.widgets.footer import ConsoleFooter
from console.ui.widgets.node_table import NodeTable
from console.ui.widgets.objectives_box import ObjectivesBox

from .conftest import fleet_ready
from .test_drill import _EPOCH_WALL_S, FakeClock, TinyFeed

LIVE_S = 45
#: The fewest rows of each a trainee is shown: "a few" node rows, and the alarms first in the panel.
NODE_ROWS = 3
ALARM_ROWS = 3

#: Every packaged drill at the two sizes the reviewer tried; the lockstep drill (four objectives) at the
#: sizes between and above them too. thundering-herd's halt objective has a 91-character name.
PACKAGED = ("gitlab-reset-burst", "graceful-drain", "regional-outage", "resync-cliff", "socketio-lockstep")
CASES = [
    *((name, size) for name in (*PACKAGED, "thundering-herd") for size in ((80, 24), (120, 36))),
    ("socketio-lockstep", (100, 30)),
    ("socketio-lockstep", (160, 48)),
]


def drill_app(name: str) -> DrillApp:
    drill = load_drill(name)
    return DrillApp(
        DrillProgress(drill, end_s=drill.duration_s),
        set_paused=FakeClock(),
        clock=lambda: _EPOCH_WALL_S + LIVE_S + 0.4,
        remember_theme=False,
        theme_name="dark",
    )


async def go_live(pilot) -> None:
    """Past the briefing, LIVE_S seconds of the synthetic fleet, drawn."""
    await pilot.press("enter")
    TinyFeed(pilot.app).run(LIVE_S)
    await fleet_ready(pilot.app)
    pilot.app.refresh_views()
    await pilot.pause()


def drawn(app: DrillApp, widget: Widget) -> list[str]:
    """What the screen draws in `widget`'s region (its part on the screen), row by row."""
    region = widget.region.intersection(app.screen.region)
    strips = app.screen._compositor.render_strips()
    return [strips[y].text[region.x : region.right] for y in range(region.y, region.bottom)]


def in_view(app: DrillApp, widget: Widget) -> None:
    """Laid out on the screen, above the footer, with rows of its own."""
    region, screen = widget.region, app.screen.region
    footer = app.screen.query_one(ConsoleFooter).region
    assert region.height > 0 and region.width > 0, f"{widget.id}: {region}"
    assert screen.contains_region(region), f"{widget.id}: {region} not within {screen}"
    assert region.bottom <= footer.y, f"{widget.id}: {region} runs into the footer at row {footer.y}"


def words(lines: list[str]) -> str:
    return re.sub(r"\s+", " ", " ".join(lines))


def said_in(said: str, lines: list[str]) -> bool:
    """`said` whole on one of `lines` (beside a border, a space or the line's end, not inside a longer
    name: gw-001 is not said by gw-0010)."""
    whole = re.compile(rf"(?<![\w-]){re.escape(said)}(?![\w-])")
    return any(whole.search(line) for line in lines)


def node_rows_drawn(app: DrillApp) -> list[str]:
    ids = [node.id for node in app.screen.query_one(NodeTable).rows]
    lines = drawn(app, app.screen.query_one("#nodes-box"))
    return [node for node in ids if said_in(node, lines)]


def alarm_rows_drawn(app: DrillApp) -> list[str]:
    panel = app.screen.query_one(AlarmsPanel)
    rules = [str(panel.get_row_at(row)[RULE]) for row in range(panel.row_count)]
    lines = drawn(app, app.screen.query_one("#alarms-box"))
    return [rule for rule in rules if said_in(rule, lines) or said_in(short_label(rule), lines)]


def objectives_box(app: DrillApp) -> ObjectivesBox:
    """The objectives panel on screen: above the footer, or at 80×24 under the node table."""
    [box] = [box for box in app.screen.query(ObjectivesBox) if box.display]
    return box


def objectives_drawn(app: DrillApp) -> str:
    return words(drawn(app, objectives_box(app)))


@pytest.mark.parametrize(("name", "size"), CASES, ids=[f"{name}-{w}x{h}" for name, (w, h) in CASES])
async def test_the_drill_panel_leaves_alarms_and_node_rows_in_view(name, size) -> None:
    app = drill_app(name)
    async with app.run_test(size=size) as pilot:
        await go_live(pilot)
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        for widget in (screen.query_one("#nodes-box"), screen.query_one("#alarms-box"), objectives_box(app)):
            in_view(app, widget)
        nodes = node_rows_drawn(app)
        assert len(nodes) >= NODE_ROWS, f"node rows drawn: {nodes}\n" + "\n".join(drawn(app, screen))
        alarms = alarm_rows_drawn(app)
        active = screen.query_one(AlarmsPanel).row_count
        assert len(alarms) >= min(ALARM_ROWS, active), (
            f"alarm rows drawn: {alarms} of {active}\n" + "\n".join(drawn(app, screen))
        )
        # every objective's standing and its name, whole
        said = objectives_drawn(app)
        for item in app.progress.objectives():
            assert item.measured.name in said, f"{item.measured.name!r} not in {said!r}"
        assert said.count(" at risk ") + said.count(" met ") + said.count(" failed ") == len(
            app.progress.drill.objectives
        ), said


async def tab_to(pilot, kind: type[Widget], presses: int = 6) -> Widget:
    """Tab from panel to panel until one of `kind` has the focus."""
    for _ in range(presses):
        await pilot.press("tab")
        if isinstance(pilot.app.focused, kind):
            return pilot.app.focused
    raise AssertionError(f"no {kind.__name__} took the focus in {presses} tabs: {pilot.app.focused}")


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_below_36_rows_the_panel_names_the_objectives_and_tab_reads_their_whys(size) -> None:
    """Their whys took the rows of the alarms and the nodes; a trainee reads them on Tab, as the alarms'
    messages, and Esc goes back to the node table and the brief panel."""
    app = drill_app("socketio-lockstep")
    async with app.run_test(size=size) as pilot:
        await go_live(pilot)
        objectives = app.progress.objectives()
        # What the whole panel says beside each name: its status on the drill's clock ("not yet: by …")
        whys = [item.status for item in objectives if item.status != item.measured.name]
        assert whys
        said = objectives_drawn(app)
        assert not any(why in said for why in whys), said
        box = await tab_to(pilot, ObjectivesBox)
        await pilot.pause()
        assert box is objectives_box(app)
        said = objectives_drawn(app)
        # (whole: a why wraps under itself, beside its standing)
        assert any(why in said for why in whys), said
        assert all(item.measured.name in said for item in objectives), said
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.focused, NodeTable)
        said = objectives_drawn(app)
        assert not any(why in said for why in whys), said
        assert len(node_rows_drawn(app)) >= NODE_ROWS


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
def test_drill_screen_snapshot(size, snap_compare) -> None:
    assert snap_compare(drill_app("socketio-lockstep"), terminal_size=size, run_before=go_live)
