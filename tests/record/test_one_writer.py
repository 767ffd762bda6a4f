"""One writer per recording: a second recorder on the same file is refused (it would interleave its frames
with the first's), and the hold goes with the writer — on close, and when its process is killed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from console.cli import main
from console.errors import InputError
from console.record.daemon import StreamRecorder
from console.record.writer import RecordingWriter
from tests.record.conftest import Tick, header


def _token_file(tmp_path: Path) -> Path:
    token_file = tmp_path / "token"
    token_file.write_text("viewer a-token-long-enough-0123456789 tests\n")
    token_file.chmod(0o600)
    return token_file


def test_a_second_writer_is_refused_until_the_first_closes(tmp_path: Path, outage_ticks: list[Tick]) -> None:
    out = tmp_path / "session.sdrec"
    first = RecordingWriter(out, header())
    first.write(outage_ticks[0].frame)
    with pytest.raises(InputError) as refused:
        RecordingWriter(out, header(), field="--record")
    assert refused.value.field == "--record" and str(out) in str(refused.value)
    assert "another recorder" in str(refused.value)
    first.close()
    with RecordingWriter(out, header()) as second:  # the first let go: it continues the file
        assert second.last_frame_seq == outage_ticks[0].frame.seq
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.sdrec"], "no lock left behind"


def test_a_recorder_holds_its_file_before_the_first_hello(tmp_path: Path) -> None:
    """A recorder waiting for its stream holds the file too: else two started together would both write."""
    out = tmp_path / "session.sdrec"
    waiting = StreamRecorder(out)
    assert not out.exists()
    with pytest.raises(InputError, match="another recorder"):
        StreamRecorder(out)
    waiting.close()
    StreamRecorder(out).close()


def test_a_killed_recorders_hold_goes_with_it(tmp_path: Path, outage_ticks: list[Tick]) -> None:
    frames = tmp_path / "frames.jsonl"
    frames.write_text("\n".join(t.frame.model_dump_json() for t in outage_ticks[:5]) + "\n")
    out = tmp_path / "session.sdrec"
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.record._writer_child", str(frames), str(out)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "1"
        with pytest.raises(InputError, match="another recorder"):
            RecordingWriter(out, header())
    finally:
        child.kill()
        child.wait()
    RecordingWriter(out, header()).close()  # the kernel released the dead writer's lock


def test_the_cli_refuses_a_second_recorder_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "session.sdrec"
    holder = StreamRecorder(out)
    try:
        args = ["record", "http://127.0.0.1:9", "--out", str(out), "--token-file", str(_token_file(tmp_path))]
        assert main(args) == 2
    finally:
        holder.close()
    err = capsys.readouterr().err
    assert "--out" in err and str(out) in err and "another recorder" in err


@pytest.mark.parametrize(
    "command",
    [
        ["record", "http://127.0.0.1:9", "--out"],
        ["attach", "http://127.0.0.1:9", "--record"],
        ["drill", "thundering-herd", "--headless", "--record"],
    ],
)
def test_a_recording_into_a_missing_directory_is_refused_as_sim_run_refuses_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    missing = tmp_path / "nonexistent" / "x.sdrec"
    args = [*command, str(missing)]
    if command[0] != "drill":
        args += ["--token-file", str(_token_file(tmp_path))]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert command[-1] in err and str(missing.parent) in err
    assert not missing.parent.exists(), "nothing made"
