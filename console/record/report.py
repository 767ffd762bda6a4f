"""The after-action report: `report.md` and its SVG charts, from one recording.

Sections, in order: the session (header), key figures, charts, objectives (for a drill), timeline (events
grouped, alarms, actions with their verdicts, confirmations), and what the seeds say should have been done.
The content comes from `review.review` and `advice.findings`; this module only lays it out.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from console.errors import InputError
from console.figures import RECOVERED_SHARE
from console.guards.thresholds import Thresholds
from console.protocol import Event
from console.record import svg
from console.record.advice import Finding, findings
from console.record.clock import clock, recorded_clock
from console.record.reader import RecordingReader, describe_action
from console.record.records import ActionRecord, DrillOutcome, ObjectiveOutcome, RecordingHeader
from console.record.review import AlarmSpan, KeyFigures, Review, review
from console.record.underway import IncidentUnderway
from console.waves import lockstep_text

SECTIONS = ("Session", "Key figures", "Charts", "Objectives", "Timeline", "What the seeds say")
#: Events of one kind at one instant are folded into one timeline row past this many.
_FOLD_AFTER = 2


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    charts: list[Path]


def write_report(
    recording_path: Path, out_dir: Path, thresholds: Thresholds | None = None, overwrite: bool = False
) -> ReportFiles:
    """Write report.md and its charts into `out_dir`: all of them or none. Each is rendered first, every
    target checked writable — and, unless `overwrite`, not there already (a report written before is not
    replaced silently) — then written beside itself and renamed into place."""
    with RecordingReader(recording_path) as recording:
        reviewed = review(recording, thresholds)
        source_name = recording_path.name
        damaged_at = recording.damaged_at
        damage = recording.damage
    thresholds = thresholds or Thresholds()
    contents = {
        out_dir / f"{name}.svg": svg.render(chart) for name, chart in _charts(reviewed, thresholds).items()
    }
    charts = list(contents)
    markdown = out_dir / "report.md"
    contents[markdown] = render_markdown(reviewed, source_name, charts, damaged_at, damage)
    _write_all(contents, out_dir, overwrite)
    return ReportFiles(markdown, charts)


def _write_all(contents: dict[Path, str], out_dir: Path, overwrite: bool = False) -> None:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(
            "--out", str(out_dir), f"a directory this user may write ({error.strerror})"
        ) from None
    for path in contents:
        if path.is_dir() or (path.exists() and not os.access(path, os.W_OK)):
            raise InputError("--out", str(out_dir), f"a directory where {path.name} may be written")
    there = [path.name for path in contents if path.exists()]
    if there and not overwrite:
        raise InputError(
            "--out",
            str(out_dir),
            f"a directory without a report in it: {', '.join(there)} already there, not replaced — give "
            "--overwrite to replace them, or another --out DIR",
        )
    staged = {path.with_name(f".{path.name}.partial"): path for path in contents}
    try:
        for partial, path in staged.items():
            partial.write_text(contents[path], encoding="utf-8")
    except OSError as error:
        for partial in staged:
            partial.unlink(missing_ok=True)
        raise InputError(
            "--out", str(out_dir), f"a directory this user may write ({error.strerror})"
        ) from None
    for partial, path in staged.items():
        os.replace(partial, path)


# --- charts ----------------------------------------------------------------------------------------------


def _charts(reviewed: Review, thresholds: Thresholds) -> dict[str, svg.Chart]:
    series = reviewed.series
    if not series.times_s:
        return {}
    markers = [svg.TimeMarker("alarm", a.since_s, a.name) for a in reviewed.alarms] + [
        svg.TimeMarker("action", a.time_s, describe_action(a)) for a in reviewed.actions
    ]
    start = series.connections[0]
    bin_times = [series.bins_start_s + (i + 1) / 10 for i in range(len(series.bins))]
    return {
        "connections": svg.Chart(
            "Total connections",
            "connections",
            [svg.Line("connections", series.times_s, series.connections, "#1e8449")],
            thresholds=[svg.Threshold("recovery line: 95 % of the start", 0.95 * start)] if start else [],
            markers=markers,
        ),
        "waves": svg.Chart(
            "Reconnect waves: attempts per 100 ms",
            "attempts / 100 ms",
            [svg.Line("attempts per 100 ms bin", bin_times, series.bins, "#7d3c98")],
            markers=markers,
        ),
        "cpu": svg.Chart(
            "Hottest node CPU",
            "CPU %",
            [svg.Line("max node CPU %", series.times_s, series.max_cpu_pct, "#c0392b")],
            thresholds=[
                svg.Threshold(
                    f"abort: {thresholds.cpu_abort_pct:g} % for {thresholds.cpu_abort_for_s:g} s",
                    thresholds.cpu_abort_pct,
                ),
                svg.Threshold(
                    f"rollout pause {thresholds.cpu_pause_pct:g} %", thresholds.cpu_pause_pct, "#7f8c8d"
                ),
            ],
            markers=markers,
            y_max=100.0,
        ),
    }


# --- markdown --------------------------------------------------------------------------------------------


def _recovery_text(f: KeyFigures) -> str:
    if f.underway is not None:
        return _recovery_underway_text(f, f.underway)
    if f.first_disconnect_s is None:
        return "no mass disconnect"
    since = f"first mass disconnect at {clock(f.first_disconnect_s)}"
    if f.recovery_s is None:
        return f"not recovered by the end ({since})"
    if f.recovery_s == 0:  # every frame after it held ≥ 95 %: there was nothing to recover from
        return f"never below 95 % of before ({since})"
    return f"{f.recovery_s:.0f} s ({since} → back to ≥ 95 % for good)"


def _recovery_underway_text(f: KeyFigures, underway: IncidentUnderway) -> str:
    """A recording begun during the incident holds no frame of the fleet before it: recovery is back to
    95 % of the clients wanting a connection at its first frame, and from the disconnect it holds before
    that frame, or else only how far into the recording — never from the first disconnect it holds, whose
    frame before it is already the incident."""
    if underway.wanting is None:
        return (
            "not measurable: the recording starts during the incident, and the connections before it are "
            "not in the recording"
        )
    line = f"≥ 95 % of the {underway.wanting:,} clients wanting a connection"
    if f.recovery_from_s is not None and f.recovery_from_s < underway.at_s:  # the disconnect it holds
        since = f"first mass disconnect at {clock(f.recovery_from_s)}, before the first frame"
        if f.recovery_s is None:
            return f"not back to {line} by the end ({since})"
        return f"{f.recovery_s:.0f} s ({since} → back to {line} for good)"
    if f.recovery_s is None:
        return f"not back to {line} by the end (the recording starts during the incident)"
    back_s = underway.at_s + f.recovery_s
    return (
        f"back to {line} for good at {clock(back_s)}, {f.recovery_s:.0f} s into the recording (it starts "
        "during the incident: how long since the incident began is not in it)"
    )


def underway_text(underway: IncidentUnderway) -> str:
    """The Key figures' line on a recording begun during the incident: what had happened, and what the
    figures are measured against instead of its first frame."""
    measured = (
        f"The minimum and the recovery are measured against those {underway.wanting:,} clients, not "
        "against the first frame"
        if underway.share is not None and underway.share < RECOVERED_SHARE
        else f"The minimum and the recovery are measured against the {underway.wanting:,} clients wanting "
        "a connection then, not against the first frame"
        if underway.wanting is not None
        else "The connections before it are not in the recording: the minimum is of the first frame, "
        "already inside the incident, and the recovery cannot be measured"
    )
    return f"The recording starts during the incident: {underway.what}. {measured}."


def _peak_text(f: KeyFigures) -> str:
    # A session without a reconnect attempt has no peak to date (it read "0 at 3:56", before its first
    # frame: the first of the tied empty bins).
    if f.peak_attempts_at_s is None:
        return f"{f.peak_attempts_per_100ms:,} (no reconnect attempts recorded)"
    return f"{f.peak_attempts_per_100ms:,} at {clock(f.peak_attempts_at_s)}"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(
    reviewed: Review,
    source_name: str,
    charts: list[Path],
    damaged_at: int | None = None,
    damage: str | None = None,
) -> str:
    lines = [f"# After-action report: {reviewed.header.fleet or source_name}", ""]
    lines += _session(reviewed, source_name, damaged_at, damage)
    lines += _figures(reviewed)
    lines += ["## Charts", ""]
    lines += [f"![{path.stem}]({path.name})" for path in charts] or ["No frames were recorded."]
    lines += ["", *_objectives(reviewed), *_timeline(reviewed), *_seeds(findings(reviewed))]
    return "\n".join(lines).rstrip() + "\n"


def _session(
    reviewed: Review, source_name: str, damaged_at: int | None, damage: str | None = None
) -> list[str]:
    header = reviewed.header
    started = dt.datetime.fromtimestamp(header.started_unix_s, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    rows = [
        ("recording", source_name),
        ("fleet", header.fleet or "—"),
        ("source", header.source.value if header.source else "—"),
        ("recorded from", header.url or "—"),
        ("started", started),
        ("stormdeck", header.stormdeck_version),
        (
            "scenario",
            f"{header.scenario or '—'}" + (f" (seed {header.seed})" if header.seed is not None else ""),
        ),
        ("drill", _drill(header)),
    ]
    if reviewed.figures is not None:
        rows.append(
            (
                "frames",
                f"{reviewed.figures.frames} ({clock(reviewed.figures.start_s)} → {clock(reviewed.figures.end_s)})",
            )
        )
    if reviewed.restarts:
        at = ", ".join(
            f"at {clock(t)} (its fleet clock back to {clock(own)})" for t, own in reviewed.restarts
        )
        rows.append(("source restarts", f"{len(reviewed.restarts)}: {at}"))
    if header.trimmed_before_s is not None:
        rows.append(("retention", f"frames before {clock(header.trimmed_before_s)} were dropped"))
    if damaged_at is not None and damage is not None:
        rows.append(
            (
                "note",
                f"the recording is read up to byte {damaged_at:,}: {damage}, not a record this stormdeck "
                "reads (an edited file?); everything before it is reported",
            )
        )
    elif damaged_at is not None:
        rows.append(
            (
                "note",
                f"the recording is damaged from byte {damaged_at:,} on (a torn last record: the recorder "
                "was stopped mid-write; or a damaged copy); everything before it is reported",
            )
        )
    return ["## Session", "", "| | |", "|---|---|", *[f"| {k} | {_cell(v)} |" for k, v in rows], ""]


def _figures(reviewed: Review) -> list[str]:
    f = reviewed.figures
    if f is None:
        return ["## Key figures", "", "No frames were recorded.", ""]
    rows = [
        ("minimum connections", f"{f.min_connections:,} at {clock(f.min_connections_at_s)}{_minimum_of(f)}"),
        ("peak attempts per 100 ms", _peak_text(f)),
        ("peak attempts per second", f"{f.peak_attempts_per_s:,.0f}"),
        (
            "recovery time",
            _recovery_text(f),
        ),
        ("mass disconnects", _disconnects_text(reviewed)),
        (
            "max node CPU",
            f"{f.max_cpu_pct:.1f} %"
            + (f" on {f.max_cpu_node}" if f.max_cpu_node else "")
            + f" at {clock(f.max_cpu_at_s)}",
        ),
        ("lockstep index", lockstep_text(f.lockstep_index, f.lockstep_note or "")),
        ("503s / handshake timeouts", _rejects_text(f)),
        ("alarms raised", str(len(reviewed.alarms))),
        ("action attempts", _action_counts(reviewed.actions)),
    ]
    return [
        "## Key figures",
        "",
        *([underway_text(f.underway), ""] if f.underway is not None else []),
        "| figure | value |",
        "|---|---|",
        *[f"| {k} | {_cell(v)} |" for k, v in rows],
        "",
    ]


def _minimum_of(f: KeyFigures) -> str:
    """What the minimum is a share of: the first frame, where the recording starts before the incident;
    begun during it, the clients wanting a connection then (its first frame is already the incident)."""
    if f.underway is None:
        share = f.min_connections / f.connections_at_start if f.connections_at_start else None
        return f" ({share:.0%} of the start)" if share is not None else ""
    if f.underway.wanting:
        return f" ({f.min_connections / f.underway.wanting:.0%} of the {f.underway.wanting:,} clients wanting a connection)"
    if f.connections_at_start:
        share = f.min_connections / f.connections_at_start
        return f" ({share:.0%} of the first frame, already during the incident)"
    return ""


def _disconnects_text(reviewed: Review) -> str:
    """How many, and which an instructor or the drill's timeline injected or the scenario's script made
    (the incident's, not the operator's: "Drain, don't disconnect" leaves them out)."""
    total = len(reviewed.mass_disconnects)
    if not reviewed.injected:
        return f"{total:,}" if total else "none"
    cuts = "; ".join(f"{clock(cut.time_s)} {injection.text}" for cut, injection in reviewed.injected)
    rest = total - len(reviewed.injected)
    return f"{total:,} ({reviewed.injected_counts()}: {cuts}" + (f"; {rest:,} not" if rest else "") + ")"


def _rejects_text(f: KeyFigures) -> str:
    """'R / T': counts at real time or from the source's running counts, saying over which fleet seconds
    when some are left out; with ≈ and how it is estimated when frames without running counts cover
    several fleet seconds each (`totals_estimated`)."""
    if not f.totals_estimated:
        counts = f"{f.rejects_total:,} / {f.timeouts_total:,}"
        if f.uncounted_s > 0:
            return (
                f"{counts} (the source's running counts: exact for the {f.counted_s:,.0f} fleet seconds "
                f"counted; the {f.uncounted_s:,.0f} s before the last second of a first frame — the "
                "recording's, or the first after the source restarted — are not: the source ran faster "
                "than real time and no earlier frame bounds them)"
            )
        if f.running_counts:
            return f"{counts} (the source's running counts: exact for all {f.counted_s:,.0f} fleet seconds)"
        return counts
    return (
        f"≈ {f.rejects_total:,} / ≈ {f.timeouts_total:,} (estimated: the source ran faster than real time, so each frame covers "
        f"several fleet seconds but carries only its last second's rates; each rate is counted for its "
        f"frame's whole span. Exact for the {f.counted_s:,.0f} of {f.covered_s:,.0f} fleet seconds the "
        f"frames carry: {f.rejects_counted:,} / {f.timeouts_counted:,})"
    )


def _action_counts(actions: list[ActionRecord]) -> str:
    if not actions:
        return "0"
    counts: dict[str, int] = {}
    for action in actions:
        counts[action.outcome] = counts.get(action.outcome, 0) + 1
    return f"{len(actions)} (" + ", ".join(f"{n} {outcome}" for outcome, n in counts.items()) + ")"


def _objectives(reviewed: Review) -> list[str]:
    lines = ["## Objectives", ""]
    outcome = reviewed.drill_outcome
    if outcome is not None:
        if outcome.score is not None:
            lines += [_score_text(outcome), ""]
        lines += ["| objective | met | points | detail |", "|---|---|---|---|"]
        lines += [
            f"| {_cell(o.name)} | {'yes' if o.met else 'no'} | {_points_text(o)} | {_cell(o.detail or '')} |"
            for o in outcome.objectives
        ]
    elif reviewed.header.drill is not None:
        # A recording of a served drill (`record`, `attach --record`) names its drill too, and nothing scores
        # one: the header cannot tell it from a `drill --record` that ended before the end screen.
        lines.append(
            f"Drill `{reviewed.header.drill.name}`: no score in the recording — it ends before the drill "
            "did, or the drill was served (`--serve`, which scores nothing)."
        )
    else:
        lines.append("Not a drill recording: no objectives to score.")
    return [*lines, ""]


def _points_text(objective: ObjectiveOutcome) -> str:
    if objective.points is None:
        return "—"
    if objective.max_points is None:
        return f"{objective.points:g}"
    return f"{objective.points:g} / {objective.max_points:g}"


def _score_text(outcome: DrillOutcome) -> str:
    """The score, and how it comes from the objectives' points and the time penalty."""
    assert outcome.score is not None
    text = f"Score: **{outcome.score:g}**" + (f" / {outcome.max_score:g}" if outcome.max_score else "")
    points = [o.points for o in outcome.objectives]
    if not points or any(p is None for p in points):
        return text  # (a drill outcome from a writer that gave no points)
    earned = sum(p for p in points if p is not None)
    if outcome.penalty is not None:
        if not outcome.penalty:
            return f"{text} — the points of the objectives met ({earned:g}), no time penalty"
        below = (
            f" ({outcome.minutes_below:g} fleet min below {outcome.penalty_below_pct:g} % of the starting "
            "connections)"
            if outcome.minutes_below is not None and outcome.penalty_below_pct is not None
            else ""
        )
        return f"{text} — the points of the objectives met ({earned:g}) − a time penalty of {outcome.penalty:g}{below}"
    if earned != outcome.score:  # an older recording: the penalty was not recorded
        return f"{text} — the points of the objectives met ({earned:g}) less the drill's time penalty"
    return text


