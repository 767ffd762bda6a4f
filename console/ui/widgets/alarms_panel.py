"""Active and past alarms: severity, rule, where, value, state, raised (and a cleared alarm's clear, with
how long it lasted); `a` acknowledges the one under the cursor. Under them, what that alarm said
(`AlarmMessage`)."""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable

from console.model.alarms import AlarmEntry, AlarmKey, AlarmRow, alarm_rows
from console.model.thresholds import SEVERITY_LEVEL, Level
from console.model.units import FLEET_CLOCK, ClockFace, duration
from console.ui.themes import LEVEL_GLYPHS, Palette
from console.ui.words import fill, fit

#: Rows shown (after grouping); the box title counts every active alarm.
ROWS_SHOWN = 40
PAST_SHOWN = 20

#: Most telling first, so a narrow panel cuts what matters least: at 160 columns the panel is 62 cells, at
#: 120 ~46 and at 80 ~30. The node follows the rule: last, it fell past the edge at 160 columns whenever a
#: long rule (`drain_inflow_kill_switch`) was listed, and node_down read without its node. The glyph
#: (✖ critical, ▲ warning) has a column of its own so the rule's cell is its name.
COLUMNS = ("", "rule", "where", "value vs limit", "state", "raised")
GLYPH, RULE, WHERE, VALUE, STATE, RAISED = range(len(COLUMNS))

#: One blank cell after each column (and before the first): DataTable's padding puts two between columns,
#: and in 62 cells those 12 were what pushed the last columns out.
GAP = 1
#: A value with no figures is the alarm's message (from a newer server): cut, it is read whole below.
VALUE_MAX = 18
#: Where every row is the fleet's, "where" said "fleet" on each of them while the rule's name was cut
#: ("drain_inflow_kill_s… fleet" at 80×24): where the names need its room, the column gives way to this.
FLEET = "fleet"  # (`console.model.alarms`: a fleet alarm naming no node)
ALL_FLEET = "rule · all fleet"
ALL_FLEET_SHORT = "all fleet"  # (over the short labels: "rule · al…" said nothing)
#: The value's heading where the node is drawn in its cells (`merged_value`).
WHERE_AND_VALUE = "where · value"
#: Each heading's shorter words, for a column too narrow for it ("value vs lim…" read as cut).
SHORTER_TITLES = {"value vs limit": "value · limit", WHERE_AND_VALUE: "node · value"}
#: What a value may start with before its reading ("was 0.149 < 0.6"): where the reading does not fit on
#: the node's line, it goes under it with these words.
QUALIFIERS = ("was", "worst", "max")


class Cell(Text):
    """A cell's text, drawn one cell short of its column so the gap after it stays blank when a narrow
    column cuts it with "…"; `str()` and `get_row_at` still give it whole."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from super().__rich_console__(console, options.update_width(max(1, options.max_width - GAP)))


class RuleCell(Cell):
    """A rule's cell: its whole name (`str()`, `get_row_at`: what the cursor and the line under the panel
    know it by), drawn as its short label (`AlarmRow.label`) where the panel shows labels (`labelled`)."""

    label: str = ""
    short: bool = False

    def labelled(self) -> RuleCell:
        """The same cell, drawn as its short label."""
        cell = rule_cell(self.plain, self.label, self.style)
        cell.short = True
        return cell

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.short:
            yield from super().__rich_console__(console, options)
            return
        yield from Cell(self.label, style=self.style, overflow="ellipsis", no_wrap=True).__rich_console__(
            console, options
        )


def _labelled(cell: Cell) -> Cell:
    return cell.labelled() if isinstance(cell, RuleCell) else cell


def cell_width_lines(cell: Text) -> int:
    """The lines a cell takes."""
    return len(cell.plain.split("\n"))


def rule_cell(name: str, label: str, style: str | Style) -> RuleCell:
    cell = RuleCell(name, style=style, overflow="ellipsis", no_wrap=True)
    cell.label = label
    return cell


def cell_width(cell: Text) -> int:
    """The cells a cell's widest line takes (a cleared row's cells have two: `two_line_row`)."""
    return max(cell_len(line) for line in cell.plain.split("\n"))


def two_line_row(cells: tuple[Cell, ...], lasted: str, cleared_at: str) -> tuple[Cell, ...]:
    """A cleared row on two lines, where the panel shows the times (160 columns): "raised" and "cleared"
    in the state's column, beside their times, and how long it lasted under its last value — on one line,
    "cleared 0:00:11" under "raised" read as the time it cleared. No column grows: "cleared" is the state
    it had, and "lasted 25s" is shorter than the value's heading."""

    def below(cell: Cell, first: str, second: str) -> Cell:
        return Cell(f"{first}\n{second}", style=cell.style, overflow="ellipsis", no_wrap=True)

    value, state, raised = cells[VALUE], cells[STATE], cells[RAISED]
    spread = list(cells)
    spread[VALUE] = below(value, value.plain, f"lasted {lasted}")
    spread[STATE] = below(state, "raised", "cleared")
    spread[RAISED] = below(raised, raised.plain, cleared_at)
    return tuple(spread)


