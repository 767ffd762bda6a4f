"""What the drill screen says beside each objective, on the drill's clock, and the penalty as it accrues.

The panel showed the scorer's sentences, in fleet seconds ("abort criterion at 161 s (gw-024 …); never
halted") beside a drill clock reading 04:03:11: the trainee could not tell that the halt was due by 04:04:11,
nor how long was left. And the score read "99.7/100 so far" with the time penalty behind it unexplained
until the end screen.
"""

from __future__ import annotations

import re
from typing import Any

from console.drills.live import DrillProgress, LiveObjective, Standing
from console.drills.objectives import penalty_rule
from console.drills.schema import Scoring, build_drill
from console.model.thresholds import Level
from console.protocol import Frame, NodeState, RolloutState, RolloutStatus
from console.record.records import ActionRecord
from tests.fleet_builders import frame, node, series

BASE: dict[str, Any] = {
    "name": "clocked",
    "title": "A clocked drill",
    "seed_source": "a test: no seed",
    "scenario": "demo",
    "clock_start": "04:00",
    "briefing": "04:00.",
}


def live(objective: dict[str, Any], end_s: float = 600, **drill: Any) -> DrillProgress:
    return DrillProgress(
        build_drill({**BASE, **drill, "objectives": [{"points": 10, **objective}]}), end_s=end_s
    )


def feed(progress: DrillProgress, frames: list[Frame]) -> DrillProgress:
    for each in frames:
        progress.add_frame(each)
    return progress


def only(progress: DrillProgress) -> LiveObjective:
    (item,) = progress.objectives()
    return item


def act(time_s: float, action: str, **request: Any) -> ActionRecord:
    return ActionRecord(time_s=time_s, actor="t", action=action, request=request, outcome="applied")


#: No fleet seconds in what the trainee reads: "161 s" is no time on the drill's clock.
FLEET_SECONDS = re.compile(r"\bat \d+ s\b|\d+ of \d+ s")


def hot(until_s: int) -> list[Frame]:
    """gw-000 over 80 % CPU from 50 s: the abort criterion (30 s over) at 80 s, 04:01:20."""

    def fleet(time_s: float) -> list:
        return [node("gw-000", state=NodeState.READY, cpu_pct=90.0 if time_s >= 50 else 40.0), node("gw-001")]

    return series(0, until_s, fleet=fleet)


HALT = {"name": "halted", "kind": "halt_within", "cpu_pct": 80, "for_s": 30, "within_s": 90}


def test_a_halt_reads_its_deadline_on_the_drill_clock_and_the_time_left() -> None:
    before = only(feed(live(HALT), hot(60)))
    assert before.status == "halt within 1 min 30 s once a node is over 80 % CPU for 30 s (none yet)"
    running = only(feed(live(HALT), hot(101)))  # last frame at 100 s: 70 s to 04:02:50
    assert running.standing is Standing.AT_RISK
    assert running.status == "abort criterion 04:01:20 (gw-000): halt by 04:02:50 — 1 min 10 s left"
    halted = feed(live(HALT), hot(130))
    halted.add_action(act(120, "rollout_halt"))
    assert only(halted).status == "halted 04:02:00, 40 s after the abort criterion (04:01:20, gw-000)"
    missed = feed(live(HALT), hot(200))
    assert only(missed).standing is Standing.FAILED
    assert only(missed).status == "abort criterion 04:01:20 (gw-000): not halted by 04:02:50"
    missed.add_action(act(195, "rollout_halt"))
    assert only(missed).status.endswith("not halted by 04:02:50; halted 04:03:15")
    for item in (before, running, only(halted), only(missed)):
        assert not FLEET_SECONDS.search(item.status), item.status


def test_a_halt_is_pending_until_its_abort_criterion_or_a_halt_and_not_needed_if_neither_came() -> None:
    """Review: `stormdeck drill thundering-herd`, doing nothing, read `✓ met rollout halted within 90 s of
    the abort criterion … (none yet)`: green for what had not been asked yet. Until the criterion is
    reached (or the trainee halts anyway) it is pending, neutral; at the end, never reached, it says so
    (it still earns its points, as the scorer has always given them)."""
    from console.ui.drill import _STANDING_LEVEL

    waiting = only(feed(live(HALT), hot(60)))
    assert waiting.standing is Standing.PENDING and waiting.measured.met
    assert _STANDING_LEVEL[Standing.PENDING] is Level.UNKNOWN  # neither ✓ nor ▲: not judged yet
    early = feed(live(HALT), hot(40))
    early.add_action(act(30, "rollout_halt"))  # halted before any node was hot: answered whatever comes
    assert only(early).standing is Standing.MET
    assert only(early).status == "halted 04:00:30, before any node was over 80 % CPU for 30 s"
    never = at_the_end(feed(live(HALT, end_s=40), hot(41)))
    assert never.standing is Standing.NOT_NEEDED and never.measured.points == 10
    assert never.status.startswith("not needed: the abort criterion was never reached"), never.status
    halted_early = feed(live(HALT, end_s=40), hot(41))
    halted_early.add_action(act(30, "rollout_halt"))
    assert at_the_end(halted_early).standing is Standing.MET


