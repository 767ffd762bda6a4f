"""Writing a recording: append one record at a time, crash-safe, with retention by size or age.

    with RecordingWriter(path, header, retention=Retention(max_bytes=200_000_000)) as writer:
        writer.write(hello, raw=text)      # stream messages, verbatim when the text is at hand
        writer.write(frame, raw=text)
        writer.write(ActionRecord(...))

Each record is one gzip member appended with one write and flushed to the OS, so a writer killed at any
moment loses at most the record it was writing (docs/recording.md). Reopening an existing file cuts any
torn tail off and keeps appending to it — a restarted daemon continues the same recording.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from pydantic import ValidationError

from console.alarms import AlarmEngine
from console.errors import InputError
from console.protocol import Event, Frame, Hello
from console.record import container
from console.record.container import NO_SEQ, Entry, RecordKind
from console.record.lock import RecordingLock
from console.record.records import (
    ActionRecord,
    Recorded,
    RecordingHeader,
    kind_of,
    parse_record,
    without_tokens,
)

#: zlib level 6: within ~15 % of level 9's size at a quarter to a third of its time on real frames
#: (docs/recording.md, "Size").
DEFAULT_LEVEL = 6
#: A smaller limit is a typo: it would not hold one storm frame of a 2000-node fleet (≈ 23 kB, see
#: docs/recording.md). Retention always keeps the newest frame, whatever the limit.
MIN_MAX_BYTES = 16 * 1024
#: Kinds retention may drop. Actions, confirmations, hellos and drill outcomes are tiny and are the audit
#: trail of the session; they are kept whatever their age.
_DROPPABLE = frozenset({RecordKind.FRAME, RecordKind.EVENT})


@dataclass(frozen=True)
class Retention:
    """Keep at most `max_bytes` and/or the newest `max_age_s` of fleet time; None means no limit.

    Dropping means rewriting the file without its oldest frames and events, so it is done in steps: when
    the file passes `max_bytes` it is cut to `keep_share` of it, and when its oldest frame is `age_slack`
    older than `max_age_s` it is cut back to `max_age_s`. The rewrite is atomic (write aside, rename).
    """

    max_bytes: int | None = None
    max_age_s: float | None = None
    keep_share: float = 0.75
    age_slack: float = 0.1

    def __post_init__(self) -> None:
        if self.max_bytes is not None and self.max_bytes < MIN_MAX_BYTES:
            raise InputError("max_bytes", self.max_bytes, f"at least {MIN_MAX_BYTES} bytes, or no limit")
        # nan too; inf is no age, and no limit is said by leaving it out
        if self.max_age_s is not None and not 0 < self.max_age_s < math.inf:
            raise InputError("max_age_s", self.max_age_s, "a finite number of seconds above 0, or no limit")
        if not 0.1 <= self.keep_share < 1.0:
            raise InputError("keep_share", self.keep_share, "a share in [0.1, 1)")

    @property
    def active(self) -> bool:
        return self.max_bytes is not None or self.max_age_s is not None


#: Fleet seconds of an existing recording judged again by the alarms when it is continued (beyond the
#: baseline's learning period): longer than any alarm's window (60 s for connections, 30 s for CPU) and its
#: clearing delay.
ALARM_LOOKBACK_S = 300.0


NEW_OR_RECORDING = "a new file or a stormdeck recording to continue"


def check_recording_path(field: str, path: Path) -> Path:
    """Refuse, before anything starts, a path a recording cannot go to: a directory, or a file that holds
    something else (`field` is the option that named it: --out, --record)."""
    if path.is_dir():
        raise InputError(field, str(path), "a recording file, not a directory")
    if path.is_file() and path.stat().st_size > 0:
        try:
            with path.open("rb") as file:
                entries = container.verified_entries(file, path.stat().st_size)
                if not entries:
                    container.check_header_whole(field, path, file, path.stat().st_size)
        except OSError as error:
            raise InputError(field, str(path), f"a readable recording ({error.strerror})") from None
        if not entries or entries[0].kind is not RecordKind.HEADER:
            raise InputError(field, str(path), NEW_OR_RECORDING)
    return path


class _Unreadable(Exception):
    """A record of a recording being continued that does not read: what is wrong with it, in words."""


class RecordingWriter:
    def __init__(
        self,
        path: Path,
        header: RecordingHeader,
        *,
        retention: Retention | None = None,
        alarms: AlarmEngine | None = None,
        level: int = DEFAULT_LEVEL,
        fsync: bool = True,
        wall_clock: Callable[[], float] = time.time,
        field: str = "--out",
        lock: RecordingLock | None = None,
    ) -> None:
        """Create `path`, or continue it when it already holds a recording (its own header is kept).

        The writer holds the file (`RecordingLock`, released on close): a second writer is refused with
        `RecordingBusy` before it reads or cuts anything. `lock`: one the caller already holds, now the
        writer's.

        `alarms`, when given, judges every frame written and records what it raises and clears as `alarm`
        events (data.origin "recorder"), so replay has alarm markers whatever the source sent.
        `fsync` syncs after each frame and action: flushing alone survives a killed process, syncing
        survives a lost machine too.
        """
        self.path = Path(path)
        self.field = field
        self.retention = retention or Retention()
        self.alarms = alarms
        self.level = level
        self.fsync = fsync
        self.wall_clock = wall_clock
        self.newest_time_s: float | None = None
        self.last_frame_seq: int | None = None
        self.last_epoch: str | None = None
        self.compactions = 0
        self._entries: list[Entry] = []
        #: Each entry's time on the recording's timeline (`container.Timeline`), kept with `_entries`
        #: while retention is on: ages are measured on it, so a restarted source (fleet time from 1
        #: again) is newer than the run before it.
        self._timeline_s: list[float] = []
        self._timeline = container.Timeline()
        self._size = 0
        if lock is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock = RecordingLock(self.path, field)
        self._lock = lock
        try:
            self.header = self._open(header)
        except BaseException:
            self._lock.release()
            raise

    # --- opening ---------------------------------------------------------------------------------------

    def _open(self, header: RecordingHeader) -> RecordingHeader:
        with contextlib.suppress(FileNotFoundError):
            self._compaction_path.unlink()  # a compaction that was killed before its rename
        if self.path.exists() and self.path.stat().st_size > 0:
            header = self._continue_existing()
            self._file = self.path.open("ab", buffering=0)
            return header
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("wb", buffering=0)
        self._append(RecordKind.HEADER, header.model_dump_json().encode(), NO_SEQ, 0.0)
        self._sync()
        return header

    def _continue_existing(self) -> RecordingHeader:
        """Read back what continuing needs: the header, the last frame, the stretch whose alarms are still
        up. A record among them that does not read refuses the file: appending after it would add what no
        reader reaches (a reader ends the recording at the damage); it ended in a traceback ("Invalid JSON:
        EOF while parsing")."""
        try:
            return self._continue_readable()
        except _Unreadable as error:
            raise InputError(
                self.field,
                str(self.path),
                f"a recording this stormdeck can continue, but {error} — record into a new file (report "
                "and replay read this one up to the damage)",
            ) from None

    def _continue_readable(self) -> RecordingHeader:
        with self.path.open("rb") as file:
            size = self.path.stat().st_size
            entries = container.verified_entries(file, size)
            if not entries:
                container.check_header_whole(self.field, self.path, file, size)
            if not entries or entries[0].kind is not RecordKind.HEADER:
                raise InputError(self.field, str(self.path), NEW_OR_RECORDING)
            header = self._read_back(file, entries[0])
            frames = [entry for entry in entries if entry.kind is RecordKind.FRAME]
            if frames:
                frame = self._read_back(file, frames[-1])
                assert isinstance(frame, Frame)
                self.last_frame_seq, self.last_epoch = frame.seq, frame.epoch
            if self.alarms is not None:
                # The alarms active where the recording stopped stay active: judged again over its last
                # frames (silently), they are not raised a second time when it goes on.
                for earlier in self._last_stretch(file, frames, self.alarms):
                    self.alarms.update(earlier)
        with self.path.open("r+b") as file:
            file.truncate(container.end_of(entries))  # the torn tail a killed writer left
        self._size = container.end_of(entries)
        if self.retention.active:
            self._entries = entries
            self._timeline_s = [self._timeline.place(entry) for entry in entries]
        times = [e.time_s for e in entries if e.kind is not RecordKind.HEADER]
        self.newest_time_s = max(times) if times else None
        assert isinstance(header, RecordingHeader)
        return header

    @staticmethod
    def _read_back(file: BinaryIO, entry: Entry) -> Recorded:
        """A record of the recording being continued; `_Unreadable` where it does not read (a damaged
        copy, an edited file)."""
        payload = container.read_member(file, entry)
        kind = entry.kind.name.lower()
        if payload is None:
            raise _Unreadable(f"its {kind} record at byte {entry.offset:,} is damaged (a damaged copy?)")
        try:
            return parse_record(entry.kind, payload)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "record"
            raise _Unreadable(
                f"its {kind} record at byte {entry.offset:,} has {where}: {first['msg']} (an edited file?)"
            ) from None

    @staticmethod
    def _last_stretch(file: BinaryIO, frames: list[Entry], alarms: AlarmEngine) -> list[Frame]:
        """The newest frames, oldest first, back to the lookback or to where the source restarted (another
        epoch): the stretch whose alarms are still active."""
        lookback_s = max(ALARM_LOOKBACK_S, alarms.thresholds.baseline_learn_s + ALARM_LOOKBACK_S)
        stretch: list[Frame] = []
        for entry in reversed(frames):
            frame = RecordingWriter._read_back(file, entry)
            assert isinstance(frame, Frame)
            if stretch and (frame.epoch != stretch[0].epoch or frame.time_s < stretch[0].time_s - lookback_s):
                break
            if stretch and frame.time_s > stretch[0].time_s:
                break  # time ran backwards going back: an earlier run of the source
            stretch.insert(0, frame)
        return stretch

    # --- writing ---------------------------------------------------------------------------------------

    def write(self, record: Recorded, raw: str | bytes | None = None) -> None:
        """Append one record; `raw` is its JSON text as received (kept verbatim), if at hand."""
        kind = kind_of(record)
        if kind is RecordKind.HEADER:
            raise InputError("record", "recording header", "frames, events, hellos, actions, confirmations")
        if isinstance(record, ActionRecord) and without_tokens(record) is not record:
            record, raw = without_tokens(record), None  # a confirmation token is never recorded
        payload = raw.encode() if isinstance(raw, str) else raw
        if payload is None:
            payload = record.model_dump_json().encode()
        time_s = getattr(record, "time_s", None)
        if time_s is None:  # a hello: it belongs where the recording stands
            time_s = self.newest_time_s if self.newest_time_s is not None else 0.0
        seq = getattr(record, "seq", None)
        self._append(
            kind, payload, seq if isinstance(seq, int) and kind is not RecordKind.HELLO else NO_SEQ, time_s
        )
        self.newest_time_s = time_s if self.newest_time_s is None else max(self.newest_time_s, time_s)
        if isinstance(record, Frame):
            self.last_frame_seq, self.last_epoch = record.seq, record.epoch
            if self.alarms is not None:
                for change in self.alarms.update(record):
                    self._append_event(_from_recorder(change))
        elif isinstance(record, Hello):
            if record.epoch != self.last_epoch:
                # A restarted source: nothing of its run is held yet. Keeping the old run's seq made the
                # recorder skip the new run's frames up to it as repeats (hours of them after hours at 1 Hz).
                self.last_frame_seq = None
            self.last_epoch = record.epoch
        if kind in (RecordKind.FRAME, RecordKind.ACTION, RecordKind.CONFIRMATION, RecordKind.DRILL_OUTCOME):
            self._sync()
        if kind is RecordKind.FRAME and self._retention_due():
            self.compact()

    def _append_event(self, event: Event) -> None:
        self._append(RecordKind.EVENT, event.model_dump_json().encode(), NO_SEQ, event.time_s)

    def _append(self, kind: RecordKind, payload: bytes, seq: int, time_s: float) -> None:
        if not payload.endswith(b"\n"):
            payload += b"\n"  # so that `zcat` prints JSON lines
        wall = self.wall_clock()
        member = container.encode(kind, payload, seq=seq, time_s=time_s, wall_unix_s=wall, level=self.level)
        view = memoryview(member)
        while view:
            written = self._file.write(view)
            view = view[written:]
        if self.retention.active:
            entry = Entry(self._size, len(member), kind, seq, time_s, wall)
            self._entries.append(entry)
            self._timeline_s.append(self._timeline.place(entry))
        self._size += len(member)

    def _sync(self) -> None:
        if self.fsync:
            os.fsync(self._file.fileno())

    @property
    def size_bytes(self) -> int:
        return self._size

    # --- retention -------------------------------------------------------------------------------------

    @property
    def _compaction_path(self) -> Path:
        return self.path.with_name(self.path.name + ".compacting")

    def _retention_due(self) -> bool:
        r = self.retention
        if r.max_bytes is not None and self._size > r.max_bytes:
            return True
        if r.max_age_s is not None and self._timeline_s:
            oldest = next(
                (
                    t
                    for e, t in zip(self._entries, self._timeline_s, strict=True)
                    if e.kind is RecordKind.FRAME
                ),
                None,
            )
            newest = self._timeline.newest_frame_s
            slack_s = max(r.max_age_s * r.age_slack, 1.0)
            return oldest is not None and newest is not None and oldest < newest - r.max_age_s - slack_s
        return False

    def _cut_index(self) -> int | None:
        """Where the kept part of the file starts (an index into `_entries`): frames and events before it
        go. The stricter of the two limits. A cut is made in file order, at the start of a frame's tick
        (just after the frame before it), never by comparing fleet times: a restarted source's frames are
        stamped earlier than the run before them, and they are the newest."""
        r = self.retention
        cuts: list[int] = []
        newest = self._timeline.newest_frame_s
        if r.max_age_s is not None and newest is not None:
            cuts.append(self._cut_for_age(newest - r.max_age_s))
        if r.max_bytes is not None and self._size > r.max_bytes:
            cuts.append(self._cut_for_bytes(self._size - int(r.max_bytes * r.keep_share)))
        return max(cuts) if cuts else None

    def _tick_starts(self) -> list[tuple[int, int]]:
        """Per frame, (the index its tick starts at — just after the frame before it —, its own index)."""
        starts: list[tuple[int, int]] = []
        start = 1
        for i, entry in enumerate(self._entries):
            if entry.kind is RecordKind.FRAME:
                starts.append((start, i))
                start = i + 1
        return starts

    def _cut_for_age(self, oldest_kept_s: float) -> int:
        """The start of the first frame's tick at or after `oldest_kept_s` on the timeline."""
        ticks = self._tick_starts()
        for start, frame in ticks:
            if self._timeline_s[frame] >= oldest_kept_s:
                return start
        return ticks[-1][0] if ticks else 1  # keep at least the newest frame

    def _cut_for_bytes(self, excess: int) -> int:
        """The start of the first frame's tick at which dropping everything droppable before it frees
        `excess` bytes."""
        ticks = self._tick_starts()
        freed = 0
        for start, frame in ticks:
            if freed >= excess:
                return start
            freed += sum(e.size for e in self._entries[start : frame + 1] if e.kind in _DROPPABLE)
        return ticks[-1][0] if ticks else 1  # keep at least the newest frame

    def compact(self) -> None:
        """Rewrite the file without the frames and events retention lets go, then swap it in atomically."""
        cut = self._cut_index()
        if cut is None:
            return
        dropped = [i for i in range(1, cut) if self._entries[i].kind in _DROPPABLE]
        if not dropped:
            return
        kept_at = [
            i for i in range(1, len(self._entries)) if i >= cut or self._entries[i].kind not in _DROPPABLE
        ]
        first_frame = next(
            (self._entries[i] for i in kept_at if self._entries[i].kind is RecordKind.FRAME), None
        )
        trimmed_s = first_frame.time_s if first_frame is not None else self._entries[dropped[-1]].time_s
        header = self.header.model_copy(update={"trimmed_before_s": trimmed_s})
        staging = self._compaction_path
        # Never written through: a stale file from a crash, or a link someone planted beside the recording
        # (a shared directory) to have the recorder overwrite what it points at, goes; the new one is ours.
        staging.unlink(missing_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        with self.path.open("rb") as source, os.fdopen(os.open(staging, flags, 0o666), "wb") as target:
            header_member = container.encode(
                RecordKind.HEADER,
                header.model_dump_json().encode() + b"\n",
                seq=NO_SEQ,
                time_s=0.0,
                wall_unix_s=self.wall_clock(),
                level=self.level,
            )
            target.write(header_member)
            entries = [Entry(0, len(header_member), RecordKind.HEADER, NO_SEQ, 0.0, self.wall_clock())]
            offset = len(header_member)
            for i in kept_at:
                entry = self._entries[i]
                source.seek(entry.offset)
                target.write(source.read(entry.size))
                entries.append(
                    Entry(offset, entry.size, entry.kind, entry.seq, entry.time_s, entry.wall_unix_s)
                )
                offset += entry.size
            target.flush()
            os.fsync(target.fileno())
        self._file.close()
        os.replace(staging, self.path)
        self._file = self.path.open("ab", buffering=0)
        self.header = header
        self._timeline_s = [self._timeline_s[0]] + [self._timeline_s[i] for i in kept_at]
        self._entries = entries
        self._size = offset
        self.compactions += 1

    # --- closing ---------------------------------------------------------------------------------------

    def close(self) -> None:
        if not self._file.closed:
            self._sync()
            self._file.close()
        self._lock.release()

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _from_recorder(change: Event) -> Event:
    return change.model_copy(update={"data": {**change.data, "origin": "recorder"}})
