"""Active and past alarms: time, severity, rule, values; `a` acknowledges the one under the cursor."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from console.model.alarms import AlarmEntry, AlarmKey, AlarmRow, alarm_rows
from console.model.thresholds import Level
from console.protocol import Severity
from console.ui.themes import LEVEL_GLYPHS, Palette
from console.ui.widgets.header import fleet_clock

#: Rows shown (after grouping); the box title counts every active alarm.
ROWS_SHOWN = 40
PAST_SHOWN = 20

SEVERITY_LEVEL = {Severity.INFO: Level.OK, Severity.WARNING: Level.WARNING, Severity.CRITICAL: Level.CRITICAL}


#: Most telling first, so a narrow panel cuts what matters least: at 120 columns the panel is ~46 cells and
#: at 80 ~30, and with time and state first the value against its limit was never seen there. The glyph
#: (✖ critical, ▲ warning) has a column of its own so the rule's cell is its name.
COLUMNS = ("", "rule", "value vs limit", "state", "raised", "where")


def row_identity(row: AlarmRow) -> tuple[object, ...]:
    """What the cursor holds on to across redraws: the rule and where (a grouped row is one identity however
    many nodes join it), and for a cleared row when it was raised."""
    where = row.where if len(row.keys) == 1 else "group"
    return (row.name, where, row.cleared, row.raised_at_s if row.cleared else None)


class AlarmsPanel(DataTable):
    DEFAULT_CSS = """
    AlarmsPanel {
        height: 1fr;
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
        self.add_columns(*COLUMNS)
        self._keys: list[tuple[AlarmKey, ...]] = []
        self._identities: list[tuple[object, ...]] = []
        self._messages: list[str] = []
        self._shown: tuple[int, str] | None = None

    def show(self, active: list[AlarmEntry], past: list[AlarmEntry], palette: Palette, version: int) -> None:
        if self._shown == (version, palette.name):
            return
        self._shown = (version, palette.name)
        cursor = self.cursor_row
        # In a focused panel (where `a` acts) the cursor stays on its alarm, not on its row number: a new
        # alarm sorted above it (or the one just acknowledged sinking below the new ones) moved another
        # alarm under it, and `a` acked that.
        held = self._identities[cursor] if 0 <= cursor < len(self._identities) else None
        self._keys = []
        self._identities = []
        self._messages = []
        cells: list[tuple[str | Text, ...]] = []
        rows = alarm_rows(active)[:ROWS_SHOWN] + alarm_rows(past[: PAST_SHOWN * 10])[:PAST_SHOWN]
        for row in rows:
            level = Level.UNKNOWN if row.cleared else SEVERITY_LEVEL.get(row.severity, Level.WARNING)
            style = palette.level_style(level, bold=not row.acknowledged and not row.cleared)
            status = "cleared" if row.cleared else ("acked" if row.acknowledged else "NEW")
            cells.append(
                (
                    Text(LEVEL_GLYPHS[level], style=style),
                    Text(row.name, style=style),
                    row.value,
                    Text(status, style=style),
                    fleet_clock(row.raised_at_s),
                    row.where,
                )
            )
            self._keys.append(() if row.cleared else row.keys)
            self._identities.append(row_identity(row))
            self._messages.append(row.message)
        # Widths from what is shown now, set explicitly: DataTable's auto widths only ever grow and are
        # settled lazily, so they would depend on earlier alarms and on when the table was painted.
        self.clear(columns=True)
        for index, label in enumerate(COLUMNS):
            width = max(
                [
                    len(label),
                    *(
                        Text(cell).cell_len if isinstance(cell, str) else cell.cell_len
                        for cell in (row[index] for row in cells)
                    ),
                ]
            )
            self.add_column(label, width=width)
        for row in cells:
            self.add_row(*row)
        if self.row_count:
            if not self.has_focus:
                # Nobody is choosing a row: show the first (the newest unacknowledged alarm), not the row the
                # cursor happened to sit on — it followed the first alarm ever raised into the past, and the
                # line under the panel kept saying what that cleared alarm said.
                cursor = 0
            elif held in self._identities:
                cursor = self._identities.index(held)
            self.move_cursor(row=min(cursor, self.row_count - 1), animate=False)

    @property
    def selected_message(self) -> str:
        """What the alarm under the cursor said (the cursor stays on its alarm across redraws)."""
        row = self.cursor_row
        return self._messages[row] if 0 <= row < len(self._messages) else ""

    def action_acknowledge(self) -> None:
        if 0 <= self.cursor_row < len(self._keys) and self._keys[self.cursor_row]:
            self.post_message(self.Acknowledge(self._keys[self.cursor_row]))
