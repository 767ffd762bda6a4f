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


def test_a_run_too_quiet_for_a_lockstep_index_says_so_not_zero(capsys: pytest.CaptureFixture[str]) -> None:
    """As the console and the report say it (console.waves.lockstep_text): "0.00" read below a smooth smear."""
    assert main(["sim", "run", "demo", "--until", "3", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    _print_summary({**summary, "lockstep_index": 0.0})
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("lockstep index ")]
    assert "too quiet to judge" in row and "0.00" not in row, row
