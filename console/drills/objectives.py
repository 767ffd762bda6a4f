"""Objectives measured, not judged: frames, events and action records in, outcomes and a score out. Pure.

Every objective answers with `met`, the `value` measured, the `limit` it was held to, and `why` in a
sentence a trainee can act on. The drill screen, the headless runner and the after-action report all read
the same outcomes (`DrillOutcome` in a recording). What each objective keeps of the frames as they come is
its watch's (`console.drills.watches`); here is what that means, per kind, and the score with its time
penalty.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from console.drills.schema import TOTALS_KINDS, TOTALS_WORDS, Drill, Objective, Scoring
from console.drills.watches import AbortWatch, DipWatch, RolloutWatch, TotalWatch, Watch, seconds_of
from console.model.actions.answer import format_value
from console.model.units import duration
from console.protocol import Event, Frame
from console.record.records import ActionRecord, DrillOutcome, ObjectiveOutcome


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


def figure(value: float) -> str:
    """A measured figure as the panel and the end screen write it: separators from a thousand up."""
    return format_value(float(value)) if abs(value) >= 1000 else f"{value:g}"


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

    def outcome(
        self, time_s: float, said: Sequence[str | None], standings: Sequence[str | None] | None = None
    ) -> DrillOutcome:
        """The record a recording ends with, so `stormdeck report` shows the objectives: `said`, what the
        end screen says of each on the drill's clock (`console.drills.summary.said_at_end`), the scorer's
        own words (`why`, fleet seconds) beside it, and `standings`, the end screen's word for each ("met",
        "failed", "not needed": `console.drills.summary.outcome_at_end`)."""
        standings = [None] * len(self.objectives) if standings is None else standings
        return DrillOutcome(
            time_s=time_s,
            score=self.score,
            objectives=[
                ObjectiveOutcome(
                    name=item.name,
                    met=item.met,
                    standing=standing,
                    detail=detail,
                    why=item.why,
                    points=item.points,
                    max_points=item.max_points,
                )
                for item, detail, standing in zip(self.objectives, said, standings, strict=True)
            ],
            max_score=self.max_score,
            penalty=self.penalty,
            minutes_below=self.minutes_below,
            penalty_below_pct=self.penalty_below_pct,
        )


def penalty_text(score: Score, scoring: Scoring) -> str:
    """The time penalty as the end screen and the terminal say it; a drill that charges none says so, so
    its minutes below the floor do not read as a penalty of nothing."""
    # As `duration` writes a span everywhere else ("7 min 26 s", not "7.43 min"); `minutes_below` is rounded
    # to hundredths of a minute, within a second of the fleet seconds it counted.
    spent = duration(round(score.minutes_below * 60))
    below = f"{spent} below {scoring.penalty_below_pct:g} % of connections"
    if scoring.penalty_per_min == 0:
        return f"no time penalty in this drill ({below})"
    if score.minutes_below == 0:  # "penalty −0 (0 min below …)" read as a charge of nothing
        return f"no time penalty: connections never below {scoring.penalty_below_pct:g} %"
    return f"penalty −{score.penalty:g} ({below})"


def penalty_rule(scoring: Scoring) -> str:
    """The time penalty's rule, as the briefing states it before the clock starts (the drill screen then
    shows it accruing, `console.drills.countdown.penalty_so_far`)."""
    if scoring.penalty_per_min == 0:
        return "no time penalty in this drill"
    cap = f", at most −{scoring.max_penalty:g}" if scoring.max_penalty > 0 else ""
    return (
        f"time penalty: −{scoring.penalty_per_min:g} points a minute with connections below "
        f"{scoring.penalty_below_pct:g} % of the start{cap}"
    )


def score_drill(
    drill: Drill, frames: Sequence[Frame], events: Sequence[Event], actions: Sequence[ActionRecord]
) -> Score:
    """Measure every objective of `drill` over a run and score it: points of the objectives met, minus
    `penalty_per_min` for each fleet minute below `penalty_below_pct` of the starting connections."""
    return RunMeasures.of(drill, frames).score(actions)


#: An objective measured on its own (`measure`) has no score to take a penalty from.
_NO_PENALTY = Scoring(penalty_per_min=0.0, penalty_below_pct=95.0, max_penalty=0.0)


def measure(
    objective: Objective, frames: Sequence[Frame], events: Sequence[Event], actions: Sequence[ActionRecord]
) -> Measured:
    run = RunMeasures((objective,), _NO_PENALTY)
    for frame in frames:
        run.add(frame)
    return run.measure(0, actions)


class RunMeasures:
    """What the objectives read of a run's frames, folded in one frame at a time (`add`), so a run is
    measured in memory of the size of one frame whatever its length: the headless runner kept every frame
    for scoring at the end, and a 3 h drill of 480 nodes reached 4.6 GB (measured). The events are not
    read; the action records (a few) are passed to `score` and `measure`.

    What reads totals (the baseline, the lowest connections, the time below the floor, dips, totals over
    their line) reads every fleet second a sped-up frame folds (`seconds_of`), so a drill scores the same
    from ×60 frames as from one frame a second; the rollout's completion is read from the second it reports.
    What reads nodes — the abort criterion's CPU stretch — reads each frame's last second only: a frame
    carries one second of nodes."""

    def __init__(self, objectives: Sequence[Objective], scoring: Scoring) -> None:
        self.objectives = tuple(objectives)
        self.scoring = scoring
        self.last: Frame | None = None  # the newest frame: its time ends the run
        self.baseline = 1.0  # 100 % of connections: what the fleet held at the first frame
        self.lowest: tuple[int, float] | None = None  # fewest connections, at the first frame with them
        self.seconds_below = 0.0  # fleet seconds below the scoring floor
        self._floor = 0.0
        self._watches = [_watch(objective) for objective in self.objectives]

    @classmethod
    def of(cls, drill: Drill, frames: Sequence[Frame] = ()) -> RunMeasures:
        run = cls(drill.objectives, drill.scoring)
        for frame in frames:
            run.add(frame)
        return run

    def add(self, frame: Frame) -> None:
        seconds = seconds_of(frame)
        if self.last is None:
            self.baseline = float(max(seconds[0].totals.connections, 1))
            self._floor = self.baseline * self.scoring.penalty_below_pct / 100.0
        self.last = frame
        for second in seconds:
            connections = second.totals.connections
            if self.lowest is None or connections < self.lowest[0]:
                self.lowest = (connections, second.time_s)
            if connections < self._floor:
                self.seconds_below += second.span_s
        for watch in self._watches:
            if watch is not None:
                watch.add(frame, seconds, self.baseline)

    def measure(self, index: int, actions: Sequence[ActionRecord]) -> Measured:
        """Objective `index` (of those given) measured over the frames so far and `actions`."""
        objective = self.objectives[index]
        reading = _MEASURES[objective.kind]
        met, value, limit, why = reading(objective.params, self, self._watches[index], actions)
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

    def watch(self, index: int) -> Watch | None:
        """What objective `index` keeps of the frames (None: it reads what every run keeps, or only the
        action records): the drill screen reads its deadline from it (`console.drills.countdown`)."""
        return self._watches[index]

    @property
    def below_floor_now(self) -> bool:
        """Whether the newest fleet second is below the scoring floor: the time penalty is accruing."""
        return self.last is not None and self.last.totals.connections < self._floor

    def abort_criterion(self, index: int) -> tuple[float, str] | None:
        """For objective `index`, a `halt_within`: when its abort criterion was first met, and on which
        node (as `watches.abort_criterion_at` over the frames so far); None until then, or for another kind."""
        watch = self._watches[index]
        return watch.criterion if isinstance(watch, AbortWatch) else None

    def score(self, actions: Sequence[ActionRecord]) -> Score:
        """Every objective measured, and the score: their points, less the time below the floor."""
        measured = [self.measure(i, actions) for i in range(len(self.objectives))]
        minutes_below = self.seconds_below / 60.0
        penalty = min(self.scoring.penalty_per_min * minutes_below, self.scoring.capped_penalty)
        earned = sum(item.points for item in measured)
        return Score(
            score=round(max(0.0, earned - penalty), 1),
            max_score=sum(objective.points for objective in self.objectives),
            penalty=round(penalty, 1),
            minutes_below=round(minutes_below, 2),
            objectives=measured,
            penalty_below_pct=self.scoring.penalty_below_pct,
        )


@dataclass
class MeasuredRun:
    """A drill's run as its frames are measured (`RunMeasures`): the headless runner's and the drill
    screen's alike, neither keeping more than the newest frame."""

    drill: Drill
    measures: RunMeasures = field(init=False)

    def __post_init__(self) -> None:
        self.measures = RunMeasures.of(self.drill)

    @property
    def last_frame(self) -> Frame | None:
        return self.measures.last

    @property
    def time_s(self) -> float:
        """The fleet time the run reached (its last frame's; 0 before any)."""
        return self.measures.last.time_s if self.measures.last is not None else 0.0


