"""The replay's timeline bar, as cells: where the replay stands, and the alarms, actions and events to jump to.

Pure: the replay screen passes the recording's span, its markers and the replay's time, and gets back one
cell per column (issue #5, section 4: "a timeline bar with markers for alarms and actions").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from console.errors import InputError
from console.model.units import ClockFace
from console.record.reader import Marker

#: Glyphs: an action outranks an event, an event an alarm in the same cell (the operator's own move is what
#: a review seeks; an injection or a drill's line is rarer than the alarms it sets off, and explains them).
ALARM_GLYPH = "▲"
ACTION_GLYPH = "◆"
EVENT_GLYPH = "◇"
_RANK = {"alarm": 1, "event": 2, "action": 3}
TRACK = "─"
PLAYED = "━"
HEAD = "●"


@dataclass(frozen=True)
class Cell:
    glyph: str
    kind: str  # "played", "track", "head", "alarm", "event", "action"
    level: str = ""  # alarm severity, the action's verdict level / outcome, or the event's kind


def column_of(time_s: float, span_s: tuple[float, float], width: int) -> int:
    start, end = span_s
    if width <= 1 or end <= start:
        return 0
    share = (time_s - start) / (end - start)
    return min(width - 1, max(0, round(share * (width - 1))))


def timeline_cells(
    span_s: tuple[float, float] | None, markers: Sequence[Marker], now_s: float, width: int
) -> list[Cell]:
    """`width` cells: the played part, the track ahead, the markers, and the head where the replay is."""
    if width <= 0:
        return []
    if span_s is None:
        return [Cell(TRACK, "track")] * width
    head = column_of(now_s, span_s, width)
    cells = [Cell(PLAYED, "played") if i < head else Cell(TRACK, "track") for i in range(width)]
    glyphs = {"alarm": ALARM_GLYPH, "event": EVENT_GLYPH, "action": ACTION_GLYPH}
    for marker in markers:
        column = column_of(marker.time_s, span_s, width)
        if _RANK[marker.kind] >= _RANK.get(cells[column].kind, 0):
            cells[column] = Cell(glyphs[marker.kind], marker.kind, marker.level)
    cells[head] = Cell(HEAD, "head")
    return cells


_CLOCK = re.compile(r"^(?:(\d+):)?(?:(\d+):)?(\d+(?:\.\d+)?)$")


def parse_clock(text: str) -> float:
    """Fleet time typed by the operator: `245`, `4:05`, `0:04:05` (H:MM:SS, as the header shows it)."""
    match = _CLOCK.match(text.strip())
    if match is None:
        raise InputError("time", text, "seconds, M:SS or H:MM:SS of fleet time, e.g. 4:05")
    first, second, seconds = match.groups()
    hours, minutes = (first, second) if second is not None else (None, first)
    # Past the first field, each is a clock's: 4:99 or 0:61 is a typo, not 5:39 or 1:01.
    if (minutes is not None and float(seconds) >= 60) or (hours is not None and int(minutes) >= 60):
        raise InputError("time", text, "M:SS or H:MM:SS with minutes and seconds below 60, e.g. 4:05")
    return int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(seconds)


_TIME_OF_DAY = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")
_SECONDS = re.compile(r"^\d+(?:\.\d+)?$")


def parse_seek(text: str, clock: ClockFace) -> float:
    """A time typed into the replay's seek field, on the clock the screen shows, as fleet seconds. On the
    fleet clock, fleet time (`parse_clock`). On a drill's, a time of day `HH:MM[:SS]` (as a drill's `at`;
    past midnight wraps), or a bare number of fleet seconds since the drill began (as its `at_s`)."""
    if clock.day_start_s is None:
        return parse_clock(text)
    typed = text.strip()
    if _SECONDS.match(typed):
        return float(typed)
    match = _TIME_OF_DAY.match(typed)
    hours, minutes, seconds = (int(match[1]), int(match[2]), int(match[3] or 0)) if match else (24, 0, 0)
    if hours > 23 or minutes > 59 or seconds > 59:
        allowed = "a time on the drill clock, HH:MM or HH:MM:SS (e.g. 02:01:30), or fleet seconds, e.g. 90"
        raise InputError("time", text, allowed)
    return float((hours * 3600 + minutes * 60 + seconds - clock.day_start_s) % 86_400)


def seek_placeholder(clock: ClockFace) -> str:
    """What the seek field takes, said in the field (its keys are said beside it: `replay.SEEK_KEYS`)."""
    if clock.day_start_s is None:
        return "fleet time: 245, 4:05 or 0:04:05"
    return f"{clock.label}: {clock.text(0)[:5]} or {clock.text(90)}, or fleet seconds: 90"
