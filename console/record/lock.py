"""One writer per recording: an exclusive `flock` on `FILE.lock` beside it.

Two recorders on one file each resumed it and wrote their frames between the other's. The lock is on a
file of its own, not on the recording: retention rewrites the recording aside and renames it over, which
would leave a lock on the old file. The kernel releases a `flock` when its process dies, so a killed
recorder's file can be taken at once; a clean close also removes the lock file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

from console.errors import InputError


class RecordingBusy(InputError):
    """Another recorder holds the file."""

    def _message(self) -> str:
        return (
            f"{self.field}: {self.value} is being written by another recorder (it holds {self.value}.lock): "
            "stop that one first, or record into another file"
        )


class RecordingLock:
    """Held from construction until `release()` (or the process's end)."""

    def __init__(self, recording: Path, field: str = "--out") -> None:
        self.path = recording.with_name(recording.name + ".lock")
        while True:
            try:
                descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as error:
                raise InputError(
                    field, str(recording), f"a file in a directory this user may write ({error.strerror})"
                ) from None
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                os.close(descriptor)
                if error.errno in (errno.EAGAIN, errno.EACCES):
                    raise RecordingBusy(
                        field, str(recording), "a recording no other recorder writes"
                    ) from None
                raise
            # The holder before us may have let go and removed the lock file between our open and our
            # flock: what we hold must still be the file at the path, or a third recorder could take that.
            with contextlib.suppress(FileNotFoundError):
                if os.stat(self.path).st_ino == os.fstat(descriptor).st_ino:
                    self._descriptor = descriptor
                    return
            os.close(descriptor)

    def release(self) -> None:
        if self._descriptor >= 0:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # while still held: no one can have taken it yet
            os.close(self._descriptor)
            self._descriptor = -1
