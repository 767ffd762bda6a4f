"""Replay as a frame source: a recording played back at its recorded pace × speed, with pause, step, seek.

Two layers, so the pacing is testable without a loop or a clock:

* `Playback` — pure: given the wall time passed in, which records are due and how long until the next;
* `ReplaySource` — the frame source the console attaches to instead of a live stream. Its `run(emit)`
  pushes `ReplayItem`s to `emit`; the controls (`pause`, `set_speed`, `seek`, `step`, `next_marker`, …)
  are plain method calls, meant for the replay screen's key bindings, that take effect at once.

The pace is fleet time (`time_s`), not the wall time of the recording: ×1 replays one fleet second per
second whether the session was live or a drill run at ×5.

What `emit` receives: first a `Hello` (source `replay`), then the recorded frames, events, actions and
confirmations in their recorded order. When the replay moves backwards or jumps, a `ReplayJump` comes
first — the consumer forgets its history — followed by the `prefill_s` of frames before the landing point
so charts have their recent past, all at once.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from console.errors import InputError
from console.model.link import LinkState, LinkStatus, Received, StreamItem
from console.protocol import Event, Frame, Hello, Source
from console.record.container import RecordKind
from console.record.reader import AuditRecord, DamagedRecord, Marker, MarkerKind, RecordingReader
from console.record.records import ActionRecord, Confirmation, DrillOutcome

#: The speeds the replay screen cycles through (issue #5, "Replay").
SPEEDS: tuple[float, ...] = (1.0, 5.0, 20.0, 60.0)
#: Fleet seconds of history sent after a jump: enough for the console's charts to show where it came from.
DEFAULT_PREFILL_S = 60.0
#: Records a replay passes on; recorded hellos and the header are the recording's own business.
_PLAYED = frozenset(
    {RecordKind.FRAME, RecordKind.EVENT, RecordKind.ACTION, RecordKind.CONFIRMATION, RecordKind.DRILL_OUTCOME}
)


@dataclass(frozen=True)
class ReplayJump:
    """The replay moved to another point: forget the history; what follows starts from `time_s`."""

    time_s: float
    frame_index: int


ReplayItem = Hello | Frame | Event | ActionRecord | Confirmation | DrillOutcome | ReplayJump


@dataclass
class Playback:
    """Which records are due at a wall time, for records at `times_s` on the replay timeline. Pure."""

    times_s: Sequence[float]
    speed: float = 1.0
    paused: bool = False
    next_index: int = 0
    anchor_wall_s: float = 0.0
    anchor_time_s: float = field(default=0.0)

    def __post_init__(self) -> None:
        check_speed(self.speed)

    def start(self, now_s: float) -> None:
        self.anchor_wall_s = now_s
        self.anchor_time_s = self.times_s[self.next_index] if self.next_index < len(self.times_s) else 0.0

    def time_at(self, now_s: float) -> float:
        """Where the replay stands on the timeline at wall time `now_s` — never past the last record (at
        the end the clock read 0:06:49 of a 0:04:40 recording)."""
        if self.paused:
            return self.anchor_time_s
        time_s = self.anchor_time_s + (now_s - self.anchor_wall_s) * self.speed
        return min(time_s, self.times_s[-1]) if self.finished and self.times_s else time_s

    def take_due(self, now_s: float) -> range:
        """The records due by `now_s` that were not taken yet; they count as taken."""
        due_until = bisect.bisect_right(self.times_s, self.time_at(now_s), lo=self.next_index)
        taken = range(self.next_index, due_until)
        self.next_index = due_until
        return taken

    def wait_s(self, now_s: float) -> float | None:
        """Wall seconds until the next record is due; None while paused or at the end."""
        if self.paused or self.next_index >= len(self.times_s):
            return None
        return max(0.0, (self.times_s[self.next_index] - self.time_at(now_s)) / self.speed)

    @property
    def finished(self) -> bool:
        return self.next_index >= len(self.times_s)

    def pause(self, now_s: float) -> None:
        if not self.paused:
            self.anchor_time_s = self.time_at(now_s)
            self.anchor_wall_s = now_s
            self.paused = True

    def resume(self, now_s: float) -> None:
        if self.paused:
            self.anchor_wall_s = now_s
            self.paused = False

    def set_speed(self, speed: float, now_s: float) -> None:
        check_speed(speed)
        self.anchor_time_s = self.time_at(now_s)
        self.anchor_wall_s = now_s
        self.speed = speed

    def jump(self, next_index: int, time_s: float, now_s: float) -> None:
        """Go on from record `next_index`, the timeline standing at `time_s`."""
        self.next_index = next_index
        self.anchor_time_s = time_s
        self.anchor_wall_s = now_s


def check_speed(speed: float, field: str = "speed") -> float:
    """`field`: what the user set it as (`--speed` on the command line)."""
    if not 0 < speed <= 600:
        raise InputError(
            field, speed, "fleet seconds per second in (0, 600]; the screen offers ×1/×5/×20/×60"
        )
    return speed


@dataclass(frozen=True)
class ReplayStatus:
    """What the replay screen shows about the replay itself."""

    time_s: float
    frame_index: int
    frame_count: int
    span_s: tuple[float, float] | None
    speed: float
    paused: bool
    finished: bool
    damaged_at: int | None = None  # the byte where a damaged recording ends, if it does
    damage: str | None = None  # the reader's words for a record it does not read (`RecordingReader.damage`)


def held_reason(status: ReplayStatus) -> str | None:
    """Why a replay sends no frames now (paused, or at its end), or None while it plays: the link the
    console shows is "paused" then, not a live stream whose frames are late."""
    if status.paused:
        return "paused"
    if not status.finished:
        return None
    if status.damaged_at is not None:
        return f"end of the recording: it is damaged from byte {status.damaged_at:,} on"
    return "end of the recording"


def damage_note(status: ReplayStatus) -> str | None:
    """Where a damaged recording ends, once the replay knows, and — for a record this stormdeck does not
    read — the reader's message naming the record and its field; None while no damage is known."""
    if status.damaged_at is None:
        return None
    if status.damage is not None:
        return f"end of the recording: {status.damage}"  # (the reader's words say at which byte)
    return f"end of the recording: it is damaged from byte {status.damaged_at:,} on"


