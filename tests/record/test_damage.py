"""A recording damaged in the middle (a copy taken mid-write, a lost page): everything before the damage
reads, reports and replays, and the replay ends there saying why — only the tail is checked at open."""

from __future__ import annotations

from pathlib import Path

import pytest

from console.protocol import Frame
from console.record.container import RecordKind
from console.record.reader import RecordingReader
from console.record.replay import ReplaySource, damage_note, held_reason
from console.record.report import write_report
from console.record.writer import RecordingWriter
from tests.record.conftest import Tick, header
from tests.record.test_replay import FakeClock

DAMAGED_FRAME = 40  # the 41st frame's member gets ten bytes of garbage in its body


def damaged_recording(path: Path, ticks: list[Tick], kind: RecordKind = RecordKind.FRAME) -> int:
    """A recording of every tick with one member's body overwritten — the first of `kind` after frame
    DAMAGED_FRAME - 1: that frame's successor, or an event written before it; returns its offset."""
    with RecordingWriter(path, header(), fsync=False) as writer:
        for tick in ticks:
            for event in tick.events:
                writer.write(event)
            writer.write(tick.frame)
    with RecordingReader(path) as whole:
        assert not whole.damaged_tail and whole.frame_count == len(ticks)
        entries = whole.entries()
        after = whole.frame_entry_index[DAMAGED_FRAME - 1] + 1
        target = next(e for e in entries[after:] if e.kind is kind)
    with path.open("r+b") as file:
        file.seek(target.offset + target.size // 2)
        file.write(b"\xff" * 10)
    return target.offset


def test_the_frames_before_the_damage_read_and_the_recording_ends_there(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    offset = damaged_recording(recording_path, outage_ticks)
    with RecordingReader(recording_path) as recording:
        assert recording.damaged_at is None  # not known at open: only the tail is checked
        frames = list(recording.frames())
        assert [f.time_s for f in frames] == [t.frame.time_s for t in outage_ticks[:DAMAGED_FRAME]]
        assert recording.damaged_at == offset and recording.frame_count == DAMAGED_FRAME
        assert recording.seek(10_000.0).time_s == frames[-1].time_s


def test_a_damaged_recording_is_reported_up_to_the_damage(
    outage_ticks: list[Tick], recording_path: Path, tmp_path: Path
) -> None:
    offset = damaged_recording(recording_path, outage_ticks)
    markdown = write_report(recording_path, tmp_path / "report").markdown.read_text()
    assert f"damaged from byte {offset:,} on" in markdown
    last = outage_ticks[DAMAGED_FRAME - 1].frame.time_s
    assert f"→ {int(last) // 60}:{int(last) % 60:02d})" in markdown  # the frames row ends before the damage


def test_a_damaged_recording_replays_to_the_damage_and_stops_saying_why(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    offset = damaged_recording(recording_path, outage_ticks)
    clock = FakeClock()
    with RecordingReader(recording_path) as recording:
        replay = ReplaySource(recording, clock=clock, speed=60.0)
        replay.playback.start(clock())
        clock.now_s += 3600.0  # far past the end at ×60
        played = [item for item in replay.take(clock()) if isinstance(item, Frame)]
        assert len(played) == DAMAGED_FRAME
        status = replay.status()
        last_s = played[-1].time_s
        assert status.finished and status.time_s == last_s and status.damaged_at == offset
        assert held_reason(status) == f"end of the recording: it is damaged from byte {offset:,} on"
        clock.now_s += 600.0
        assert replay.status().time_s == last_s  # the clock stands at the last record
        replay.seek(10_000.0)  # a seek past the damage lands on the last frame before it
        landed = [item for item in replay.take(clock()) if isinstance(item, Frame)]
        assert landed[-1].time_s == last_s


def test_a_replay_whose_damage_a_scan_found_first_plays_to_it_and_stops(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    """The replay screen scans the recording before playing it (its markers, its audit trail for the
    bar's last entry), and a scan that meets a damaged event cuts the reader short under the source: played
    up to the damage, the source read it again and the reader, looking for where to cut, raised
    StopIteration out of the replay. It ends there as when it finds the damage itself."""
    offset = damaged_recording(recording_path, outage_ticks, kind=RecordKind.EVENT)
    clock = FakeClock()
    with RecordingReader(recording_path) as recording:
        replay = ReplaySource(recording, clock=clock, speed=60.0)
        replay.playback.start(clock())
        recording.markers()  # as ReplayApp does, after the source is made
        assert recording.damaged_at == offset
        clock.now_s += 3600.0  # far past the end at ×60
        played = [item for item in replay.take(clock()) if isinstance(item, Frame)]
        status = replay.status()
        assert status.finished and status.damaged_at == offset and len(played) == DAMAGED_FRAME
        assert replay.last_audit_record() is None  # the recording holds none: nothing, and no error


def _recording_with_a_bad_frame(path: Path, ticks: list[Tick]) -> int:
    """Every tick's frame, the one at DAMAGED_FRAME with a field of the wrong type (an edited file): its
    member checks out, its content does not. Returns that member's offset."""
    with RecordingWriter(path, header(), fsync=False) as writer:
        for i, tick in enumerate(ticks):
            raw = tick.frame.model_dump_json()
            if i == DAMAGED_FRAME:
                raw = raw.replace('"connections":', '"connections":"many","was":', 1)
            writer.write(tick.frame, raw=raw)
    with RecordingReader(path) as whole:
        return [e for e in whole.entries() if e.kind is RecordKind.FRAME][DAMAGED_FRAME].offset


def test_a_record_of_the_wrong_shape_ends_the_recording_there_naming_its_field(
    outage_ticks: list[Tick], recording_path: Path, tmp_path: Path
) -> None:
    """`stormdeck report` of such a file printed pydantic's traceback, exit 1."""
    offset = _recording_with_a_bad_frame(recording_path, outage_ticks)
    with RecordingReader(recording_path) as recording:
        assert len(list(recording.frames())) == DAMAGED_FRAME
        assert recording.damaged_at == offset
        assert (
            recording.damage is not None
            and "connections" in recording.damage
            and "'many'" in recording.damage
        )
    markdown = write_report(recording_path, tmp_path / "report").markdown.read_text()
    assert f"read up to byte {offset:,}" in markdown and "connections" in markdown


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("recording_version", ["version 1 or older", "this one is version 7"]),
        ("api_version", ["fleet API v1", "api_version 'v2'"]),
    ],
)
def test_a_recording_this_stormdeck_would_misread_is_refused_at_open(
    change: str, words: list[str], outage_ticks: list[Tick], recording_path: Path, tmp_path: Path, capsys
) -> None:
    """A newer recording_version, or frames of another fleet API version, were read as if they were
    this one's, silently."""
    from console.cli import main

    made = header(recording_version=7) if change == "recording_version" else header()
    with RecordingWriter(recording_path, made, fsync=False) as writer:
        for tick in outage_ticks[:5]:
            frame = tick.frame
            writer.write(frame.model_copy(update={"api_version": "v2"}) if change == "api_version" else frame)
    assert main(["report", str(recording_path), "--out", str(tmp_path / "report")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"FILE: {str(recording_path)!r}" in err
    for word in words:
        assert word in err
    assert not (tmp_path / "report" / "report.md").exists()


def test_a_seek_or_step_past_a_record_of_the_wrong_shape_ends_the_replay_there(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    """A seek whose prefill (or landing frame) held the bad frame raised IndexError — the reader had cut
    the recording shorter — and the replay console showed a traceback. It lands on the last frame before
    the damage, the replay ends there naming the record and field, and seeks before it still work."""
    _recording_with_a_bad_frame(recording_path, outage_ticks)
    last_s = outage_ticks[DAMAGED_FRAME - 1].frame.time_s
    bad_s = outage_ticks[DAMAGED_FRAME].frame.time_s

    def frames_after(move) -> tuple[list[float], ReplaySource]:
        recording = RecordingReader(recording_path)
        replay = ReplaySource(recording, paused=True, clock=FakeClock())
        move(replay)
        played = [item.time_s for item in replay.take(1000.0) if isinstance(item, Frame)]
        return played, replay

    def step_onto(replay: ReplaySource) -> None:
        replay.seek(last_s)
        replay.take(1000.0)
        replay.step(1)

    jumps = (lambda r: r.seek(bad_s + 20.0), lambda r: r.seek(bad_s), lambda r: r.step(DAMAGED_FRAME + 1))
    for move in jumps:  # past it (in the prefill), onto it, and onto it by steps from before the first
        played, replay = frames_after(move)
        status = replay.status()
        assert played[-1] == last_s and status.frame_index == DAMAGED_FRAME - 1
        assert status.finished and status.frame_count == DAMAGED_FRAME
        note = damage_note(status)
        assert note is not None and "connections" in note and "'many'" in note
        replay.recording.close()
    played, replay = frames_after(step_onto)  # at the last good frame, one on: nothing more, the end
    assert played == [] and replay.status().finished and replay.status().frame_index == DAMAGED_FRAME - 1
    replay.recording.close()

    played, replay = frames_after(lambda r: (r.seek(bad_s + 20.0), r.take(1000.0), r.seek(10.0)))
    assert played[-1] == outage_ticks[9].frame.time_s and replay.status().frame_index == 9
    assert not replay.status().finished
    replay.recording.close()


def test_a_report_of_damage_in_the_middle_says_how_much_after_it_is_not_read(
    outage_ticks: list[Tick], recording_path: Path, tmp_path: Path
) -> None:
    """User pass: a copy damaged in its middle reported "damaged from byte 57,139 on (a torn last record: the
    recorder was stopped mid-write …); everything before it is reported" of a 165,847-byte file — as if one
    record were lost, not the 108 kB after it. The note says how many bytes of the file are not read."""
    offset = damaged_recording(recording_path, outage_ticks)
    size = recording_path.stat().st_size
    markdown = write_report(recording_path, tmp_path / "report").markdown.read_text()
    note = next(line for line in markdown.splitlines() if line.startswith("| note |"))
    assert (
        f"damaged from byte {offset:,} on: the last {size - offset:,} of its {size:,} bytes are not read"
        in note
    )
    assert "everything before it is reported" in note


def test_an_empty_file_is_said_to_be_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """User pass: `report empty.sdrec` (a recording that never got its first record: a copy made too early,
    a full disk) said "expected a stormdeck recording (its first record is a header)" of a file of 0 bytes."""
    from console.cli import main

    empty = tmp_path / "empty.sdrec"
    empty.touch()
    for command in ("report", "replay"):
        assert main([command, str(empty)]) == 2
        err = capsys.readouterr().err
        assert "FILE: 'empty.sdrec'" in err or f"FILE: '{empty}'" in err
        assert "the file is empty (0 bytes)" in err, err


def test_continuing_a_recording_damaged_near_its_end_is_refused_naming_the_byte(
    outage_ticks: list[Tick], recording_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """User pass: `record URL --out COPY` into a copy damaged in its last minutes (what the writer reads
    again to know the alarms still up) ended in a pydantic traceback ("Invalid JSON: EOF while parsing").
    It exits 2 naming the file, the byte and what to do, and leaves the file as it was."""
    from console.cli import main

    offset = damaged_recording(recording_path, outage_ticks)
    before = recording_path.read_bytes()
    token = tmp_path / "token"
    token.write_text("viewer a-token-long-enough-for-a-test\n")
    token.chmod(0o600)
    args = ["record", "http://127.0.0.1:9", "--out", str(recording_path), "--token-file", str(token)]
    assert main([*args, "--wait-s", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"stormdeck: --out: '{recording_path}' is not allowed; expected a recording"), err
    assert f"byte {offset:,}" in err and "record into a new file" in err, err
    assert recording_path.read_bytes() == before  # nothing cut, nothing appended
