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
from console.ui.widgets.hint_line import HintLine
from console.ui.widgets.node_table import NodeTable
from console.ui.widgets.objectives_box import ObjectivesBox

from .conftest import fleet_ready
from .test_drill import _EPOCH_WALL_S, FakeClock, TinyFeed

LIVE_S = 45
#: The fewest rows of each a trainee is shown: "a few" node rows, and the alarms first in the panel.
NODE_ROWS = 3
ALARM_ROWS = 3

#: Every packaged drill at the two sizes the reviewer tried; the lockstep drill (four objectives) at the
#: sizes between and above them too. thundering-herd has five objectives, its halt's name 78 characters.
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
        standings = (" at risk ", " met ", " failed ", " pending ")
        marks = re.sub(
            r", [\d.]+ at risk ", " ", said
        )  # (the title's score so far: "…, 40 at risk · p pauses")
        assert sum(marks.count(standing) for standing in standings) == len(app.progress.drill.objectives), (
            said
        )


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


def told_hints(app: DrillApp, count: int) -> list[str]:
    """The drill's first `count` hints as its served stream tells them (the longest first where it has
    fewer), at LIVE_S; their texts, newest last."""
    from console.model.link import Received
    from console.protocol import Event

    hints = sorted(app.progress.drill.hints, key=lambda hint: -len(hint.text))[:count]
    for hint in hints:
        app.feed(Received(Event(time_s=LIVE_S, kind="hint", message=hint.text), _EPOCH_WALL_S + LIVE_S))
    return [hint.text for hint in hints]


def hint_drawn(app: DrillApp, line: HintLine) -> str:
    """The hint line's words as drawn, without its border."""
    return words([row.lstrip("▌") for row in drawn(app, line)])


HINT_CASES = [
    *(("thundering-herd", size) for size in ((80, 24), (100, 30), (120, 36), (160, 48))),
    *(("socketio-lockstep", size) for size in ((80, 24), (100, 30))),  # its hint: the longest
]


@pytest.mark.parametrize(("name", "size"), HINT_CASES, ids=[f"{name}-{w}x{h}" for name, (w, h) in HINT_CASES])
async def test_the_newest_hint_and_every_objective_are_read_together(name, size) -> None:
    """Told as notifications, two hints stacked over the objectives panel's right half and the rollout box
    for 30 s at 80×24, hiding the objectives they spoke of. The newest hint is read whole in the drill's
    own line, beside every objective's standing and name, the node rows and as many alarms as before it;
    nothing covers them; Tab to the line reads the older hints too, newest first."""
    app = drill_app(name)
    async with app.run_test(size=size) as pilot:
        await go_live(pilot)
        alarms = alarm_rows_drawn(app)
        texts = told_hints(app, 2)
        app.refresh_views()
        await pilot.pause()
        assert not app._notifications, [n.message for n in app._notifications]  # none over the panels
        line = app.screen.query_one(HintLine)
        in_view(app, line)
        shown = hint_drawn(app, line)
        assert texts[-1] in shown, "\n".join(drawn(app, app.screen))
        said = objectives_drawn(app)
        for item in app.progress.objectives():
            assert item.measured.name in said, f"{item.measured.name!r} not in {said!r}"
        assert len(node_rows_drawn(app)) >= NODE_ROWS, "\n".join(drawn(app, app.screen))
        assert alarm_rows_drawn(app) == alarms, "\n".join(drawn(app, app.screen))
        if len(texts) > 1:
            assert texts[0] not in shown  # the older one is not in the way...
            assert await tab_to(pilot, HintLine, presses=8) is line
            await pilot.pause()
            read = hint_drawn(app, line)
            assert texts[0] in read and read.index(texts[-1]) < read.index(texts[0]), read  # ...but at hand


TITLE_SIZES = [(80, 24), (100, 30), (120, 36), (160, 48)]


@pytest.mark.parametrize("paused", [False, True], ids=["running", "paused"])
@pytest.mark.parametrize("size", TITLE_SIZES, ids=[f"{w}x{h}" for w, h in TITLE_SIZES])
async def test_the_drill_panels_title_is_read_whole_on_one_row(size, paused) -> None:
    """At 80×24 the panel's title (its first line, under the node table) wrapped "… 74.8/100 / so far · p
    pauses": the drill clock, the time left, the score — and PAUSED, when it is — on one row, whole, in
    whatever words fit, the objectives straight under it."""
    app = drill_app("thundering-herd")
    async with app.run_test(size=size) as pilot:
        await go_live(pilot)
        if paused:
            await pilot.press("p")
            await pilot.pause()
        rows = drawn(app, objectives_box(app))
        clock = app.progress.drill.human_time(app.progress.time_s)
        [at] = [i for i, row in enumerate(rows) if clock in row]
        title = rows[at]
        so_far = app.progress.so_far()  # (an objective at risk keeps its points until it is lost)
        for said in ("left", so_far.scored, *(["PAUSED"] if paused else [])):
            assert said in title, rows
        assert re.search(r"penalty|[✓▲✖] (met|at risk|failed)", rows[at + 1]), rows


def test_the_count_of_earlier_hints_takes_no_row_of_its_own() -> None:
    """At 120×36 "1 earlier (Tab)" wrapped "(Tab)" onto a second row under a one-row hint: fewer words
    where the full ones would add a row, the full ones where there is room or a row to spare."""
    from textual.content import Content

    from console.model.units import drill_clock
    from console.protocol import Event
    from console.ui.widgets.hint_line import newest_text

    halt = "The seed's abort criterion: CPU > 80 % for 30 s on a surviving node — halt the rollout."
    hints = [
        Event(time_s=135, kind="hint", message="Three nodes…"),
        Event(time_s=190, kind="hint", message=halt),
    ]
    clock = drill_clock(4 * 3600)

    def rows(width: int) -> list[str]:
        return [line.plain for line in Content.from_markup(newest_text(hints, clock, width)).wrap(width)]

    assert rows(116) == [f"hint 04:03:10 · {halt}  +1 (Tab)"]
    assert rows(160) == [f"hint 04:03:10 · {halt}  1 earlier (Tab)"]
    assert rows(77)[-1].endswith("1 earlier (Tab)") and len(rows(77)) == 2
