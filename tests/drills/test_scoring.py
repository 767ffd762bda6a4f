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

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "drills" / "examples"


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["drill", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def objectives_by_kind(outcome: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["kind"]: item for item in outcome["objectives"]}


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, Any]]:
    from console.drills.headless import run_headless
    from console.drills.schema import load_drill
    from console.drills.script import load_script

    drill = load_drill("thundering-herd")
    out = {}
    for name in ("runbook", "seeds-fix"):
        script = load_script(EXAMPLES / f"thundering-herd-{name}.toml", drill)
        out[name] = run_headless(drill, script).as_dict()
    return out


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
    ]
    assert measured["halt_within"]["met"] and measured["halt_within"]["value"] <= 90
    assert measured["connections_floor"]["met"]
    assert measured["no_override"]["met"]
    assert fix["score"] > 90


def test_the_fix_beats_the_runbook(runs: dict[str, dict[str, Any]]) -> None:
    assert runs["seeds-fix"]["score"] - runs["runbook"]["score"] > 50


def test_the_cli_prints_score_and_objectives(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = run_json(
        capsys, "thundering-herd", "--headless", "--actions", str(EXAMPLES / "thundering-herd-seeds-fix.toml")
    )
    assert outcome["score"] > 90
    for item in outcome["objectives"]:
        assert {"name", "met", "value", "limit", "why"} <= item.keys()
