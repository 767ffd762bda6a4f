"""The end of a drill as the end screen and the terminal say it: each objective's figure, and what next."""

from __future__ import annotations

from typing import Any

import pytest

from console.drills.live import LiveObjective, Standing
from console.drills.objectives import Measured, measure
from console.drills.schema import TOTALS_FIELDS, TOTALS_WORDS, Objective
from console.drills.summary import RunCommand, end_lines, next_steps, verdict_figure
from console.record.records import ActionRecord
from tests.fleet_builders import series


def objective(kind: str, **params: Any) -> Objective:
    return Objective(name=kind, kind=kind, points=10.0, params=params)


def act(time_s: float, action: str, outcome: str = "applied") -> ActionRecord:
    return ActionRecord(time_s=time_s, actor="test", action=action, outcome=outcome)


def test_a_boolean_or_a_count_against_one_shows_no_value_and_limit() -> None:
    """Review of the end screen: "no admin override used (value 0, limit 0)" and "admission set (value 1,
    limit 1)" — figures that add nothing to a yes or no, or to "1 applied admission (needed 1)"."""
    cases = [
        measure(objective("no_override"), [], [], []),
        measure(objective("no_override"), [], [], [act(5, "drain", "overridden")]),
        measure(
            objective("action_used", action="admission", min_count=1, where={}), [], [], [act(5, "admission")]
        ),
        measure(objective("action_used", action="admission", min_count=1, where={}), [], [], []),
    ]
    assert [verdict_figure(item) for item in cases] == [None, None, None, None]


def test_a_status_that_only_repeats_the_name_is_not_said_twice() -> None:
    unused = Measured("no admin override used", "no_override", True, 0.0, 0.0, "w", 15, 15)
    assert end_lines(LiveObjective(unused, Standing.MET, "none used")) == []
    used = Measured("no admin override used", "no_override", False, 1.0, 0.0, "w", 0, 15)
    said = "1 used, the first (drain) 04:01:40"
    assert end_lines(LiveObjective(used, Standing.FAILED, said)) == [said]


def test_the_figure_comes_first_then_what_became_of_the_objective() -> None:
    floor = Measured("floor", "connections_floor", False, 92.04, 93.0, "w", 0, 25, unit=" %")
    status = "fell to 92.0 % (04:09:31)"
    assert end_lines(LiveObjective(floor, Standing.FAILED, status)) == [f"{status}; floor 93 %"]
    # said once: the lowest was said twice, rounded two ways ("lowest 92 %, floor 93 %" over the status)
    assert end_lines(LiveObjective(floor, Standing.FAILED, "")) == ["lowest 92 %, floor 93 %"]


def test_a_total_that_failed_on_its_time_over_the_line_states_that_time_not_its_peak() -> None:
    """Review: regional-outage's timeouts failed on 379 s above 2,000/s where 20 s were allowed, and the end
    screen said "(value 91,702/s, limit 2,000/s)" — a rate, and the raw field name `timeouts_per_s`."""
    frames = series(0, 400, timeouts_per_s=lambda t: 91_702.0 if 10 <= t < 389 else 0.0)
    result = measure(objective("totals_max", field="timeouts_per_s", max=2000, grace_s=20), frames, [], [])
    assert not result.met
    assert result.why == "timeouts above 2,000/s for 6 min 19 s, allowed 20 s (peak 91,702/s)"
    assert verdict_figure(result) is None  # the why states it: no second, rate-only reading beside it


def test_a_total_within_its_grace_or_never_over_reads_so() -> None:
    frames = series(0, 60, resync_backlog=lambda t: 25_000.0 if 10 <= t < 15 else 100.0)
    over = measure(objective("totals_max", field="resync_backlog", max=20_000, grace_s=30), frames, [], [])
    assert over.met and over.why == "resync backlog above 20,000 for 5 s, allowed 30 s (peak 25,000)"
    under = measure(objective("totals_max", field="resync_backlog", max=50_000, grace_s=0), frames, [], [])
    assert under.met and under.why == "resync backlog peaked at 25,000, never above 50,000"