def link_of(status: ReplayStatus, at_s: float) -> LinkStatus:
    held = held_reason(status)
    return (
        LinkStatus(LinkState.LIVE, at_s=at_s, replay_speed=status.speed)
        if held is None
        else LinkStatus(LinkState.PAUSED, reason=held, at_s=at_s, replay_speed=status.speed)
    )


class ReplaySource:
    """A recording as a live-looking source; the console reads it exactly as it reads a stream."""

    def __init__(
        self,
        recording: RecordingReader,
        *,
        speed: float = 1.0,
        paused: bool = False,
        prefill_s: float = DEFAULT_PREFILL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.recording = recording
        self.clock = clock
        self.prefill_s = prefill_s
        self._entries = recording.entries()
        self.playback = Playback(recording.timeline_s, speed=speed, paused=paused, next_index=1)
        self._pending: list[ReplayItem] = []
        self._wake = asyncio.Event()
        self._frame_index = -1  # the newest frame emitted
        self._hello: Hello | None = None  # (`hello`: read once)
        self._trail: list[tuple[float, AuditRecord | DrillOutcome]] | None = None  # (`last_audit_record`)
        self.playback.start(clock())  # `run` anchors again when it starts

    # --- the source ------------------------------------------------------------------------------------

    def hello(self) -> Hello:
        """The recording's hello: its fleet, its first frame's epoch and seq. Sent again after every jump,
        so it is read once — frame 0 decoded whole was a 2000-node decode on every seek (9 ms, measured).
        Frame 0 does not change under it: the reader read it at open (its API version), so it was either
        read whole then or cut off then, leaving no frames."""
        if self._hello is None:
            self._hello = self._read_hello()
        return self._hello

    def _read_hello(self) -> Hello:
        header = self.recording.header
        try:
            first = self.recording.frame_at(0) if self.recording.frame_count else None
        except DamagedRecord:
            first = None
        return Hello(
            fleet=header.fleet or self.recording.path.name,
            source=Source.REPLAY,
            epoch=first.epoch if first else "replay",
            seq=first.seq if first else 0,
        )

    async def run(self, emit: Callable[[ReplayItem], None]) -> None:
        """Emit the recording at its pace until cancelled; at the end, wait for a control to move it."""
        emit(self.hello())
        if self._frame_index < 0:
            self.playback.start(self.clock())
        else:  # a control placed it before the run began (a paused start on frame 1): keep its place
            self.playback.anchor_wall_s = self.clock()
        while True:
            for item in self.take(self.clock()):
                emit(item)
            wait_s = self.playback.wait_s(self.clock())
            self._wake.clear()
            if self._pending:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait_s)

    def take(self, now_s: float) -> list[ReplayItem]:
        """What is due at `now_s`: whatever a control queued, then the records whose time has come."""
        items, self._pending = self._pending, []
        due = self.playback.take_due(now_s)
        played = self._played(due.start, due.stop)
        self._frame_index += sum(isinstance(record, Frame) for record in played)
        return items + played

    # --- controls --------------------------------------------------------------------------------------

    def status(self) -> ReplayStatus:
        return ReplayStatus(
            time_s=self.playback.time_at(self.clock()),
            frame_index=max(self._frame_index, 0),
            frame_count=self.recording.frame_count,
            span_s=self.recording.span_s,
            speed=self.playback.speed,
            paused=self.playback.paused,
            finished=self.playback.finished,
            damaged_at=self.recording.damaged_at,
            damage=self.recording.damage,
        )

    def last_audit_record(self) -> AuditRecord | DrillOutcome | None:
        """The newest entry of the recording's audit trail (or its drill outcome) at or before where the
        replay stands — after a seek back too, however long before the prefill it was; None before the
        first."""
        trail = self.audit_timeline()
        time_s = self.playback.time_at(self.clock())
        passed = bisect.bisect_right(trail, time_s, key=lambda placed: placed[0])
        return trail[passed - 1][1] if passed else None

    def audit_timeline(self) -> list[tuple[float, AuditRecord | DrillOutcome]]:
        """The recording's audit trail and drill outcome on its timeline, read once, at the first call
        (every event is read for it, as for `markers`)."""
        if self._trail is None:
            self._trail = self.recording.audit_trail_on_timeline()
        return self._trail

    def pause(self) -> None:
        self.playback.pause(self.clock())
        self._wake.set()

    def resume(self) -> None:
        self.playback.resume(self.clock())
        self._wake.set()

    def toggle_pause(self) -> None:
        (self.resume if self.playback.paused else self.pause)()

    def set_speed(self, speed: float) -> None:
        self.playback.set_speed(speed, self.clock())
        self._wake.set()

    def next_speed(self) -> float:
        """Cycle ×1 → ×5 → ×20 → ×60 → ×1."""
        later = [s for s in SPEEDS if s > self.playback.speed]
        self.set_speed(later[0] if later else SPEEDS[0])
        return self.playback.speed

    def seek(self, time_s: float) -> None:
        self.show_frame(self.recording.index_at(time_s))

    def step(self, frames: int = 1) -> None:
        """Pause and move by `frames`; forwards only the records up to the next frame are sent."""
        self.pause()
        count = self.recording.frame_count
        if not count:
            return
        target = min(max(self._frame_index + frames, 0), count - 1)
        if target == self._frame_index + 1:
            self._advance_to(target)
        else:
            self.show_frame(target)

    def next_marker(self, kind: MarkerKind | None = None) -> Marker | None:
        return self._jump_to_marker(kind, forwards=True)

    def previous_marker(self, kind: MarkerKind | None = None) -> Marker | None:
        return self._jump_to_marker(kind, forwards=False)

    def _jump_to_marker(self, kind: MarkerKind | None, *, forwards: bool) -> Marker | None:
        self.recording.position = max(self._frame_index, 0)
        marker = (self.recording.next_marker if forwards else self.recording.previous_marker)(kind)
        if marker is not None:
            self.show_frame(marker.frame_index)
        return marker

    def show_frame(self, frame_index: int) -> None:
        """Jump: a `ReplayJump`, the prefill before frame `frame_index`, the frame; then on from there.
        Past a damaged record — met here, in the prefill or at the frame itself — to the last frame
        before it."""
        try:
            shown = self._show_frame(frame_index)
        except DamagedRecord:
            self._end_at_damage()
            shown = False
        if not shown and self.recording.frame_count:  # (each time round, the recording is shorter)
            self.show_frame(min(frame_index, self.recording.frame_count - 1))

    def _show_frame(self, frame_index: int) -> bool:
        """False, nothing queued, when the recording now ends before frame `frame_index`: a record read
        for the jump was damaged."""
        entry_index = self.recording.frame_entry_index[frame_index]
        time_s = self.recording.frame_times_s[frame_index]
        first = bisect.bisect_left(self.recording.frame_times_s, time_s - self.prefill_s)
        jump = ReplayJump(self._entries[entry_index].time_s, frame_index)
        start = self.recording.frame_entry_index[first]
        # The prefill's frames only fill the charts: their nodes as columns (`ColumnarFrame`), not 2000
        # node records each (1.5 s of a 1.6 s seek at 2000 nodes, measured); the landing frame whole.
        prefill = self._played(start, entry_index, columnar=True)
        landing = self._played(entry_index, entry_index + 1)
        if frame_index >= self.recording.frame_count:  # cut short at a damaged record on the way
            return False
        self._pending = [jump, *prefill, *landing]
        self._land_on(frame_index)
        return True

    def _advance_to(self, frame_index: int) -> None:
        entry_index = self.recording.frame_entry_index[frame_index]
        self._pending.extend(self._played(self.playback.next_index, entry_index + 1))
        if frame_index < self.recording.frame_count:
            self._land_on(frame_index)
        else:  # the frame is damaged: the records before it were sent, and the recording ends there
            self.playback.next_index = len(self._entries)
            self._wake.set()

    def _land_on(self, frame_index: int) -> None:
        self._frame_index = frame_index
        entry_index = self.recording.frame_entry_index[frame_index]
        self.playback.jump(entry_index + 1, self.recording.frame_times_s[frame_index], self.clock())
        self._wake.set()

    def _played(self, start: int, stop: int, columnar: bool = False) -> list[ReplayItem]:
        """The records a replay passes on among entries [start, stop): up to a damaged one, where the
        recording then ends. `columnar`: frames as `ColumnarFrame`s."""
        played: list[ReplayItem] = []
        for entry in self._entries[start:stop]:
            if entry.kind in _PLAYED:
                try:
                    played.append(self.recording.read_entry(entry, columnar))  # type: ignore[arg-type]
                except DamagedRecord:
                    self._end_at_damage()
                    break
        return played

    def _end_at_damage(self) -> None:
        """The reader has cut the recording before a damaged record: play it as ending there (the clock
        stands at its last record, the link says why)."""
        self._entries = self.recording.entries()
        self.playback.times_s = self.recording.timeline_s
        self.playback.next_index = min(self.playback.next_index, len(self._entries))
        self._frame_index = min(self._frame_index, self.recording.frame_count - 1)