#: The unit of each kind's value and limit (totals_max: its field's, by the protocol's unit suffixes).
_UNITS = {"connections_floor": " %", "recovery": " s", "halt_within": " s", "rollout_completed": " s"}


def unit_of(objective: Objective) -> str:
    if objective.kind in TOTALS_KINDS:
        return _field_unit(str(objective.params["field"]))
    return _UNITS.get(objective.kind, "")


def _field_unit(name: str) -> str:
    """A `Totals` field's unit, by the protocol's unit suffixes."""
    suffixes = (("_per_s", "/s"), ("_pct", " %"), ("_ms", " ms"), ("_s", " s"))
    return next((unit for suffix, unit in suffixes if name.endswith(suffix)), "")


def _watch(objective: Objective) -> Watch | None:
    """What `objective` needs kept of the frames (None: it reads the totals every run keeps, or only the
    action records)."""
    params = objective.params
    if objective.kind == "halt_within":
        return AbortWatch(float(params["cpu_pct"]), float(params["for_s"]))
    if objective.kind == "recovery":
        return DipWatch(float(params["pct"]))
    if objective.kind == "totals_max":
        return TotalWatch(str(params["field"]), float(params["max"]))
    if objective.kind == "totals_min":
        return TotalWatch(str(params["field"]), float(params["min"]), at_least=True)
    if objective.kind == "rollout_completed":
        return RolloutWatch()
    return None


