"""At 80×24 text is shortened or wrapped whole, never cut inside a word (the on-call pass on the loopback
fleet read "a admiss", "Ctrl+R:", "── st…", "— while it")."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from console.model.history import ConnectionsChange, ConnectionsDrop
from console.model.link import Received
from console.protocol import Event
from console.ui.widgets.gauges import GaugeBox

from ..client.fake_fleet_server import wait_for
from .conftest import fleet_ready
from .fake_actions import FakeFleetApi
from .test_actions import acting_app, drain_dialog, open_form
from .test_drill import BriefingScreen, EndScreen, FakeClock, TinyFeed, play_to_the_end, tiny_app
from .test_oncall import critical_alarm, node_down_alarm, visible_lines

NARROW = (80, 24)


def shown_keys(footer: Footer) -> list[FooterKey]:
    return [key for key in footer.query(FooterKey) if key.region.width]


async def test_at_80_columns_the_node_detail_footer_shows_whole_keys(storm_app) -> None:
    """The node detail's footer ran its keys under the palette's: "a admiss" and "c capacity" past the edge."""
    node = next(iter(storm_app.model.nodes))
    async with storm_app.run_test(size=NARROW) as pilot:
        await fleet_ready(storm_app)
        storm_app.open_node(node)
        await fleet_ready(storm_app)
        await pilot.pause()
        footer = storm_app.screen.query_one(Footer)
        keys = sorted(shown_keys(footer), key=lambda key: key.region.x)
        for left, right in pairwise(keys):
            assert left.region.right <= right.region.x, (left.description, right.description)
        assert all(key.region.right <= footer.region.right for key in keys)
        said = {f"{key.key_display} {key.description}" for key in keys}
        assert {"esc back", "q quit", "? help"} <= said, said


async def test_a_wrapped_event_line_hangs_under_its_text(storm_app) -> None:
    """Recent events wrapped at 80 columns back to column 0, under the time: a second line read as a new
    event. A wrapped line starts under the message it continues."""
    node = next(iter(storm_app.model.nodes))
    now_s = storm_app.clock()
    long = "drain asked at 120/s, hint 500–1500 ms; the node closes its clients at that pace until empty"
    storm_app.feed(Received(Event(time_s=40, kind="action", node=node, message=long), now_s))
    async with storm_app.run_test(size=NARROW) as pilot:
        await fleet_ready(storm_app)
        storm_app.open_node(node)
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        lines = [line[2:-2] for line in visible_lines(storm_app.screen.query_one("#events"))[1:-1]]
        first = next(index for index, line in enumerate(lines) if "drain asked" in line)
        indent = lines[first].index("drain asked")
        rest = lines[first + 1]
        assert rest[:indent].strip() == "", lines
        assert f"{lines[first][indent:].strip()} {rest.strip()}" == long, lines  # every word, whole


@pytest.mark.parametrize("fleet", ["demo-fleet", "storm-simulator-fleet-eu-west"])
async def test_at_80_columns_the_reconnect_key_is_said_whole_or_not_at_all(storm_app, fleet: str) -> None:
    """The reconnecting header ended "next in 0.0 s)  Ctrl+R:" at 80 columns — the key without what it
    does; with two-digit figures the link's age went too ("age"). The hint is shortened, then left out,
    then the word "link", before anything is cut."""
    from console.model.link import LinkState, LinkStatus
    from console.ui.widgets.header import FleetHeader

    storm_app.model.fleet = fleet
    now_s = storm_app.clock()
    storm_app.model.apply(LinkStatus(LinkState.RECONNECTING, attempt=14, next_in_s=27.5, at_s=now_s))
    async with storm_app.run_test(size=NARROW) as pilot:
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        (line,) = visible_lines(storm_app.screen.query_one(FleetHeader))
        assert "next in 27.5 s)" in line, line
        assert line.rstrip().endswith(("now", "s)", "s")), line  # a whole word last, no "…"
        assert ("Ctrl+R" not in line or "Ctrl+R: now" in line) and ("^R" not in line or "^R now" in line)
        assert re.search(r"age \d+\.\d s$", line.rstrip()), line  # how stale the view is, whole


@pytest.mark.parametrize("lockstep", [None, 10.5], ids=["too-quiet", "lockstep"])
async def test_at_80_columns_the_wave_legend_is_whole(storm_app, lockstep: float | None) -> None:
    """A quiet fleet's wave box (the loopback fleet's) ended "lockstep — (too quiet to judge) · ── st…":
    the legend of the two lines cut. Shorter words first; a word never cut."""
    storm_app.model.lockstep = lockstep
    async with storm_app.run_test(size=NARROW) as pilot:
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        bottom = visible_lines(storm_app.screen.query_one("#wave-box"))[-1]
        assert "…" not in bottom, bottom
        assert "── steady · ── admission" in bottom, bottom
        assert ("LOCKSTEP 10.5" if lockstep else "too quiet") in bottom, bottom


# --- the footers of the screens over the fleet: forms, dialogs, the drill's briefing and end -------------

#: A terminal narrower than the fleet screen needs (it says so behind these screens), where the keys that
#: do not fit must give way whole: at 80 columns Textual's footer happened to fit on every one of them.
NARROWER = (60, 24)


def drawn_row(app, y: int) -> str:
    """Row `y` of the screen on top, as drawn: a key's region says where it was laid out, not whether
    another key (the palette's, docked right) was drawn over it."""
    return app.screen._compositor.render_strips()[y].text


def footer_said(app) -> list[str]:
    """The footer's keys as drawn, left to right, each asserted whole: its key and its full description in
    its own cells, inside the footer, none drawn over another."""
    footer = app.screen.query_one(Footer)
    row = drawn_row(app, footer.region.y)
    keys = sorted(
        (key for key in footer.query(FooterKey) if key.region.width and key.region.x < footer.region.right),
        key=lambda key: key.region.x,
    )
    for left, right in pairwise(keys):
        assert left.region.right <= right.region.x, (left.description, right.description, row)
    said = []
    for key in keys:
        words = f"{key.key_display} {key.description}"
        assert key.region.right <= footer.region.right, (words, row)
        assert words in row[key.region.x : key.region.right], (words, row)
        said.append(words)
    return said


async def _drain_form(app, pilot) -> None:
    await open_form(app, pilot, "d", "the drain form")


async def _admission_form(app, pilot) -> None:
    await open_form(app, pilot, "a", "the admission form")


async def _rollout_form(app, pilot) -> None:
    await open_form(app, pilot, "R", "the rollout form")


async def _undrain_form(app, pilot) -> None:
    """A form with no fields (undrain; halt and resume alike) opens on its Apply button, whose own Enter
    (Textual's Button: hidden) hid the form's: on a real fleet its footer read "esc cancel  ^d dry run"."""
    from console.model.actions.form import ActionKind, Prefill
    from console.ui.screens.action_form import ActionForm

    node = next(iter(app.model.nodes))
    app.push_screen(ActionForm(ActionKind.UNDRAIN, node, Prefill({}, "")))
    await wait_for(lambda: isinstance(app.screen, ActionForm), what="the undrain form")


async def _change_check(app, pilot) -> None:
    from console.ui.screens.change_check import ChangeCheck

    await open_form(app, pilot, "a", "the admission form")
    await pilot.press("2", "enter")  # 150 → 2 per node: a big change, checked in the console first
    await wait_for(lambda: isinstance(app.screen, ChangeCheck), what="the console's check")


def _verdict(rate: str, key: str):
    async def opened(app, pilot) -> None:
        await drain_dialog(app, pilot, rate, key, "the verdict dialog")

    return opened


async def _briefing(app, pilot) -> None:
    await wait_for(lambda: isinstance(app.screen, BriefingScreen), what="the briefing")


async def _briefing_reopened(app, pilot) -> None:
    """From the palette in a running drill: `p pause` is in the footer too, the longest of these."""
    await pilot.press("enter")
    await wait_for(lambda: app.started, what="the drill started")
    TinyFeed(app).run(5)
    await fleet_ready(app)
    app.action_show_briefing()
    await wait_for(lambda: isinstance(app.screen, BriefingScreen), what="the briefing again")


async def _drill_over(app, pilot) -> None:
    await play_to_the_end(pilot)
    await wait_for(lambda: isinstance(app.screen, EndScreen), what="the end screen")


FORM_KEYS = {"⏎ apply", "esc cancel", "^d dry run"}
APP_KEYS = {"q quit", "? help", "^p palette"}
#: screen → (how it is opened, on which app; the keys an operator needs there, at 80 columns and narrower)
OVER_THE_FLEET = {
    "drain form": (_drain_form, "fleet", FORM_KEYS),
    "admission form": (_admission_form, "fleet", FORM_KEYS),
    "rollout form": (_rollout_form, "fleet", FORM_KEYS),
    "undrain form": (_undrain_form, "fleet", FORM_KEYS),
    "change check": (_change_check, "fleet", {"⏎ send it", "esc back to the form"}),
    "verdict confirm": (_verdict("150", "enter"), "fleet", {"⏎ apply", "esc cancel"}),
    "verdict typed": (_verdict("250", "enter"), "fleet", {"⏎ apply", "esc cancel"}),  # Enter in the name
    "verdict dry run": (_verdict("100", "ctrl+d"), "fleet", {"esc back to the form"}),
    "briefing": (_briefing, "drill", {"⏎ start"} | APP_KEYS),
    "briefing reopened": (_briefing_reopened, "drill", {"⏎ to the fleet"} | APP_KEYS),
    "drill over": (_drill_over, "drill", {"esc back to the fleet"} | APP_KEYS),
}


@pytest.mark.parametrize("screen", list(OVER_THE_FLEET))
async def test_the_footer_of_each_screen_over_the_fleet_says_its_keys_whole(screen: str) -> None:
    """The forms, dialogs and the drill's screens yielded Textual's footer, which cuts what does not fit
    and runs the palette's key over the last ones. Their keys give way whole, the screen's own and quit,
    help and the palette last; at 80 columns all of them are there."""
    opened, kind, needed = OVER_THE_FLEET[screen]
    app = acting_app(FakeFleetApi(), scene_name="calm") if kind == "fleet" else tiny_app(FakeClock())
    async with app.run_test(size=NARROW) as pilot:
        if kind == "fleet":
            await fleet_ready(app)
        await opened(app, pilot)
        await pilot.pause()
        top = app.screen
        # Its footer's keys laid out: one pause was not always enough under load (the full suite, 2 workers:
        # the undrain form's footer read [] once).
        await wait_for(
            lambda: any(key.region.width for key in top.query_one(Footer).query(FooterKey)),
            what="the footer's keys drawn",
        )
        said = footer_said(app)
        assert needed <= set(said), said
        await pilot.resize_terminal(*NARROWER)
        footer = top.query_one(Footer)
        await wait_for(lambda: footer.region.width == NARROWER[0], what="the narrower footer")
        await pilot.pause()
        assert app.screen is top
        narrower = footer_said(app)
        assert needed <= set(narrower), narrower


@pytest.mark.parametrize("lockstep", [None, 10.5], ids=["too-quiet", "lockstep"])
async def test_a_resize_fits_the_wave_legend_again_with_no_new_frame(
    storm_app, lockstep: float | None
) -> None:
    """The wave box's legend was fitted when a frame came, not on a resize: a paused or quiet fleet kept
    the legend fitted to the old width ("── st…" after narrowing the terminal)."""
    storm_app.model.lockstep = lockstep
    async with storm_app.run_test(size=(120, 36)) as pilot:
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        box = storm_app.screen.query_one("#wave-box")
        wide = visible_lines(box)[-1]
        assert "── steady · ── admission" in wide, wide
        await pilot.resize_terminal(*NARROW)
        await wait_for_bottom(pilot, box, lambda bottom: "…" not in bottom)
        bottom = visible_lines(box)[-1]
        assert "── steady · ── admission" in bottom, bottom
        assert ("LOCKSTEP 10.5" if lockstep else "too quiet") in bottom, bottom
        await pilot.resize_terminal(120, 36)
        await wait_for_bottom(pilot, box, lambda bottom: bottom == wide)
        assert visible_lines(box)[-1] == wide  # the long reading back, with room for it


async def wait_for_bottom(pilot, box, done, rounds: int = 20) -> None:
    """Pauses until the box's bottom border satisfies `done` (a resize lays the screen out in a few
    refreshes), at most `rounds` times — then the caller's asserts say what it reads."""
    for _ in range(rounds):
        await pilot.pause()
        if done(visible_lines(box)[-1]):
            return


SIZES = [NARROW, (120, 36)]
#: Seen on the demo at 80×24 in its first seconds: "Headroom 20 % is under the 35 │% budget: no restart
#: is safe; │" — a figure parted from its unit, the message cut mid-sentence by the panel's height.
HEADROOM = "Headroom 20 % is under the 35 % budget: no restart is safe; add capacity instead."
UNITS = {"%", "s", "ms", "M", "k", "×", "k/s"}


def headroom_alarm(now_s: float):
    return critical_alarm("headroom_low", now_s, 20.0, 35.0, HEADROOM)


def said_lines(screen) -> list[str]:
    """The words under the alarms table as drawn, under the line that parts them from it."""
    return [line.rstrip() for line in visible_lines(screen.query_one("#alarm-said"))[1:]]


def assert_units_kept(lines: list[str]) -> None:
    for above, below in pairwise(lines):
        first = below.split()[0].rstrip(").,;:") if below.split() else ""
        assert not (above[-1:].isdigit() and first in UNITS), (above, below)


@pytest.mark.parametrize("size", SIZES)
async def test_the_alarm_under_the_table_keeps_figures_whole_and_ends_at_a_word(storm_app, size) -> None:
    """Unfocused, the panel says its first alarm in the rows under the table: every figure beside its unit,
    every word whole, and "…" at a word where the rows are too few."""
    from console.model.alarms import AlarmLog

    now_s = storm_app.model.frame.time_s
    storm = [entry.alarm for entry in storm_app.model.alarms.active()]
    one_each = {alarm.name: alarm for alarm in [headroom_alarm(now_s), *storm]}.values()
    storm_app.model.alarms = log = AlarmLog()
    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        cut = cut_unnamed = 0
        for alarm in one_each:
            log.update([alarm], now_s)  # the one active, the first row (those before it are the past)
            storm_app.refresh_views()
            await pilot.pause()
            lines = said_lines(storm_app.screen)
            said = storm_app.screen.query_one("#alarm-said")
            assert lines and all(len(line) <= said.size.width for line in lines), lines
            assert_units_kept(lines)
            # (where the row says its short label, 80×24, the message after the rule's whole name)
            said_whole = storm_app.screen.query_one("#alarms").selected_message
            assert said_whole.endswith(alarm.message), said_whole
            shown, whole = " ".join(lines).split(), said_whole.split()
            if shown == whole:
                continue
            cut += 1
            # (at 120 columns only after a rule's whole name, the row saying its label: a node beside a
            # long name in the past rows)
            cut_unnamed += said_whole == alarm.message
            assert shown[-1].endswith("…"), lines
            assert shown[:-1] == whole[: len(shown) - 1], lines  # every word before the cut, whole
            last = shown[-1].removesuffix("…")
            assert whole[len(shown) - 1].rstrip(",;:.—") == last, lines  # the last one whole too
        assert cut if size == NARROW else not cut_unnamed  # 2 rows of 30 cells are too few; 4 of 46 are not


@pytest.mark.parametrize("size", SIZES)
async def test_tab_to_the_alarms_and_each_message_is_read_whole(storm_app, size) -> None:
    """README: what the alarm under the cursor says is read "whole once you Tab to the panel". At 80×24
    the box had room for two rows of it, focused or not ("… (1.30 M → 1.21 M;" and no more): focused, the
    rollout box gives way there, and the words take the room — back once the focus leaves."""
    log = storm_app.model.alarms
    now_s = storm_app.model.frame.time_s
    active = [entry.alarm for entry in log.active()]
    log.update([*active, headroom_alarm(now_s)], now_s)
    dropped = next(alarm for alarm in active if alarm.name == "connections_drop")
    log.update([alarm for alarm in active if alarm is not dropped] + [headroom_alarm(now_s)], now_s + 5)
    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        screen = storm_app.screen
        panel = screen.query_one("#alarms")
        await pilot.press("tab")  # from the node table
        await pilot.pause()
        assert panel.has_focus
        messages = []
        for row in range(panel.row_count):
            panel.move_cursor(row=row, animate=False)
            await pilot.pause()
            lines = said_lines(screen)
            assert " ".join(lines).split() == panel.selected_message.split(), (row, lines)
            assert_units_kept(lines)
            messages.append(panel.selected_message)
        assert len(messages) >= 4
        # the longest: its times too (after its rule's whole name where the row says its short label)
        assert any(re.match(r"(\w+: )?Cleared ", message) for message in messages), messages
        await pilot.press("tab")
        await pilot.pause()
        assert screen.query_one("#rollout-box").display and not panel.has_focus
        assert len(said_lines(screen)) <= (2 if size == NARROW else 4)


def all_fleet_storm(app, now_s: float, *extra) -> list[str]:
    """The storm's fleet-wide alarms (the demo's at ~35 s: every row "fleet") with `extra` beside them, in
    a log of their own (no cleared node_down rows under them); their names."""
    from console.model.alarms import AlarmLog

    fleet = [entry.alarm for entry in app.model.alarms.active() if entry.alarm.name != "node_down"]
    app.model.alarms = AlarmLog()
    app.model.alarms.update([*fleet, headroom_alarm(now_s), *extra], now_s)
    return [alarm.name for alarm in [*fleet, *extra]]


@pytest.mark.parametrize("size", SIZES)
async def test_every_rule_name_whole_when_every_alarm_is_the_fleet(storm_app, size) -> None:
    """Seen at 80×24: "· drain_inflow_kill_s… fleet" — the rule cut while "where" said "fleet" on every row.
    Where every row is the fleet, the header says so and the rule has the column's room; a node alarm brings
    the column back, naming its node. At 120×36 the name was still cut ("drain_inflow_kill_sw…") to keep
    "state" (NEW on every row): the state gives way to it there — the box title counts the new ones, and
    they are drawn bold — while the value against its limit, a figure, stays. At 80×24 a whole name left
    the value no room ("✖ connections_drop" and blank cells), and at 120×36 it cost the times: each rule is
    drawn by its short label, whole words, beside its value — never a name cut."""
    from console.alarms.base import short_label

    now_s = storm_app.model.frame.time_s
    names = all_fleet_storm(storm_app, now_s)
    assert "drain_inflow_kill_switch" in names
    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        panel = storm_app.screen.query_one("#alarms")
        lines = visible_lines(panel)
        assert "all fleet" in lines[0] and "where" not in lines[0], lines[0]
        drawn = {name: short_label(name) for name in names}
        for name in names:
            assert any(f" {drawn[name]} " in f"{line} " for line in lines[1:]), (name, lines)
        assert not any("…" in line for line in lines), lines
        assert "value" in lines[0], lines[0]
        if size != NARROW:  # (the labels leave room for the state and the times)
            assert "state" in lines[0] and "raised" in lines[0], lines[0]
        kill = next(line for line in lines if f" {drawn['drain_inflow_kill_switch']} " in line)
        assert re.search(rf"{drawn['drain_inflow_kill_switch']} +0\.\d+ < 0\.6", kill), kill
        if size != NARROW:
            title = str(storm_app.screen.query_one("#alarms-box").border_title)
            assert f"{len(names) + 1} new" in title, title  # (and the headroom alarm)

        all_fleet_storm(storm_app, now_s, node_down_alarm(now_s))
        storm_app.refresh_views()
        await pilot.pause()
        lines = visible_lines(panel)
        assert "where" in lines[0] and "all fleet" not in lines[0], lines[0]
        # (a node beside a long name: the labels, at 120 columns too — the value stays)
        assert any(" node down " in line and "gw-017" in line for line in lines), lines
        assert any(" conns drop " in line and "> 5 %" in line for line in lines), lines


@pytest.mark.parametrize(
    ("change", "narrow", "wide"),
    [
        # A loopback fleet coming up, 0 → 300 clients: "+300 (+0.0 %)" gave a share of nothing.
        (ConnectionsChange(300.0, 0.0, 0.0), "Δ60s +300", "Δ60s +300 (from 0)"),
        # 108 → 300: "Δ60s +177.8…" at 80 columns, the figure cut.
        (ConnectionsChange(192.0, 177.78, 108.0), "Δ60s +178 %", "Δ60s +192 (+178 %)"),
        # The demo's 1.3 M fleet, as it read before.
        (ConnectionsChange(-91_000.0, -7.0, 1_300_000.0), "Δ60s −7.0 %", "Δ60s −91.0k (−7.0 %)"),
    ],
)
async def test_the_connections_change_is_read_whole_and_never_as_a_share_of_nothing(
    storm_app, change, narrow: str, wide: str
) -> None:
    storm_app.model.connections_delta_60s = lambda: change
    # (at its peak: the storm scene's 8.5 % under it is said from the peak, `connections_drop_texts`)
    storm_app.model.connections_drop = lambda: ConnectionsDrop(0.0, change.base + max(change.delta, 0.0))
    # …and with no connections_drop alarm up: while one is, the gauge says the alarm's drop (test_connections_
    # gauge_alarm.py), and the storm scene's is.
    active = storm_app.model.alarms.active
    storm_app.model.alarms.active = lambda: [e for e in active() if e.alarm.name != "connections_drop"]
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        gauge = storm_app.screen.query_one("#gauge-connections", GaugeBox)
        assert drawn_gauge_detail(gauge) == narrow
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert drawn_gauge_detail(gauge) == wide


def drawn_gauge_detail(gauge: GaugeBox) -> str:
    """The gauge's detail line as drawn, inside its border and padding."""
    strips = gauge.render_lines(gauge.region.reset_offset)
    return "".join(segment.text for segment in strips[2])[2:-2].strip()


def test_the_alarms_title_says_the_cleared_rows_and_gives_way_whole() -> None:
    """The title counted "3 active" over four rows, the fourth a cleared alarm; and at 80 columns it was
    cut mid-word ("alarms · 10 active · 10 n…"). Each count whole, the longest form that fits."""
    from console.ui.screens.main import alarms_title

    assert alarms_title(3, 1, 1, 200) == "alarms · 3 active · 1 new · 1 cleared"
    assert alarms_title(3, 1, 0, 200) == "alarms · 3 active · 1 new"
    for room in range(12, 60):
        title = alarms_title(10, 10, 2, room)
        assert len(title) <= room, (room, title)
        assert "10" in title and "…" not in title, title
    assert alarms_title(10, 10, 2, 24) == "10 alarms · 10 new"


async def test_at_80_columns_the_alarms_title_is_whole(storm_app) -> None:
    async with storm_app.run_test(size=NARROW) as pilot:
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        top = visible_lines(storm_app.screen.query_one("#alarms-box"))[0]
        active = len(storm_app.model.alarms.active())
        assert "…" not in top and f" {active} " in top, top


@pytest.mark.parametrize(
    ("state", "urgent"),
    [(None, set()), ("running", {"h halt", "r resume"}), ("paused", {"h halt", "r resume"})],
    ids=["no rollout", "running", "paused"],
)
async def test_at_80_columns_the_footer_keeps_halt_and_resume_while_a_rollout_runs(
    state: str | None, urgent: set[str]
) -> None:
    """Review: at 80×24 with the demo's rollout running the footer read `/ filter  s sort  d drain
    u undrain  R rollout  q quit  ? help` — h and r only in the rollout box's border. While a rollout is
    under way (running, paused or halted) h and r are kept, both, so neither moves when it pauses, and
    / filter and s sort give way first; `? help` and `q quit` stay. With no rollout, the footer is as
    before."""
    from .test_actions import with_rollout

    app = acting_app(FakeFleetApi())
    async with app.run_test(size=NARROW) as pilot:
        await fleet_ready(app)
        if state is not None:
            with_rollout(app, state)
        app.refresh_views()
        await pilot.pause()
        words = [f"{key.key_display} {key.description}" for key in shown_keys(app.screen.query_one(Footer))]
        assert {"q quit", "? help"} <= set(words), words
        assert urgent <= set(words), words
        if state is None:
            assert {"/ filter", "s sort"} <= set(words), words  # as before
        else:
            # what gave way for them: the filter and the sort first, never an action key before them
            assert "/ filter" not in words, words
