"""What the trainee reads of each objective, on the drill's clock, and of the time penalty as it accrues. Pure.

Every time is the drill's clock, the one the header, the briefing and the hints speak ("04:02:41"), and an
objective with a deadline says it and the time left ("halt by 04:04:11 — 42 s left"), counting down as the
frames come. Once the drill is over (`DrillTime.over`) each says what became of it ("not halted by
04:04:11"): the end screen and the terminal's summary read these final statuses too
(`console.drills.summary`), and so do the recording and its report (`summary.said_at_end`). The scorer's
`why` (console.drills.objectives) speaks fleet seconds ("abort criterion at 161 s"), as the headless
runner's scripts (`at_s`) and `--json` do; beside a clock reading 04:03:11 it left the trainee to do the sum. The penalty is said as it accrues ("−0.3 so far: 9 s
below 97 % of connections"): the panel's "99.7/100 so far" had no word for the missing 0.3.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from console.drills.objectives import (
    Measured,
    RunMeasures,
    Score,
    applied_times,
    figure,
    matching_actions,
    unit_of,
)
from console.drills.schema import TOTALS_WORDS
from console.drills.watches import AbortWatch, DipWatch, RolloutWatch, TotalWatch
from console.model.thresholds import Level
from console.model.units import duration
from console.record.records import ActionRecord


@dataclass(frozen=True)
class DrillTime:
    """Where the run stands: its fleet second, the drill's end, and the drill's clock to say them in."""

    time_s: float
    end_s: float
    clock: Callable[[float], str]  # fleet second → the drill clock, `Drill.human_time`
    #: Scored (`DrillProgress.finish`, a headless run's end): over even if its last frame came short of `end_s`.
    ended: bool = False

    @property
    def over(self) -> bool:
        """The drill is over: nothing is due any more, what was not done was not done."""
        return self.ended or self.time_s >= self.end_s

    def at(self, fleet_s: float) -> str:
        return self.clock(fleet_s)

    def by(self, due_s: float) -> str:
        """'by 04:04:11 — 42 s left'."""
        return f"by {self.at(due_s)} — {duration(due_s - self.time_s)} left"

    def deadline(self, due_s: float) -> str:
        """A deadline passed, or the drill's end where it came first: '04:04:11', "the drill's end, 04:05:00"."""
        if due_s >= self.end_s:
            return f"the drill's end, {self.at(self.end_s)}"
        return self.at(due_s)


def objective_status(
    run: RunMeasures,
    index: int,
    measured: Measured,
    actions: Sequence[ActionRecord],
    now: DrillTime,
    due_s: float | None,
    failed: bool,
) -> str:
    """Objective `index` of `run` as the trainee reads it now: `due_s` its deadline (`live.deadline_s`),
    `failed` whether nothing can meet it any more."""
    objective = run.objectives[index]
    params, watch = objective.params, run.watch(index)
    if isinstance(watch, AbortWatch):
        return _halt(watch, float(params["within_s"]), applied_times(actions, "rollout_halt"), now, due_s)
    if objective.kind == "action_used":
        return _action(params, actions, now, due_s, measured.met, failed)
    if isinstance(watch, RolloutWatch):
        return _rollout(run, watch, now, due_s, measured.met)
    if isinstance(watch, DipWatch):
        return _dip(watch, float(params["within_s"]), now, due_s, failed)
    if isinstance(watch, TotalWatch):
        return _total(watch, float(params["grace_s"]), unit_of(objective), run, now, due_s, failed)
    if objective.kind == "connections_floor":
        return _floor(run, now, measured.met)
    return _overrides(actions, now)


