"""A hint comes while acting on it can still earn the objective it serves.

thundering-herd told "halt the rollout" at 420 s, when its 40-point objective (a halt within 90 s of the
abort criterion, met at 161 s) had been lost since 251 s: the hint could only tell the trainee what they
had already lost. Each hint names the objectives it serves (`serves`, and the one its `unless_done` action
earns); the drill file is refused where the deadline is fixed (an action's `by_s`, a rollout's
`within_s`), and every packaged drill, run with nobody acting, is checked here against the deadlines its
fleet makes (the abort criterion's, a floor broken, a total over its grace).
"""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from console.drills.headless import drill_scenario, run_headless
from console.drills.live import DrillProgress, Standing
from console.drills.schema import HINT_LEAD_S, HINT_TEXT_MAX, build_drill, list_drills, load_drill
from console.errors import InputError
from console.protocol import Frame

BASE: dict[str, Any] = {
    "name": "hinted",
    "title": "A hinted drill",
    "seed_source": "a test: no seed",
    "scenario": "demo",
    "briefing": "A test drill.",
    "objectives": [
        {"name": "halted", "kind": "halt_within", "points": 40},
        {"name": "admission by 40 s", "kind": "action_used", "action": "admission", "by_s": 40, "points": 30},
        {"name": "timeouts", "kind": "totals_max", "field": "timeouts_per_s", "max": 10, "points": 10},
        {"name": "backlog", "kind": "totals_max", "field": "resync_backlog", "max": 10, "points": 10},
        {"name": "no override", "kind": "no_override", "points": 10},
    ],
}


def hinted(**hint: Any) -> dict[str, Any]:
    return {**BASE, "hints": [{"after_s": 10, "text": "a hint", **hint}]}


def test_a_hint_serves_the_objective_its_unless_done_action_earns() -> None:
    drill = build_drill(hinted(unless_done="rollout_halt"))
    assert drill.hints[0].serves == (0,)
    assert build_drill(hinted(unless_done="admission")).hints[0].serves == (1,)
    assert build_drill(hinted(unless_done="drain")).hints[0].serves == ()  # no objective counts a drain
    assert build_drill(hinted()).hints[0].serves == ()


def test_serves_names_an_objective_by_its_kind_or_its_place() -> None:
    assert build_drill(hinted(serves="no_override")).hints[0].serves == (4,)
    assert build_drill(hinted(serves="objectives.3")).hints[0].serves == (3,)
    both = build_drill(hinted(serves=["objectives.2", "halt_within"], unless_done="rollout_halt"))
    assert both.hints[0].serves == (0, 2)