def test_a_recovery_with_no_dip_is_pending_and_at_the_end_not_needed() -> None:
    """Review: a recovery whose connections never dipped read '✓ met' only because nothing happened. As a
    halt whose abort criterion never came: pending while nothing has dipped, not needed at the end, its
    points kept; once a dip has come and gone it is met."""
    recovery = {"name": "back", "kind": "recovery", "pct": 95, "within_s": 30}
    calm = only(feed(live(recovery), series(0, 30)))
    assert calm.standing is Standing.PENDING and calm.measured.met
    assert calm.status == "never below 95 %; a dip must end within 30 s"
    never = at_the_end(feed(live(recovery, end_s=40), series(0, 41)))
    assert (never.standing, never.status) == (
        Standing.NOT_NEEDED,
        "not needed: connections never dipped below 95 %",
    )
    assert never.measured.points == 10
    dipped = at_the_end(
        feed(
            live(recovery, end_s=40), series(0, 41, connections=lambda t: 90_000 if 10 <= t < 20 else 100_000)
        )
    )
    assert dipped.standing is Standing.MET


def test_the_deadline_counts_down_as_the_frames_come() -> None:
    progress = feed(live(HALT), hot(100))
    lefts = []
    for extra in series(100, 3, fleet=[node("gw-000", cpu_pct=90.0), node("gw-001")]):
        progress.add_frame(extra)
        lefts.append(only(progress).status.rsplit("— ", 1)[1])
    assert lefts == ["1 min 10 s left", "1 min 09 s left", "1 min 08 s left"]


def test_an_action_by_a_time_reads_its_deadline_and_then_when_it_was_applied() -> None:
    admission = {"name": "admission by 04:00:40", "kind": "action_used", "action": "admission", "by_s": 40}
    progress = feed(live(admission), series(0, 16))
    assert only(progress).status == "not yet: by 04:00:40 — 25 s left"
    progress.add_action(act(20, "admission", rate_per_s=250))
    assert only(progress).status == "applied 04:00:20"
    late = feed(live(admission), series(0, 45))
    assert only(late).status == "not applied by 04:00:40"
    late.add_action(act(44, "admission"))
    assert only(late).status == "not applied by 04:00:40; applied 04:00:44, too late"
    anytime_objective = {key: value for key, value in admission.items() if key != "by_s"}
    anytime = feed(live(anytime_objective, end_s=240), series(0, 31))
    assert only(anytime).status == "not yet: by the drill's end, 04:04:00 — 3 min 30 s left"


def test_a_rollout_reads_its_deadline_and_when_it_completed() -> None:
    objective = {"name": "rollout done", "kind": "rollout_completed", "within_s": 300}
    running = RolloutStatus(state=RolloutState.RUNNING)
    progress = feed(live(objective), [frame(t, rollout=running) for t in range(61)])
    assert only(progress).status == "rollout running: complete by 04:05:00 — 4 min 00 s left"
    done = RolloutStatus(state=RolloutState.COMPLETED)
    feed(progress, [frame(t, rollout=done) for t in range(61, 70)])
    assert only(progress).status == "completed 04:01:01"


def test_a_scheduled_rollout_reads_scheduled_not_running() -> None:
    """Trainee reviewer, graceful-drain: "rollout running: complete by 04:40:00" while the abrupt restart
    was only scheduled for 04:03 — the drill's task is to replace it before it starts."""
    objective = {"name": "rollout done", "kind": "rollout_completed", "within_s": 300}
    scheduled = RolloutStatus(state=RolloutState.RUNNING, batches=5, batch_size=2, starts_at_s=180.0)
    progress = feed(live(objective), [frame(t, rollout=scheduled) for t in range(61)])
    assert only(progress).status == "rollout scheduled: complete by 04:05:00 — 4 min 00 s left"
    ended = at_the_end(feed(live(objective, end_s=60), [frame(t, rollout=scheduled) for t in range(61)]))
    assert ended.status == "not completed by the drill's end, 04:01:00 (last state: scheduled)"


