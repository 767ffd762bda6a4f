"""The audit log's hash chain: each record holds the SHA-256 of the one before it. Pure.

A record is one line of canonical JSON (sorted keys, no spaces). Its `hash` is the SHA-256 of the canonical
JSON of every other field, `prev` included, so changing, removing or reordering any earlier line breaks
every hash after it. What a chain cannot show is the loss of the newest lines; the server's responses
carry each record's `seq` and `hash`, so a client can hold on to the latest one it was answered.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: `prev` of the first record.
GENESIS_HASH = "0" * 64


def canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def record_hash(record: dict[str, Any]) -> str:
    """The hash of a record: over every field but `hash` itself."""
    body = {key: value for key, value in record.items() if key != "hash"}
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


def seal(record: dict[str, Any], seq: int, prev: str) -> dict[str, Any]:
    """The record as written: numbered, chained to `prev`, and hashed."""
    sealed = {**record, "seq": seq, "prev": prev}
    sealed["hash"] = record_hash(sealed)
    return sealed


@dataclass(frozen=True)
class ChainReport:
    records: int  # records that verified, in order, from the first line
    last_hash: str
    broken_line: int | None = None  # 1-based line number of the first record that does not verify
    reason: str = ""

    @property
    def intact(self) -> bool:
        return self.broken_line is None


def verify_lines(lines: Iterable[bytes]) -> ChainReport:
    """Check every line in order; stop at the first that is not a well-formed, correctly chained record.

    A last line without its newline is reported too: the server writes a record and its newline in one
    `write` and fsyncs before answering, so such a line was never acknowledged — but it is not intact.
    """
    prev = GENESIS_HASH
    count = 0
    for number, raw in enumerate(lines, start=1):
        if not raw.endswith(b"\n"):
            return ChainReport(count, prev, number, "the line is incomplete (no newline): a torn write")
        try:
            record = json.loads(raw)
        except ValueError as error:
            return ChainReport(count, prev, number, f"not JSON ({error})")
        if not isinstance(record, dict):
            return ChainReport(count, prev, number, "not a JSON object")
        if record.get("seq") != number:
            return ChainReport(count, prev, number, f"seq is {record.get('seq')!r}, expected {number}")
        if record.get("prev") != prev:
            return ChainReport(count, prev, number, "prev does not match the hash of the line before")
        if record.get("hash") != record_hash(record):
            return ChainReport(count, prev, number, "hash does not match the record's content")
        prev = record["hash"]
        count += 1
    return ChainReport(count, prev)
