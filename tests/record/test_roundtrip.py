"""Record → replay round trip: what comes back is what went in, in the same order."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from console.protocol import Check, Event, Frame, Hello, Source, Verdict, VerdictLevel
from console.record import container
from console.record.container import RecordKind
from console.record.reader import RecordingReader
from console.record.records import ActionRecord, Confirmation, DrillInfo, DrillOutcome, ObjectiveOutcome
from console.record.writer import RecordingWriter
from tests.record.conftest import Tick, header, record_a_restart


def _blocked_drain(time_s: float) -> ActionRecord:
    verdict = Verdict(
        level=VerdictLevel.BLOCKED,
        action="drain",
        checks=[Check(name="headroom", value=12.0, limit=35.0, ok=False, why="outage seed", bound="min")],
    )
    return ActionRecord(
        time_s=time_s,
        actor="trainee",
        action="drain",
        target="gw-003",
        request={"rate_per_s": 833, "deadline_s": 600, "hint_ms": [1000, 30000]},
        verdict=verdict,
        outcome="blocked",
        status=422,
    )


def write_session(path: Path, ticks: list[Tick]) -> list[object]:
    """Record the ticks as the stream sends them (events, then their frame) plus an action and its answer."""
    written: list[object] = []
    hello = Hello(fleet="test-fleet", source=Source.SIMULATOR, epoch="sim", seq=0)
    with RecordingWriter(path, header(drill=DrillInfo(name="regional-outage")), fsync=False) as writer:
        writer.write(hello, raw=hello.model_dump_json())
        written.append(hello)
        for tick in ticks:
            for event in tick.events:
                writer.write(event)
                written.append(event)
            writer.write(tick.frame, raw=tick.frame.model_dump_json())  # verbatim text, as the daemon does
            written.append(tick.frame)
            if tick.frame.time_s == 40.0:
                action = _blocked_drain(40.0)
                confirmation = Confirmation(time_s=40.0, actor="trainee", action="drain", answer="cancelled")
                writer.write(action)
                writer.write(confirmation)
                written += [action, confirmation]
        outcome = DrillOutcome(time_s=90.0, score=40, objectives=[ObjectiveOutcome(name="x", met=False)])
        writer.write(outcome)
        written.append(outcome)
    return written


def test_every_record_comes_back_equal_and_in_order(outage_ticks: list[Tick], recording_path: Path) -> None:
    written = write_session(recording_path, outage_ticks)
    with RecordingReader(recording_path) as recording:
        assert list(recording.records()) == written
        assert list(recording.frames()) == [tick.frame for tick in outage_ticks]
        assert list(recording.events()) == [e for tick in outage_ticks for e in tick.events]
        assert [a.verdict.level for a in recording.actions() if a.verdict] == [VerdictLevel.BLOCKED]
        assert [c.answer for c in recording.confirmations()] == ["cancelled"]
        outcome = recording.drill_outcome()
        assert outcome is not None and outcome.score == 40
        assert recording.header.drill is not None and recording.header.drill.name == "regional-outage"
        assert recording.header.scenario == "regional-outage" and recording.header.seed == 2
        assert not recording.damaged_tail


def test_events_carry_data_the_report_needs(outage_ticks: list[Tick], recording_path: Path) -> None:
    write_session(recording_path, outage_ticks)
    with RecordingReader(recording_path) as recording:
        mass = [e for e in recording.events() if e.data.get("mass")]
    assert mass and all(isinstance(e, Event) for e in mass)
    assert {e.time_s for e in mass} == {30.0}  # the scenario restarts every node at 30 s


def test_a_recording_is_plain_gzip_json_lines(outage_ticks: list[Tick], recording_path: Path) -> None:
    write_session(recording_path, outage_ticks[:5])
    lines = gzip.decompress(recording_path.read_bytes()).decode().splitlines()
    types = [json.loads(line)["type"] for line in lines]
    assert types[0] == "recording" and types[1] == "hello"
    assert types.count("frame") == 5
    assert Frame.model_validate_json(lines[types.index("frame")]) == outage_ticks[0].frame


def test_reopening_continues_the_same_recording(outage_ticks: list[Tick], recording_path: Path) -> None:
    first, second = outage_ticks[:10], outage_ticks[10:20]
    with RecordingWriter(recording_path, header(), fsync=False) as writer:
        for tick in first:
            writer.write(tick.frame)
    with RecordingWriter(recording_path, header(fleet="ignored"), fsync=False) as writer:
        assert writer.last_frame_seq == first[-1].frame.seq  # what a daemon resumes the stream from
        assert writer.header.fleet == "test-fleet"  # the recording keeps its own header
        for tick in second:
            writer.write(tick.frame)
    with RecordingReader(recording_path) as recording:
        assert list(recording.frames()) == [t.frame for t in first + second]


def test_a_continued_recording_does_not_raise_its_active_alarms_again(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    """Recorded in two sittings, the alarms raised are those of one sitting: an alarm active where the
    first stopped is still active, not raised anew (the replay counted each twice)."""
    from console.alarms import AlarmEngine

    def raised(path: Path) -> list[tuple[str, float]]:
        with RecordingReader(path) as recording:
            return [(m.label, m.time_s) for m in recording.markers("alarm")]

    whole = recording_path.with_name("whole.sdrec")
    with RecordingWriter(whole, header(), alarms=AlarmEngine(), fsync=False) as writer:
        for tick in outage_ticks:
            writer.write(tick.frame)
    split = 36  # headroom_low, drain_inflow_kill_switch (judged on one frame) and connections_drop active
    with RecordingWriter(recording_path, header(), alarms=AlarmEngine(), fsync=False) as writer:
        for tick in outage_ticks[:split]:
            writer.write(tick.frame)
        active_at_split = [a.name for a in writer.alarms.active]
    with RecordingWriter(recording_path, header(), alarms=AlarmEngine(), fsync=False) as writer:
        for tick in outage_ticks[split:]:
            writer.write(tick.frame)
    assert "headroom_low" in active_at_split  # judged on one frame: a fresh engine raises it at once
    assert raised(recording_path) == raised(whole)


def test_alarm_markers_count_each_alarm_once(outage_ticks: list[Tick], recording_path: Path) -> None:
    """The source's alarm events and the writer's own judgement of the same frames are the same alarms:
    the markers (the replay's '▲ n alarms') hold the writer's only."""
    from console.alarms import AlarmEngine

    server = AlarmEngine()  # what a fleet API server sends in its stream
    with RecordingWriter(recording_path, header(), alarms=AlarmEngine(), fsync=False) as writer:
        for tick in outage_ticks:
            for change in server.update(tick.frame):
                writer.write(change)
            writer.write(tick.frame)
    with RecordingReader(recording_path) as recording:
        events = [r for r in recording.records() if isinstance(r, Event) and r.kind == "alarm"]
        markers = recording.markers("alarm")
    raised_by_source = [e for e in events if e.data["change"] == "raised" and "origin" not in e.data]
    assert raised_by_source and len(markers) == len(raised_by_source)


def test_a_continued_recording_rejudges_only_the_sources_last_run(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    """A source that restarted (a new epoch, its time from 1 again) before the writer stopped: only the
    newest run is judged again, not the whole file."""
    from console.alarms import AlarmEngine
    from console.record.writer import RecordingWriter as Writer

    restarted = record_a_restart(recording_path, outage_ticks, 60, 20, "second")
    with recording_path.open("rb") as file:
        entries = [
            e
            for e in container.verified_entries(file, recording_path.stat().st_size)
            if e.kind is RecordKind.FRAME
        ]
        stretch = Writer._last_stretch(file, entries, AlarmEngine())
    assert [f.time_s for f in stretch] == [f.time_s for f in restarted] and {f.epoch for f in stretch} == {
        "second"
    }


def test_a_recording_from_before_the_hello_named_the_actor_still_reads() -> None:
    """The console now records its own actions under the name the hello gives its token (`actor`); a
    recording made before holds `console` for them and a hello without `actor`: both read as they were."""
    from console.record.records import RecordKind, action_audit_record, parse_record

    old_hello = (
        b'{"type": "hello", "api_version": "1", "fleet": "f", "source": "simulator", "epoch": "e", "seq": 3}'
    )
    hello = parse_record(RecordKind.HELLO, old_hello)
    assert isinstance(hello, Hello) and hello.actor is None
    old_action = (
        b'{"type": "action", "time_s": 40.0, "actor": "console", "action": "drain", "target": "gw-003", '
        b'"outcome": "applied", "status": 202, "audit_seq": 4}'
    )
    action = parse_record(RecordKind.ACTION, old_action)
    assert isinstance(action, ActionRecord) and action_audit_record(action)["actor"] == "console"