def test_a_dip_reads_when_it_must_be_over_and_a_floor_its_lowest_point() -> None:
    recovery = {"name": "back", "kind": "recovery", "pct": 95, "within_s": 30}
    dipping = feed(live(recovery), series(0, 51, connections=lambda t: 100_000 if t < 40 else 90_000))
    assert only(dipping).standing is Standing.AT_RISK
    assert only(dipping).status == "below 95 % since 04:00:40: back by 04:01:10 — 20 s left"
    floor = {"name": "floor", "kind": "connections_floor", "min_pct": 80}
    held = feed(live(floor), series(0, 51, connections=lambda t: 100_000 if t < 40 else 90_000))
    assert only(held).status == "lowest 90.0 % (04:00:40); hold until 04:10:00"
    broken = feed(
        live({**floor, "min_pct": 95}), series(0, 51, connections=lambda t: 100_000 if t < 40 else 90_000)
    )
    assert only(broken).status == "fell to 90.0 % (04:00:40)"


def test_a_total_over_its_line_reads_the_grace_left() -> None:
    total = {"name": "timeouts", "kind": "totals_max", "field": "timeouts_per_s", "max": 500, "grace_s": 10}
    over = feed(live(total), series(0, 24, timeouts_per_s=lambda t: 1500.0 if t >= 20 else 0.0))
    assert only(over).standing is Standing.AT_RISK
    assert only(over).status == "timeouts 1,500/s, over 500/s: under it by 04:00:29 — 6 s left"
    calm = feed(live(total), series(0, 24))
    assert only(calm).status == "peak 0/s, never over 500/s"


def test_a_total_under_its_least_reads_the_grace_left_to_bring_it_back() -> None:
    # thundering-herd's headroom, under the 35 % budget from the start: the trainee reads how long is left
    # to bring it back (capacity takes 4 minutes), not a "peak" of a total held to a least.
    least = {"name": "headroom", "kind": "totals_min", "field": "headroom_pct", "min": 35, "grace_s": 30}
    under = feed(live(least), series(0, 24, headroom_pct=20.4))
    assert only(under).standing is Standing.AT_RISK
    assert only(under).status == "headroom 20.4 %, under 35 %: back to it by 04:00:29 — 6 s left"
    back = feed(live(least), series(0, 24, headroom_pct=lambda t: 20.4 if t < 10 else 43.8))
    assert only(back).standing is Standing.MET
    assert only(back).status == "lowest 20.4 %; under 35 % for 10 s of 30 s"
    lost = feed(live(least), series(0, 40, headroom_pct=20.4))
    assert only(lost).standing is Standing.FAILED
    assert only(lost).status == "40 s under 35 % (allowed 30 s); lowest 20.4 %"


SCORED = {
    "objectives": [{"name": "no override", "kind": "no_override", "points": 100}],
    "scoring": {"penalty_per_min": 2, "penalty_below_pct": 97, "max_penalty": 40},
}


def scored(connections: Any, seconds: int) -> DrillProgress:
    progress = DrillProgress(build_drill({**BASE, **SCORED}), end_s=3600)
    return feed(progress, series(0, seconds, connections=connections))


def penalty(progress: DrillProgress) -> tuple[str, Level]:
    line = progress.penalty_line()
    assert line is not None
    return line.text, line.level


def test_the_penalty_reads_as_it_accrues_and_why() -> None:
    none = "none so far (−2 a minute below 97 % of connections, at most −40)"
    assert penalty(scored(100_000, 30)) == (none, Level.OK)
    dipped = scored(lambda t: 90_000 if 10 <= t < 19 else 100_000, 30)  # 9 s below 97 %
    assert dipped.score().score == 99.7
    assert penalty(dipped) == (
        "−0.3 so far: 9 s below 97 % of connections (−2 a minute, at most −40)",
        Level.UNKNOWN,
    )
    still = scored(lambda t: 90_000 if t >= 21 else 100_000, 30)
    assert penalty(still) == (
        "−0.3 so far: 9 s below 97 % of connections, still below (−2 a minute, at most −40)",
        Level.WARNING,
    )
    capped = scored(lambda t: 90_000 if t >= 1 else 100_000, 1300)
    assert penalty(capped)[0] == "−40 so far, the most it takes: 21 min 39 s below 97 % of connections"


def test_a_drill_without_a_time_penalty_has_no_penalty_line() -> None:
    progress = DrillProgress(build_drill({**BASE, "objectives": SCORED["objectives"]}), end_s=600)
    assert feed(progress, series(0, 30)).penalty_line() is None