def _halt(watch: AbortWatch, within_s: float, halts: list[float], now: DrillTime, due_s: float | None) -> str:
    line = f"over {watch.cpu_pct:g} % CPU for {watch.for_s:g} s"
    if watch.criterion is None or due_s is None:
        if halts:
            return f"halted {now.at(halts[0])}, before any node was {line}"
        if now.over:
            return f"not needed: the abort criterion was never reached (no node was {line})"
        return f"halt within {duration(within_s)} once a node is {line} (none yet)"
    at_s, node = watch.criterion
    criterion = f"abort criterion {now.at(at_s)} ({node})"
    answered = [t for t in halts if t <= due_s]
    if answered:
        if answered[0] <= at_s:
            return f"halted {now.at(answered[0])}, before the {criterion}"
        after = duration(answered[0] - at_s)
        return f"halted {now.at(answered[0])}, {after} after the abort criterion ({now.at(at_s)}, {node})"
    if now.time_s <= due_s and not now.over:
        return f"{criterion}: halt {now.by(due_s)}"
    late = f"; halted {now.at(halts[0])}" if halts else ""
    return f"{criterion}: not halted by {now.deadline(due_s)}{late}"


def _action(
    params: dict[str, Any],
    actions: Sequence[ActionRecord],
    now: DrillTime,
    due_s: float | None,
    met: bool,
    failed: bool,
) -> str:
    applied, counted = matching_actions(params, actions)
    needed = int(params["min_count"])
    if met:
        if needed == 1:
            return f"applied {now.at(counted[0].time_s)}"
        return f"{len(counted)} applied (needed {needed}), the last {now.at(counted[-1].time_s)}"
    due_s = now.end_s if due_s is None else due_s  # (`deadline_s` always gives one: `by_s`, or the end)
    if failed or now.over:
        late = [a.time_s for a in applied if a.time_s > due_s]
        too_late = f"; applied {now.at(late[0])}, too late" if late else ""
        done = "not applied" if needed == 1 else f"{len(counted)} of {needed} applied"
        return f"{done} by {now.deadline(due_s)}{too_late}"
    so_far = "not yet" if needed == 1 else f"{len(counted)} of {needed} applied"
    return f"{so_far}: by {now.deadline(due_s)} — {duration(due_s - now.time_s)} left"


def _rollout(run: RunMeasures, watch: RolloutWatch, now: DrillTime, due_s: float | None, met: bool) -> str:
    done = watch.completed_at_s
    if met and done is not None:
        return f"completed {now.at(done)}"
    due_s = now.end_s if due_s is None else due_s  # (`deadline_s` always gives one: `within_s`)
    if done is not None:
        return f"not completed by {now.deadline(due_s)} (completed {now.at(done)})"
    if watch.completed_after_end:
        return "completed just after the drill's end"
    last = run.last
    # "scheduled", not "running", before its start (`state_said`): graceful-drain's abrupt restart read
    # "rollout running" minutes before it began.
    state = last.rollout.state_said() if last is not None and last.rollout else "not started"
    if now.over:
        return f"not completed by {now.deadline(due_s)} (last state: {state})"
    if now.time_s > due_s:
        return f"not completed by {now.at(due_s)}"
    return f"rollout {state}: complete {now.by(due_s)}"


def _dip(watch: DipWatch, within_s: float, now: DrillTime, due_s: float | None, failed: bool) -> str:
    pct = f"{watch.pct:g} %"
    if watch.below_since is not None and due_s is not None and not failed and not now.over:
        return f"below {pct} since {now.at(watch.below_since)}: back {now.by(due_s)}"
    longest_s, longest_from = watch.longest_until(now.time_s)
    within, since = duration(within_s), watch.below_since
    if longest_from is None:
        if now.over:
            return f"not needed: connections never dipped below {pct}"
        return f"never below {pct}; a dip must end within {within}"
    still = ""
    if now.over and since is not None:  # the scorer counts a dip still open up to the last frame
        still = (
            ", still below at the end"
            if since == longest_from
            else f"; below again from {now.at(since)} to the end"
        )
    if failed:
        return f"{duration(longest_s)} below {pct} from {now.at(longest_from)}{still} (allowed {within})"
    if now.over:
        return f"longest dip {duration(longest_s)} from {now.at(longest_from)}{still} (allowed {within})"
    return f"longest dip {duration(longest_s)} ({now.at(longest_from)}); each must end within {within}"


