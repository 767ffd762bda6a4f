"""Crash safety: a recording cut anywhere, or a recorder killed mid-write, still replays to its last frame."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from console.errors import InputError
from console.record.container import RecordKind, scan
from console.record.reader import RecordingReader
from console.record.writer import RecordingWriter
from tests.record.conftest import Tick, header

ROOT = Path(__file__).resolve().parents[2]


def _record(path: Path, ticks: list[Tick]) -> list[int]:
    """Write the ticks; return the byte offset at which each frame's member ends."""
    ends: list[int] = []
    with RecordingWriter(path, header(), fsync=False) as writer:
        for tick in ticks:
            for event in tick.events:
                writer.write(event)
            writer.write(tick.frame)
            ends.append(writer.size_bytes)
    return ends


def test_truncated_anywhere_replays_every_complete_frame(
    outage_ticks: list[Tick], recording_path: Path, tmp_path: Path
) -> None:
    ticks = outage_ticks[:40]
    ends = _record(recording_path, ticks)
    whole = recording_path.read_bytes()
    with recording_path.open("rb") as file:
        boundaries = {entry.offset + entry.size for entry in scan(file, len(whole))}
    header_end = min(boundaries)
    rng = random.Random(5)
    cuts = sorted({rng.randrange(0, len(whole)) for _ in range(60)} | {header_end, ends[0] - 1, ends[0]})
    cut_path = tmp_path / "cut.sdrec"
    for cut in cuts:
        cut_path.write_bytes(whole[:cut])
        if cut < header_end:
            with pytest.raises(InputError):
                RecordingReader(cut_path)
            continue
        complete = sum(end <= cut for end in ends)
        with RecordingReader(cut_path) as recording:
            assert recording.frame_count == complete, cut
            assert list(recording.frames()) == [t.frame for t in ticks[:complete]]
            assert recording.damaged_tail == (cut not in boundaries)


def test_a_damaged_tail_is_cut_off_and_recording_goes_on(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    ends = _record(recording_path, outage_ticks[:10])
    whole = recording_path.read_bytes()
    # The last member keeps its full length but its bytes are garbage: what a lost page could leave.
    damaged = whole[: ends[8] + 40] + bytes(len(whole) - ends[8] - 40)
    recording_path.write_bytes(damaged)
    with RecordingReader(recording_path) as recording:
        assert recording.frame_count == 9 and recording.damaged_tail
    with RecordingWriter(recording_path, header(), fsync=False) as writer:
        assert writer.last_frame_seq == outage_ticks[8].frame.seq
        writer.write(outage_ticks[9].frame)
    with RecordingReader(recording_path) as recording:
        assert list(recording.frames()) == [t.frame for t in outage_ticks[:10]]
        assert not recording.damaged_tail


def _frames_file(ticks: list[Tick], path: Path) -> Path:
    path.write_text("".join(t.frame.model_dump_json() + "\n" for t in ticks))
    return path


def _kill_after(args: list[str], frames_written: int) -> int:
    """Run the child writer, SIGKILL it once it has reported `frames_written` frames; return the last seq."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.record._writer_child", *args],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert child.stdout is not None
    last = 0
    try:
        for line in child.stdout:  # the child reports each frame as it lands; no sleeps
            last = int(line)
            if last >= frames_written:
                break
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    assert last >= frames_written, "the child writer died before writing enough frames"
    return last


@pytest.mark.parametrize("frames_written", [3, 57])
def test_sigkill_mid_write_keeps_every_reported_frame(
    outage_ticks: list[Tick], tmp_path: Path, frames_written: int
) -> None:
    out = tmp_path / "killed.sdrec"
    last = _kill_after(
        [str(_frames_file(outage_ticks[25:45], tmp_path / "f.jsonl")), str(out)], frames_written
    )
    with RecordingReader(out) as recording:
        frames = list(recording.frames())
    # Everything reported is there; the child may have written a few more before the signal landed.
    assert len(frames) >= last
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    source = outage_ticks[25:45]
    assert all(f.nodes == source[(f.seq - 1) % len(source)].frame.nodes for f in frames)


def test_sigkill_during_retention_rewrites_leaves_a_readable_recording(
    outage_ticks: list[Tick], tmp_path: Path
) -> None:
    out = tmp_path / "killed.sdrec"
    frames = _frames_file(outage_ticks[25:45], tmp_path / "f.jsonl")
    # 64 KiB holds ~30 of these frames, so the file is rewritten every few frames.
    last = _kill_after([str(frames), str(out), str(64 * 1024)], 150)
    with RecordingReader(out) as recording:
        seqs = [f.seq for f in recording.frames()]
        assert recording.header.trimmed_before_s is not None
        assert all(e.kind is not RecordKind.HEADER for e in recording.entries()[1:])
    assert seqs[0] > 1 and seqs == list(range(seqs[0], seqs[-1] + 1)) and seqs[-1] >= last
    assert out.stat().st_size <= 64 * 1024 + 4096  # at most one frame past the limit


def test_a_file_cut_inside_its_header_is_called_a_recording_cut_short(
    outage_ticks: list[Tick],
    recording_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """User pass: a recording whose copy stopped inside its first record read "expected a stormdeck
    recording (its first record is a header)" — as if it were some other file. It is a stormdeck recording
    cut short in its header: that is what replay, report and a recorder asked to continue it say, with
    what there is (nothing after the header can be) and what to do. A file that is no recording still reads
    as one that is not."""
    from console.cli import main
    from console.record.container import HEADER_BYTES

    monkeypatch.setenv("STORMDECK_TOKEN", "t")  # `record` reads its token before its --out
    _record(recording_path, outage_ticks[:3])
    whole = recording_path.read_bytes()
    with recording_path.open("rb") as file:
        header_end = min(entry.offset + entry.size for entry in scan(file, len(whole)))
    cut_path = tmp_path / "cut.sdrec"
    for cut in (2, 17, HEADER_BYTES - 1, HEADER_BYTES, header_end - 1):
        cut_path.write_bytes(whole[:cut])
        with pytest.raises(InputError) as refused:
            RecordingReader(cut_path)
        told = str(refused.value)
        assert "cut short inside its header (truncated header" in told and f"{cut} bytes" in told, told
        assert "not allowed" not in told and "record again" in told and "copy" in told, told
        for argv in (["report", str(cut_path)], ["replay", str(cut_path)]):
            assert main(argv) == 2
            err = capsys.readouterr().err
            assert err.startswith("stormdeck: FILE: ") and "truncated header" in err, err
        assert main(["record", "http://127.0.0.1:9", "--out", str(cut_path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("stormdeck: --out: ") and "truncated header" in err, err
        assert cut_path.read_bytes() == whole[:cut]  # nothing cut or written

    cut_path.write_bytes(b"\x1f\x8b\x08\x00" + bytes(20))  # a gzip file, not one of ours
    with pytest.raises(InputError, match="its first record is a header") as refused:
        RecordingReader(cut_path)
    assert "truncated" not in str(refused.value)
