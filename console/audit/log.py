"""The audit log file: append-only JSONL, hash-chained, each record on disk before the response leaves.

One record a line, written with a single `write` on an `O_APPEND` descriptor and then `fsync`ed, so a
record the server acknowledged survives `kill -9` and a power cut, and a crash never leaves half a line in
the middle of the file. One server owns a file at a time (an exclusive `flock`): two writers would fork
the chain.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import platformdirs

from console.audit.chain import GENESIS_HASH, ChainReport, canonical, seal, verify_lines
from console.errors import InputError

_READ_BLOCK = 64 * 1024


class AuditLogBusy(InputError):
    """Another process holds the file."""


def default_audit_path(fleet_name: str) -> Path:
    """Where `sim serve` keeps its audit log without --audit-log: the user's XDG state dir."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in fleet_name) or "fleet"
    return Path(platformdirs.user_state_dir("stormdeck")) / "audit" / f"{safe}.jsonl"


class AuditLog:
    """Appends records to `path`, continuing the chain already in it."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as error:
            raise InputError("--audit-log", str(path), f"a writable file ({error.strerror})") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(self._fd)
            if error.errno in (errno.EAGAIN, errno.EACCES):
                raise AuditLogBusy(
                    "--audit-log", str(path), "a file no other stormdeck server is writing"
                ) from None
            raise
        self._drop_torn_tail()
        self.seq, self.last_hash = self._last_record()

    def _drop_torn_tail(self) -> None:
        # A line without its newline was never acknowledged (the newline goes out in the same write, and
        # the answer only after fsync): cut it, so the chain continues from the last whole record.
        size = os.fstat(self._fd).st_size
        if size == 0:
            return
        data = os.pread(self._fd, min(size, _READ_BLOCK), size - min(size, _READ_BLOCK))
        if data.endswith(b"\n"):
            return
        cut = size
        while cut > 0:
            start = max(0, cut - _READ_BLOCK)
            block = os.pread(self._fd, cut - start, start)
            at = block.rfind(b"\n")
            if at >= 0:
                cut = start + at + 1
                break
            cut = start
        os.ftruncate(self._fd, cut)
        os.fsync(self._fd)

    def _last_record(self) -> tuple[int, str]:
        lines = self.tail_lines(1)
        if not lines:
            return 0, GENESIS_HASH
        try:
            record = json.loads(lines[-1])
            return int(record["seq"]), str(record["hash"])
        except (ValueError, KeyError, TypeError):
            raise InputError(
                "--audit-log", str(self.path), "an audit log whose last line is a record (run `audit verify`)"
            ) from None

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Seal `record` into the chain, write it and fsync; returns the record as written."""
        with self._lock:
            sealed = seal({"time_unix_s": round(self._clock(), 6), **record}, self.seq + 1, self.last_hash)
            line = (canonical(sealed) + "\n").encode("utf-8")
            written = os.write(self._fd, line)
            if written != len(line):  # a regular file only writes short when the disk is full
                raise OSError(errno.ENOSPC, f"audit log {self.path}: short write")
            os.fsync(self._fd)
            self.seq, self.last_hash = sealed["seq"], sealed["hash"]
            return sealed

    def tail_lines(self, limit: int) -> list[bytes]:
        """The newest `limit` lines, oldest first (read backwards, so a long log costs no more)."""
        if limit <= 0:
            return []
        size = os.fstat(self._fd).st_size
        chunks: list[bytes] = []
        newlines = 0
        position = size
        while position > 0 and newlines <= limit:
            start = max(0, position - _READ_BLOCK)
            block = os.pread(self._fd, position - start, start)
            chunks.append(block)
            newlines += block.count(b"\n")
            position = start
        data = b"".join(reversed(chunks))
        lines = data.splitlines(keepends=True)
        return lines[-limit:]

    def tail(self, limit: int) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.tail_lines(limit)]

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)  # releases the flock
                self._fd = -1


def open_audit_log(path: Path | None, fleet_name: str) -> AuditLog:
    """The log at `path`; without one, the fleet's default file — or, when another server holds that, a
    file of this process's own beside it (so a second local server still starts, and says where it logs)."""
    if path is not None:
        return AuditLog(path)
    default = default_audit_path(fleet_name)
    try:
        return AuditLog(default)
    except AuditLogBusy:
        return AuditLog(default.with_name(f"{default.stem}-{os.getpid()}.jsonl"))


def iter_lines(path: Path) -> Iterator[bytes]:
    try:
        handle = path.open("rb")
    except OSError as error:
        raise InputError("FILE", str(path), f"a readable audit log ({error.strerror})") from None
    with handle:
        yield from handle


def verify_file(path: Path) -> ChainReport:
    return verify_lines(iter_lines(path))
