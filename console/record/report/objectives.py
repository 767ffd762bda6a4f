"""The Objectives section: a drill's score, how it comes from the points and the time penalty, and each
objective with its detail. Pure."""

from __future__ import annotations

from console.record.records import DrillOutcome, ObjectiveOutcome
from console.record.report.table import cell
from console.record.review import Review


def objectives_section(reviewed: Review) -> list[str]:
    lines = ["## Objectives", ""]
    outcome = reviewed.drill_outcome
    if outcome is not None:
        if outcome.score is not None:
            lines += [_score_text(outcome), ""]
        lines += ["| objective | met | points | detail |", "|---|---|---|---|"]
        lines += [
            f"| {cell(o.name)} | {'yes' if o.met else 'no'} | {_points_text(o)} | {cell(o.detail or '')} |"
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
