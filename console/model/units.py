"""Numbers as an operator reads them at a glance."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def human_count(value: float) -> str:
    """12 345 678 → '12.3M', 640 → '640'."""
    magnitude = abs(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= limit:
            return f"{value / limit:.1f}{suffix}"
    return f"{value:.0f}"


def counted(count: int, noun: str) -> str:
    """3 → '3 frames', 1 → '1 frame' (a noun whose plural takes an s)."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def short_number(value: float) -> str:
    """Like human_count, but keeps small values' precision: 38 600 → '38.6k', 0.159 → '0.159'."""
    return human_count(value) if abs(value) >= 1e3 else f"{value:.3g}"


def fleet_clock(time_s: float) -> str:
    """Fleet time as H:MM:SS since the fleet's epoch began."""
    seconds = max(0, int(time_s))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


@dataclass(frozen=True)
class ClockFace:
    """How the console shows fleet times: its header's `label` and `text` for a fleet second. A drill's
    console shows the drill's own clock ("02:00:40", `Drill.human_time`), the one its briefing, panel and
    hints speak, so a trainee never has two clocks to translate between."""

    label: str
    text: Callable[[float], str]
    #: A time-of-day clock (a drill's): fleet second 0 shows as this many seconds after midnight.
    day_start_s: int | None = None


#: The fleet's own clock: time since the simulation (or the controller's session) began.
FLEET_CLOCK = ClockFace("fleet clock", fleet_clock)


def time_of_day(seconds_after_midnight: float) -> str:
    """HH:MM:SS on a 24-hour clock; past midnight wraps ("23:59:59", then "00:00:00")."""
    total = int(seconds_after_midnight) % 86_400
    return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"


def drill_clock(clock_start_s: int) -> ClockFace:
    """A drill's clock (`Drill.human_time`): fleet second 0 shows as `clock_start_s` after midnight."""
    return ClockFace("drill clock", lambda time_s: time_of_day(clock_start_s + time_s), clock_start_s)


def duration(seconds: float) -> str:
    """A span at a glance, whole seconds, each unit after a space as the rest of the console writes them
    ("60 s"): '42 s', '3 min 05 s', '1 h 02 min'. The one formatter of spans: alarm details read "after
    39s" beside "after 1m 06s" and "within 60 s"."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds // 60 % 60:02d} min"
