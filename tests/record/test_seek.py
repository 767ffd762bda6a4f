"""Seek, step and markers land on the right frames."""

from __future__ import annotations

from pathlib import Path

import pytest

from console.alarms import AlarmEngine, alarms_fired
from console.errors import InputError
from console.record.reader import RecordingReader
from console.record.writer import RecordingWriter
from tests.record.conftest import Tick, header, record_a_restart
from tests.record.test_roundtrip import _blocked_drain


@pytest.fixture
def recording(outage_ticks: list[Tick], recording_path: Path) -> RecordingReader:
    with RecordingWriter(recording_path, header(), alarms=AlarmEngine(), fsync=False) as writer:
        for tick in outage_ticks:
            for event in tick.events:
                writer.write(event)
            writer.write(tick.frame)
            if tick.frame.time_s in (40.0, 70.0):
                writer.write(_blocked_drain(tick.frame.time_s + 0.5))  # between two frames
    reader = RecordingReader(recording_path)
    yield reader
    reader.close()


def test_seek_lands_on_the_frame_at_or_before(recording: RecordingReader) -> None:
    # The simulator's frames are at 1.0, 2.0, … 90.0 s.
    assert recording.seek(45.0).time_s == 45.0
    assert recording.seek(45.9).time_s == 45.0
    assert recording.position == 44
    assert recording.seek(-10).time_s == 1.0  # before the start: the first frame
    assert recording.seek(1e9).time_s == 90.0  # past the end: the last


def test_step_moves_one_frame_and_stops_at_the_ends(recording: RecordingReader) -> None:
    recording.seek(10.0)
    assert recording.step(+1).time_s == 11.0
    assert recording.step(-1).time_s == 10.0
    assert recording.step(-3).seq == recording.frame_at(6).seq
    recording.seek(0)
    assert recording.step(-1).time_s == 1.0
    recording.seek(1e9)
    assert recording.step(+1).time_s == 90.0
    with pytest.raises(InputError):
        recording.frame_at(90)


def test_alarm_markers_are_the_alarms_the_engine_raises(
    recording: RecordingReader, outage_ticks: list[Tick]
) -> None:
    fired = alarms_fired(t.frame for t in outage_ticks)
    markers = recording.markers("alarm")
    assert fired, "the outage must raise alarms for this test to mean anything"
    assert {m.label for m in markers} == set(fired)
    for marker in markers:
        assert recording.frame_at(marker.frame_index).time_s == marker.time_s  # raised by that very frame


def test_action_markers_land_on_the_first_frame_after_the_attempt(recording: RecordingReader) -> None:
    actions = recording.markers("action")
    assert [(m.time_s, m.level, m.label) for m in actions] == [
        (40.5, "blocked", "drain gw-003 → blocked"),
        (70.5, "blocked", "drain gw-003 → blocked"),
    ]
    assert [recording.frame_at(m.frame_index).time_s for m in actions] == [41.0, 71.0]