class ConsoleReplayFeed:
    """A `ReplaySource` as the console's `StreamSource` (console.ui.app): what the live client would send.

    Protocol messages reach the sink as `Received` (arrival time from `clock`), as from a live stream. A
    `ReplayJump` calls `on_jump` — the replay screen starts a fresh model there — and the hello is sent again
    so the new model knows its fleet. Actions, confirmations and drill outcomes go to `on_record`; the live
    stream has no such messages. (The replay's timeline bar asks `ReplaySource.last_audit_record` instead:
    a `stormdeck record` recording's actions are events.)
    """

    def __init__(
        self,
        replay: ReplaySource,
        on_jump: Callable[[ReplayJump], None],
        on_record: Callable[[ActionRecord | Confirmation | DrillOutcome], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.replay = replay
        self.on_jump = on_jump
        self.on_record = on_record
        self.clock = clock

    async def run(self, sink: Callable[[StreamItem], None]) -> None:
        def emit(item: ReplayItem) -> None:
            if isinstance(item, ReplayJump):
                self.on_jump(item)
                sink(Received(self.replay.hello(), self.clock()))
            elif isinstance(item, Hello):
                sink(Received(item, self.clock()))
                sink(link_of(self.replay.status(), self.clock()))
            elif isinstance(item, Frame | Event):
                sink(Received(item, self.clock()))
            elif self.on_record is not None:
                self.on_record(item)

        await self.replay.run(emit)