@pytest.mark.parametrize(
    ("serves", "message"),
    [
        ("totals_max", r"hints\.0\.serves: 'totals_max' is not allowed; .*objectives\.2, objectives\.3"),
        ("recovery", r"hints\.0\.serves: 'recovery' is not allowed; .*halt_within.*objectives\.0"),
        (
            "objectives.5",
            r"hints\.0\.serves: 'objectives\.5' is not allowed; .*objectives\.0 to objectives\.4",
        ),
        (3, r"hints\.0\.serves: 3 is not allowed; expected an objective's kind"),
    ],
)
def test_serves_that_names_no_single_objective_is_refused_naming_the_field(serves: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        build_drill(hinted(serves=serves))


def test_a_hint_too_late_for_a_fixed_deadline_is_refused_when_the_drill_loads() -> None:
    # admission counts by 40 s: a hint at 30 s leaves 10 s to read it, open the form and confirm.
    latest = 40 - HINT_LEAD_S
    assert build_drill(hinted(after_s=latest, unless_done="admission")).hints[0].after_s == latest
    with pytest.raises(InputError, match=r"hints\.0\.after_s: 30 is not allowed; expected at most 20 .*by_s"):
        build_drill(hinted(after_s=30, unless_done="admission"))
    rollout = {"name": "done", "kind": "rollout_completed", "within_s": 100, "points": 10}
    with pytest.raises(InputError, match=r"hints\.0\.after_s: 90 .*at most 80 .*objectives\.5.*within_s 100"):
        build_drill(
            {**hinted(after_s=90, serves="rollout_completed"), "objectives": [*BASE["objectives"], rollout]}
        )


def test_the_packaged_drill_files_name_what_their_hints_serve() -> None:
    # thundering-herd's hints about the CPU and the halt serve its halt objective (and are checked below).
    drill = load_drill("thundering-herd")
    (halt,) = [i for i, objective in enumerate(drill.objectives) if objective.kind == "halt_within"]
    assert [hint.after_s for hint in drill.hints if halt in hint.serves] == [135.0, 190.0]
    (headroom,) = [i for i, objective in enumerate(drill.objectives) if objective.kind == "totals_min"]
    assert [hint.after_s for hint in drill.hints if headroom in hint.serves] == [300.0]


def lost_at(name: str) -> tuple[dict[int, float], float]:
    """Fleet second each objective of packaged drill `name` is first lost (failed) with nobody acting, as
    the drill screen reads it; and the drill's length."""
    drill = load_drill(name)
    end_s = drill_scenario(drill).duration_s
    live = DrillProgress(drill, end_s=end_s)
    lost: dict[int, float] = {}

    def on_frame(frame: Frame) -> None:
        live.add_frame(frame)
        for index, item in enumerate(live.objectives()):
            if item.standing is Standing.FAILED:
                lost.setdefault(index, frame.time_s)

    run_headless(drill, on_frame=on_frame)
    return lost, end_s


@pytest.mark.parametrize("name", [name for name, _ in list_drills()])
def test_every_packaged_hint_comes_in_time_to_earn_what_it_serves(name: str) -> None:
    drill = load_drill(name)
    lost, end_s = lost_at(name)
    late = [
        f"hint at {hint.after_s:g} s ({hint.text[:40]}…): objectives.{index} lost at {lost[index]:g} s"
        for hint in drill.hints
        for index in hint.serves
        if hint.after_s + HINT_LEAD_S > lost.get(index, end_s + HINT_LEAD_S)
    ]
    assert late == []


def test_thundering_herd_halting_when_told_still_earns_the_halt() -> None:
    """The halt hint read and acted on within the lead it leaves: the 40 points are still there."""
    from console.drills.script import Script, ScriptedAction

    drill = load_drill("thundering-herd")
    (told,) = [hint for hint in drill.hints if hint.unless_done == "rollout_halt"]
    halt = ScriptedAction(at_s=told.after_s + HINT_LEAD_S, action="rollout_halt", confirm=True)
    run = run_headless(drill, Script(actor="trainee", actions=(halt,)))
    assert run.score is not None
    (measured,) = [item for item in run.score.objectives if item.kind == "halt_within"]
    assert measured.met, measured.why


def test_thundering_herd_adding_capacity_when_told_still_earns_the_headroom() -> None:
    """The capacity hint acted on within its lead: the nodes (ready 240 s later) bring headroom back to
    the 35 % budget inside the 12 minutes its objective allows. Its old hint (admission, at 600 s) asked,
    after the halt, for a move that rationed nothing."""
    from console.drills.script import Script, ScriptedAction

    drill = load_drill("thundering-herd")
    (told,) = [hint for hint in drill.hints if hint.unless_done == "add_capacity"]
    add = ScriptedAction(
        at_s=told.after_s + HINT_LEAD_S, action="add_capacity", body={"count": 20}, confirm=True
    )
    run = run_headless(drill, Script(actor="trainee", actions=(add,)))
    assert run.score is not None
    (measured,) = [item for item in run.score.objectives if item.kind == "totals_min"]
    assert measured.met, measured.why


def test_a_drill_file_with_hints_reads_as_toml_with_serves() -> None:
    text = """
name = "t"
title = "t"
seed_source = "a test"
scenario = "demo"
briefing = "b"

[[hints]]
after_s = 5
serves = ["objectives.0"]
text = "Hold the floor."

[[objectives]]
name = "floor"
kind = "connections_floor"
min_pct = 90
points = 10
"""
    assert build_drill(tomllib.loads(text)).hints[0].serves == (0,)


def test_a_hint_longer_than_two_rows_at_80_columns_is_refused_naming_its_length() -> None:
    # The drill screen shows the newest hint whole on a line of its own (console/ui/widgets/hint_line.py):
    # socketio-lockstep's 151 characters took three rows at 80×24, and the alarms a row.
    assert build_drill(hinted(text="x" * HINT_TEXT_MAX)).hints[0].text == "x" * HINT_TEXT_MAX
    with pytest.raises(
        InputError, match=rf"hints\.0\.text: .* expected at most {HINT_TEXT_MAX} characters .*121"
    ):
        build_drill(hinted(text="x" * (HINT_TEXT_MAX + 1)))
    assert all(
        len(hint.text) <= HINT_TEXT_MAX for name, _ in list_drills() for hint in load_drill(name).hints
    )