def test_an_action_stamped_with_the_frame_it_followed_lands_on_the_next_frame(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    """Found in review: a drill (and the console) stamp an action with the time of the frame the operator
    acted on and write it after that frame; the jump landed on that frame — before the action took
    effect — instead of the first frame after the operator acted."""
    with RecordingWriter(recording_path, header(), fsync=False) as writer:
        for tick in outage_ticks[:50]:
            writer.write(tick.frame)
            if tick.frame.time_s == 40.0:
                writer.write(_blocked_drain(40.0))  # after frame 40, stamped 40
        writer.write(_blocked_drain(50.0))  # after the last frame: there is no later one
    with RecordingReader(recording_path) as recording:
        landing = [recording.frame_at(m.frame_index).time_s for m in recording.markers("action")]
        assert landing == [41.0, 50.0]
        assert recording.next_marker("action") is not None and recording.position == 40


def test_next_and_previous_marker_walk_the_timeline(recording: RecordingReader) -> None:
    recording.seek(41.0)  # on the first action's landing frame
    marker = recording.next_marker("action")
    assert marker is not None and recording.frame_at(recording.position).time_s == 71.0
    assert recording.next_marker("action") is None and recording.position == 70  # no move at the end
    back = recording.previous_marker("action")
    assert back is not None and back.time_s == 40.5 and recording.position == 40
    assert recording.previous_marker("action") is None
    recording.seek(0)
    first_alarm = recording.next_marker("alarm")
    assert first_alarm is not None and first_alarm.time_s == min(m.time_s for m in recording.markers("alarm"))
    everything = recording.markers()
    assert [m.frame_index for m in everything] == sorted(m.frame_index for m in everything)


def test_a_source_restart_keeps_the_timeline_moving_forwards(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    # The source restarts after 20 s (new epoch, fleet time from 1 again): the replay timeline goes on.
    restarted = record_a_restart(recording_path, outage_ticks, 20, 10, "sim-2")
    with RecordingReader(recording_path) as recording:
        times = recording.frame_times_s
        assert times == sorted(times) and len(set(times)) == 30
        assert times[20] == 21.0  # one frame interval after the last frame of the first epoch
        assert recording.seek(25.0) == restarted[4]
        assert recording.step(-5) == outage_ticks[19].frame


def test_alarms_a_restart_clears_do_not_read_as_a_second_restart(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    # The recorder's alarm engine clears the old run's alarms at the old run's last time, written after the
    # new run's first frame: the timeline was pushed on to it, the new run's next frame read as earlier —
    # a second restart — and a 20 min recording of a restart at 15:02 replayed as 44 min.
    from console.alarms import AlarmEngine

    with RecordingWriter(recording_path, header(), alarms=AlarmEngine(), fsync=False) as writer:
        for tick in outage_ticks[:60]:
            writer.write(tick.frame)
        assert writer.alarms is not None and writer.alarms.active, "the first run must end with alarms up"
        for tick in outage_ticks[:30]:
            writer.write(tick.frame.model_copy(update={"epoch": "second"}))
    with RecordingReader(recording_path) as recording:
        assert recording.frame_times_s == [float(t) for t in range(1, 91)]
        timeline = recording.timeline_s
        assert timeline == sorted(timeline)


def test_an_empty_recording_opens_and_says_what_is_missing(recording_path: Path) -> None:
    RecordingWriter(recording_path, header(), fsync=False).close()
    with RecordingReader(recording_path) as recording:
        assert recording.frame_count == 0 and recording.markers() == [] and recording.span_s is None
        with pytest.raises(InputError, match="at least one complete frame"):
            recording.seek(0)


def test_the_streams_told_actions_are_markers_once_and_in_the_review(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    """A `stormdeck record` recording holds no action records of its own: the stream's `action` events (every
    operator's applied actions) are its actions — once each, when the acting console also recorded one."""
    from console.protocol import Event
    from console.record.records import ActionRecord
    from console.record.review import review

    def told(time_s: float, actor: str, seq: int) -> Event:
        data = {"actor": actor, "role": "operator", "action": "rollout_halt", "target": "fleet"}
        return Event(
            time_s=time_s,
            kind="action",
            message=f"{actor} (operator): rollout_halt fleet",
            data={**data, "parameters": {}, "outcome": "applied", "level": "ok", "audit_seq": seq},
        )

    own = ActionRecord(time_s=49.5, actor="alice", action="rollout_halt", outcome="applied", audit_seq=7)
    with RecordingWriter(recording_path, header(), fsync=False) as writer:
        for tick in outage_ticks[:60]:
            for event in tick.events:
                writer.write(event)
            if tick.frame.time_s in (30.0, 50.0):
                writer.write(
                    told(
                        tick.frame.time_s,
                        "bob" if tick.frame.time_s == 30.0 else "alice",
                        6 + (tick.frame.time_s == 50.0),
                    )
                )
            writer.write(tick.frame)
            if tick.frame.time_s == 49.0:
                writer.write(own)  # alice's console recorded its own: the stream's copy (seq 7) is the same
    with RecordingReader(recording_path) as reader:
        markers = reader.markers("action")
        reviewed = review(reader)
        trail = reader.audit_trail()  # what a replay's audit log (L) lists: the same two, once each
    assert [(a.time_s, a.actor, a.audit_seq) for a in trail] == [(30.0, "bob", 6), (49.5, "alice", 7)]
    assert [(m.time_s, m.label) for m in markers] == [
        (30.0, "rollout_halt → applied"),
        (49.5, "rollout_halt → applied"),
    ]
    assert [(a.time_s, a.actor, a.audit_seq) for a in reviewed.actions] == [
        (30.0, "bob", 6),
        (49.5, "alice", 7),
    ]
    assert reviewed.actions_named("rollout_halt")[0].actor == "bob"
    assert (
        reviewed.actions[0].detail == "ok"
    )  # the report's verdict column: the level, not the sentence again