Outcome = tuple[bool, float | None, float | None, str]


def _connections_floor(params: dict[str, Any], run: RunMeasures, *_: object) -> Outcome:
    limit = float(params["min_pct"])
    if run.lowest is None:
        return False, None, limit, "no frames: the drill did not run"
    connections, time_s = run.lowest
    low_pct = 100.0 * connections / run.baseline
    if low_pct >= limit:
        return True, low_pct, limit, f"connections stayed at or above {low_pct:.1f} % of the start"
    return False, low_pct, limit, f"connections fell to {low_pct:.1f} % at {time_s:.0f} s"


def _recovery(params: dict[str, Any], run: RunMeasures, dips: DipWatch, _actions: object) -> Outcome:
    """Every dip below `pct` is over within `within_s`: the longest stretch below it is measured (a dip
    still open at the end counts up to the last frame)."""
    pct, within_s = dips.pct, float(params["within_s"])
    longest_s, longest_from = dips.longest_until(run.last.time_s) if run.last else (0.0, None)
    if longest_from is None:
        return True, 0.0, within_s, f"connections never fell below {pct:g} %: nothing to recover from"
    still = " (still below at the last frame)" if dips.below_since == longest_from else ""
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


def applied_times(actions: Sequence[ActionRecord], name: str) -> list[float]:
    """The fleet times `name` took effect, in the records' order."""
    return [a.time_s for a in actions if a.action == name and a.outcome in APPLIED]


def _halt_within(
    params: dict[str, Any], _run: RunMeasures, abort: AbortWatch, actions: Sequence[ActionRecord]
) -> Outcome:
    cpu_pct, for_s, within_s = abort.cpu_pct, abort.for_s, float(params["within_s"])
    halts = applied_times(actions, "rollout_halt")
    if abort.criterion is None:
        return True, None, within_s, f"no serving node stayed above {cpu_pct:g} % CPU for {for_s:g} s"
    at_s, node = abort.criterion
    answered = [t for t in halts if t <= at_s + within_s]
    if not answered:
        later = f"; halted only at {halts[0]:.0f} s" if halts else "; never halted"
        why = f"abort criterion at {at_s:.0f} s ({node} above {cpu_pct:g} % for {for_s:g} s){later}"
        return False, (halts[0] - at_s) if halts else None, within_s, why
    delay_s = max(0.0, answered[0] - at_s)
    return True, delay_s, within_s, f"abort criterion at {at_s:.0f} s ({node}); halted at {answered[0]:.0f} s"