def said_of(row: AlarmRow, clock: ClockFace) -> str:
    """What the line under the panel says of `row`: its message; of a cleared one, when it cleared, after
    how long, and that its words are of when it held ("clients are failing to reconnect") — at its worst,
    and when that was, where the source kept it (its last words, as it was clearing, told a 44 % drop as
    6 %) — at 80 and 120 columns the only place its times are read. Of one clearing, since when its
    condition has not held: its row's "was 10.5 > 4" is the last reading before then, not now."""
    if row.cleared_at_s is None:
        if row.clearing_since_s is not None:
            since = clock.text(row.clearing_since_s)
            held = f"Clearing — not held since {since} (raised {clock.text(row.raised_at_s)})"
            return f"{held}; its last reading before then: {row.message}" if row.message else f"{held}."
        return row.message
    span = (
        f"Cleared {clock.text(row.cleared_at_s)} after {duration(row.cleared_at_s - row.raised_at_s)} "
        f"(raised {clock.text(row.raised_at_s)})"
    )
    if not row.message:
        return f"{span}."
    if row.worst_at_s is not None:
        return f"{span} — at its worst, {clock.text(row.worst_at_s)}: {row.message}"
    return f"{span} — while it held: {row.message}"


def column_widths(natural: list[int], room: int) -> list[int]:
    """Each column's width (its gap included) in `room` cells, from the widest cell of each (`natural`; a
    column of natural width 0 is not shown: "where", when every row is the fleet's). The glyph, the rule
    and the node always, whole; then the value, the state and the times, each only if it fits whole, and
    none after one that does not — a figure cut short ("38." of "38.6k") reads as another figure, and the
    times without the state would read as the raised time of nothing. A rule's name is never cut: where
    it leaves its row's figures no room, the panel shows the short labels instead (`layout`)."""
    widths = [width + GAP if width else 0 for width in natural]
    used = sum(widths[:VALUE])
    for index in range(VALUE, len(widths)):
        if used + widths[index] > room:
            widths[index:] = [0] * (len(widths) - index)
            break
        used += widths[index]
    return widths


class Layout(NamedTuple):
    widths: list[int]
    #: The rules' short labels drawn, not their names (`RuleCell`).
    labelled: bool = False
    #: The node drawn in the value's cells, beside or over it (`merged_value`); "where" not shown.
    merged: bool = False


def _shows(shape: Layout) -> tuple[bool, bool]:
    """What a layout shows of the figures: the value against its limit, then the times."""
    return (bool(shape.widths[VALUE]), bool(shape.widths[RAISED]))


def layout(natural: list[int], label_width: int, room: int, all_fleet: bool) -> Layout:
    """How the rows are drawn in `room` cells, from the columns' natural widths (with the rules' whole
    names) and the widest short label. The rules' whole names wherever the figures fit beside them — the
    value against its limit, and the times where the short labels would leave room for them (where every
    row is the fleet's, "where" gives way first: the header says "all fleet" once); else their short
    labels, whole words — at 80 columns a whole name left the value no room ("✖ connections_drop" and ten
    blank cells), and at 120 and 160 columns a long name cost the times. The node never gives way: where
    even beside the labels the value does not fit (80 columns: 30 cells), the node is drawn in the value's
    cells, on its line or over it. The value against its limit never gives way: it is the figure the
    operator acts on; an active alarm's raised time is said nowhere else."""
    fleet = [*natural[:WHERE], 0, *natural[WHERE + 1 :]]
    candidates = [Layout(column_widths(natural, room))]
    if all_fleet:
        candidates.append(Layout(column_widths(fleet, room)))
    short = [*(fleet if all_fleet else natural)[:RULE], label_width, *natural[RULE + 1 :]]
    if all_fleet:
        short[WHERE] = 0
    candidates.append(Layout(column_widths(short, room), labelled=True))
    best = max(candidates, key=_shows)  # (the first of the best: the whole names where they do as well)
    if best.widths[VALUE]:
        return best
    widths = [GAP + natural[GLYPH], label_width + GAP, 0, 0, 0, 0]
    widths[VALUE] = max(1 + GAP, room - widths[GLYPH] - widths[RULE])
    return Layout(widths, labelled=True, merged=True)


