"""The Objectives section: a drill's score, how it comes from the points and the time penalty, and each
objective with its detail. Pure.

Each detail is on the drill's clock, as the drill's screens said it: a recording holds the end screen's
words (`ObjectiveOutcome.detail`, with the scorer's own in `why`). One written before it holds the scorer's,
in fleet seconds ("abort criterion at 161 s"); their times are put on the report's clock (`on_clock`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from console.model.units import duration
from console.record.clock import report_clock
from console.record.records import DrillOutcome, ObjectiveOutcome
from console.record.report.table import cell
from console.record.review import Review

#: An instant in the scorer's words (console.drills.objectives: "at 161 s", "from 31 s", "by 40 s"); its
#: spans never follow these words ("for 30 s", "10 s from", "allowed 20 s").
_FLEET_SECOND = re.compile(r"\b(at|from|by) (\d+(?:\.\d+)?) s\b")


def objectives_section(reviewed: Review) -> list[str]:
    lines = ["## Objectives", ""]
    outcome = reviewed.drill_outcome
    if outcome is not None:
        at = report_clock(reviewed.header)
        if outcome.score is not None:
            lines += [_score_text(outcome), ""]
        lines += ["| objective | met | points | detail |", "|---|---|---|---|"]
        lines += [
            f"| {cell(o.name)} | {met_text(o)} | {_points_text(o)} | {cell(detail_text(o, at))} |"
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


def met_text(objective: ObjectiveOutcome) -> str:
    """'yes', 'no', or 'not needed' where the end screen said so: met only because what it answers never
    came (a halt's abort criterion, a recovery's dip); its points stand, but a 'yes' read as a thing done."""
    if objective.standing == "not needed":
        return "not needed"
    return "yes" if objective.met else "no"


def detail_text(objective: ObjectiveOutcome, at: Callable[[float], str]) -> str:
    """What became of `objective`: the end screen's words; a recording older than them (no `why`) holds
    the scorer's, whose fleet seconds are put on the report's clock (`at`)."""
    if objective.detail is None:
        return ""
    return objective.detail if objective.why is not None else on_clock(objective.detail, at)


def on_clock(scorers_words: str, at: Callable[[float], str]) -> str:
    """'abort criterion at 161 s (gw-024)' → 'abort criterion at 04:02:41 (gw-024)'; spans stay spans."""
    return _FLEET_SECOND.sub(lambda m: f"{m.group(1)} {at(float(m.group(2)))}", scorers_words)


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
            # As the end screen says it ("20 s below", not "0.33 fleet min below"): minutes_below is rounded
            # to hundredths of a minute, within a second of the fleet seconds it counted.
            f" ({duration(round(outcome.minutes_below * 60))} below {outcome.penalty_below_pct:g} % of the "
            "starting connections)"
            if outcome.minutes_below is not None and outcome.penalty_below_pct is not None
            else ""
        )
        return f"{text} — the points of the objectives met ({earned:g}) − a time penalty of {outcome.penalty:g}{below}"
    if earned != outcome.score:  # an older recording: the penalty was not recorded
        return f"{text} — the points of the objectives met ({earned:g}) less the drill's time penalty"
    return text
