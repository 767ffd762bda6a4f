"""Fleet time as the report reads it: m:ss, or h:mm:ss past an hour. Pure.

One clock for the report's tables, its findings and its charts' axes: a ten-hour recording's finding said
594:01 beside a timeline row saying 9:54:01, and a three-hour chart's axis read 30:00 … 180:00.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from console.model.units import FLEET_CLOCK, ClockFace, drill_clock
from console.record.records import RecordingHeader


def clock(seconds: float | None, hours: bool | None = None) -> str:
    """`hours` None: h:mm:ss from an hour on; True or False: that format whatever the value (an axis's
    ticks all alike: 0:30:00 beside 1:00:00). Whole seconds as every clock in stormdeck reads them (0:44
    until 0:45); None reads "—"."""
    if seconds is None:
        return "—"
    whole = math.floor(seconds)
    h, rest = divmod(abs(whole), 3600)
    long_form = h > 0 if hours is None else hours
    text = f"{h}:{rest // 60:02d}:{rest % 60:02d}" if long_form else f"{abs(whole) // 60}:{rest % 60:02d}"
    return ("-" if whole < 0 else "") + text


def recorded_clock(header: RecordingHeader) -> ClockFace:
    """The clock the recorded console showed: a drill's own (its header says where the drill's clock
    started), else the fleet's — and the fleet's for a drill recorded before the header said it. The
    replay shows it; a drill's report shows it beside fleet time."""
    drill = header.drill
    if drill is not None and drill.clock_start_s is not None:
        return drill_clock(drill.clock_start_s)
    return FLEET_CLOCK


def report_clock(header: RecordingHeader) -> Callable[[float], str]:
    """Fleet second → the time a report's figures read: the drill's clock where the header says where it
    starts (the one the drill panel, its hints and objectives spoke: a trainee finds "04:09:31" in what
    they saw, not "9:31"), else the fleet clock of the report's timeline (m:ss)."""
    face = recorded_clock(header)
    return face.text if face.day_start_s is not None else clock
