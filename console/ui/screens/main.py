"""The fleet at a glance: header, gauges, wave and connections charts, node table, alarms, rollout."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import ClassVar

from rich.markup import escape
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import DataTable, Input

from console.errors import InputError
from console.model.actions.refusals import brief_reason
from console.model.gauges import fleet_gauges, shedding_nodes
from console.model.history import NODE_HISTORY_S, FleetModel, stale_note
from console.model.nodes import NodeFilter, NodeQuery, id_order, select_nodes
from console.model.offered import keys_not_offered
from console.model.thresholds import Level
from console.model.units import FLEET_CLOCK, ClockFace
from console.protocol import ActionKind, AdmissionInForce, Event
from console.ui.charts import connections_spec, lockstep_reading, wave_spec
from console.ui.commands import action_bindings, fleet_action_keys, footer_ranks, not_offered_bindings
from console.ui.intents import FilterChosen
from console.ui.screens.fleet_view import FleetView
from console.ui.themes import LEVEL_GLYPHS, Palette
from console.ui.widgets.alarms_panel import AlarmMessage, AlarmsPanel
from console.ui.widgets.footer import ConsoleFooter
from console.ui.widgets.gauges import GaugeBar
from console.ui.widgets.header import FleetHeader
from console.ui.widgets.hint_line import HintLine
from console.ui.widgets.input_bar import InputBar, opening_key
from console.ui.widgets.node_table import NodeTable, column_title
from console.ui.widgets.plot import PlotextChart, plot_columns
from console.ui.widgets.rollout_panel import RolloutPanel
from console.ui.widgets.too_small import MIN_HEIGHT, MIN_WIDTH, TOO_SMALL_CSS, TooSmallNotice
from console.ui.words import BORDER_AROUND_TITLE

WAVE_TITLE = "reconnect wave · attempts per 100 ms"
CONNECTIONS_TITLE = "connections · last 10 min"


def stale_title(note: str | None, palette: Palette, title: str) -> str:
    """A data panel's title, led by `note` (`stale_note`) when its data is old: first, so a narrow box
    (80×24) cuts the title, not the warning."""
    return title if note is None else f"[b {palette.levels[Level.CRITICAL]}]{note}[/] · {title}"


ROLLOUT_TITLE = "rollout & admission"


ACTIONS_OFF = "▲ actions off"


def alarms_title(active: int, new: int, cleared: int, room: int) -> str:
    """The alarms box's title: the counts, whole, in the longest form that fits `room` cells — at 80
    columns "alarms · 10 active · 10 n…" was cut. `cleared`: the cleared rows shown under the active
    ones (the title said "3 active" over four rows)."""
    forms = [
        f"alarms · {active} active · {new} new · {cleared} cleared" if cleared else "",
        f"alarms · {active} active · {new} new",
        f"{active} alarms · {new} new",
    ]
    return next((form for form in forms if form and len(form) <= room), f"{active} alarms")


def wave_legend(lockstep: float | None, line: float, stale: bool, palette: Palette, room: int) -> str:
    """The wave box's bottom border: the lockstep reading and the legend of the lines, whole in `room`
    cells — the reading in fewer words before the border cuts the legend. `stale`: the last frames' waves,
    no longer a judgement of now (the reading loses its level)."""
    chart = palette.chart
    legend = f"[{chart['baseline']}]── steady[/] · [{chart['capacity']}]── admission[/]"
    for brief in (False, True):
        reading, level = lockstep_reading(lockstep, line, brief)
        level = Level.UNKNOWN if stale else level
        said = f"[b {palette.levels[level]}]{LEVEL_GLYPHS[level]} {reading}[/] · {legend}"
        if Text.from_markup(said).cell_len <= room:
            break
    return said


def rollout_borders(
    actions_off: str | None, palette: Palette, room: int, not_offered: Collection[ActionKind] = ()
) -> tuple[str, str]:
    """The rollout box's title and footer (its bottom border), each said whole in `room` cells where it
    can. Actions on: the box's name, and the fleet's action keys below it (`action_keys`), less those the
    fleet cannot take (`not_offered`). Off, never hidden silently (issue #4): the warning leads the title,
    why follows it where both fit beside the box's name, else why is the footer, in fewer words where the
    whole does not fit (`brief_reason`) — at 80×24 the title was cut to "▲ actions off: no fleet A…", and
    the reason was what a viewer needed."""
    if actions_off is None:
        return ROLLOUT_TITLE, action_keys(room, not_offered)
    colour = palette.levels[Level.WARNING]

    def warning(words: str) -> str:
        return f"[{colour}]{escape(words)}[/]"

    whole = f"{ACTIONS_OFF}: {actions_off}"
    if len(f"{whole} · {ROLLOUT_TITLE}") <= room:
        return f"{warning(whole)} · {ROLLOUT_TITLE}", ""
    named = len(f"{ACTIONS_OFF} · {ROLLOUT_TITLE}") <= room
    title = f"{warning(ACTIONS_OFF)} · {ROLLOUT_TITLE}" if named else warning(ACTIONS_OFF)
    return title, warning(actions_off if len(actions_off) <= room else brief_reason(actions_off))


def action_keys(room: int, not_offered: Collection[ActionKind] = ()) -> str:
    """The rollout box's footer (its bottom border) while actions are on: the fleet's action keys, said
    whole in `room` cells. In the title they were cut at 80×24 ("rollout & admission · act…") and 120×36
    ("… R h r a c (…"); "(? lists them)" goes first (at 80 columns the screen's footer says "? help").
    A key the fleet cannot take is not said (on a nodes file without restart commands and no room to grow,
    "actions a": R and c could only be refused); help lists it, with why."""
    fleet_keys = " ".join(fleet_action_keys(not_offered))
    briefly = f"actions {fleet_keys}"
    whole = f"{briefly} (? lists them)"
    return whole if len(whole) <= room else briefly


#: Beside the filter's input, not its placeholder: the placeholder went at the first key typed.
FILTER_KEYS = "Enter applies · Esc closes"


def id_example(node_id: str) -> str:
    """An id pattern that matches this fleet: `node-1` → `node-*`, `gw-0002` → `gw-*` (the filter's example
    was `gw-00*`, which matched none of the loopback fleet's nodes)."""
    prefix = node_id.rstrip("0123456789") or node_id[:1]
    return f"{prefix}*"


def filter_placeholder(node_id: str | None) -> str:
    example = id_example(node_id) if node_id else "gw-*"
    return f"state:draining,down  id:{example}  alarming"


class MainScreen(FleetView):
    # Below 36 rows (80×24, 100×30) the fixed-height charts left the alarms box its borders only: the
    # connections chart gives way (the gauge keeps the count and its Δ60s) and the wave chart shrinks.
    # Below 80×24 the panels would cut their figures: they give way to `TooSmallNotice`.
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [
        (0, "-too-narrow"),
        (MIN_WIDTH, "-wide"),
    ]
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [
        (0, "-too-short"),
        (MIN_HEIGHT, "-short"),
        (36, "-tall"),
    ]
    DEFAULT_CSS = (
        TOO_SMALL_CSS.format(screen="MainScreen")
        + """
    MainScreen #body { height: 1fr; }
    MainScreen #left { width: 3fr; }
    MainScreen #right { width: 2fr; }
    MainScreen .boxed { border: round $panel-lighten-2; border-title-color: $foreground; }
    MainScreen #wave-box { height: 14; }
    MainScreen #conn-box { height: 12; }
    MainScreen #nodes-box { height: 1fr; }
    MainScreen #alarms-box { height: 1fr; }
    MainScreen #alarm-said {
        width: 100%; height: auto; max-height: 5; color: $text-muted; border-top: hkey $panel-lighten-2;
    }
    MainScreen.-short #alarm-said { max-height: 3; }
    /* Tab to the alarms panel: what its alarm said is read whole (README). A `:focus-within` rule on the
       box did nothing — Textual restyles on focus only the focused widget's ancestors that have such a rule
       of their own, and the words are its sibling: the class is set in Python. At 80×24 the box had room
       for 2 rows of words, focused or not: the rollout box gives way while the alarms are read. */
    MainScreen.-reading-alarms #alarm-said { max-height: 70%; }
    MainScreen.-short.-reading-alarms #rollout-box { display: none; }
    /* its footer, the action keys: in the border's own colour it read 2.0:1 */
    MainScreen #rollout-box { height: auto; border-subtitle-color: $text-muted; }
    MainScreen.-short #wave-box { height: 10; }
    MainScreen.-short #conn-box { display: none; }
    /* Below 36 rows the hint line's 2 rows come from what says least: what the alarm under the cursor
       said (cut "…" there; Tab to the alarms reads it whole) and 2 of the wave chart's 10 — the node
       table and the alarms had kept 2 rows each at 100×30. */
    /* (Its `display` is the screen's to set, whether the alarm said anything: a height of 0 hides it.) */
    MainScreen.-short.-hinted #alarm-said { max-height: 0; border-top: none; }
    MainScreen.-short.-hinted.-reading-alarms #alarm-said {
        max-height: 70%; border-top: hkey $panel-lighten-2;
    }
    MainScreen.-short.-hinted #wave-box { height: 8; }
    """
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        opening_key("/", "open_filter", "filter"),
        Binding("s", "app.sort", "sort"),
        # Off the footer, which is full at 160 columns; the help screen and the palette list them.
        Binding("S", "app.reverse_sort", "reverse", show=False),
        Binding("!", "app.alarming_only", "alarming", show=False),
        *action_bindings(),
        Binding("tab", "app.focus_next", "next panel", show=False),
        Binding("shift+tab", "app.focus_previous", "previous panel", show=False),
        Binding("escape", "close_filter", "close filter", show=False),
    ]

    node_filter = NodeFilter()
    _first_node: str | None = None  # the filter's example pattern is made from it
    actions_off: str | None = None
    #: The fleet actions this fleet cannot take at all, or none after a drill's end (`keys_not_offered`):
    #: their keys are not offered.
    not_offered: frozenset[ActionKind] = frozenset()
    _palette: Palette | None = None  # the rollout box's borders are drawn again on a resize, with these
    _rollout_marked: Callable[[str], str] = staticmethod(lambda title: title)  # (`stale_title`)
    _wave_legend: Callable[[int], str] | None = None  # (`wave_legend` but for the room: fitted on a resize)
    _alarms_title: Callable[[int], str] | None = None  # (`alarms_title` but for the room, as the legend)
    _alarms_marked: Callable[[str], str] = staticmethod(lambda title: title)  # (`stale_title`)

    def compose(self) -> ComposeResult:
        yield FleetHeader(id="header")
        yield GaugeBar(id="gauges", classes="fits-or-hides")
        yield TooSmallNotice()
        with Horizontal(id="body", classes="fits-or-hides"):
            with Vertical(id="left"):
                with Vertical(id="wave-box", classes="boxed"):
                    yield PlotextChart(id="wave-chart")
                with Vertical(id="nodes-box", classes="boxed"):
                    yield NodeTable(id="nodes")
            with Vertical(id="right"):
                with Vertical(id="conn-box", classes="boxed"):
                    yield PlotextChart(id="conn-chart")
                with Vertical(id="alarms-box", classes="boxed"):
                    yield AlarmsPanel(id="alarms")
                    # What the alarm under the panel's cursor (the one `a` acknowledges) said: a value
                    # against its limit does not say what is wrong, nor what to do about it.
                    yield AlarmMessage(id="alarm-said")
                with Vertical(id="rollout-box", classes="boxed"):
                    yield RolloutPanel(id="rollout")
        yield InputBar(
            id="filter-bar",
            field_id="filter",
            keys=FILTER_KEYS,
            placeholder=filter_placeholder(None),
            leave_to="#nodes",  # where the screen puts the focus as the filter ends, either way
        )
        # A served drill's hints (hidden until the first): the drill console's and an attached trainee's.
        yield HintLine(id="hint-line")
        yield ConsoleFooter()

    def show_hints(self, hints: Sequence[Event], clock: ClockFace) -> None:
        """A served drill's hints told so far, on the hint line: the newest whole, Tab for the others."""
        self.set_class(bool(hints), "-hinted")
        for line in self.query(HintLine):  # (query: a hint may come as the screen is being torn down)
            line.show(hints, clock)

    def on_mount(self) -> None:
        self.query_one("#wave-box").border_title = WAVE_TITLE
        self.query_one("#conn-box").border_title = CONNECTIONS_TITLE
        self.query_one("#alarms-box").border_title = "alarms"
        self.query_one(NodeTable).focus()
        self.call_after_refresh(self._ready)

    @property
    def too_small(self) -> bool:
        """The terminal is below the panels' size: they give way to `TooSmallNotice`."""
        return self.size.width < MIN_WIDTH or self.size.height < MIN_HEIGHT

    def on_resize(self) -> None:
        # Hidden while the terminal was too small, the node table lost the focus: Enter opened nothing
        # once the panels were back. (After the refresh: a widget not yet shown again takes no focus.)
        if self.focused is None and not self.too_small:
            self.call_after_refresh(self.query_one(NodeTable).focus)
        # The rollout box's title and footer, and the wave box's legend, fit their boxes' widths: after the
        # refresh that lays them out anew (a paused replay or a quiet fleet draws no frame that would say
        # them again: the legend read "── st…" after the terminal narrowed).
        self.call_after_refresh(self._show_rollout_borders)
        self.call_after_refresh(self._show_wave_legend)
        self.call_after_refresh(self._show_alarms_title)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.set_class(isinstance(event.widget, AlarmsPanel), "-reading-alarms")

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if isinstance(event.widget, AlarmsPanel):
            self.remove_class("-reading-alarms")

    def _show_rollout_borders(self) -> None:
        if self._palette is None:
            return  # no model shown yet
        # query, not query_one: the refresh after a resize may come as the screen is being torn down
        for box in self.query("#rollout-box"):
            room = box.outer_size.width - BORDER_AROUND_TITLE if box.outer_size.width else 1_000
            title, footer = rollout_borders(self.actions_off, self._palette, room, self.not_offered)
            box.border_title = self._rollout_marked(title)
            box.border_subtitle = footer

    def _show_wave_legend(self) -> None:
        if self._wave_legend is None:
            return  # no model shown yet
        for box in self.query("#wave-box"):  # (query: as `_show_rollout_borders`)
            room = box.outer_size.width - BORDER_AROUND_TITLE if box.outer_size.width else 1_000
            box.border_subtitle = self._wave_legend(room)

    def _show_alarms_title(self) -> None:
        if self._alarms_title is None:
            return  # no model shown yet
        for box in self.query("#alarms-box"):  # (query: as `_show_rollout_borders`)
            room = box.outer_size.width - BORDER_AROUND_TITLE if box.outer_size.width else 1_000
            box.border_title = self._alarms_marked(self._alarms_title(room))

    # --- rendering the model -------------------------------------------------------------------------

    def show_model(
        self,
        model: FleetModel,
        query: NodeQuery,
        now_s: float,
        palette: Palette,
        actions_off: str | None = None,
        clock: ClockFace = FLEET_CLOCK,
        time_s: float | None = None,
    ) -> None:
        """`clock`: how fleet times read — the header's clock, the alarms' raised times, a stale gauge's
        "as of" (the fleet's; in a drill, the drill's)."""
        try:
            gauges = self.query_one(GaugeBar)
        except NoMatches:
            return  # the app is closing and has already removed the screen's children (seen in a test)
        self.node_filter = query.filter
        self._first_node = min(model.nodes, key=id_order, default=None)
        self.show_header(model, now_s, palette, clock, time_s)
        stale = model.stale_s(now_s)
        marked = partial(stale_title, None if stale is None else stale_note(stale), palette)
        gauges.show(fleet_gauges(model, now_s, clock), palette)
        self._show_charts(model, now_s, palette, marked)
        alarming = model.alarms.alarming_nodes()
        rows = select_nodes(model.nodes.values(), query, model.thresholds, alarming)
        table = self.query_one(NodeTable)
        # "last 5 min" of fleet time: fewer frames when each covers more than a second (a sped-up simulator)
        spark_frames = max(2, round(NODE_HISTORY_S / model.fleet_s_per_frame()))
        table.show(
            rows,
            query,
            lambda node_id: model.node_history(node_id, "connections")[-spark_frames:],
            model.thresholds,
            palette,
            alarming,
            stale=stale is not None,
            shedding=shedding_nodes(model.frame),
        )
        arrow = "▼" if query.descending else "▲"
        title = f"nodes · {len(rows)} of {len(model.nodes)} · sort {column_title(query.sort_key)} {arrow}"
        if not query.filter.empty:
            title += f" · filter {query.filter.describe()}"
        self.query_one("#nodes-box").border_title = marked(title)
        alarms = self.query_one(AlarmsPanel)
        active = model.alarms.active()
        alarms.show(
            active, model.alarms.past(), palette, model.alarms.version, stale=stale is not None, clock=clock
        )
        self._show_alarm_said(alarms)
        self._alarms_title = partial(
            alarms_title, len(active), model.alarms.unacknowledged, alarms.cleared_shown
        )
        self._alarms_marked = marked
        self._show_alarms_title()
        frame = model.frame
        self.actions_off, self._palette, self._rollout_marked = actions_off, palette, marked
        # Read again from each frame: a fleet's capacity runs out at its max_nodes, and comes back
        self.not_offered = keys_not_offered(frame, model.drill_ended is not None)
        footer = self.query_one(ConsoleFooter)
        footer.hide(not_offered_bindings(self.not_offered))
        footer.rank(*footer_ranks(frame.rollout if frame else None))  # h and r kept while one is under way
        self._show_rollout_borders()
        self.query_one(RolloutPanel).show(
            frame.rollout if frame else None,
            AdmissionInForce.of(frame) if frame else None,
            dim=stale is not None,
            clock=clock.text,
        )

    def _show_charts(
        self, model: FleetModel, now_s: float, palette: Palette, marked: Callable[[str], str]
    ) -> None:
        wave = self.query_one("#wave-chart", PlotextChart)
        wave.show(
            wave_spec(model, plot_columns(wave.content_size.width), now_s), palette.chart, palette.foreground
        )
        self.query_one("#wave-box").border_title = marked(WAVE_TITLE)
        self.query_one("#conn-box").border_title = marked(CONNECTIONS_TITLE)
        stale = model.stale_s(now_s) is not None
        self._wave_legend = partial(
            wave_legend, model.lockstep, model.thresholds.lockstep_index_max, stale, palette
        )
        self._show_wave_legend()
        conn = self.query_one("#conn-chart", PlotextChart)
        conn.show(
            connections_spec(model, plot_columns(conn.content_size.width), now_s),
            palette.chart,
            palette.foreground,
        )

    # --- intents ---------------------------------------------------------------------------------------

    def action_open_filter(self) -> None:
        bar = self.query_one("#filter-bar", InputBar)
        bar.field.placeholder = filter_placeholder(self._first_node)
        if not bar.refused:
            bar.field.value = self.node_filter.describe()  # (a refused filter stays, beside its error)
        bar.open()

    def action_close_filter(self) -> None:
        self.query_one("#filter-bar", InputBar).close()
        self.query_one(NodeTable).focus()

    def _show_alarm_said(self, alarms: AlarmsPanel) -> None:
        said = self.query_one(AlarmMessage)
        said.message = alarms.selected_message
        said.display = bool(alarms.selected_message)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if isinstance(event.data_table, AlarmsPanel):
            self._show_alarm_said(event.data_table)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            node_filter = NodeFilter.parse(event.value)
        except InputError as error:
            # Enter ends the filter either way, as it ends a seek: left open with its error, the box took
            # the operator's next `q` as text. `/` brings the refused filter back, selected, beside it.
            self.query_one("#filter-bar", InputBar).refuse(f"✖ {error}")
            # Named once: a word the filter has no form for is refused as "filter: …" already.
            self.notify(str(error) if error.field == "filter" else f"filter: {error}", severity="error")
            self.query_one(NodeTable).focus()
            return
        self.post_message(FilterChosen(node_filter))
        self.action_close_filter()
