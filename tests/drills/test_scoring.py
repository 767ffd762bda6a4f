"""Issue #5, section 6: two headless scripted runs of thundering-herd give different scores.

Both go through `stormdeck drill ... --headless --actions FILE --json` with the scripts shipped in
docs/drills/examples/, so the examples are what is tested. Each run is the drill's own size (48 nodes,
1.3 M clients, 1500 fleet seconds): about two seconds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from console.cli import main
from console.drills.headless import DrillRun
from console.protocol import NodeState
from console.record.reader import RecordingReader

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "drills" / "examples"


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["drill", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def objectives_by_kind(outcome: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["kind"]: item for item in outcome["objectives"]}


@pytest.fixture(scope="module")
def fix_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("seeds-fix") / "seeds-fix.sdrec"


@pytest.fixture(scope="module")
def drill_runs(fix_recording: Path) -> dict[str, DrillRun]:
    from console.drills.headless import run_headless
    from console.drills.schema import load_drill
    from console.drills.script import Script, load_script

    drill = load_drill("thundering-herd")
    out = {}
    for name in ("runbook", "seeds-fix"):
        script = load_script(EXAMPLES / f"thundering-herd-{name}.toml", drill)
        out[name] = run_headless(drill, script, record=fix_recording if name == "seeds-fix" else None)
    # The seeds' fix but its first move: the halt alone, at the same second.
    fix = load_script(EXAMPLES / "thundering-herd-seeds-fix.toml", drill)
    assert fix.actions[0].action == "rollout_halt"
    out["halt-only"] = run_headless(drill, Script("halt-only", fix.actions[:1]))
    return out


@pytest.fixture(scope="module")
def runs(drill_runs: dict[str, DrillRun]) -> dict[str, dict[str, Any]]:
    return {name: run.as_dict() for name, run in drill_runs.items()}


def test_follow_the_runbook_scores_low(runs: dict[str, dict[str, Any]]) -> None:
    runbook = runs["runbook"]
    measured = objectives_by_kind(runbook)
    assert runbook["actions"] == []  # keep restarting on schedule: the operator does nothing
    assert not measured["halt_within"]["met"] and "never halted" in measured["halt_within"]["why"]
    assert not measured["connections_floor"]["met"]
    assert measured["connections_floor"]["value"] < 93.0
    assert runbook["penalty"] > 5
    assert runbook["score"] < 40


def test_the_seeds_fix_scores_high(runs: dict[str, dict[str, Any]]) -> None:
    fix = runs["seeds-fix"]
    measured = objectives_by_kind(fix)
    assert [(a["action"], a["outcome"]) for a in fix["actions"]] == [
        ("rollout_halt", "applied"),
        ("admission", "applied"),
        ("add_capacity", "applied"),
    ]
    assert measured["halt_within"]["met"] and measured["halt_within"]["value"] <= 90
    assert measured["connections_floor"]["met"]
    assert measured["no_override"]["met"]
    assert fix["score"] > 90


def test_the_capacity_the_seeds_fix_adds_earns_what_it_restores_not_a_press_of_a_key(
    runs: dict[str, dict[str, Any]],
) -> None:
    """Reviewer: a halt alone scored 99.3, the same as the seeds' whole fix (halt, admission, 20 nodes):
    no objective measured what the added nodes change. They bring headroom back to the outage seed's 35 %
    budget (the fleet starts at 20 %), which the halt alone never does; that is what earns the difference.
    Admission, tightened after the halt, rationed nothing (no upgrade was answered 503): it earns nothing."""
    fix, halt = objectives_by_kind(runs["seeds-fix"]), objectives_by_kind(runs["halt-only"])
    differing = sorted(kind for kind in fix if fix[kind]["met"] != halt[kind]["met"])
    assert differing == ["totals_min"]
    assert "headroom" in fix["totals_min"]["name"]
    assert fix["totals_min"]["met"] and not halt["totals_min"]["met"]
    assert fix["totals_min"]["why"].startswith("headroom under 35 % for 7 min 30 s")
    assert halt["totals_min"]["why"].startswith("headroom under 35 % for 25 min")
    assert runs["seeds-fix"]["score"] - runs["halt-only"]["score"] == fix["totals_min"]["points"] > 0
    assert runs["halt-only"]["score"] > runs["runbook"]["score"]


def test_the_seeds_fix_really_adds_capacity(drill_runs: dict[str, DrillRun], fix_recording: Path) -> None:
    """The 20 nodes (the seed's 200 of 480, at the drill's tenth) provision and then serve: ready after
    the scenario's 240 s, taking connections — and the runbook's fleet never grows."""
    fix, runbook = drill_runs["seeds-fix"], drill_runs["runbook"]
    added_at_s = next(a.time_s for a in fix.actions if a.action == "add_capacity")
    announced = [e for e in fix.events if e.kind == "capacity"]
    assert len(announced) == 1 and announced[0].data["count"] == 20
    new_ids = set(announced[0].data["nodes"])
    assert runbook.last_frame is not None and fix.last_frame is not None
    assert len({n.id for n in runbook.last_frame.nodes}) == 48
    last = {n.id: n for n in fix.last_frame.nodes}
    assert len(last) == 68 and new_ids <= last.keys()
    assert all(last[i].state is NodeState.READY and last[i].connections > 0 for i in new_ids)
    with RecordingReader(fix_recording) as recording:  # the run keeps no frames; its recording has them all
        ready_at_s = next(
            f.time_s
            for f in recording.frames()
            if all(n.state is NodeState.READY for n in f.nodes if n.id in new_ids)
            and new_ids <= {n.id for n in f.nodes}
        )
    provisioning_s = fix.scenario.nodes.provisioning_s
    assert provisioning_s == 240
    assert added_at_s + provisioning_s <= ready_at_s <= added_at_s + provisioning_s + 2


def test_the_report_of_the_fix_shows_the_capacity_it_added(
    drill_runs: dict[str, DrillRun], fix_recording: Path, tmp_path: Path
) -> None:
    assert main(["report", str(fix_recording), "--out", str(tmp_path)]) == 0
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| 3:30 | 04:03:30 | action (seeds-fix) | add_capacity → applied |" in report  # fleet, drill clock
    assert "operator added 20 nodes" in report
    assert "done — 20 nodes added at 04:03:30, ready at 04:07:30" in report  # the drill clock, as its panel


def test_the_report_judges_the_seeds_fix_against_the_storms_recovery_not_a_short_alarms_clear(
    drill_runs: dict[str, DrillRun], fix_recording: Path, tmp_path: Path
) -> None:
    """Reviewer: the report called the seeds' fix "not in time — admission tightened at 04:03:25, 70 s after
    the alarm had cleared", judged against a drain ÷ inflow alarm that held 14 s after the second batch, while
    the storm was still on: the hot nodes stayed over the abort line (cpu_abort) until 04:17:45, 14 minutes
    after the fix, as the seed's storm "slowly subsides over the next 14 minutes". The storm's fix is judged
    against the storm's recovery."""
    assert main(["report", str(fix_recording), "--out", str(tmp_path)]) == 0
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    seeds = report[report.index("## What the seeds say") :]
    assert "not in time" not in seeds, seeds
    drain_inflow = seeds[seeds.index("### Drain ÷ inflow below 1") :]
    assert "- **In this session:** done — admission tightened at 04:03:25." in drain_inflow, drain_inflow
    assert "cpu_abort; at its worst" in report  # the hot nodes' alarm, cleared in the recording


