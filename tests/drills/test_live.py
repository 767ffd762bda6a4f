"""The drill screen's live reading: met, at risk, failed while the drill runs (pure)."""

from __future__ import annotations

import gc
import weakref

from console.drills.live import DrillProgress, Standing
from console.drills.objectives import score_drill
from console.drills.schema import build_drill
from console.protocol import Event
from console.record.records import ActionRecord
from tests.fleet_builders import series

DRILL = {
    "name": "tiny",
    "title": "A tiny drill",
    "seed_source": "outage seed (000)",
    "scenario": "demo",
    "briefing": "Hold the floor.",
    "objectives": [
        {"name": "floor", "kind": "connections_floor", "min_pct": 90, "points": 50},
        {"name": "admission set", "kind": "action_used", "action": "admission", "points": 30},
        {"name": "rollout done", "kind": "rollout_completed", "within_s": 20, "points": 20},
    ],
}


def progress(connections) -> DrillProgress:
    live = DrillProgress(build_drill(DRILL), end_s=60)
    for frame in series(0, 30, connections=connections):
        live.add_frame(frame)
    return live


def standings(live: DrillProgress) -> list[Standing]:
    return [item.standing for item in live.objectives()]


def test_an_objective_not_met_is_at_risk_until_it_can_no_longer_be_met() -> None:
    live = progress(lambda t: 100_000)
    # floor held; no admission yet (the rest of the drill may still bring one); rollout due at 20 s: failed
    assert standings(live) == [Standing.MET, Standing.AT_RISK, Standing.FAILED]
    live.add_action(ActionRecord(time_s=29, actor="t", action="admission", outcome="applied"))
    assert standings(live)[1] is Standing.MET


def test_a_broken_floor_is_failed_at_once_and_the_score_is_the_scorers() -> None:
    live = progress(lambda t: 100_000 if t < 10 else 50_000)
    assert standings(live)[0] is Standing.FAILED
    assert live.score().score == 0.0  # the same score_drill the headless runner uses


def test_a_paused_fleets_repeated_second_is_measured_once() -> None:
    # Below the scoring floor from 10 s: each second measured twice would count twice against the score.
    live = progress(lambda t: 100_000 if t < 10 else 80_000)
    before = live.score()
    assert before.minutes_below > 0
    last = live.last_frame
    assert last is not None
    for _ in range(3):  # what the console receives while the fleet is paused: the same second again
        live.add_frame(last)
    assert live.score() == before and live.time_s == last.time_s


def test_the_drill_screen_keeps_the_newest_frame_only_and_scores_as_the_headless_runner() -> None:
    """The drill screen kept every frame and scored all of them again on each refresh: a drill's memory
    and its score's cost grew with its length. It folds each frame in as it comes (`RunMeasures`, as the
    headless runner does): the frames it was given are freed but the newest, and its score is the one
    `score_drill` gives over all of them."""
    live = DrillProgress(build_drill(DRILL), end_s=600)
    given = []
    for time_s in range(600):
        (fed,) = series(float(time_s), 1, connections=100_000 if time_s < 100 or time_s > 160 else 50_000)
        given.append(weakref.ref(fed))
        live.add_frame(fed)
    live.add_action(ActionRecord(time_s=130, actor="t", action="admission", outcome="applied"))
    gc.collect()
    assert [ref() for ref in given[:-1] if ref() is not None] == []
    assert given[-1]() is live.last_frame
    frames = list(series(0, 600, connections=lambda t: 100_000 if t < 100 or t > 160 else 50_000))
    assert live.score() == score_drill(live.drill, frames, [], live.actions)


def test_hints_are_returned_to_show_and_the_end_event_ends_the_drill() -> None:
    live = progress(lambda t: 100_000)
    hint = Event(time_s=5, kind="hint", message="set admission")
    assert live.add_event(hint) is hint and live.hints == [hint]
    assert live.add_event(Event(time_s=6, kind="drill", message="04:00 window opens")) is None
    assert not live.ended
    live.add_event(Event(time_s=60, kind="drill", message="time is up", data={"ended": True}))
    assert live.ended
    live.add_frame(series(60, 1, connections=100_000)[0])  # the drill's last second
    assert all(item.standing is not Standing.AT_RISK for item in live.objectives())


