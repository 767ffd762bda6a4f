"""A recording of `stormdeck sim serve SCENARIO --seed N --set K=V` made by `stormdeck record URL` names the
scenario, its seed and its overrides: the stream's hello says them, and the report's Session section shows
them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from console.cli import main
from console.cli.embedded import FALLBACK_SCENARIO
from console.protocol import Hello
from console.record.daemon import StreamRecorder
from console.record.reader import RecordingReader
from tests.server.test_serve_cli import SMALL, read_announcement, serve_command


def test_a_recording_of_sim_serve_names_its_scenario_seed_and_overrides_in_the_report(
    tmp_path: Path, capsys
) -> None:
    """Review: the report read "scenario —" — the hello did not name the scenario, and `record URL` knows
    nothing else of the fleet. Then it named the scenario but not the seed: the run could not be repeated.
    Then "thundering-herd (seed 7)" for a fleet served with `--set nodes.count=8 …`: 8 nodes, not 480 —
    the scenario as named is another fleet, and the run could not be repeated from it either."""
    process = subprocess.Popen(serve_command("--seed", "7"), stdout=subprocess.PIPE, text=True)
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
        header = recording.header
        assert (header.scenario, header.seed, header.overrides) == (FALLBACK_SCENARIO, 7, SMALL)
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    sets = " ".join(f"--set {override}" for override in SMALL)
    assert f"| scenario | {FALLBACK_SCENARIO} (seed 7) {sets} |" in report, report[:1500]


def test_an_older_servers_hello_leaves_the_seed_unsaid(tmp_path: Path) -> None:
    """A hello without `seed` (an older server, or a controller) still reads, and the header says none."""
    hello = Hello.model_validate_json(
        '{"type": "hello", "fleet": "f", "source": "simulator", "epoch": "e", "seq": 0, "scenario": "demo"}'
    )
    assert (hello.seed, hello.overrides) == (None, None)
    recorder = StreamRecorder(tmp_path / "old.sdrec", fsync=False)
    try:
        recorder.receive(hello)
        assert recorder.writer is not None
        header = recorder.writer.header
        assert (header.scenario, header.seed, header.overrides) == ("demo", None, None)
    finally:
        recorder.close()