def test_the_fix_beats_the_runbook(runs: dict[str, dict[str, Any]]) -> None:
    assert runs["seeds-fix"]["score"] - runs["runbook"]["score"] > 50


def test_the_cli_prints_score_and_objectives(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = run_json(
        capsys, "thundering-herd", "--headless", "--actions", str(EXAMPLES / "thundering-herd-seeds-fix.toml")
    )
    assert outcome["score"] > 90
    for item in outcome["objectives"]:
        assert {"name", "met", "value", "limit", "why"} <= item.keys()


def test_the_seeds_fix_script_says_when_the_abort_criterion_comes_as_the_drill_measures_it(
    runs: dict[str, dict[str, Any]],
) -> None:
    # Its comment said 171 s while the drill measures 161 s (171 s is seed 8's): a trainee reading the
    # script to learn the timing was off by ten seconds against the drill's own clock.
    import re

    comment = (EXAMPLES / "thundering-herd-seeds-fix.toml").read_text(encoding="utf-8")
    stated = re.search(r"at (\d+) s in this drill", comment)
    assert stated is not None
    measured = re.search(
        r"abort criterion at (\d+) s", objectives_by_kind(runs["seeds-fix"])["halt_within"]["why"]
    )
    assert measured is not None and stated[1] == measured[1]
