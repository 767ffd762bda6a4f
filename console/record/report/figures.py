"""The Key figures section: the minimum, the peaks, the recovery, the hottest node, the lockstep index,
the 503s and timeouts (and how well they are known), the alarms and the actions, in words — their times on
the drill's clock for a drill (`report_clock`), else fleet time. Pure."""

from __future__ import annotations

from collections.abc import Callable

from console.figures import RECOVERED_SHARE
from console.record.clock import recorded_clock, report_clock
from console.record.key_figures import KeyFigures
from console.record.records import ActionRecord
from console.record.report.table import cell
from console.record.review import Review
from console.record.underway import IncidentUnderway
from console.waves import lockstep_text


def _recovery_text(f: KeyFigures, at: Callable[[float], str]) -> str:
    if f.underway is not None:
        return _recovery_underway_text(f, f.underway, at)
    if f.first_disconnect_s is None:
        return "no mass disconnect"
    since = f"first mass disconnect at {at(f.first_disconnect_s)}"
    if f.recovery_s is None:
        return f"not recovered by the end ({since})"
    if f.recovery_s == 0:  # every frame after it held ≥ 95 %: there was nothing to recover from
        return f"never below 95 % of before ({since})"
    return f"{f.recovery_s:.0f} s ({since} → back to ≥ 95 % for good)"


def _recovery_underway_text(f: KeyFigures, underway: IncidentUnderway, at: Callable[[float], str]) -> str:
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
        since = f"first mass disconnect at {at(f.recovery_from_s)}, before the first frame"
        if f.recovery_s is None:
            return f"not back to {line} by the end ({since})"
        return f"{f.recovery_s:.0f} s ({since} → back to {line} for good)"
    if f.recovery_s is None:
        return f"not back to {line} by the end (the recording starts during the incident)"
    back_s = underway.at_s + f.recovery_s
    return (
        f"back to {line} for good at {at(back_s)}, {f.recovery_s:.0f} s into the recording (it starts "
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


def _peak_text(f: KeyFigures, at: Callable[[float], str]) -> str:
    # A session without a reconnect attempt has no peak to date (it read "0 at 3:56", before its first
    # frame: the first of the tied empty bins).
    if f.peak_attempts_at_s is None:
        return f"{f.peak_attempts_per_100ms:,} (no reconnect attempts recorded)"
    return f"{f.peak_attempts_per_100ms:,} at {at(f.peak_attempts_at_s)}"


def figures_section(reviewed: Review) -> list[str]:
    f = reviewed.figures
    if f is None:
        return ["## Key figures", "", "No frames were recorded.", ""]
    at = report_clock(reviewed.header)
    rows = [
        ("minimum connections", f"{f.min_connections:,} at {at(f.min_connections_at_s)}{_minimum_of(f)}"),
        ("peak attempts per 100 ms", _peak_text(f, at)),
        ("peak attempts per second", f"{f.peak_attempts_per_s:,.0f}"),
        (
            "recovery time",
            _recovery_text(f, at),
        ),
        ("mass disconnects", _disconnects_text(reviewed, at)),
        (
            "max node CPU",
            f"{f.max_cpu_pct:.1f} %"
            + (f" on {f.max_cpu_node}" if f.max_cpu_node else "")
            + f" at {at(f.max_cpu_at_s)}",
        ),
        ("lockstep index", lockstep_text(f.lockstep_index, f.lockstep_note or "")),
        ("503s / handshake timeouts", _rejects_text(f)),
        ("alarms raised", str(len(reviewed.alarms))),
        ("action attempts", _action_counts(reviewed.actions)),
    ]
    face = recorded_clock(reviewed.header)
    # Which clock, once: a drill's times are the ones its panel, hints and objectives spoke.
    on_drill_clock = (
        [f"Times are on the {face.label} (hh:mm:ss), as the drill showed them.", ""]
        if face.day_start_s is not None
        else []
    )
    return [
        "## Key figures",
        "",
        *on_drill_clock,
        *([underway_text(f.underway), ""] if f.underway is not None else []),
        "| figure | value |",
        "|---|---|",
        *[f"| {k} | {cell(v)} |" for k, v in rows],
        "",
    ]


def _minimum_of(f: KeyFigures) -> str:
    """What the minimum is a share of: the first frame, where the recording starts before the incident;
    begun during it, the clients wanting a connection then (its first frame is already the incident)."""
    if f.underway is None:
        share = f.min_connections / f.connections_at_start if f.connections_at_start else None
        return f" ({share * 100:.0f} % of the start)" if share is not None else ""
    if f.underway.wanting:
        share = f.min_connections / f.underway.wanting
        return f" ({share * 100:.0f} % of the {f.underway.wanting:,} clients wanting a connection)"
    if f.connections_at_start:
        share = f.min_connections / f.connections_at_start
        return f" ({share * 100:.0f} % of the first frame, already during the incident)"
    return ""


def _disconnects_text(reviewed: Review, at: Callable[[float], str]) -> str:
    """How many, and which an instructor or the drill's timeline injected or the scenario's script made
    (the incident's, not the operator's: "Drain, don't disconnect" leaves them out)."""
    total = len(reviewed.mass_disconnects)
    if not reviewed.injected:
        return f"{total:,}" if total else "none"
    cuts = "; ".join(f"{at(cut.time_s)} {injection.text}" for cut, injection in reviewed.injected)
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
