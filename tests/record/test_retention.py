"""Retention drops the oldest frames and events, keeps the audit trail, and never loses the newest frame."""

from __future__ import annotations

from pathlib import Path

import pytest

from console.errors import InputError
from console.record.reader import RecordingReader
from console.record.writer import RecordingWriter, Retention
from tests.record.conftest import Tick, header
from tests.record.test_roundtrip import _blocked_drain


def _record(path: Path, ticks: list[Tick], retention: Retention) -> RecordingWriter:
    with RecordingWriter(path, header(), retention=retention, fsync=False) as writer:
        for tick in ticks:
            for event in tick.events:
                writer.write(event)
            writer.write(tick.frame)
            if tick.frame.time_s == 5.0:
                writer.write(_blocked_drain(5.0))
    return writer


def test_age_keeps_the_newest_window(outage_ticks: list[Tick], recording_path: Path) -> None:
    writer = _record(recording_path, outage_ticks, Retention(max_age_s=20))
    assert writer.compactions >= 1
    with RecordingReader(recording_path) as recording:
        times = [f.time_s for f in recording.frames()]
        assert times[-1] == 90.0
        # At least max_age_s is kept, and at most the slack (10 %, ≥ 1 s) more.
        assert 20 <= times[-1] - times[0] <= 20 + 2 + 1
        assert times == [float(t) for t in range(int(times[0]), 91)]
        assert all(e.time_s >= times[0] for e in recording.events())
        assert [a.time_s for a in recording.actions()] == [5.0]  # the audit trail outlives the frames
        assert recording.header.trimmed_before_s == pytest.approx(times[0], abs=1)


def test_size_keeps_the_file_under_its_limit(outage_ticks: list[Tick], recording_path: Path) -> None:
    limit = 32 * 1024
    unlimited = recording_path.with_name("whole.sdrec")
    _record(unlimited, outage_ticks, Retention())
    assert unlimited.stat().st_size > 1.3 * limit, (
        "the run must outgrow the limit for this test to mean anything"
    )
    writer = _record(recording_path, outage_ticks, Retention(max_bytes=limit))
    assert writer.compactions >= 1
    assert recording_path.stat().st_size <= limit
    with RecordingReader(recording_path) as recording, RecordingReader(unlimited) as whole:
        kept = list(recording.frames())
        assert kept[-1].time_s == 90.0
        assert kept == list(whole.frames())[-len(kept) :]  # the newest frames, untouched


@pytest.mark.parametrize(
    ("fields", "refused"),
    [
        ({"max_bytes": 1000}, "max_bytes"),
        ({"max_age_s": 0}, "max_age_s"),
        ({"max_age_s": float("nan")}, "max_age_s"),
        ({"max_bytes": 10**6, "keep_share": 1.0}, "keep_share"),  # a good max_bytes beside it
    ],
)
def test_nonsense_limits_are_refused_with_the_field_named(fields: dict, refused: str) -> None:
    with pytest.raises(InputError) as error:
        Retention(**fields)
    assert error.value.field == refused and str(fields[refused]) in str(error.value), str(error.value)


def _record_a_restart(path: Path, ticks: list[Tick], retention: Retention) -> RecordingWriter:
    """80 s of a source, then the source restarting (a new epoch, its fleet time from 1 again) for 40 s."""
    with RecordingWriter(path, header(), retention=retention, fsync=False) as writer:
        for tick in ticks[:80]:
            writer.write(tick.frame)
        for tick in ticks[:40]:
            writer.write(tick.frame.model_copy(update={"epoch": "restarted"}))
    return writer


def _record_first_run_bytes(path: Path, ticks: list[Tick]) -> int:
    """The size of a file holding the first run's 80 s alone (header included)."""
    first = path.with_name("first.sdrec")
    with RecordingWriter(first, header(), fsync=False) as writer:
        for tick in ticks[:80]:
            writer.write(tick.frame)
    return first.stat().st_size


def test_age_counts_on_after_the_source_restarts(outage_ticks: list[Tick], recording_path: Path) -> None:
    # A restarted source's fleet time starts again from 1: measured against the first run's newest 80 s,
    # its frames never aged the first run's out, and the file grew past the limit for as long as the new
    # run took to pass 80 s (days, for --max-age-s 86400 on a fleet restarted after a few days).
    _record_a_restart(recording_path, outage_ticks, Retention(max_age_s=20))
    with RecordingReader(recording_path) as recording:
        kept = list(recording.frames())
        assert (kept[-1].epoch, kept[-1].time_s) == ("restarted", 40.0)
        assert {f.epoch for f in kept} == {"restarted"}, "the first run is more than 20 s behind"
        assert [f.time_s for f in kept] == [float(t) for t in range(int(kept[0].time_s), 41)]
        assert 20 <= recording.frame_times_s[-1] - recording.frame_times_s[0] <= 20 + 2 + 1


def test_size_drops_the_oldest_frames_after_the_source_restarts(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    # The cut was a fleet time taken among the first run's frames: the restarted run's frames, stamped
    # earlier, fell under it — retention threw away the newest frames (the restart itself) and kept old ones.
    # The limit leaves room for the header and the whole restarted run after a cut to keep_share, measured
    # rather than guessed: a fixed 32 kB held them until the frames gained a field.
    whole = _record_a_restart(recording_path.with_name("whole.sdrec"), outage_ticks, Retention()).path
    header_and_first_run = _record_first_run_bytes(recording_path, outage_ticks)
    header_only = (
        _record_a_restart(recording_path.with_name("empty.sdrec"), [], Retention()).path.stat().st_size
    )
    header_and_restart = whole.stat().st_size - header_and_first_run + header_only
    limit = max(32 * 1024, int(1.25 * header_and_restart / Retention().keep_share))
    assert whole.stat().st_size > 1.3 * limit, "the run must outgrow the limit for this test to mean anything"
    writer = _record_a_restart(recording_path, outage_ticks, Retention(max_bytes=limit))
    assert writer.compactions >= 1 and recording_path.stat().st_size <= limit
    with RecordingReader(recording_path) as recording:
        kept = [(f.epoch, f.time_s) for f in recording.frames()]
    restarted = [("restarted", float(t)) for t in range(1, 41)]
    assert kept[-len(restarted) :] == restarted, "every frame of the restarted run is newer than the first's"
    first_run = [time_s for epoch, time_s in kept[: -len(restarted)] if epoch != "restarted"]
    assert len(first_run) == len(kept) - len(restarted)
    assert first_run == [float(t) for t in range(81 - len(first_run), 81)]  # its newest, if any


def test_a_link_planted_where_compaction_writes_is_not_written_through(
    outage_ticks: list[Tick], recording_path: Path, tmp_path: Path
) -> None:
    # Found in the security review: the compaction's staging file was opened with open("wb"), which
    # follows a symlink — planted in a shared directory while a recorder runs (the one there at start is
    # removed), it had the recorder overwrite whatever it points at.
    victim = tmp_path / "victim.txt"
    victim.write_text("not the recorder's to write")
    planted = recording_path.parent / (recording_path.name + ".compacting")
    with RecordingWriter(recording_path, header(), retention=Retention(max_age_s=20), fsync=False) as writer:
        for tick in outage_ticks:
            if tick.frame.time_s == 2.0:
                planted.symlink_to(victim)
            for event in tick.events:
                writer.write(event)
            writer.write(tick.frame)
    assert writer.compactions >= 1
    assert victim.read_text() == "not the recorder's to write"
    assert not planted.is_symlink() and not recording_path.is_symlink()
    with RecordingReader(recording_path) as recording:
        assert [f.time_s for f in recording.frames()][-1] == 90.0