def _total(
    watch: TotalWatch,
    grace_s: float,
    unit: str,
    run: RunMeasures,
    now: DrillTime,
    due_s: float | None,
    failed: bool,
) -> str:
    line = f"{figure(watch.limit)}{unit}"
    if watch.worst is None or run.last is None:
        return "no frames yet"
    # "over"/"under" the line on its wrong side, and the worst reading: a most's peak, a least's lowest.
    side, reading = ("under", "lowest") if watch.at_least else ("over", "peak")
    worst = f"{reading} {figure(watch.worst)}{unit}"
    if failed:
        allowed = f"allowed {duration(grace_s)}" if grace_s > 0 else "allowed none"
        return f"{duration(watch.beyond_s)} {side} {line} ({allowed}); {worst}"
    if due_s is not None and not now.over:
        words = TOTALS_WORDS.get(watch.name, watch.name)  # ("timeouts", not the field timeouts_per_s)
        back = "back to it" if watch.at_least else "under it"
        return f"{words} {figure(watch.value(run.last))}{unit}, {side} {line}: {back} {now.by(due_s)}"
    if watch.beyond_s == 0:
        return f"{worst}, never {side} {line}"
    return f"{worst}; {side} {line} for {duration(watch.beyond_s)} of {duration(grace_s)}"


def _floor(run: RunMeasures, now: DrillTime, met: bool) -> str:
    if run.lowest is None:
        return "no frames yet"
    connections, at_s = run.lowest
    low = f"{100.0 * connections / run.baseline:.1f} %"
    if met and now.over:
        return f"lowest {low} ({now.at(at_s)})"
    if met:
        return f"lowest {low} ({now.at(at_s)}); hold until {now.at(now.end_s)}"
    return f"fell to {low} ({now.at(at_s)})"


def _overrides(actions: Sequence[ActionRecord], now: DrillTime) -> str:
    used = [a for a in actions if a.outcome == "overridden"]
    if not used:
        return "none used"
    return f"{len(used)} used, the first ({used[0].action}) {now.at(used[0].time_s)}"


@dataclass(frozen=True)
class PenaltySoFar:
    text: str
    #: OK: nothing charged yet; WARNING: connections are below the floor now, the penalty is growing;
    #: UNKNOWN: charged earlier, not growing now.
    level: Level
    #: The charge alone ("−0.3 so far, 9 s below 97 %"), for the short panel under 36 rows; "" while none.
    brief: str = ""


def penalty_so_far(run: RunMeasures, score: Score, ended: bool = False) -> PenaltySoFar | None:
    """The time penalty as it accrues, and why: '−0.3 so far: 9 s below 97 % of connections (−2 a minute,
    at most −40)'; None in a drill that charges none. `ended`: the drill is scored, the charge is final
    ('−0.3: 9 s below 97 % of connections' — after the end the panel said "so far" under "over")."""
    scoring = run.scoring
    if scoring.penalty_per_min == 0:
        return None
    below = f"below {scoring.penalty_below_pct:g} % of connections"
    cap = f", at most −{scoring.max_penalty:g}" if scoring.max_penalty > 0 else ""
    so_far = "" if ended else " so far"
    if run.seconds_below == 0:
        if ended:
            return PenaltySoFar(f"none: never {below}", Level.OK)
        return PenaltySoFar(f"none so far (−{scoring.penalty_per_min:g} a minute {below}{cap})", Level.OK)
    spent = f"{duration(run.seconds_below)} {below}"
    brief = f"−{score.penalty:g}{so_far}, {duration(run.seconds_below)} below {scoring.penalty_below_pct:g} %"
    if scoring.max_penalty > 0 and score.penalty >= scoring.max_penalty:
        return PenaltySoFar(f"−{score.penalty:g}{so_far}, the most it takes: {spent}", Level.UNKNOWN, brief)
    if ended:
        return PenaltySoFar(f"−{score.penalty:g}: {spent}", Level.UNKNOWN, brief)
    rule = f"(−{scoring.penalty_per_min:g} a minute{cap})"
    if run.below_floor_now:
        return PenaltySoFar(f"−{score.penalty:g} so far: {spent}, still below {rule}", Level.WARNING, brief)
    return PenaltySoFar(f"−{score.penalty:g} so far: {spent} {rule}", Level.UNKNOWN, brief)
