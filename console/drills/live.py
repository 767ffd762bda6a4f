"""A drill as it runs, for the drill screen: objectives met, at risk or failed so far, hints, the end. Pure.

The console feeds it what it already receives — frames, the stream's events (a served drill sends its
narration, `hint` events and a `drill` event with `data.ended`), and its own action records — and it
measures with the same fold the headless runner scores with (`console.drills.objectives.RunMeasures`,
each frame read as it comes and not kept): the screen never has a second idea of what an objective means,
and a drill of hours holds one frame, not all of them. What it adds is the live reading: an objective
not met yet is "at risk" while the rest of the drill could still meet it, "failed" once nothing can.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from console.drills.countdown import DrillTime, PenaltySoFar, objective_status, penalty_so_far
from console.drills.objectives import Measured, MeasuredRun, RunMeasures, Score, applied_times
from console.drills.watches import DipWatch, TotalWatch
from console.protocol import Event, Frame
from console.record.records import ActionRecord

#: Objectives whose miss is final: a later frame cannot undo a floor broken, an override used, a total past
#: its grace on the wrong side of its line, or a dip that lasted too long.
_FINAL_ON_MISS = frozenset({"connections_floor", "no_override", "totals_max", "totals_min", "recovery"})


class Standing(StrEnum):
    MET = "met"
    AT_RISK = "at risk"
    FAILED = "failed"
    #: Met so far only because what it answers has not happened (a halt's abort criterion not reached):
    #: not judged yet — a trainee who did nothing read it as a green "met".
    PENDING = "pending"
    #: At the end, what it would have answered never happened: its points stand, and it says why.
    NOT_NEEDED = "not needed"


@dataclass(frozen=True)
class LiveObjective:
    measured: Measured
    standing: Standing
    #: What the drill screen says beside it, on the drill's clock: its deadline and the time left, or what
    #: was measured and when (`console.drills.countdown`).
    status: str = ""


def deadline_s(run: RunMeasures, index: int, time_s: float, end_s: float) -> float | None:
    """The fleet second by which objective `index` of `run` must be met, as the run stands at `time_s`:
    a halt 'within_s' after its abort criterion, an action by its `by_s` (else the drill's end), a rollout
    within its `within_s`, a dip over within its `within_s`, a total over its line back under it before
    its grace is spent. None while nothing is due (no criterion yet, no dip, under the line; a floor or an
    override, which only the whole drill can meet)."""
    objective = run.objectives[index]
    kind, params, watch = objective.kind, objective.params, run.watch(index)
    if kind == "halt_within":
        criterion = run.abort_criterion(index)
        return None if criterion is None else criterion[0] + float(params["within_s"])
    if kind == "action_used":
        return min(float(params["by_s"]), end_s)
    if kind == "rollout_completed":
        return min(float(params["within_s"]), end_s)
    if isinstance(watch, DipWatch) and watch.below_since is not None:
        return watch.below_since + float(params["within_s"])
    if isinstance(watch, TotalWatch) and run.last is not None and watch.over(run.last):
        return time_s + max(0.0, float(params["grace_s"]) - watch.beyond_s)
    return None


def standing_of(run: RunMeasures, index: int, measured: Measured, time_s: float, end_s: float) -> Standing:
    """Objective `index` of `run` met, at risk or failed at fleet second `time_s` of a drill that ends at
    `end_s`."""
    objective = run.objectives[index]
    kind, params, now = objective.kind, objective.params, run.last
    if measured.met:
        # Met so far, but the fleet is over the line right now: one more stretch could fail it.
        if now is not None and kind == "recovery":
            now_pct = 100.0 * now.totals.connections / run.baseline
            return Standing.AT_RISK if now_pct < float(params["pct"]) else Standing.MET
        watch = run.watch(index)
        if now is not None and isinstance(watch, TotalWatch):
            return Standing.AT_RISK if watch.over(now) else Standing.MET
        return Standing.MET
    if kind in _FINAL_ON_MISS or time_s >= end_s:
        return Standing.FAILED
    # Past its deadline nothing can meet it (only actions by `by_s` count, the scorer's rule); before it,
    # or before a halt's abort criterion, it is still the trainee's to earn.
    due = deadline_s(run, index, time_s, end_s)
    return Standing.FAILED if due is not None and time_s > due else Standing.AT_RISK


def awaiting_its_event(run: RunMeasures, index: int, actions: Sequence[ActionRecord]) -> bool:
    """Objective `index` of `run` is met only because the event it answers has not come: a halt whose
    abort criterion was not reached, and no halt yet (a halt before it answers whatever comes); a recovery
    whose connections have never dipped below its line (nothing to recover from)."""
    kind, watch = run.objectives[index].kind, run.watch(index)
    if kind == "recovery" and isinstance(watch, DipWatch):
        return watch.below_since is None and watch.longest_from is None
    if kind != "halt_within" or run.abort_criterion(index) is not None:
        return False
    return not applied_times(actions, "rollout_halt")


def objectives_at(
    run: RunMeasures, score: Score, actions: Sequence[ActionRecord], now: DrillTime
) -> list[LiveObjective]:
    """Each objective of `run` scored as `score`, its standing and what the trainee reads of it `now`: the
    drill screen's panel while the drill runs; once it is over (`now.over`) the end screen's and the
    terminal's summary, met or failed (a met dip still open at the end is no longer "at risk"). A halt
    whose abort criterion has not come, or a recovery with no dip yet, is pending, and at the end not needed
    (`awaiting_its_event`)."""
    out = []
    for index, measured in enumerate(score.objectives):
        if measured.met and awaiting_its_event(run, index, actions):
            standing = Standing.NOT_NEEDED if now.over else Standing.PENDING
        elif now.over:
            standing = Standing.MET if measured.met else Standing.FAILED
        else:
            standing = standing_of(run, index, measured, now.time_s, now.end_s)
        due_s = deadline_s(run, index, now.time_s, now.end_s)
        failed = standing is Standing.FAILED
        status = objective_status(run, index, measured, actions, now, due_s, failed)
        out.append(LiveObjective(measured, standing, status))
    return out


@dataclass(frozen=True)
class ScoreSoFar:
    """The score as a running drill stands: the points not lost yet, less the penalty charged, and the
    points of the objectives at risk — still the trainee's to keep or lose. The scorer's own score counts
    only what is met: the panel read 59.3/100 the second thundering-herd's abort criterion came, its halt
    still 90 s in time — a penalty, to a trainee, before anything had happened."""

    score: float
    max_score: float
    at_risk: float  # points of the objectives at risk now (0 once the drill is over)

    @property
    def scored(self) -> str:
        return f"{self.score:g}/{self.max_score:g}"

    @property
    def risk(self) -> str:
        """ ", 40 at risk" while any is; "" otherwise."""
        return f", {self.at_risk:g} at risk" if self.at_risk else ""

    @property
    def text(self) -> str:
        """'100/100 so far, 40 at risk': the title's, the quit warning's and an abandoned run's words."""
        return f"{self.scored} so far{self.risk}"


def score_so_far(score: Score, objectives: Sequence[LiveObjective]) -> ScoreSoFar:
    """`score` (the scorer's, as the run stands) with the objectives' standings: what is lost is failed;
    what is at risk or pending keeps its points until then. Nothing at risk: the scorer's score."""
    at_risk = sum(item.measured.max_points for item in objectives if item.standing is Standing.AT_RISK)
    if not at_risk:
        return ScoreSoFar(score.score, score.max_score, 0.0)
    lost = sum(item.measured.max_points for item in objectives if item.standing is Standing.FAILED)
    standing = round(max(0.0, score.max_score - lost - score.penalty), 1)
    return ScoreSoFar(standing, score.max_score, at_risk)


def through(frame: Frame, end_s: float) -> Frame | None:
    """`frame` without its fleet seconds after `end_s`, where it says them (`folded_totals`); None when it
    says them and none is the drill's. The served simulation runs on past the drill's end, and at speed > 1
    the frame that ends the drill can fold seconds after it: served at ×60, a 240 s drill's frames end at
    61, 121, 181 and 241 s (the server's first frame is second 1), and second 241 is no part of the drill.
    Its nodes and rollout stay the frame's last second's: the frame carries no other."""
    by_second = frame.seconds()
    if frame.time_s <= end_s or not by_second:
        return frame
    kept = [(time_s, totals) for time_s, totals in by_second if time_s <= end_s]
    if not kept:
        return None
    earlier = [totals for _, totals in kept[:-1]]
    update = {"time_s": kept[-1][0], "totals": kept[-1][1], "folded_totals": earlier or None}
    return frame.model_copy(update={**update, "span_s": float(len(kept))})


@dataclass
class DrillProgress(MeasuredRun):
    """What the drill screen shows, from what the console received (the frames measured as they came,
    `add_frame`; only the newest is kept)."""

    end_s: float  # the drill's duration in fleet seconds (the scenario's when the drill sets none)
    events: list[Event] = field(default_factory=list)
    actions: list[ActionRecord] = field(default_factory=list)
    hints: list[Event] = field(default_factory=list)
    ended: bool = False
    #: The score measured at the end (`finish`): what the end screen and the recording say. Whatever the
    #: console receives afterwards — a frame before the clock stops, an action confirmed over the end
    #: screen — is after the drill and changes nothing.
    final: Score | None = None

    def add_frame(self, frame: Frame) -> None:
        if self.final is not None:
            return
        # A paused fleet keeps sending its current second: measured once, as the headless runner would.
        if self.measures.last is not None and frame.time_s <= self.measures.last.time_s:
            return
        drills = through(frame, self.end_s)
        if drills is not None:
            self.measures.add(drills)

    def add_event(self, event: Event) -> Event | None:
        """Keep the event; returns it when the trainee should be told now (a hint)."""
        self.events.append(event)
        if event.kind == "drill" and event.data.get("ended"):
            self.ended = True
        if event.kind == "hint":
            self.hints.append(event)
            return event
        return None

    def add_action(self, record: ActionRecord) -> None:
        if self.final is None:
            self.actions.append(record)

    def score(self) -> Score:
        if self.final is not None:
            return self.final
        return self.measures.score(self.actions)  # what `score_drill` and the headless runner compute

    def finish(self) -> Score:
        """Score the drill once, at its end; from here on the score and the objectives stay as they are."""
        if self.final is None:
            self.final = self.score()
        return self.final

    def objectives(self, score: Score | None = None) -> list[LiveObjective]:
        """Each objective's standing, and what the screen says of it on the drill's clock; once the drill
        is scored (`finish`), what became of it, as the end screen says."""
        now = DrillTime(self.time_s, self.end_s, self.drill.human_time, ended=self.final is not None)
        return objectives_at(self.measures, score or self.score(), self.actions, now)

    def so_far(self, score: Score | None = None) -> ScoreSoFar:
        """The score as the drill stands (`score_so_far`); once it is scored, the final score."""
        score = score or self.score()
        return score_so_far(score, self.objectives(score))

    def penalty_line(self, score: Score | None = None) -> PenaltySoFar | None:
        """The time penalty so far and why, as the drill screen shows it; None in a drill that charges
        none."""
        return penalty_so_far(self.measures, score or self.score(), ended=self.final is not None)
