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