def _drill(header: RecordingHeader) -> str:
    if header.drill is None:
        return "—"
    face = recorded_clock(header)
    if face.day_start_s is None:  # not carried (a recording older than the field): fleet time only
        return header.drill.name
    return f"{header.drill.name} ({face.label} {face.text(0)} at fleet time {clock(0)})"


def _timeline(reviewed: Review) -> list[str]:
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
        rows.append((action.time_s, 2, f"action ({action.actor})", describe_action(action), _verdict(action)))
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
        cells = [clock(t), *(text(t) for text in drill_time), _cell(kind), _cell(what), _cell(verdict)]
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


def _verdict(action: ActionRecord) -> str:
    if action.verdict is None:
        return action.detail or ""
    failed = [c for c in action.verdict.checks if not c.ok]
    text = action.verdict.level.value
    if failed:
        text += ": " + "; ".join(f"{c.name} {c.value} (limit {c.limit})" for c in failed)
    return text


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


def _seeds(found: list[Finding]) -> list[str]:
    lines = ["## What the seeds say", ""]
    if not found:
        return [*lines, "Nothing in this recording matches a situation the seeds prescribe for.", ""]
    for finding in found:
        done = {True: "done", False: "not done", None: "not visible in the recording"}[finding.done]
        if finding.done and finding.done_before_s is not None:
            done = f"done before the alarm, at {clock(finding.done_before_s)}"
        lines += [
            f"### {finding.title}",
            "",
            f"- **Seen:** {finding.evidence}.",
            f"- **The seed says:** {finding.prescription}",
            f"- **Source:** {finding.seed}.",
            f"- **In this session:** {done} — {finding.what_was_done}.",
            "",
        ]
    return lines
