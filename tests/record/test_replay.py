"""Replay as a frame source: recorded pace × speed, pause, step, seek and marker jumps."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from console.alarms import AlarmEngine
from console.errors import InputError
from console.protocol import Event, Frame, Hello, Source
from console.record.reader import RecordingReader
from console.record.replay import SPEEDS, Playback, ReplayItem, ReplayJump, ReplaySource
from console.record.writer import RecordingWriter
from tests.record.conftest import Tick, header
from tests.record.test_roundtrip import _blocked_drain


class FakeClock:
    def __init__(self) -> None:
        self.now_s = 1000.0

    def __call__(self) -> float:
        return self.now_s


def test_playback_paces_by_recorded_time_times_speed() -> None:
    playback = Playback([0.0, 1.0, 1.0, 2.0, 10.0], speed=5.0)
    playback.start(100.0)
    assert list(playback.take_due(100.0)) == [0]
    assert playback.wait_s(100.0) == pytest.approx(0.2)  # 1 fleet second at ×5
    assert list(playback.take_due(100.19)) == []
    assert list(playback.take_due(100.2)) == [1, 2]
    playback.pause(100.3)  # the timeline stands at 1.5
    assert playback.wait_s(200.0) is None and list(playback.take_due(200.0)) == []
    playback.resume(200.0)
    playback.set_speed(60.0, 200.0)
    assert playback.wait_s(200.0) == pytest.approx(0.5 / 60)
    assert list(playback.take_due(200.0 + 8.5 / 60)) == [3, 4] and playback.finished
    assert playback.time_at(500.0) == 10.0  # the end stands at the last record, however long ago
    playback.pause(500.0)
    assert playback.time_at(900.0) == 10.0


def test_playback_refuses_a_nonsense_speed() -> None:
    with pytest.raises(InputError, match="speed"):
        Playback([0.0], speed=0)


@pytest.fixture
def replay(outage_ticks: list[Tick], recording_path: Path) -> Iterator[tuple[ReplaySource, FakeClock]]:
    with RecordingWriter(recording_path, header(), alarms=AlarmEngine(), fsync=False) as writer:
        for tick in outage_ticks:
            for event in tick.events:
                writer.write(event)
            writer.write(tick.frame)
            if tick.frame.time_s == 40.0:
                writer.write(_blocked_drain(40.5))
    clock = FakeClock()
    with RecordingReader(recording_path) as recording:
        source = ReplaySource(recording, clock=clock, prefill_s=10)
        source.playback.start(clock())
        yield source, clock


def _frames(items: list[ReplayItem]) -> list[float]:
    return [item.time_s for item in items if isinstance(item, Frame)]


def test_frames_come_at_the_recorded_pace_scaled_by_speed(replay: tuple[ReplaySource, FakeClock]) -> None:
    source, clock = replay
    assert _frames(source.take(clock())) == [1.0]
    clock.now_s += 0.99
    assert _frames(source.take(clock())) == []
    clock.now_s += 0.01
    assert _frames(source.take(clock())) == [2.0]
    source.set_speed(20.0)
    clock.now_s += 1.0
    assert _frames(source.take(clock())) == [float(t) for t in range(3, 23)]
    assert source.next_speed() == 60.0 and source.next_speed() == SPEEDS[0]


def test_pause_holds_and_step_moves_one_frame(replay: tuple[ReplaySource, FakeClock]) -> None:
    source, clock = replay
    source.take(clock())
    source.pause()
    clock.now_s += 100
    assert source.take(clock()) == []
    source.step(+1)
    assert _frames(source.take(clock())) == [2.0]  # forward: just the next frame, no jump
    source.step(-1)
    items = source.take(clock())
    assert isinstance(items[0], ReplayJump) and items[0].time_s == 1.0 and _frames(items) == [1.0]
    assert source.status().paused and source.status().frame_index == 0


def test_seek_sends_a_jump_then_the_prefill_then_plays_on(replay: tuple[ReplaySource, FakeClock]) -> None:
    source, clock = replay
    source.seek(50.4)
    items = source.take(clock())
    assert items[0] == ReplayJump(50.0, 49)
    assert _frames(items) == [float(t) for t in range(40, 51)]  # 10 s of prefill, then the landing frame
    assert source.status().frame_index == 49
    clock.now_s += 1.0
    assert _frames(source.take(clock())) == [51.0]


def test_the_last_action_passed_is_the_recording_s_at_the_playhead(
    replay: tuple[ReplaySource, FakeClock],
) -> None:
    # The action is at 40.5 s; a seek to 80 s sends 10 s of prefill (70–80 s), which no longer carries the
    # action along for the timeline bar: the bar asks the recording what was last passed where the replay
    # stands (an action the stream told is an event the feed never handed on as a record).
    source, clock = replay
    assert source.last_audit_record() is None  # at the first frame
    source.seek(80.0)
    items = source.take(clock())
    assert items[0] == ReplayJump(80.0, 79)
    assert _frames(items) == [float(t) for t in range(70, 81)]  # the prefill itself is unchanged
    last = source.last_audit_record()
    assert last is not None and last.time_s == 40.5 and getattr(last, "action", None) == "drain"
    source.seek(40.0)  # back, onto the frame the drain was written after: not passed yet
    assert source.last_audit_record() is None
    source.step(1)
    assert getattr(source.last_audit_record(), "time_s", None) == 40.5


def test_marker_jumps_land_on_the_marker_frames(replay: tuple[ReplaySource, FakeClock]) -> None:
    source, clock = replay
    source.take(clock())
    marker = source.next_marker("action")
    assert marker is not None and marker.time_s == 40.5
    items = source.take(clock())
    assert items[0] == ReplayJump(41.0, 40)
    assert any(getattr(item, "type", None) == "action" for item in items)  # the action is in the prefill
    alarm = source.previous_marker("alarm")
    assert alarm is not None and alarm.time_s < 41.0
    items = source.take(clock())
    assert items[0] == ReplayJump(alarm.time_s, alarm.frame_index)
    raised = [i for i in items if isinstance(i, Event) and i.kind == "alarm" and i.time_s == alarm.time_s]
    assert raised and _frames(items)[-1] == alarm.time_s  # the frame that raised it, with its alarm event


def test_a_recording_joined_late_plays_its_first_frame_at_once(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    """The recorder attached at fleet time 30 s: the header and the server's hello (no fleet time of their
    own) must not make the replay wait 30 s for the first frame."""
    with RecordingWriter(recording_path, header(), fsync=False) as writer:
        writer.write(Hello(fleet="test-fleet", source=Source.SIMULATOR, epoch="sim", seq=30))
        for tick in outage_ticks[29:33]:
            writer.write(tick.frame)
    clock = FakeClock()
    with RecordingReader(recording_path) as recording:
        assert recording.timeline_s[:3] == [30.0, 30.0, 30.0]
        source = ReplaySource(recording, clock=clock)
        assert _frames(source.take(clock())) == [30.0]
        clock.now_s += 1.0
        assert _frames(source.take(clock())) == [31.0]


async def test_run_emits_hello_then_frames_then_waits_at_the_end(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    with RecordingWriter(recording_path, header(), fsync=False) as writer:
        for tick in outage_ticks[:6]:
            writer.write(tick.frame)
    received: list[ReplayItem] = []
    last_frame_seen = [asyncio.Event(), asyncio.Event()]  # the first pass, then the pass after the seek

    def emit(item: ReplayItem) -> None:
        received.append(item)
        if isinstance(item, Frame) and item.time_s == 6.0:
            (last_frame_seen[1] if last_frame_seen[0].is_set() else last_frame_seen[0]).set()

    with RecordingReader(recording_path) as recording:
        source = ReplaySource(recording, speed=60.0)  # 5 fleet seconds take ~0.08 s
        task = asyncio.create_task(source.run(emit))
        try:
            await asyncio.wait_for(last_frame_seen[0].wait(), timeout=5)
            assert source.status().finished
            source.seek(3.0)  # at the end, a control still moves it
            await asyncio.wait_for(last_frame_seen[1].wait(), timeout=5)
        finally:
            task.cancel()
    hello = received[0]
    assert isinstance(hello, Hello) and hello.source is Source.REPLAY and hello.fleet == "test-fleet"
    assert _frames(received[1:7]) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    jump = received.index(ReplayJump(3.0, 2))
    assert _frames(received[jump:]) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]  # prefill 1–3, then played on


async def test_the_console_model_replays_through_the_stream_source_adapter(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    from console.model.alarm_source import console_model
    from console.record.replay import ConsoleReplayFeed

    with RecordingWriter(recording_path, header(), fsync=False) as writer:
        for tick in outage_ticks[:10]:
            for event in tick.events:
                writer.write(event)
            writer.write(tick.frame)
            if tick.frame.time_s == 5.0:
                writer.write(_blocked_drain(5.5))
    models = [console_model()]
    records: list[object] = []
    reached_end = asyncio.Event()

    def sink(item: object) -> None:
        models[-1].apply(item)  # type: ignore[arg-type]
        if models[-1].frame is not None and models[-1].frame.time_s == 10.0:
            reached_end.set()

    with RecordingReader(recording_path) as recording:
        replay = ReplaySource(recording, speed=60.0)
        feed = ConsoleReplayFeed(
            replay, on_jump=lambda jump: models.append(console_model()), on_record=records.append
        )
        task = asyncio.create_task(feed.run(sink))
        try:
            await asyncio.wait_for(reached_end.wait(), 5)
            assert models[0].frames_applied == 10 and models[0].fleet == "test-fleet" and models[0].gaps == 0
            assert [type(r).__name__ for r in records] == ["ActionRecord"]
            reached_end.clear()
            replay.seek(4.0)  # a fresh model, prefilled from the start, then played to the end again
            await asyncio.wait_for(reached_end.wait(), 5)
        finally:
            task.cancel()
    assert len(models) == 2 and models[1].fleet == "test-fleet" and models[1].frames_applied == 10


async def test_a_seek_through_the_console_feed_decodes_only_the_landing_frame_whole(
    replay: tuple[ReplaySource, FakeClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After every jump the feed sends the replay's hello again, and `hello()` decoded frame 0 whole for
    it each time: one more 2000-node frame decoded per seek (9 ms at 2000 nodes, measured). The prefill's
    frames come as columns; the landing frame is the only one decoded whole, and the hello says the same."""
    from console.model.link import Received
    from console.record import reader as reader_module
    from console.record.container import RecordKind
    from console.record.replay import ConsoleReplayFeed

    source, clock = replay
    source.pause()
    whole: list[RecordKind] = []
    parse = reader_module.parse_record

    def counted(kind: RecordKind, payload: bytes):  # type: ignore[no-untyped-def]
        if kind is RecordKind.FRAME:
            whole.append(kind)
        return parse(kind, payload)

    monkeypatch.setattr(reader_module, "parse_record", counted)
    hellos: list[Hello] = []
    landed = asyncio.Event()

    def sink(item: object) -> None:
        if isinstance(item, Received) and isinstance(item.message, Hello):
            hellos.append(item.message)
        if isinstance(item, Received) and isinstance(item.message, Frame) and item.message.nodes:
            landed.set()  # the landing frame: whole (the prefill's come without node records)

    feed = ConsoleReplayFeed(source, on_jump=lambda jump: None, clock=clock)
    task = asyncio.create_task(feed.run(sink))
    try:
        await asyncio.sleep(0)  # the run's first hello
        for time_s in (30.0, 60.0, 20.0):
            landed.clear()
            before = len(whole)
            source.seek(time_s)
            await asyncio.wait_for(landed.wait(), timeout=5)
            assert len(whole) - before == 1, f"frames decoded whole for the seek to {time_s:g}"
    finally:
        task.cancel()
    first = source.recording.frame_at(0)
    assert len(hellos) == 4 and all(hello == hellos[0] for hello in hellos)
    assert (hellos[0].epoch, hellos[0].seq) == (first.epoch, first.seq)