def merged_value(where: str, value: str, width: int) -> str:
    """A row's node and value in one cell of `width` cells, a line each where they do not fit on one:
    "gw-017 12 s", "gw-031 +2" over "93.1 > 80 %"; a fleet row's value alone. A value too wide for a line
    goes on two, its "was"/"worst"/"max" over its reading; a part wider still, broken between words."""
    lines = [] if where == FLEET else fill(where, width)
    if lines and cell_len(lines[-1]) + 1 + cell_len(value) <= width:
        lines[-1] = f"{lines[-1]} {value}"
        return "\n".join(lines)
    first, _, rest = value.partition(" ")
    if cell_len(value) > width and first in QUALIFIERS and rest:
        return "\n".join([*lines, *fill(first, width), *fill(rest, width)])
    return "\n".join([*lines, *fill(value, width)])


def row_identity(row: AlarmRow) -> tuple[object, ...]:
    """What the cursor holds on to across redraws: the rule and where (a grouped row is one identity however
    many nodes join it), and for a cleared row when it was raised."""
    where = row.keys[0][1] if len(row.keys) == 1 else "group"  # (a fleet alarm's named nodes may change)
    return (row.name, where, row.cleared, row.raised_at_s if row.cleared else None)


class AlarmsPanel(DataTable):
    DEFAULT_CSS = """
    AlarmsPanel {
        height: 1fr;
        scrollbar-size-vertical: 1;  /* at 80 columns the panel has 30 cells: one more for the rule's name */
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("a", "acknowledge", "ack alarm")]

    class Acknowledge(Message):
        def __init__(self, keys: tuple[AlarmKey, ...]) -> None:
            self.keys = keys
            super().__init__()

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = False
        self.cell_padding = 0  # the gaps are in the widths (GAP)
        self.add_columns(*COLUMNS)
        self._keys: list[tuple[AlarmKey, ...]] = []
        self._identities: list[tuple[object, ...]] = []
        self._messages: list[str] = []
        self._cells: list[tuple[Cell, ...]] = []
        self._cleared_lines: list[tuple[str, str] | None] = []  # (lasted, cleared at) of a cleared row
        self._shown: tuple[int, str, bool, ClockFace] | None = None
        self._laid_out_for: tuple[int, int] | None = None
        self._labelled = False  # the rows drawn with the rules' short labels: the message names the rule

    @property
    def cleared_shown(self) -> int:
        """The cleared rows drawn under the active ones."""
        return sum(1 for lines in self._cleared_lines if lines is not None)

    def show(
        self,
        active: list[AlarmEntry],
        past: list[AlarmEntry],
        palette: Palette,
        version: int,
        stale: bool = False,
        clock: ClockFace = FLEET_CLOCK,
    ) -> None:
        """`stale`: the view is past the stale line (`FleetModel.stale_s`); the active alarms are drawn as the
        last frame's (`AlarmRow.stale`), their log untouched, so the next frame draws them as they are.
        `clock`: how the raised times read (a drill's console: the drill's clock)."""
        if self._shown == (version, palette.name, stale, clock):
            return
        self._shown = (version, palette.name, stale, clock)
        cursor = self.cursor_row
        # In a focused panel (where `a` acts) the cursor stays on its alarm, not on its row number: a new
        # alarm sorted above it (or the one just acknowledged sinking below the new ones) moved another
        # alarm under it, and `a` acked that.
        held = self._identities[cursor] if 0 <= cursor < len(self._identities) else None
        self._keys = []
        self._identities = []
        self._messages = []
        self._cleared_lines = []
        cells: list[tuple[Cell, ...]] = []
        rows = (
            alarm_rows(active, stale=stale)[:ROWS_SHOWN]
            + alarm_rows(past[: PAST_SHOWN * 10], stale=stale)[:PAST_SHOWN]
        )
        for row in rows:
            level = Level.UNKNOWN if row.cleared else SEVERITY_LEVEL.get(row.severity, Level.WARNING)
            style = palette.level_style(level, bold=not row.acknowledged and not row.cleared)
            if row.stale:
                # The last frame's alarm: its glyph still says how bad it was, muted and dimmed as the
                # stale gauges are — in its level's colour, "✖ … NEW" read as firing now.
                style = palette.level_style(Level.UNKNOWN) + Style(dim=True)
            # Clearing: its condition no longer holds and it waits out clear_after_s, its value the last
            # reading over the line ("was 0.322 < 0.6"): "NEW" beside a gauge back at 46.87 contradicted it.
            status = (
                "cleared"
                if row.cleared
                else "clearing"
                if row.clearing
                else ("acked" if row.acknowledged else "NEW")
            )
            # (a stale row's reading too: the last frame's, as a stale gauge's value)
            value = Cell(
                row.value, style=Style(dim=True) if row.stale else "", overflow="ellipsis", no_wrap=True
            )
            value.truncate(VALUE_MAX, overflow="ellipsis")
            cells.append(
                (
                    Cell(" " * GAP + LEVEL_GLYPHS[level], style=style),
                    # The whole name is the cell (what `get_row_at` returns); a narrow panel draws its label.
                    rule_cell(row.name, row.label, style),
                    Cell(row.where, no_wrap=True),
                    value,
                    Cell(status, style=style, no_wrap=True),
                    Cell(clock.text(row.raised_at_s), no_wrap=True),
                )
            )
            self._keys.append(() if row.cleared else row.keys)
            self._identities.append(row_identity(row))
            self._messages.append(said_of(row, clock))
            self._cleared_lines.append(
                None
                if row.cleared_at_s is None
                else (duration(row.cleared_at_s - row.raised_at_s), clock.text(row.cleared_at_s))
            )
        self._cells = cells
        self._lay_out(cursor, held)

    def _room(self, lines: int) -> int:
        """The cells a row has: the panel's width, less the scrollbar when `lines` will need one."""
        room = self.size.width
        if lines > self.size.height - self.header_height:
            room -= self.styles.scrollbar_size_vertical
        return room

    def _layout(self, rows: list[tuple[Cell, ...]], lines: int) -> Layout:
        natural = [
            max([len(label), *(cell_width(row[index]) for row in rows)])
            for index, label in enumerate(COLUMNS)
        ]
        natural[GLYPH] = GAP + 1  # a blank and the glyph, rows or none: the header stays where it was
        labels = [cell_len(row[RULE].label) for row in rows if isinstance(row[RULE], RuleCell)]
        label_width = max([len(COLUMNS[RULE]), *labels])
        all_fleet = bool(rows) and all(row[WHERE].plain == FLEET for row in rows)
        return layout(natural, label_width, self._room(lines), all_fleet)

    def _lay_out(self, cursor: int, held: tuple[object, ...] | None) -> None:
        # Widths from what is shown now and the room there is, set explicitly: DataTable's auto widths only
        # ever grow and are settled lazily, so they would depend on earlier alarms and on when the table
        # was painted — and a column past the edge is not seen at all.
        self._laid_out_for = (self.size.width, self.size.height)
        rows = self._cells
        heights = [1] * len(rows)
        shape = self._layout(rows, len(rows))
        if shape.merged:
            rows, heights = self._merged(shape.widths[VALUE])
            if sum(heights) > len(heights):  # (more lines: a scrollbar may take a cell)
                shape = self._layout(self._cells, sum(heights))
                rows, heights = self._merged(shape.widths[VALUE])
        elif shape.widths[RAISED] and any(self._cleared_lines):
            # Room for the times: a cleared row says when it cleared too, on a second line — unless those
            # lines would take the times' room again (a scrollbar's cell), then as before.
            spread = [
                row if extra is None else two_line_row(row, *extra)
                for row, extra in zip(rows, self._cleared_lines, strict=True)
            ]
            spread_heights = [1 if extra is None else 2 for extra in self._cleared_lines]
            spread_shape = self._layout(spread, sum(spread_heights))
            if spread_shape.widths[RAISED]:
                rows, heights, shape = spread, spread_heights, spread_shape
        if shape.labelled:
            rows = [(row[GLYPH], _labelled(row[RULE]), *row[WHERE:]) for row in rows]
        self._labelled = shape.labelled
        self.clear(columns=True)
        titles = list(COLUMNS)
        if not shape.widths[WHERE] and all(row[WHERE].plain == FLEET for row in self._cells):
            fits = cell_len(ALL_FLEET) + GAP <= shape.widths[RULE]
            titles[RULE] = ALL_FLEET if fits else ALL_FLEET_SHORT
        elif shape.merged:  # (the node in the value's cells)
            titles[VALUE] = WHERE_AND_VALUE
        for index, width in enumerate(shape.widths):
            if cell_len(titles[index]) + GAP > width:
                titles[index] = SHORTER_TITLES.get(titles[index], titles[index])
        for title, width in zip(titles, shape.widths, strict=True):
            self.add_column(Cell(title, overflow="ellipsis", no_wrap=True), width=width)
        for row, height in zip(rows, heights, strict=True):
            self.add_row(*row, height=height)
        if self.row_count:
            if not self.has_focus:
                # Nobody is choosing a row: show the first (the newest unacknowledged alarm), not the row the
                # cursor happened to sit on — it followed the first alarm ever raised into the past, and the
                # line under the panel kept saying what that cleared alarm said.
                cursor = 0
            elif held in self._identities:
                cursor = self._identities.index(held)
            self.move_cursor(row=min(cursor, self.row_count - 1), animate=False)

    def _merged(self, value_width: int) -> tuple[list[tuple[Cell, ...]], list[int]]:
        """The rows with each one's node drawn in its value's cells (`merged_value`), and their heights."""
        rows: list[tuple[Cell, ...]] = []
        for row in self._cells:
            where, value = row[WHERE], row[VALUE]
            text = merged_value(where.plain, value.plain, max(1, value_width - GAP))
            merged = Cell(text, style=value.style, overflow="ellipsis", no_wrap=True)
            rows.append((*row[:VALUE], merged, *row[VALUE + 1 :]))
        return rows, [cell_width_lines(row[VALUE]) for row in rows]

    def render_line(self, y: int) -> Strip:
        # A column not shown (width 0) draws as an empty segment with no style, and Textual's NO_COLOR filter
        # (Monochrome) reads every segment's style: under NO_COLOR=1 the console died at start with a
        # traceback. An empty segment draws nothing, so leaving it out changes no cell.
        strip = super().render_line(y)
        return Strip([segment for segment in strip if segment.text], strip.cell_length)

    def on_resize(self) -> None:
        # The widths depend on the room: a resized terminal lays the same rows out again.
        if self._cells and self._laid_out_for != (self.size.width, self.size.height):
            cursor = self.cursor_row
            held = self._identities[cursor] if 0 <= cursor < len(self._identities) else None
            self._lay_out(cursor, held)

    @property
    def selected_message(self) -> str:
        """What the alarm under the cursor said (the cursor stays on its alarm across redraws)."""
        row = self.cursor_row
        if not 0 <= row < len(self._messages):
            return ""
        if self._labelled:  # the row says its short label: the rule's whole name is said here
            name = str(self._identities[row][0])
            return f"{name}: {self._messages[row]}" if self._messages[row] else name
        return self._messages[row]

    def action_acknowledge(self) -> None:
        if 0 <= self.cursor_row < len(self._keys) and self._keys[self.cursor_row]:
            self.post_message(self.Acknowledge(self._keys[self.cursor_row]))


class AlarmMessage(Widget):
    """What the alarm under the panel's cursor said, in the rows the screen gives it. Laid out here, not by
    Rich: Rich broke "the 35 % budget" at its space (a no-break space too) and the box's height cut the
    rest mid-sentence. A figure keeps its unit, and words that do not fit end at a word with "…"
    (`console.ui.words`); the screen gives them more rows while the panel has the focus."""

    DEFAULT_CSS = """
    AlarmMessage { height: auto; }
    """

    message: reactive[str] = reactive("", layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(fill(self.message, width))  # (the screen's max-height may give it fewer rows)

    def render(self) -> Text:
        # The rows it was given, not those it asked for: the last of them ends at a word, with "…".
        return Text("\n".join(fit(self.message, self.size.width, self.size.height)), no_wrap=True)
