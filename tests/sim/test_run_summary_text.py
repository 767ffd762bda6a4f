"""`stormdeck sim run`'s printed summary reads as the after-action report does."""

from __future__ import annotations

import json

import pytest

from console.cli import main
from console.cli.sim import _print_summary


@pytest.mark.parametrize(
    ("recovery_s", "shown"),
    [
        (0.0, "never below 95 % of before  (after the first disconnect)"),
        (42.0, "42.0 s  (first disconnect → back to ≥ 95 %)"),
        (None, "—  (first disconnect → back to ≥ 95 %)"),
    ],
)
def test_recovery_that_never_dipped_says_so_instead_of_zero_seconds(
    capsys: pytest.CaptureFixture[str], recovery_s: float | None, shown: str
) -> None:
    """Found in review: 'recovery 0.0 s' where the report says 'never below 95 %' for the same run."""
    assert main(["sim", "run", "demo", "--until", "3", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    _print_summary({**summary, "recovery_s": recovery_s})
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("recovery ")]
    assert row.split(maxsplit=1)[1] == shown


@pytest.mark.parametrize(
    ("set_", "until", "why"),
    [
        # 4,000 clients, no storm: no 2 s window holds 100 attempts.
        ([], "60", "too quiet to judge: no 2 s window held 100 attempts"),
        # A storm (the first batch at 2 s) the run ends 3 s into: all of it inside the 5 s left out after
        # a disconnect. It read "too quiet" beside a peak of thousands of attempts a 100 ms.
        (
            ["clients.count=400000", "nodes.capacity_connections=200000", "rollout.start_at_s=2"],
            "5",
            "too short",
        ),
    ],
)
def test_a_run_whose_lockstep_is_not_measured_says_null_and_why_not_zero(
    tmp_path, capsys: pytest.CaptureFixture[str], set_: list[str], until: str, why: str
) -> None:
    """Review: `sim run --json` said lockstep_index 0.0 — "measured, smoother than a smooth smear" — for a
    run with no storm window to judge. Null (not measured), with the reason in `lockstep_note` and in the
    text, as the console's chart and the report say it (console.waves.lockstep_text)."""
    scenario = tmp_path / "roll.toml"
    scenario.write_text(ROLLOUT, encoding="utf-8")
    overrides = [word for item in set_ for word in ("--set", item)]
    assert main(["sim", "run", str(scenario), "--until", until, *overrides, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["lockstep_index"] is None and summary["lockstep_note"].startswith(why), summary
    _print_summary(summary)
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("lockstep index ")]
    assert row.split(maxsplit=2)[2] == f"— ({summary['lockstep_note']})", row


def test_a_measured_lockstep_index_has_no_note(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "run", "demo", "--until", "3", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["lockstep_index"] > 0 and summary["lockstep_note"] is None, summary


ROLLOUT = """name = "roll"
duration_s = 120
[clients]
count = 4_000
[nodes]
count = 4
capacity_connections = 2_000
restart_s = 5
[rollout]
enabled = true
start_at_s = 20
batch_size = 2
interval_s = 30
"""


def test_rollout_completed_says_when_and_how_long_it_took(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review: "rollout completed 35.0 s" read as either the time it completed or how long it took. Two
    batches from 20 s, 30 s apart, each node back 5 s after its restart: done at 55 s, 35 s after it began."""
    scenario = tmp_path / "roll.toml"
    scenario.write_text(ROLLOUT, encoding="utf-8")
    assert main(["sim", "run", str(scenario), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["rollout_started_at_s"], summary["rollout_completed_at_s"]) == (20.0, 55.0)
    assert summary["rollout_completed_s"] == 35.0  # (how long it took, as before)
    assert main(["sim", "run", str(scenario)]) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("rollout completed ")]
    assert row.split(maxsplit=2)[2] == "at 55 s (took 35 s from its start at 20 s)"
    # A long one, in the console's spans (console.model.units.duration): graceful-drain's 100 minutes.
    _print_summary(
        {
            **summary,
            "rollout_started_at_s": 30.0,
            "rollout_completed_at_s": 6030.0,
            "rollout_completed_s": 6000.0,
        }
    )
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("rollout completed ")]
    assert row.split(maxsplit=2)[2] == "at 6,030 s (took 1 h 40 min from its start at 30 s)"


def test_a_scheduled_rollouts_start_is_written_at_the_fleet_second_it_started(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review: with start_at_s = 20, `--frames` wrote "rollout started" stamped 0.0 — when the scenario
    scheduled it — and its first batch at 20.0. Each event carries the fleet second it happened at."""
    scenario = tmp_path / "roll.toml"
    scenario.write_text(ROLLOUT, encoding="utf-8")
    frames = tmp_path / "frames.jsonl"
    assert main(["sim", "run", str(scenario), "--until", "25", "--frames", str(frames)]) == 0
    capsys.readouterr()
    rollout = [
        (line["time_s"], line["message"])
        for line in map(json.loads, frames.read_text(encoding="utf-8").splitlines())
        if line["type"] == "event" and line["kind"] == "rollout"
    ]
    assert [time_s for time_s, _ in rollout] == [20.0, 20.0], rollout
    assert rollout[0][1].startswith("rollout started: 2 batches of 2"), rollout
    assert rollout[1][1].startswith("batch 1/2"), rollout
