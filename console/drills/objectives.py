"""Objectives measured, not judged: frames, events and action records in, outcomes and a score out. Pure.

Every objective answers with `met`, the `value` measured, the `limit` it was held to, and `why` in a
sentence a trainee can act on. The drill screen, the headless runner and the after-action report all read
the same outcomes (`DrillOutcome` in a recording).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from console.drills.schema import Drill, Objective
from console.protocol import Event, Frame, NodeState
from console.record.records import ActionRecord, DrillOutcome, ObjectiveOutcome

#: Node states still serving connections: the abort criterion looks at these (a restarting node's CPU is
#: not a signal; outage seed: "CPU > 80 % for 30 s on a surviving node").
SERVING = (NodeState.READY, NodeState.DRAINING)


@dataclass(frozen=True)
class Measured:
    name: str
    kind: str
    met: bool
    value: float | None
    limit: float | None
    why: str
    points: float  # earned
    max_points: float
    unit: str = ""  # of value and limit, as written after a number: " %", " s", "/s", or none (a count)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def reading(self) -> str:
        """`value 16730/s, limit 1000/s`: the measure and its line, with their unit."""
        value = "–" if self.value is None else f"{self.value:g}{self.unit}"
        limit = "–" if self.limit is None else f"{self.limit:g}{self.unit}"
        return f"value {value}, limit {limit}"


@dataclass(frozen=True)
class Score:
    score: float
    max_score: float
    penalty: float
    minutes_below: float  # fleet minutes with connections below the scoring floor
    objectives: list[Measured] = field(default_factory=list)
    penalty_below_pct: float = 95.0  # the scoring floor, % of the starting connections

    def as_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "max_score": self.max_score,
            "penalty": self.penalty,
            "minutes_below": self.minutes_below,
            "objectives": [objective.as_dict() for objective in self.objectives],
        }

    def outcome(self, time_s: float) -> DrillOutcome:
        """The record a recording ends with, so `stormdeck report` shows the objectives."""
        return DrillOutcome(
            time_s=time_s,
            score=self.score,
            objectives=[
                ObjectiveOutcome(
                    name=item.name,
                    met=item.met,
                    detail=item.why,
                    points=item.points,
                    max_points=item.max_points,
                )
                for item in self.objectives
            ],
            max_score=self.max_score,
            penalty=self.penalty,
            minutes_below=self.minutes_below,
            penalty_below_pct=self.penalty_below_pct,
        )


def score_drill(
    drill: Drill, frames: Sequence[Frame], events: Sequence[Event], actions: Sequence[ActionRecord]
) -> Score:
    """Measure every objective of `drill` over a run and score it: points of the objectives met, minus
    `penalty_per_min` for each fleet minute below `penalty_below_pct` of the starting connections."""
    measured = [measure(objective, frames, events, actions) for objective in drill.objectives]
    baseline = baseline_connections(frames)
    floor = baseline * drill.scoring.penalty_below_pct / 100.0
    seconds_below = sum(frame.span_s or 1.0 for frame in frames if frame.totals.connections < floor)
    minutes_below = seconds_below / 60.0
    penalty = min(drill.scoring.penalty_per_min * minutes_below, drill.scoring.capped_penalty)
    earned = sum(item.points for item in measured)
    return Score(
        score=round(max(0.0, earned - penalty), 1),
        max_score=drill.max_points,
        penalty=round(penalty, 1),
        minutes_below=round(minutes_below, 2),
        objectives=measured,
        penalty_below_pct=drill.scoring.penalty_below_pct,
    )


def measure(
    objective: Objective, frames: Sequence[Frame], events: Sequence[Event], actions: Sequence[ActionRecord]
) -> Measured:
    met, value, limit, why = _MEASURES[objective.kind](objective.params, frames, events, actions)
    return Measured(
        name=objective.name,
        kind=objective.kind,
        met=met,
        value=None if value is None else round(value, 2),
        limit=limit,
        why=why,
        points=objective.points if met else 0.0,
        max_points=objective.points,
        unit=unit_of(objective),
    )


#: The unit of each kind's value and limit (totals_max: its field's, by the protocol's unit suffixes).
_UNITS = {"connections_floor": " %", "recovery": " s", "halt_within": " s", "rollout_completed": " s"}


def unit_of(objective: Objective) -> str:
    if objective.kind == "totals_max":
        name = str(objective.params["field"])
        suffixes = (("_per_s", "/s"), ("_pct", " %"), ("_ms", " ms"), ("_s", " s"))
        return next((unit for suffix, unit in suffixes if name.endswith(suffix)), "")
    return _UNITS.get(objective.kind, "")


def baseline_connections(frames: Sequence[Frame]) -> float:
    """100 % of connections: what the fleet held when the drill started."""
    return float(max(frames[0].totals.connections, 1)) if frames else 1.0


def abort_criterion_at(frames: Sequence[Frame], cpu_pct: float, for_s: float) -> tuple[float, str] | None:
    """When a serving node first stayed above `cpu_pct` for `for_s` seconds in a row, and which node."""
    above_since: dict[str, float] = {}
    for frame in frames:
        for node in frame.nodes:
            if node.state in SERVING and node.cpu_pct > cpu_pct:
                since = above_since.setdefault(node.id, frame.time_s)
                if frame.time_s - since >= for_s:
                    return frame.time_s, node.id
            else:
                above_since.pop(node.id, None)
    return None


Outcome = tuple[bool, float | None, float | None, str]


def _connections_floor(params: dict[str, Any], frames: Sequence[Frame], *_: object) -> Outcome:
    limit = float(params["min_pct"])
    if not frames:
        return False, None, limit, "no frames: the drill did not run"
    baseline = baseline_connections(frames)
    lowest = min(frames, key=lambda frame: frame.totals.connections)
    low_pct = 100.0 * lowest.totals.connections / baseline
    if low_pct >= limit:
        return True, low_pct, limit, f"connections stayed at or above {low_pct:.1f} % of the start"
    return False, low_pct, limit, f"connections fell to {low_pct:.1f} % at {lowest.time_s:.0f} s"


def _recovery(params: dict[str, Any], frames: Sequence[Frame], *_: object) -> Outcome:
    """Every dip below `pct` is over within `within_s`: the longest stretch below it is measured (a dip
    still open at the end counts up to the last frame)."""
    pct, within_s = float(params["pct"]), float(params["within_s"])
    baseline = baseline_connections(frames)
    longest_s, longest_from, below_since = 0.0, None, None
    for frame in frames:
        below = 100.0 * frame.totals.connections / baseline < pct
        if below and below_since is None:
            below_since = frame.time_s
        # A dip lasts until the first frame back at `pct` (or, still open, until the last frame).
        if below_since is not None and (not below or frame is frames[-1]):
            if longest_from is None or frame.time_s - below_since > longest_s:
                longest_s, longest_from = frame.time_s - below_since, below_since
            if not below:
                below_since = None
    if longest_from is None:
        return True, 0.0, within_s, f"connections never fell below {pct:g} %: nothing to recover from"
    still = (
        " (still below at the last frame)" if below_since is not None and below_since == longest_from else ""
    )
    why = f"longest stretch below {pct:g} %: {longest_s:.0f} s from {longest_from:.0f} s{still}"
    return longest_s <= within_s, longest_s, within_s, why


#: The outcomes of an action that took effect (an override applies it too).
APPLIED = ("applied", "overridden")


def first_applied(actions: Sequence[ActionRecord]) -> dict[str, float]:
    """Each action name → the fleet time it first took effect (what makes a hint moot)."""
    first: dict[str, float] = {}
    for action in sorted(actions, key=lambda a: a.time_s):
        if action.outcome in APPLIED:
            first.setdefault(action.action, action.time_s)
    return first


def _halt_within(
    params: dict[str, Any], frames: Sequence[Frame], _events: object, actions: Sequence[ActionRecord]
) -> Outcome:
    cpu_pct, for_s, within_s = float(params["cpu_pct"]), float(params["for_s"]), float(params["within_s"])
    criterion = abort_criterion_at(frames, cpu_pct, for_s)
    halts = [a.time_s for a in actions if a.action == "rollout_halt" and a.outcome in APPLIED]
    if criterion is None:
        return True, None, within_s, f"no serving node stayed above {cpu_pct:g} % CPU for {for_s:g} s"
    at_s, node = criterion
    answered = [t for t in halts if t <= at_s + within_s]
    if not answered:
        later = f"; halted only at {halts[0]:.0f} s" if halts else "; never halted"
        why = f"abort criterion at {at_s:.0f} s ({node} above {cpu_pct:g} % for {for_s:g} s){later}"
        return False, (halts[0] - at_s) if halts else None, within_s, why
    delay_s = max(0.0, answered[0] - at_s)
    return True, delay_s, within_s, f"abort criterion at {at_s:.0f} s ({node}); halted at {answered[0]:.0f} s"


def _no_override(
    _params: object, _frames: object, _events: object, actions: Sequence[ActionRecord]
) -> Outcome:
    used = [a for a in actions if a.outcome == "overridden"]
    if not used:
        return True, 0.0, 0.0, "no admin override used"
    return (
        False,
        float(len(used)),
        0.0,
        f"{len(used)} override(s), first {used[0].action} at {used[0].time_s:.0f} s",
    )


def _totals_max(params: dict[str, Any], frames: Sequence[Frame], *_: object) -> Outcome:
    name, limit, grace_s = str(params["field"]), float(params["max"]), float(params["grace_s"])
    if not frames:
        return False, None, limit, "no frames: the drill did not run"
    peak = max(float(getattr(frame.totals, name)) for frame in frames)
    over_s = sum(frame.span_s or 1.0 for frame in frames if float(getattr(frame.totals, name)) > limit)
    met = over_s <= grace_s
    why = f"{name} peaked at {peak:g}; {over_s:.0f} s above {limit:g} (allowed {grace_s:g} s)"
    return met, peak, limit, why


def _action_used(
    params: dict[str, Any], _frames: object, _events: object, actions: Sequence[ActionRecord]
) -> Outcome:
    wanted, where, min_count = str(params["action"]), dict(params["where"]), int(params["min_count"])
    by_s = float(params.get("by_s", math.inf))  # fleet time the action must come by (inf: any time)
    applied = [
        a
        for a in actions
        if a.action == wanted
        and a.outcome in APPLIED
        and all(a.request.get(key) == value for key, value in where.items())
    ]
    matching = [a for a in applied if a.time_s <= by_s]
    shape = f"{wanted}" + (f" with {where}" if where else "")
    when = "" if by_s == math.inf else f" by {by_s:g} s"
    late = [a.time_s for a in applied if a.time_s > by_s]
    after = f"; {len(late)} later (the first at {min(late):.0f} s)" if late else ""
    met = len(matching) >= min_count
    return (
        met,
        float(len(matching)),
        float(min_count),
        f"{len(matching)} applied {shape}{when} (needed {min_count}){after}",
    )


def _rollout_completed(params: dict[str, Any], frames: Sequence[Frame], *_: object) -> Outcome:
    within_s = float(params["within_s"])
    done = next(
        (f.time_s for f in frames if f.rollout is not None and f.rollout.state.value == "completed"), None
    )
    if done is None:
        state = frames[-1].rollout.state.value if frames and frames[-1].rollout else "none"
        return False, None, within_s, f"the rollout did not complete (last state: {state})"
    return done <= within_s, done, within_s, f"the rollout completed at {done:.0f} s"


_MEASURES: dict[str, Callable[..., Outcome]] = {
    "connections_floor": _connections_floor,
    "recovery": _recovery,
    "halt_within": _halt_within,
    "no_override": _no_override,
    "totals_max": _totals_max,
    "action_used": _action_used,
    "rollout_completed": _rollout_completed,
}
