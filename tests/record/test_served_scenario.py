"""A recording of `stormdeck sim serve SCENARIO` made by `stormdeck record URL` names the scenario: the
stream's hello says it, and the report's Session section shows it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from console.cli import main
from console.cli.embedded import FALLBACK_SCENARIO
from console.record.reader import RecordingReader
from tests.server.test_serve_cli import read_announcement, serve_command


def test_a_recording_of_sim_serve_names_its_scenario_in_the_report(tmp_path: Path, capsys) -> None:
    """Review: the report read "scenario —" — the hello did not name the scenario, and `record URL` knows
    nothing else of the fleet."""
    process = subprocess.Popen(serve_command(), stdout=subprocess.PIPE, text=True)
    try:
        served = read_announcement(process)
        url, token = served["url"], served["token"].split()[0]  # the token file the server made
        out = tmp_path / "served.sdrec"
        recorded = ["record", url, "--out", str(out), "--token-file", token, "--frames", "2", "--no-fsync"]
        assert main(recorded) == 0
    finally:
        process.kill()
        process.wait()
    with RecordingReader(out) as recording:
        assert recording.header.scenario == FALLBACK_SCENARIO
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert f"| scenario | {FALLBACK_SCENARIO} |" in report, report[:1500]
