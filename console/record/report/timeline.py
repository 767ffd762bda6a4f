"""The Timeline section: events (alike ones at one instant folded), alarms raised and cleared, actions
with their verdicts and confirmations, in time order — on the drill's clock too, for a drill. Pure."""

from __future__ import annotations

import re

from console.protocol import Event, VerdictLevel
from console.record.alarm_spans import AlarmSpan
from console.record.clock import clock, recorded_clock
from console.record.reader import describe_action
from console.record.records import ActionRecord
from console.record.report.table import cell
from console.record.review import Review

#: Events of one kind at one instant are folded into one timeline row past this many.
_FOLD_AFTER = 2


def timeline_section(reviewed: Review) -> list[str]:
    rows: list[tuple[float, int, str, str, str]] = []  # time, order, kind, what, verdict
    if reviewed.underway is not None:  # first: the rows after it are what the recording holds
        rows.append(
            (
                reviewed.underway.at_s,
                -1,
                "recording",
                f"starts during the incident: {reviewed.underway.what}",
                "",
            )
        )
    for time_s, kind, what in _folded_events(reviewed):
        rows.append((time_s, 0, kind, what, ""))
    for alarm in reviewed.alarms:
        rows += alarm_timeline_rows(alarm)
    for action in reviewed.actions:
        rows.append(
            (action.time_s, 2, f"action ({action.actor})", describe_action(action), verdict_text(action))
        )
    for answer in reviewed.confirmations:
        typed = f" (typed {answer.typed!r})" if answer.typed else ""
        target = f" {answer.target}" if answer.target else ""
        rows.append(
            (
                answer.time_s,
                3,
                f"confirmation ({answer.actor})",
                f"{answer.action}{target}: {answer.answer}{typed}",
                "",
            )
        )
    rows.sort(key=lambda r: (r[0], r[1]))
    lines = ["## Timeline", ""]
    if not rows:
        return [*lines, "Nothing happened: no events, alarms or actions.", ""]
    # A drill's objectives, hints and story speak its clock ("by 02:00:40"): each row says it too.
    face = recorded_clock(reviewed.header)
    drill_time = [face.text] if face.day_start_s is not None else []
    columns = ["time", *(face.label for _ in drill_time), "kind", "what", "verdict"]
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for t, _, kind, what, verdict in rows:
        cells = [clock(t), *(text(t) for text in drill_time), cell(kind), cell(what), cell(verdict)]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def alarm_timeline_rows(alarm: AlarmSpan) -> list[tuple[float, int, str, str, str]]:
    """An alarm's rows of the timeline: raised, with what it said; cleared, with what it said at its worst
    and when (its words at the raise may be of a drop just begun, and its last of one nearly over: the
    console's panel reports the worst once it cleared, and the report says the same)."""
    rows = [(alarm.since_s, 1, f"alarm ({alarm.severity})", f"{alarm.name} raised: {alarm.message}", "")]
    if alarm.cleared_s is not None:
        what = alarm.name
        if alarm.worst_message and alarm.worst_s is not None and alarm.worst_message != alarm.message:
            what += f"; at its worst, {clock(alarm.worst_s)}: {alarm.worst_message}"
        rows.append((alarm.cleared_s, 1, "alarm cleared", what, ""))
    return rows


def verdict_text(action: ActionRecord) -> str:
    """The verdict's level, the failed checks that set it and then those that only warn, called notes as the
    console's dialog and `stormdeck act` call them (`check_mark`): "ok: cpu_now_pct 82.4 (limit 75.0)" — an
    add_capacity whose hottest-node check only warns — read as an ok past its limit (trainee reviewer). A
    check that does not say its level (an older recording's) is taken as the verdict's."""
    verdict = action.verdict
    if verdict is None:
        return action.detail or ""
    failed = [c for c in verdict.checks if not c.ok]
    notes = [c for c in failed if (c.level or verdict.level) is VerdictLevel.OK]
    said = [verdict.level.value]
    for checks, label in (([c for c in failed if c not in notes], ""), (notes, "; note, only warns")):
        if checks:
            said.append(f"{label}: " + "; ".join(f"{c.name} {c.value} (limit {c.limit})" for c in checks))
    return "".join(said)


_NUMBER = re.compile(r"\d+")


def _alike(event: Event) -> str:
    """What an event says, whichever node it is on and whatever its counts: events of one instant fold
    together only when they say the same thing (at 0:40 of a rolling restart six nodes come back and the
    next six go down — one row "×12: … back in rotation" hid the batch that went down)."""
    message = event.message.replace(event.node, "") if event.node else event.message
    return _NUMBER.sub("#", message)


def _folded_events(reviewed: Review) -> list[tuple[float, str, str]]:
    """Events alike at one instant become one row past a few: a fleet restart is 480 node events."""
    groups: dict[tuple[float, str, str], list[Event]] = {}
    for event in reviewed.events:
        injection = reviewed.injection_of(event)
        kind = event.kind if injection is None else f"{event.kind} ({injection.verb} by {injection.by})"
        groups.setdefault((event.time_s, kind, _alike(event)), []).append(event)
    rows = []
    for (time_s, kind, _), events in groups.items():
        if len(events) <= _FOLD_AFTER:
            rows += [(time_s, kind, e.message) for e in events]
            continue
        others = [node for e in events[1:] for node in e.node_ids()]  # the first is in its own message
        shown = ", ".join(others[:3]) + (", …" if len(others) > 3 else "")
        rows.append(
            (time_s, kind, f"×{len(events)}: {events[0].message} — and {len(events) - 1} more ({shown})")
        )
    return rows
