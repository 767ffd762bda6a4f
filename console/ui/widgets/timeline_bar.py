"""The replay's controls line and timeline bar: where the replay stands, its speed, and the markers."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from console.model.thresholds import Level
from console.model.timeline import ACTION_GLYPH, ALARM_GLYPH, EVENT_GLYPH, timeline_cells
from console.model.units import FLEET_CLOCK, ClockFace, counted
from console.record.reader import Marker
from console.record.replay import ReplayStatus, damage_note
from console.ui.themes import Palette

_ALARM_LEVELS = {"critical": Level.CRITICAL, "warning": Level.WARNING}
_ACTION_LEVELS = {"blocked": Level.CRITICAL, "typed": Level.WARNING, "confirm": Level.WARNING}
#: The replay's keys, on the bar's first line: the footer, full at 160 columns, leaves `(` `)` off.
CONTROLS = "space pause · , . step · g seek · x speed · [ ] alarm · { } action · ( ) event"


def status_text(status: ReplayStatus, clock: ClockFace = FLEET_CLOCK) -> Text:
    at = clock.text
    text = Text(no_wrap=True, overflow="ellipsis")
    state = "‖ paused" if status.paused else ("■ end" if status.finished else "▶ playing")
    text.append(f"replay {state}  ×{status.speed:g}  ", style="bold")
    end = at(status.span_s[1]) if status.span_s else "—"
    text.append(f"{at(status.time_s)} / {end}  ")
    text.append(f"frame {status.frame_index + 1 if status.frame_count else 0} of {status.frame_count}   ")
    text.append(CONTROLS, style="dim")
    return text


def bar_text(status: ReplayStatus, markers: Sequence[Marker], width: int, palette: Palette) -> Text:
    text = Text(no_wrap=True)
    for cell in timeline_cells(status.span_s, markers, status.time_s, width):
        if cell.kind == "alarm":
            style = palette.level_style(_ALARM_LEVELS.get(cell.level, Level.WARNING), bold=True)
        elif cell.kind == "action":
            style = palette.level_style(_ACTION_LEVELS.get(cell.level, Level.OK), bold=True)
        elif cell.kind == "event":
            style = f"bold {palette.foreground}"  # the shape tells it from the head (●)
        elif cell.kind == "head":
            style = f"bold {palette.foreground}"
        elif cell.kind == "played":
            style = palette.chart["line"]
        else:
            style = "dim"
        text.append(cell.glyph, style=style)
    return text


class TimelineBar(Static):
    DEFAULT_CSS = """
    TimelineBar {
        height: auto;  /* 3 lines; a 4th says where a damaged recording ends */
        padding: 0 1;
        background: $panel;
    }
    """

    def show(
        self,
        status: ReplayStatus,
        markers: Sequence[Marker],
        palette: Palette,
        last_record: str = "",
        clock: ClockFace = FLEET_CLOCK,
    ) -> None:
        """`clock`: how times read — the fleet's, or the recorded drill's (`recorded_clock`)."""
        width = max(self.content_size.width, 10)
        # The status and the counts are cut to the width here: Textual wraps a Text whatever its no_wrap,
        # and at 120 columns the controls' last word took a line of its own, pushing the bar down.
        text = status_text(status, clock)
        text.truncate(width, overflow="ellipsis")
        text.append("\n")
        text.append(bar_text(status, markers, width, palette))
        counts = Text(no_wrap=True, style="dim")
        alarms = sum(m.kind == "alarm" for m in markers)
        actions = sum(m.kind == "action" for m in markers)
        events = len(markers) - alarms - actions  # (counted only where a recording has any: a drill's)
        counts.append(
            f"{ALARM_GLYPH} {counted(alarms, 'alarm')}   {ACTION_GLYPH} {counted(actions, 'action')}   "
            + (f"{EVENT_GLYPH} {counted(events, 'event')}   " if events else "")
        )
        counts.append(last_record, style="")
        counts.truncate(width, overflow="ellipsis")
        text.append("\n")
        text.append(counts)
        note = damage_note(status)
        if note is not None:  # the frame count and the bar end there: say why, on a line of its own
            text.append(f"\n✖ {note}", style=palette.level_style(Level.CRITICAL))
        self.update(text)