def _no_override(_params: object, _run: object, _watch: object, actions: Sequence[ActionRecord]) -> Outcome:
    used = [a for a in actions if a.outcome == "overridden"]
    if not used:
        return True, 0.0, 0.0, "no admin override used"
    return (
        False,
        float(len(used)),
        0.0,
        f"{len(used)} override(s), first {used[0].action} at {used[0].time_s:.0f} s",
    )


def _totals(params: dict[str, Any], _run: RunMeasures, total: TotalWatch, _actions: object) -> Outcome:
    """A total kept under its most (`totals_max`) or over its least (`totals_min`), allowing `grace_s` on
    the wrong side: value, its worst reading (the peak, the lowest)."""
    name, limit, grace_s = total.name, total.limit, float(params["grace_s"])
    if total.worst is None:
        return False, None, limit, "no frames: the drill did not run"
    met = total.beyond_s <= grace_s
    # In the operator's words, figures with their unit and separators ("91,702/s"); the time over the line
    # first, as it is what the objective is met or failed on (the peak alone once read as the failure).
    unit, words = _field_unit(name), TOTALS_WORDS.get(name, name)
    line, worst = f"{figure(limit)}{unit}", f"{figure(total.worst)}{unit}"
    side, reading = total.side
    if total.beyond_s == 0:
        if total.at_least:
            return met, total.worst, limit, f"{words} at its lowest {worst}, never under {line}"
        return met, total.worst, limit, f"{words} peaked at {worst}, never above {line}"
    why = f"{words} {side} {line} for {duration(total.beyond_s)}, allowed {duration(grace_s)} ({reading} {worst})"
    return met, total.worst, limit, why


def matching_actions(
    params: dict[str, Any], actions: Sequence[ActionRecord]
) -> tuple[list[ActionRecord], list[ActionRecord]]:
    """An `action_used` objective's actions: those applied with the request it asks for, and of them those
    by its `by_s` (the ones that count)."""
    wanted, where = str(params["action"]), dict(params["where"])
    by_s = float(params.get("by_s", math.inf))  # fleet time the action must come by (inf: any time)
    applied = [
        a
        for a in actions
        if a.action == wanted
        and a.outcome in APPLIED
        and all(a.request.get(key) == value for key, value in where.items())
    ]
    return applied, [a for a in applied if a.time_s <= by_s]


def _action_used(
    params: dict[str, Any], _run: object, _watch: object, actions: Sequence[ActionRecord]
) -> Outcome:
    wanted, where, min_count = str(params["action"]), dict(params["where"]), int(params["min_count"])
    by_s = float(params.get("by_s", math.inf))
    applied, matching = matching_actions(params, actions)
    # The request's fields as the forms and `stormdeck act` name them (mode=drain), not a Python dict.
    fields = " ".join(f"{key}={value}" for key, value in where.items())
    shape = f"{wanted}" + (f" with {fields}" if where else "")
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


def _rollout_completed(
    params: dict[str, Any], run: RunMeasures, rollout: RolloutWatch, _actions: object
) -> Outcome:
    within_s = float(params["within_s"])
    done = rollout.completed_at_s
    if done is None and rollout.completed_after_end:
        why = "the rollout did not complete within the drill (it completed just after)"
        return False, None, within_s, why
    if done is None:
        last = run.last
        state = last.rollout.state_said() if last is not None and last.rollout else "none"
        return False, None, within_s, f"the rollout did not complete (last state: {state})"
    return done <= within_s, done, within_s, f"the rollout completed at {done:.0f} s"


_MEASURES: dict[str, Callable[..., Outcome]] = {
    "connections_floor": _connections_floor,
    "recovery": _recovery,
    "halt_within": _halt_within,
    "no_override": _no_override,
    "totals_max": _totals,
    "totals_min": _totals,
    "action_used": _action_used,
    "rollout_completed": _rollout_completed,
}
