"""Reading a recording: its records in order, its frames by index or time, and the markers of a timeline.

    with RecordingReader(path) as recording:
        recording.header, recording.frame_count
        for frame in recording.frames(): ...
        recording.seek(245.0)         # the frame at or before 245 s
        recording.step(+1)            # one frame on
        recording.next_marker("alarm")

Opening reads only the members' headers (docs/recording.md, "seek cost"); a frame is inflated when asked
for. A torn tail — what a killed writer leaves — is ignored: `damaged_tail` says one was there. A damaged
member found later, when read (a file copied mid-write, a lost page), ends the recording there the same
way: what is before it reads, the iterators stop at it, and `damaged_at` says where. So does a member
that checks out but is not a record this stormdeck reads (a field of the wrong type: an edited file).
A recording this stormdeck cannot read at all — a newer `recording_version`, frames of another fleet API
version — is refused at open, naming what it is.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal

from pydantic import ValidationError

from console import __version__
from console.errors import InputError
from console.model.node_readings import columnar_frame_json
from console.protocol import API_VERSION, Event, Frame, Hello
from console.record import container
from console.record.container import Entry, RecordKind
from console.record.records import (
    RECORDING_VERSION,
    ActionRecord,
    Confirmation,
    DrillOutcome,
    Recorded,
    RecordingHeader,
    is_told_action,
    is_told_injection,
    parse_record,
    told_actions,
)

#: What an audit log lists of a recording (`audit_trail`): an attempt, a confirmation, an injection (an event).
AuditRecord = ActionRecord | Confirmation | Event
#: The records the audit trail is read from: a told action or injection is an event.
_AUDITED = frozenset({RecordKind.ACTION, RecordKind.CONFIRMATION, RecordKind.EVENT})

MarkerKind = Literal["alarm", "action", "event"]
MARKER_KINDS: tuple[MarkerKind, ...] = ("alarm", "action", "event")
#: The events a replay marks and jumps to (`event` markers): an instructor's injection, a drill's story
#: line (its timeline, injections included, and its end) and its hints — what the incident did and said.
TOLD_EVENT_KINDS = frozenset({"injection", "drill", "hint"})


@dataclass(frozen=True)
class Marker:
    """A point on the replay timeline worth jumping to."""

    kind: MarkerKind
    time_s: float
    label: str
    level: str = ""  # alarm severity, the action's verdict level / outcome, or the event's kind
    frame_index: int = 0  # where a jump lands: the first frame at or after the marker (after an action)


#: An alarm in a recording: (source epoch or None, rule name, node or None).
AlarmKey = tuple[str | None, str, str | None]


class DamagedRecord(InputError):
    """A member that does not check out: the recording ends before it (see `RecordingReader.damaged_at`)."""


class RecordingReader:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self._file = self.path.open("rb")
        except OSError as error:
            raise InputError(
                "FILE", str(path), f"a readable stormdeck recording ({error.strerror})"
            ) from None
        size = self.path.stat().st_size
        self._entries = container.verified_entries(self._file, size)
        if not self._entries or self._entries[0].kind is not RecordKind.HEADER:
            try:
                container.check_header_whole("FILE", path, self._file, size)
            except InputError:
                self._file.close()
                raise
            self._file.seek(0)
            plain_json = self._file.read(1) == b"{"
            self._file.close()
            if plain_json:  # e.g. what `zcat FILE` printed, saved: the records without their index
                raise InputError(
                    "FILE",
                    str(path),
                    "a stormdeck recording as `stormdeck record` writes it, a gzip member a record; this file "
                    "is plain JSON lines (as `zcat` prints a recording) — give the .sdrec file itself",
                )
            if size == 0:  # (a copy made before the recorder wrote anything, a full disk)
                raise InputError("FILE", str(path), "a stormdeck recording; the file is empty (0 bytes)")
            raise InputError("FILE", str(path), "a stormdeck recording (its first record is a header)")
        self.damaged_tail = container.end_of(self._entries) < size
        #: Where the damage starts (a torn tail, or a damaged member met while reading), or None.
        self.damaged_at: int | None = container.end_of(self._entries) if self.damaged_tail else None
        #: What is wrong at `damaged_at` when it is not a torn or garbled member but a record this
        #: stormdeck does not read (e.g. "the frame record at byte 676 has nodes.0.connections: …").
        self.damage: str | None = None
        try:
            header = self._read(self._entries[0])
        except InputError:
            self._file.close()
            raise
        assert isinstance(header, RecordingHeader)
        self.header = header
        self._frames = [e for e in self._entries if e.kind is RecordKind.FRAME]
        #: Each record's time on the replay timeline (header first): its fleet time, unless the source
        #: restarted (see `_timeline`).
        self.timeline_s = _timeline(self._entries)
        #: Where each frame sits among the records, and its time on the timeline.
        self.frame_entry_index = [i for i, e in enumerate(self._entries) if e.kind is RecordKind.FRAME]
        self.frame_times_s = [self.timeline_s[i] for i in self.frame_entry_index]
        self.position = 0
        self._markers: list[Marker] | None = None
        #: Per alarm, the (raised, cleared or None) fleet times the recording's alarm events say.
        self._alarm_spans: dict[AlarmKey, list[tuple[float, float | None]]] = {}
        try:
            self._check_versions()
        except InputError:
            self._file.close()
            raise

    # --- records ---------------------------------------------------------------------------------------

    def _check_versions(self) -> None:
        """Refuse what this stormdeck would misread: a recording whose records mean something else (a
        newer `recording_version`), or frames of another fleet API version (its first frame says; one
        inflate). Fields added without a version change read, as the protocol's models keep them."""
        header = self.header
        if header.recording_version > RECORDING_VERSION:
            raise InputError(
                "FILE",
                str(self.path),
                f"a recording of version {RECORDING_VERSION} or older, which stormdeck {__version__} reads "
                f"(this one is version {header.recording_version}, written by stormdeck "
                f"{header.stormdeck_version})",
            )
        if self._frames:
            try:
                first = self._read(self._frames[0])
            except DamagedRecord:
                return  # the recording now ends before it; what is before reads
            if isinstance(first, Frame) and first.api_version != API_VERSION:
                raise InputError(
                    "FILE",
                    str(self.path),
                    f"a recording of fleet API {API_VERSION}, which stormdeck {__version__} reads (its "
                    f"frames have api_version {first.api_version!r})",
                )

    def _read(self, entry: Entry, columnar: bool = False) -> Recorded:
        payload = container.read_member(self._file, entry)
        if payload is None:
            self._end_before(entry)
            raise DamagedRecord("FILE", str(self.path), f"an undamaged record at byte {entry.offset}")
        try:
            if columnar and entry.kind is RecordKind.FRAME:
                return columnar_frame_json(payload)
            return parse_record(entry.kind, payload)
        except ValidationError as error:
            # Its CRC checks out, its content does not (an edited file): the recording ends before it, as
            # at a damaged member, and the message names the field.
            first = error.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "record"
            damage = (
                f"the {entry.kind.name.lower()} record at byte {entry.offset} has {field}: {first['msg']} "
                f"(got {first.get('input')!r})"
            )
            if entry.kind is not RecordKind.HEADER:
                self._end_before(entry)
                self.damage = damage
            raise DamagedRecord(
                "FILE", str(self.path), f"records stormdeck {__version__} reads: {damage}"
            ) from None

    def _end_before(self, entry: Entry) -> None:
        """The recording ends before `entry`: only the tail is checked at open (one inflate, not thousands),
        so a damaged member further in is found when first read, and cut off as a torn tail is."""
        cut = next((i for i, e in enumerate(self._entries) if e.offset == entry.offset), None)
        if (
            cut is None
        ):  # cut off already, found by an earlier read (a scan for the markers): it ends before it
            return
        self._entries = self._entries[:cut]
        self.timeline_s = self.timeline_s[:cut]
        self._frames = [e for e in self._entries if e.kind is RecordKind.FRAME]
        self.frame_entry_index = [i for i in self.frame_entry_index if i < cut]
        self.frame_times_s = self.frame_times_s[: len(self.frame_entry_index)]
        self.position = min(self.position, max(len(self._frames) - 1, 0))
        self._markers = None
        self.damaged_tail = True
        self.damaged_at = entry.offset

    def records(self, kinds: frozenset[RecordKind] | None = None) -> Iterator[Recorded]:
        """Every record after the header in file order (events before the frame they came with), up to
        any damage."""
        for entry in self._entries[1:]:
            if kinds is None or entry.kind in kinds:
                try:
                    yield self._read(entry)
                except DamagedRecord:
                    return

    def records_on_timeline(self) -> Iterator[tuple[float, Recorded]]:
        """`records()`, each with how far the timeline runs ahead of its fleet time there: 0 until the
        source first restarts (its fleet time from 1 again), then what puts the new run after the old one
        (`container.Timeline`) — add it to a record's `time_s` to place it as the replay does."""
        timeline = container.Timeline()
        offsets = []
        for entry in self._entries:
            timeline.place(entry)
            offsets.append(timeline.offset_s)
        for entry, offset_s in zip(self._entries[1:], offsets[1:], strict=True):
            try:
                yield offset_s, self._read(entry)
            except DamagedRecord:
                return

    def frames(self, start: int = 0, stop: int | None = None) -> Iterator[Frame]:
        for entry in self._frames[start:stop]:
            try:
                frame = self._read(entry)
            except DamagedRecord:
                return
            assert isinstance(frame, Frame)
            yield frame

    def events(self) -> Iterator[Event]:
        yield from self.records(frozenset({RecordKind.EVENT}))  # type: ignore[misc]

    def actions(self) -> Iterator[ActionRecord]:
        yield from self.records(frozenset({RecordKind.ACTION}))  # type: ignore[misc]

    def confirmations(self) -> Iterator[Confirmation]:
        yield from self.records(frozenset({RecordKind.CONFIRMATION}))  # type: ignore[misc]

    def audit_trail(self) -> list[AuditRecord]:
        """Every action attempt, confirmation and instructor's injection the recording holds, in time order
        (file order among equals): the acting console's or drill's own records, the applied actions the
        stream told that none of them holds (`told_actions`: a `stormdeck record` recording has only
        these), and the stream's `injection` events (`is_told_injection`)."""
        trail = [
            record for _, record in self._audit_records(_AUDITED) if not isinstance(record, DrillOutcome)
        ]
        return sorted(trail, key=lambda record: record.time_s)

    def audit_trail_on_timeline(self) -> list[tuple[float, AuditRecord | DrillOutcome]]:
        """`audit_trail()` and the drill's outcome, in the order a replay plays them, each with its time on
        the replay timeline (`timeline_s`): the newest at or before where a replay stands is the last entry
        it has passed (the timeline bar's "last:")."""
        placed = sorted(self._audit_records(_AUDITED | {RecordKind.DRILL_OUTCOME}), key=lambda p: p[0])
        return [(self.timeline_s[position], record) for position, record in placed]

    def _audit_records(self, kinds: frozenset[RecordKind]) -> list[tuple[int, AuditRecord | DrillOutcome]]:
        """The audit trail's records (and a drill outcome, if `kinds` has it), each with its entry's index:
        the recording's own in file order, then the stream's told actions none of them holds."""
        own: list[tuple[int, AuditRecord | DrillOutcome]] = []
        told: list[tuple[int, Event]] = []
        for position, entry in enumerate(self._entries):
            if entry.kind not in kinds:
                continue
            try:
                record = self._read(entry)
            except DamagedRecord:
                break  # the recording now ends before it
            if isinstance(record, ActionRecord | Confirmation | DrillOutcome):
                own.append((position, record))
            elif isinstance(record, Event) and is_told_action(record):
                told.append((position, record))
            elif isinstance(record, Event) and is_told_injection(record):
                own.append((position, record))
        held = [record for _, record in own if isinstance(record, ActionRecord)]
        return own + [
            (position, action) for position, event in told for action in told_actions([event], held)
        ]

    def drill_outcome(self) -> DrillOutcome | None:
        """The last drill outcome recorded, if the recording came from a drill that ended."""
        outcomes = list(self.records(frozenset({RecordKind.DRILL_OUTCOME})))
        return outcomes[-1] if outcomes else None  # type: ignore[return-value]

    def entries(self) -> list[Entry]:
        """The index: where each record lives, its kind, seq and times (header first)."""
        return list(self._entries)

    def read_entry(self, entry: Entry, columnar: bool = False) -> Recorded:
        """The record at `entry`. `columnar`: a frame is read with its nodes as columns and no node records
        (`ColumnarFrame`: checked the same way, built in a third to half of the time at 2000 nodes)."""
        return self._read(entry, columnar)

    @property
    def frame_count(self) -> int:
        return len(self._frames)

    @property
    def span_s(self) -> tuple[float, float] | None:
        """Fleet time of the first and last frame."""
        if not self._frames:
            return None
        return self._frames[0].time_s, self._frames[-1].time_s

    def frame_at(self, index: int) -> Frame:
        if not 0 <= index < len(self._frames):
            raise InputError("frame", index, f"an index in [0, {len(self._frames) - 1}]")
        frame = self._read(self._frames[index])
        assert isinstance(frame, Frame)
        return frame

    # --- cursor: seek, step, markers ------------------------------------------------------------------

    def index_at(self, time_s: float) -> int:
        """The last frame at or before `time_s` on the timeline (the first one when it is earlier)."""
        if not self._frames:
            raise InputError("FILE", str(self.path), "a recording with at least one complete frame")
        return max(bisect.bisect_right(self.frame_times_s, time_s) - 1, 0)

    def seek(self, time_s: float) -> Frame:
        self.position = self.index_at(time_s)
        return self.frame_at(self.position)

    def step(self, frames: int = 1) -> Frame:
        """Move by `frames` (±); stops at either end."""
        if not self._frames:
            raise InputError("FILE", str(self.path), "a recording with at least one complete frame")
        self.position = min(max(self.position + frames, 0), len(self._frames) - 1)
        return self.frame_at(self.position)

    def markers(self, kind: MarkerKind | None = None) -> list[Marker]:
        """Alarms raised, actions attempted and events told (injections, a drill's lines and hints), in
        time order, each with the frame a jump lands on."""
        self._scan()
        assert self._markers is not None
        return [m for m in self._markers if kind is None or m.kind == kind]

    def alarm_raised_s(self, epoch: str | None, name: str, node: str | None, time_s: float) -> float | None:
        """When the recording's alarm `name` (on `node`) that was active at fleet time `time_s` was raised,
        by its recorded alarm events; None when the recording has it inactive then (or holds no alarms).
        A replay that starts its alarm engine afresh at a jump learns from here when an alarm already up
        at the landing point really began."""
        self._scan()
        for key in ((epoch, name, node), (None, name, node)):
            for raised_s, cleared_s in reversed(self._alarm_spans.get(key, [])):
                if raised_s <= time_s and (cleared_s is None or time_s < cleared_s):
                    return raised_s
        return None

    def _scan(self) -> None:
        if self._markers is None:
            try:
                found = list(self._collect_markers())
            except DamagedRecord:  # the recording now ends before the damage: collect again, up to it
                self._scan()
                return
            self._markers = sorted(found, key=lambda m: (m.frame_index, m.time_s))

    def next_marker(self, kind: MarkerKind | None = None) -> Marker | None:
        """Jump to the first marker past the current frame; None (and no move) when there is none."""
        found = next((m for m in self.markers(kind) if m.frame_index > self.position), None)
        if found is not None:
            self.position = found.frame_index
        return found

    def previous_marker(self, kind: MarkerKind | None = None) -> Marker | None:
        found = next((m for m in reversed(self.markers(kind)) if m.frame_index < self.position), None)
        if found is not None:
            self.position = found.frame_index
        return found

    def _landing(self, time_s: float, after_entry: int | None = None) -> int:
        """The first frame at or after `time_s` on the timeline — and, given `after_entry`, after that
        record in the file: an action is written after the frame the operator acted on (stamped with its
        time), so the first frame to show its effect is the next one."""
        index = bisect.bisect_left(self.frame_times_s, time_s)
        if after_entry is not None:
            index = max(index, bisect.bisect_right(self.frame_entry_index, after_entry))
        return min(index, max(len(self._frames) - 1, 0))

    def _collect_markers(self) -> Iterator[Marker]:
        """Actions, told events and alarms raised. A recording holds the source's alarm events and, when its writer
        judged the frames too, the writer's own (data.origin "recorder"): the same alarms twice. The
        writer's are used when there are any — every recording judged by the same rules — else the
        source's."""
        alarms: dict[bool, list[Marker]] = {True: [], False: []}
        spans: dict[bool, dict[AlarmKey, list[tuple[float, float | None]]]] = {True: {}, False: {}}
        epoch: str | None = None
        recorded: list[ActionRecord] = []
        told: list[tuple[Event, int]] = []  # the stream's action events, and where each lands
        for position, (entry, timeline_s) in enumerate(zip(self._entries, self.timeline_s, strict=True)):
            if entry.kind is RecordKind.HELLO:
                hello = self._read(entry)
                assert isinstance(hello, Hello)
                epoch = hello.epoch
            elif entry.kind is RecordKind.EVENT:
                event = self._read(entry)
                assert isinstance(event, Event)
                if is_told_action(event):
                    told.append((event, self._landing(timeline_s)))
                if event.kind in TOLD_EVENT_KINDS:
                    # Told before the frame of the second it belongs to: that frame shows what it did.
                    landing = self._landing(timeline_s, after_entry=position)
                    yield Marker("event", event.time_s, event.message, event.kind, landing)
                if event.kind == "alarm":
                    recorder = event.data.get("origin") == "recorder"
                    _note_alarm(spans[recorder], (epoch, str(event.data.get("name")), event.node), event)
                if event.kind == "alarm" and event.data.get("change") == "raised":
                    alarms[event.data.get("origin") == "recorder"].append(
                        Marker(
                            "alarm",
                            event.time_s,
                            str(event.data.get("name", event.message))
                            + (f" @{event.node}" if event.node else ""),
                            str(event.data.get("severity", "")),
                            self._landing(timeline_s),
                        )
                    )
            elif entry.kind is RecordKind.ACTION:
                action = self._read(entry)
                assert isinstance(action, ActionRecord)
                recorded.append(action)
                yield Marker(
                    "action",
                    action.time_s,
                    describe_action(action),
                    action.verdict.level.value if action.verdict else action.outcome,
                    self._landing(timeline_s, after_entry=position),
                )
        for event, frame_index in told:  # (few: an action a minute is a busy incident)
            for action in told_actions([event], recorded):
                yield Marker("action", action.time_s, describe_action(action), action.outcome, frame_index)
        self._alarm_spans = spans[True] or spans[False]
        yield from alarms[True] or alarms[False]

    # --- closing ---------------------------------------------------------------------------------------

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RecordingReader:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _note_alarm(spans: dict[AlarmKey, list[tuple[float, float | None]]], key: AlarmKey, event: Event) -> None:
    held = spans.setdefault(key, [])
    if event.data.get("change") == "raised":
        held.append((event.time_s, None))
    elif held and held[-1][1] is None:
        held[-1] = (held[-1][0], event.time_s)


def describe_action(action: ActionRecord) -> str:
    """`drain gw-003 → blocked`: what the operator tried and what became of it."""
    target = f" {action.target}" if action.target else ""
    return f"{action.action}{target} → {action.outcome}"


_TIMELESS = frozenset({RecordKind.HEADER, RecordKind.HELLO})


def _timeline(entries: list[Entry]) -> list[float]:
    """Each entry's time on the replay timeline: fleet time, made non-decreasing in file order (see
    `container.Timeline`: a restarted source's timeline goes on from where it was)."""
    timeline = container.Timeline()
    out = container.Timeline.finish([timeline.place(entry) for entry in entries])
    # The header and a hello carry no fleet time (stamped 0): they play with the record after them, so a
    # recording joined at fleet time 12 s starts playing at once, not after 12 s of nothing.
    for i in range(len(entries) - 2, -1, -1):
        if entries[i].kind in _TIMELESS:
            out[i] = out[i + 1]
    return out