def test_the_score_at_the_end_is_final_whatever_the_console_receives_after_it() -> None:
    # At --speed 20 an action confirmed over the end screen, or a frame sent before the clock stopped,
    # arrives after the end: it must not turn the end screen's 50 into 80 (nor the recording's outcome).
    live = DrillProgress(build_drill(DRILL), end_s=60)
    for frame in series(0, 61, connections=100_000):
        live.add_frame(frame)
    live.add_event(Event(time_s=60, kind="drill", message="time is up", data={"ended": True}))
    final = live.finish()
    assert final.score == 50.0  # the floor held; no admission; the rollout never completed
    live.add_action(ActionRecord(time_s=61, actor="t", action="admission", outcome="applied"))
    for frame in series(61, 2, connections=10_000):
        live.add_frame(frame)
    assert live.score() == final and live.score().score == 50.0
    assert live.time_s == 60.0 and live.actions == []
    assert standings(live) == [Standing.MET, Standing.FAILED, Standing.FAILED]


def test_an_action_due_by_a_time_is_failed_once_that_time_has_passed() -> None:
    """regional-outage's "admission set before the clients return" (by 40 s) read "at risk" at fleet
    second 81: the trainee was told that setting admission now could still meet it, and no later action
    counts (the scorer takes only those by `by_s`)."""
    drill = build_drill(
        {
            **DRILL,
            "objectives": [
                {
                    "name": "admission early",
                    "kind": "action_used",
                    "action": "admission",
                    "by_s": 20,
                    "points": 100,
                }
            ],
        }
    )
    live = DrillProgress(drill, end_s=60)
    for frame in series(0, 20, connections=100_000):  # seconds 0 … 19: still in time
        live.add_frame(frame)
    assert standings(live) == [Standing.AT_RISK]
    for frame in series(20, 10, connections=100_000):  # seconds 20 … 29: past it
        live.add_frame(frame)
    assert standings(live) == [Standing.FAILED]
    live.add_action(ActionRecord(time_s=29, actor="t", action="admission", outcome="applied"))
    assert standings(live) == [Standing.FAILED]  # too late: the scorer does not count it either
    live.add_action(ActionRecord(time_s=20, actor="t", action="admission", outcome="applied"))
    assert standings(live) == [Standing.MET]  # one in time, its record arriving after the frame


# --- the score so far: lost only once lost ------------------------------------------------------------------
# Reviewer, thundering-herd: the panel's "so far" dropped from 99.3 to 59.3 the second the abort criterion
# came, while the halt was only at risk with 90 s to go: a trainee read it as a penalty before anything
# had happened.

HERD = {
    **DRILL,
    "objectives": [
        {"name": "halt", "kind": "halt_within", "cpu_pct": 80, "for_s": 30, "within_s": 90, "points": 40},
        {"name": "floor", "kind": "connections_floor", "min_pct": 90, "points": 60},
    ],
}


def hot(seconds: int, start_s: float = 0.0) -> list:
    """gw-000 over 80 % CPU from 50 s: the abort criterion at 80 s, a halt due by 170 s."""
    from tests.fleet_builders import node

    def fleet(time_s: float) -> list:
        return [node("gw-000", cpu_pct=90.0 if time_s >= 50 else 40.0), node("gw-001")]

    return series(start_s, seconds, fleet=fleet)


def herd(seconds: int, *halts: float) -> DrillProgress:
    live = DrillProgress(build_drill(HERD), end_s=600)
    for halt_s in halts:
        live.add_action(ActionRecord(time_s=halt_s, actor="t", action="rollout_halt", outcome="applied"))
    for frame in hot(seconds):
        live.add_frame(frame)
    return live


def test_the_score_so_far_loses_an_objective_only_once_it_is_lost_and_says_what_is_at_risk() -> None:
    before = herd(60)  # no criterion yet: the halt is pending, nothing at risk
    assert before.so_far().text == "100/100 so far"
    criterion = herd(120)  # the criterion at 80 s, the halt due by 170 s: at risk, not lost
    assert standings(criterion) == [Standing.AT_RISK, Standing.MET]
    assert criterion.score().score == 60.0  # the scorer's, as the run stands: not halted yet
    so_far = criterion.so_far()
    assert (so_far.score, so_far.max_score, so_far.at_risk) == (100.0, 100.0, 40.0)
    assert so_far.text == "100/100 so far, 40 at risk"
    lost = herd(180)  # past 170 s, never halted: lost
    assert standings(lost) == [Standing.FAILED, Standing.MET]
    assert lost.so_far().text == "60/100 so far"
    halted = herd(180, 120.0)
    assert halted.so_far().text == "100/100 so far"
    lost.finish()  # at the end the score is the scorer's
    assert (lost.so_far().score, lost.so_far().at_risk) == (lost.score().score, 0.0)
