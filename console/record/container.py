"""The recording container: one gzip member per record, each self-describing in its header.

A recording is a plain concatenation of gzip members (RFC 1952), so `zcat FILE` prints it as JSON lines.
Each member carries, in its FEXTRA field, a subfield `SD` with the record's kind, its `seq`, its fleet time,
the wall clock when it was written and the member's total size — the same trick BGZF (SAMtools' blocked
gzip) uses. That lets a reader index a file by hopping from header to header without inflating anything,
and read any one record with one seek and one inflate.

Crash safety comes from the shape: a record is appended with one `write` of the whole member, and a member
is only believed when its size fits in the file and its CRC-32 and length trailer match. Whatever a kill
leaves after the last complete member is a torn tail, which readers ignore and writers cut off.
"""

from __future__ import annotations

import mmap
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import BinaryIO

from console.errors import InputError

_MAGIC = b"\x1f\x8b"
_DEFLATE = 8
_FEXTRA = 0x04
_OS_UNKNOWN = 255
#: Subfield payload: version, kind, member size, seq, time_s, wall_unix_s.
_SUBFIELD = struct.Struct("<BBIqdd")
_SUBFIELD_ID = b"SD"
_FORMAT_VERSION = 1
#: Fixed gzip header (10) + XLEN (2) + subfield id and length (4) + our subfield.
HEADER_BYTES = 10 + 2 + 4 + _SUBFIELD.size
_TRAILER = struct.Struct("<II")
#: A sanity bound: no frame of a 2000-node fleet comes near it (≈ 25 kB compressed, docs/recording.md).
MAX_MEMBER_BYTES = 256 * 1024 * 1024
#: The most a record inflates to: a stream message is at most 32 MiB (console.client.stream), so a member
#: inflating past twice that is not one a writer made — and a crafted one (a gzip "bomb": 64 KiB of zeros
#: inflating to gigabytes) would fill a replay's memory.
MAX_PAYLOAD_BYTES = 64 * 1024 * 1024


class RecordKind(IntEnum):
    HEADER = 0
    FRAME = 1
    EVENT = 2
    ACTION = 3
    CONFIRMATION = 4
    HELLO = 5
    DRILL_OUTCOME = 6


@dataclass(frozen=True)
class Entry:
    """Where one record lives in the file, and what the index needs without inflating it."""

    offset: int
    size: int
    kind: RecordKind
    seq: int
    time_s: float
    wall_unix_s: float


#: `seq` of a record that has none (events without a frame seq, actions, the header).
NO_SEQ = -1