def test_every_total_a_drill_may_hold_has_operator_words() -> None:
    assert set(TOTALS_WORDS) == set(TOTALS_FIELDS)
    assert all("_" not in words for words in TOTALS_WORDS.values())


def test_figures_that_inform_read_in_operator_words_with_units() -> None:
    floor = Measured("floor", "connections_floor", False, 92.04, 93.0, "w", 0, 25, unit=" %")
    assert verdict_figure(floor) == "lowest 92 %, floor 93 %"
    dip = Measured("back", "recovery", False, 389.0, 300.0, "w", 0, 35, unit=" s")
    # Its status says it: "6 min 29 s below 95 % from 02:00:31, still below at the end (allowed 5 min 00 s)".
    assert verdict_figure(dip) is None
    late = Measured("halt", "halt_within", False, 130.0, 90.0, "w", 0, 40, unit=" s")
    assert verdict_figure(late) == "halted 2 min 10 s after the abort criterion, allowed 1 min 30 s"
    in_time = Measured("halt", "halt_within", True, 39.0, 90.0, "w", 40, 40, unit=" s")
    assert verdict_figure(in_time) is None  # its status: "halted 04:03:20, 39 s after the abort criterion …"
    never = Measured("halt", "halt_within", False, None, 90.0, "never halted", 0, 40, unit=" s")
    assert verdict_figure(never) is None  # no figure to give: the why says "never halted"
    done = Measured("roll", "rollout_completed", True, 231.0, 2400.0, "w", 15, 15, unit=" s")
    assert verdict_figure(done) == "completed after 3 min 51 s, allowed 40 min 00 s"


def commands(steps) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {step.what: step.command for step in steps}


def test_a_recorded_run_says_how_to_see_its_report_replay_it_and_try_again() -> None:
    run = RunCommand(drill="regional-outage", record="runs/ro 1.sdrec", seed=9, sets=("nodes.count=30",))
    said = commands(next_steps(run, fresh_recording="runs/ro 1-2.sdrec"))
    # The next try is recorded too, beside this one and not over it (a recording given again is continued).
    assert said == {
        "see the report": "stormdeck report 'runs/ro 1.sdrec'",
        "replay it": "stormdeck replay 'runs/ro 1.sdrec'",
        "try it again": "stormdeck drill regional-outage --seed 9 --set nodes.count=30 --record 'runs/ro 1-2.sdrec'",
    }


def test_a_run_not_recorded_says_so_and_how_to_record_the_next() -> None:
    steps = next_steps(
        RunCommand(drill="regional-outage", speed=10.0), fresh_recording="regional-outage.sdrec"
    )
    assert commands(steps) == {
        "try it again": "stormdeck drill regional-outage --speed 10",
        "record the next run": "stormdeck drill regional-outage --speed 10 --record regional-outage.sdrec",
    }
    [recording] = [step for step in steps if step.what == "record the next run"]
    assert "not recorded" in recording.note and "stormdeck report" in recording.note
    assert "stormdeck replay" in recording.note


def test_a_headless_runs_next_steps_offer_the_console_and_record_its_script() -> None:
    run = RunCommand(drill="drills/my.toml", headless=True, actions="fix.toml", speed=500.0)
    said = commands(next_steps(run, fresh_recording="my.sdrec"))
    # The console's clock has a limit (100×): a headless --speed is not carried to it.
    assert said["try it yourself"] == "stormdeck drill drills/my.toml"
    assert said["record the next run"] == (
        "stormdeck drill drills/my.toml --headless --actions fix.toml --speed 500 --record my.sdrec"
    )


@pytest.mark.parametrize("record", [None, "run.sdrec"])
def test_every_step_is_a_stormdeck_command(record: str | None) -> None:
    steps = next_steps(RunCommand(drill="thundering-herd", record=record), fresh_recording="t.sdrec")
    assert steps and all(step.command.startswith("stormdeck ") for step in steps)
