"""The audit panel: the server's audit log (`GET /v1/audit`), newest first — every attempt, whatever came
of it — and this session's outcomes when the server cannot be asked."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from console.model.thresholds import Level
from console.ui.themes import LEVEL_GLYPHS, Palette

#: Outcomes (the server's audit words) and how they stand.
OUTCOME_LEVELS = {
    "applied": Level.OK,
    "dry_run": Level.UNKNOWN,
    "replayed": Level.UNKNOWN,
    "needs_confirmation": Level.WARNING,
    "confirm_refused": Level.WARNING,
    "typed_mismatch": Level.WARNING,
    "cancelled": Level.UNKNOWN,
    "overridden": Level.CRITICAL,
    "blocked": Level.CRITICAL,
    "forbidden": Level.CRITICAL,
    "invalid": Level.WARNING,
    "refused_by_fleet": Level.WARNING,
    # A recording's own words (console.record.records): a failed attempt, an operator's answer.
    "failed": Level.WARNING,
    "confirmed": Level.OK,
    "expired": Level.WARNING,
}
#: How often an open panel asks the server again: a colleague's action shows while the panel is read.
REFRESH_S = 2.0
COLUMNS = ("time (UTC)", "actor", "action", "target", "level", "outcome", "status", "detail")


def needs_date(records: Sequence[dict[str, Any]], now_s: float) -> bool:
    """Whether the time column must say the day: a log a server continues across sessions (a served
    drill's, a fleet's default) holds earlier days' records, and 04:03:20 alone would read as today's."""
    days = {
        time.strftime("%Y-%m-%d", time.gmtime(at))
        for record in records
        if isinstance(at := record.get("time_unix_s"), int | float)
    }
    return len(days) > 1 or days - {time.strftime("%Y-%m-%d", time.gmtime(now_s))} != set()


def audit_row(record: dict[str, Any], with_date: bool = False) -> tuple[str, ...]:
    """A record's cells. Its time is `time_unix_s` in UTC, or `time_text` as a replay's clock shows it."""
    at = record.get("time_unix_s")
    shape = "%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S"
    clock = time.strftime(shape, time.gmtime(at)) if isinstance(at, int | float) else "—"
    clock = str(record.get("time_text") or clock)
    verdict = record.get("verdict") or {}
    return (
        clock,
        str(record.get("actor") or "—"),
        str(record.get("action") or "—"),
        str(record.get("target") or "fleet"),
        str(verdict.get("level") or "—"),
        str(record.get("outcome") or "—"),
        str(record.get("status") or "—"),
        str(record.get("detail") or "")[:80],
    )


class AuditScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    AuditScreen { align: center middle; }
    AuditScreen > Vertical {
        width: 95%; height: 80%; border: thick $primary; background: $surface; padding: 0 1;
    }
    AuditScreen #audit-note { color: $text-muted; height: auto; }
    AuditScreen DataTable { height: 1fr; }
    AuditScreen #audit-detail { height: auto; max-height: 6; border-top: solid $panel-lighten-2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,L", "app.pop_screen", "close audit")]

    def __init__(
        self,
        palette: Palette,
        clock: Callable[[], float] = time.time,
        time_column: str = COLUMNS[0],
        waiting: str = "asking the server…",
    ) -> None:
        """`time_column`: the time column's heading (a replay's records read on its recorded clock);
        `waiting`: the note until `show` fills the table."""
        super().__init__()
        self.palette = palette
        self.clock = clock
        self.time_column = time_column
        self.waiting = waiting
        self._details: list[str] = []  # each row's whole detail, in the table's order
        self._shown: list[Any] = []  # each row's record seq (or time), in the table's order

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("audit log · newest first   (Esc closes)", style="bold"))
            yield Static(self.waiting, id="audit-note")
            yield DataTable(id="audit-table", cursor_type="row", zebra_stripes=False)
            yield Static("", id="audit-detail")  # the highlighted record's detail, whole

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(self.time_column, *COLUMNS[1:])

    def show(self, records: Sequence[dict[str, Any]], note: str) -> None:
        """Fill the table, newest first; asked again (every `REFRESH_S`) the cursor stays on its record."""
        table = self.query_one(DataTable)
        shown = [record.get("seq", record.get("time_unix_s")) for record in reversed(records)]
        self.query_one("#audit-note", Static).update(note)
        if shown == self._shown and table.row_count == len(records):
            return  # nothing new: the operator's place in the table is kept
        under_cursor = self._shown[table.cursor_row] if 0 <= table.cursor_row < len(self._shown) else None
        table.clear()
        self._shown = shown
        self._details = [str(record.get("detail") or "") for record in reversed(records)]
        with_date = needs_date(records, self.clock())
        for record in reversed(records):
            row = audit_row(record, with_date)
            level = OUTCOME_LEVELS.get(row[5], Level.UNKNOWN)
            style = self.palette.level_style(level)
            # Text, not str: the table reads a str as markup, and "expected [min, max] with …" lost its
            # "[min, max]" as a style.
            table.add_row(
                *map(Text, row[:5]), Text(f"{LEVEL_GLYPHS[level]} {row[5]}", style=style), *map(Text, row[6:])
            )
        if under_cursor is not None and under_cursor in shown:
            table.move_cursor(row=shown.index(under_cursor))
        self._show_detail(table.cursor_row)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)

    def _show_detail(self, row: int) -> None:
        text = self._details[row] if 0 <= row < len(self._details) else ""
        self.query_one("#audit-detail", Static).update(Text(text, style="dim") if text else "")
