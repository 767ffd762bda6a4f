"""Active and past alarms: time, severity, rule, values; `a` acknowledges the one under the cursor."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from console.model.alarms import AlarmEntry, AlarmKey
from console.model.thresholds import Level
from console.protocol import Severity
from console.ui.themes import LEVEL_GLYPHS, Palette
from console.ui.widgets.header import fleet_clock

#: Rows shown: a table of 1500 alarms helps nobody and costs a frame budget; the title says how many more.
ACTIVE_SHOWN = 40
PAST_SHOWN = 20

SEVERITY_LEVEL = {Severity.INFO: Level.OK, Severity.WARNING: Level.WARNING, Severity.CRITICAL: Level.CRITICAL}


def _value(entry: AlarmEntry) -> str:
    alarm = entry.alarm
    if alarm.value is None:
        return alarm.message
    limit = f" / {alarm.limit:g}" if alarm.limit is not None else ""
    return f"{alarm.value:.3g}{limit}"


class AlarmsPanel(DataTable):
    DEFAULT_CSS = """
    AlarmsPanel {
        height: 1fr;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("a", "acknowledge", "ack alarm")]

    class Acknowledge(Message):
        def __init__(self, key: AlarmKey) -> None:
            self.key = key
            super().__init__()

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = False
        self.add_columns("time", "sev", "status", "rule", "node", "value / limit")
        self._keys: list[AlarmKey | None] = []
        self._shown: tuple[int, str] | None = None

    def show(self, active: list[AlarmEntry], past: list[AlarmEntry], palette: Palette, version: int) -> None:
        if self._shown == (version, palette.name):
            return
        self._shown = (version, palette.name)
        cursor = self.cursor_row
        self.clear()
        self._keys = []
        for entry in [*active[:ACTIVE_SHOWN], *past[:PAST_SHOWN]]:
            cleared = entry.cleared_at_s is not None
            level = Level.UNKNOWN if cleared else SEVERITY_LEVEL.get(entry.alarm.severity, Level.WARNING)
            style = palette.level_style(level, bold=not entry.acknowledged and not cleared)
            status = "cleared" if cleared else ("acked" if entry.acknowledged else "NEW")
            self.add_row(
                fleet_clock(entry.raised_at_s),
                Text(f"{LEVEL_GLYPHS[level]} {entry.alarm.severity.value[:4]}", style=style),
                Text(status, style=style),
                Text(entry.alarm.name, style=style),
                entry.alarm.node or "fleet",
                _value(entry),
            )
            self._keys.append(None if cleared else entry.key)
        if self.row_count:
            self.move_cursor(row=min(cursor, self.row_count - 1), animate=False)

    def action_acknowledge(self) -> None:
        if 0 <= self.cursor_row < len(self._keys) and self._keys[self.cursor_row] is not None:
            self.post_message(self.Acknowledge(self._keys[self.cursor_row]))