def encode(
    kind: RecordKind, payload: bytes, *, seq: int, time_s: float, wall_unix_s: float, level: int
) -> bytes:
    """One gzip member holding `payload`, its index fields in the header."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = compressor.compress(payload) + compressor.flush()
    size = HEADER_BYTES + len(body) + _TRAILER.size
    subfield = _SUBFIELD.pack(_FORMAT_VERSION, int(kind), size, seq, time_s, wall_unix_s)
    extra = _SUBFIELD_ID + struct.pack("<H", len(subfield)) + subfield
    header = (
        _MAGIC
        + bytes((_DEFLATE, _FEXTRA))
        + struct.pack("<I", int(wall_unix_s) & 0xFFFFFFFF)
        + bytes((0, _OS_UNKNOWN))
        + struct.pack("<H", len(extra))
        + extra
    )
    trailer = _TRAILER.pack(zlib.crc32(payload), len(payload) & 0xFFFFFFFF)
    return header + body + trailer


def parse_header(raw: bytes, offset: int) -> Entry | None:
    """The index entry of the member starting with `raw`, or None when it is not one of ours."""
    if len(raw) < HEADER_BYTES or raw[:2] != _MAGIC or raw[2] != _DEFLATE or not raw[3] & _FEXTRA:
        return None
    if raw[12:14] != _SUBFIELD_ID or struct.unpack_from("<H", raw, 14)[0] != _SUBFIELD.size:
        return None
    version, kind, size, seq, time_s, wall_unix_s = _SUBFIELD.unpack_from(raw, 16)
    if version != _FORMAT_VERSION or kind not in RecordKind._value2member_map_:
        return None
    if not HEADER_BYTES + _TRAILER.size <= size <= MAX_MEMBER_BYTES:
        return None
    return Entry(offset, size, RecordKind(kind), seq, time_s, wall_unix_s)


class TruncatedHeader(InputError):
    """A recording cut short inside its header: nothing in it can be read, and saying "not a stormdeck
    recording" sent its owner looking for the wrong file. `value` is the path, `allowed` how much is
    there."""

    def _message(self) -> str:
        return (
            f"{self.field}: {self.value} is a stormdeck recording cut short inside its header (truncated "
            f"header: {self.allowed}): no record in it can be read, so there is nothing to replay, report "
            "or continue. It was cut while being written — a copy taken as its recorder began, or a recorder "
            "stopped (killed, the disk full) while writing its first record: copy it again once its recorder "
            "has written more, or record again into a new file (or remove this one to reuse its name)"
        )


def check_header_whole(field: str, path: object, file: BinaryIO, file_size: int) -> None:
    """Raise `TruncatedHeader` when the file is a recording cut inside its header (`torn_header`)."""
    file.seek(0)
    size = torn_header(file.read(HEADER_BYTES), file_size)
    if size is not None:
        of = f" of its {size:,}" if size else f", short of even a record's own {HEADER_BYTES}-byte header"
        raise TruncatedHeader(field, str(path), f"the file has {file_size:,} bytes{of}")


def torn_header(start: bytes, file_size: int) -> int | None:
    """When a file is a recording cut short inside its first record, the header (`start`: its first
    `HEADER_BYTES` bytes, or all of a shorter file): the size that record has, or 0 when the cut came
    before the member's own header said it. None when the file is anything else — whole, or not ours.
    A shorter file is judged on the bytes every member of ours starts with (the gzip magic, deflate,
    FEXTRA, the `SD` subfield and its length, the format version, the header's kind)."""
    if file_size >= HEADER_BYTES:
        entry = parse_header(start[:HEADER_BYTES], 0)
        if entry is not None and entry.kind is RecordKind.HEADER and entry.size > file_size:
            return entry.size
        return None
    if file_size < 2:
        return None
    template = encode(RecordKind.HEADER, b"", seq=NO_SEQ, time_s=0.0, wall_unix_s=0.0, level=1)
    fixed = (*range(4), 9, *range(10, 18))  # (bytes 4-8 are the member's time, the same for none)
    return 0 if all(start[i] == template[i] for i in fixed if i < file_size) else None


def decode(member: bytes) -> bytes | None:
    """The payload of a complete member, or None when it is torn, damaged (CRC or length mismatch), or
    inflates past `MAX_PAYLOAD_BYTES`."""
    try:
        inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        payload = inflater.decompress(member[HEADER_BYTES : -_TRAILER.size], MAX_PAYLOAD_BYTES)
        if not inflater.eof:  # torn, or larger than any record (what is left is not inflated)
            return None
    except zlib.error:
        return None
    crc, length = _TRAILER.unpack(member[-_TRAILER.size :])
    if crc != zlib.crc32(payload) or length != len(payload) & 0xFFFFFFFF:
        return None
    return payload


def scan(file: BinaryIO, file_size: int) -> Iterator[Entry]:
    """Every member whose header parses and whose bytes are all in the file, in file order.

    Stops at the first one that does not: a crash can only tear the tail of an append-only file. The
    payload is not checked here (that needs inflating); `verified_entries` checks the tail. The file is
    mapped, not read: only the pages holding headers are touched.
    """
    if file_size < HEADER_BYTES:
        return
    with mmap.mmap(file.fileno(), file_size, access=mmap.ACCESS_READ) as mapped:
        offset = 0
        while offset + HEADER_BYTES <= file_size:
            entry = parse_header(mapped[offset : offset + HEADER_BYTES], offset)
            if entry is None or offset + entry.size > file_size:
                return
            yield entry
            offset += entry.size


def read_member(file: BinaryIO, entry: Entry) -> bytes | None:
    file.seek(entry.offset)
    return decode(file.read(entry.size))


def verified_entries(file: BinaryIO, file_size: int) -> list[Entry]:
    """The scanned entries, minus a tail whose payloads do not check out.

    Only the tail can be torn by a killed writer; it is inflated and checked member by member from the end
    until one is whole, so opening a long recording costs one inflate, not thousands.
    """
    entries = list(scan(file, file_size))
    while entries and read_member(file, entries[-1]) is None:
        entries.pop()
    return entries


def end_of(entries: list[Entry]) -> int:
    """The byte offset just after the last entry: where a writer appends."""
    return entries[-1].offset + entries[-1].size if entries else 0


class Timeline:
    """Each record's time on a recording's timeline: its fleet time, the frames' made non-decreasing in
    file order.

    A source that restarts (a new epoch) starts its fleet time again; the timeline goes on from where it
    was, one frame interval later, so seeking, pacing and retention's ages never run backwards. A record
    stamped a little before the one it follows (an action timed by the frame the operator saw) comes right
    after it. Only frames move the timeline: a record stamped later than the frames around it (the alarms
    a restart clears, stamped with the old run's last time and written after the new run's first frame)
    must not push the new run's frames on — it read as a second restart. Fed one entry at a time, so a
    writer keeps it as it appends; `finish` caps such records at the next frame's time.
    """

    def __init__(self) -> None:
        self._offset = 0.0
        self._newest_frame_s = float("-inf")
        self._last_s: float | None = None

    def place(self, entry: Entry) -> float:
        if entry.kind is RecordKind.FRAME:
            if entry.time_s + self._offset < self._newest_frame_s:
                self._offset = self._newest_frame_s + 1.0 - entry.time_s
            time_s = max(entry.time_s + self._offset, self._newest_frame_s)
            self._newest_frame_s = time_s
        else:
            time_s = entry.time_s + self._offset
            if self._last_s is not None:
                time_s = max(time_s, self._last_s)
        self._last_s = time_s
        return time_s

    @property
    def offset_s(self) -> float:
        """How far the timeline has run ahead of fleet time: 0 until the source first restarts."""
        return self._offset

    @property
    def newest_frame_s(self) -> float | None:
        return self._newest_frame_s if self._newest_frame_s > float("-inf") else None

    @staticmethod
    def finish(times_s: list[float]) -> list[float]:
        """The placed times made non-decreasing: a record stamped past the frame after it plays with that
        frame (frames are non-decreasing already, and nothing after a frame is placed before it)."""
        out = list(times_s)
        for i in range(len(out) - 2, -1, -1):
            out[i] = min(out[i], out[i + 1])
        return out