def test_the_penalty_rule_in_words_for_the_briefing() -> None:
    assert penalty_rule(Scoring(2, 97, 40)) == (
        "time penalty: −2 points a minute with connections below 97 % of the start, at most −40"
    )
    assert (
        penalty_rule(Scoring(3, 95, 0))
        == "time penalty: −3 points a minute with connections below 95 % of the start"
    )
    assert penalty_rule(Scoring(0, 95, 0)) == "no time penalty in this drill"


def at_the_end(progress: DrillProgress) -> LiveObjective:
    """The objective as the end screen and the terminal read it once the drill is scored (`finish`)."""
    progress.finish()
    return only(progress)


def test_after_the_end_an_objective_says_what_happened_not_a_deadline_to_come() -> None:
    """The end screen and the headless summary read these final statuses: after the end, "halt by 04:02:50
    — 50 s left" or "hold until 04:02:00" is a promise the drill can no longer keep."""
    unhalted = at_the_end(feed(live(HALT, end_s=120), hot(121)))  # criterion at 80 s, due at 170 s
    assert unhalted.standing is Standing.FAILED
    assert unhalted.status == "abort criterion 04:01:20 (gw-000): not halted by the drill's end, 04:02:00"
    calm = at_the_end(feed(live(HALT, end_s=40), hot(41)))  # 90 % from 50 s: never 30 s over
    assert (calm.standing, calm.status) == (
        Standing.NOT_NEEDED,
        "not needed: the abort criterion was never reached (no node was over 80 % CPU for 30 s)",
    )
    objective = {"name": "rollout done", "kind": "rollout_completed", "within_s": 300}
    running = RolloutStatus(state=RolloutState.RUNNING)
    rollout = at_the_end(feed(live(objective, end_s=60), [frame(t, rollout=running) for t in range(61)]))
    assert rollout.status == "not completed by the drill's end, 04:01:00 (last state: running)"
    dips = {"name": "back", "kind": "recovery", "pct": 95, "within_s": 30}
    open_dip = at_the_end(
        feed(live(dips, end_s=50), series(0, 51, connections=lambda t: 100_000 if t < 40 else 90_000))
    )
    assert (open_dip.standing, open_dip.status) == (
        Standing.MET,
        "longest dip 10 s from 04:00:40, still below at the end (allowed 30 s)",
    )
    twice_below = at_the_end(
        feed(
            live(dips, end_s=50),
            series(0, 51, connections=lambda t: 90_000 if 10 <= t < 20 or t >= 45 else 100_000),
        )
    )
    assert (
        twice_below.status
        == "longest dip 10 s from 04:00:10; below again from 04:00:45 to the end (allowed 30 s)"
    )
    floor = {"name": "floor", "kind": "connections_floor", "min_pct": 80}
    held = at_the_end(
        feed(live(floor, end_s=50), series(0, 51, connections=lambda t: 100_000 if t < 40 else 90_000))
    )
    assert held.status == "lowest 90.0 % (04:00:40)"
    total = {"name": "timeouts", "kind": "totals_max", "field": "timeouts_per_s", "max": 500, "grace_s": 10}
    over = at_the_end(
        feed(live(total, end_s=23), series(0, 24, timeouts_per_s=lambda t: 1500.0 if t >= 20 else 0.0))
    )
    assert (over.standing, over.status) == (Standing.MET, "peak 1,500/s; over 500/s for 4 s of 10 s")
    twice = {"name": "admission twice", "kind": "action_used", "action": "admission", "min_count": 2}
    once = feed(live(twice, end_s=60), series(0, 61))
    once.add_action(act(20, "admission"))
    assert at_the_end(once).status == "1 of 2 applied by the drill's end, 04:01:00"
    for item in (unhalted, calm, rollout, open_dip, twice_below, held, over, only(once)):
        assert not FLEET_SECONDS.search(item.status) and " left" not in item.status, item.status


def test_after_the_end_the_penalty_is_what_was_charged_not_so_far() -> None:
    """Back on the fleet from the end screen, the panel read "drill · 04:25:00 · over · score 20.1/100"
    over "−14.9 so far, 7 min 26 s below 97 %": the drill is over, the charge is final."""
    still = scored(lambda t: 90_000 if t >= 21 else 100_000, 30)
    still.finish()
    line = still.penalty_line()
    assert line is not None
    assert (line.text, line.brief) == ("−0.3: 9 s below 97 % of connections", "−0.3, 9 s below 97 %")
    clean = scored(100_000, 30)
    clean.finish()
    assert penalty(clean)[0] == "none: never below 97 % of connections"
    capped = scored(lambda t: 90_000 if t >= 1 else 100_000, 1300)
    capped.finish()
    assert penalty(capped)[0] == "−40, the most it takes: 21 min 39 s below 97 % of connections"
