"""A controller's state kept on disk beside its audit log (the rollout under way, the fleet clock's origin):
a JSON object of a known version, read back by the next controller and replaced whole on every change.

Beside the audit log: the same place and the same owner — one server holds the audit log's lock at a time,
so two controllers never write one state file. Replaced whole (a temporary file, fsync, rename, fsync of the
directory), so a crash leaves the state before the change or after it, never half of one.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, ClassVar, Generic, Self, TypeVar

from pydantic import BaseModel, ValidationError

from console.errors import InputError

RecordT = TypeVar("RecordT", bound=BaseModel)


class StateFileUnreadable(InputError):
    """A state file is there but is not what this controller can read: it does not start (exit 2)."""

    #: What moving the file aside costs the operator, said after the remedy.
    moved_aside: ClassVar[str] = "to start without it"

    def _message(self) -> str:
        return (
            f"{self.field} {self.value}: {self.allowed}; the controller did not start, so nothing was "
            f"changed — move the file aside {self.moved_aside}"
        )


class StateFile(Generic[RecordT]):
    """One state file of one controller: `load` the record saved there, `save` one atomically."""

    #: `FLEET.jsonl` → `FLEET.<suffix>`.
    suffix: ClassVar[str]
    #: How errors name the file ("rollout state file").
    field: ClassVar[str]
    record_type: ClassVar[type[BaseModel]]
    #: Bumped when the file's shape changes; a controller refuses a version it does not know rather than guess.
    version: ClassVar[int] = 1
    unreadable: ClassVar[type[StateFileUnreadable]] = StateFileUnreadable
    #: Fields of the record not kept (`model_dump_json`'s `exclude`).
    not_kept: ClassVar[dict[str, Any] | None] = None

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def beside(cls, audit_path: Path) -> Self:
        return cls(audit_path.with_name(f"{audit_path.stem}.{cls.suffix}"))

    def load(self) -> RecordT | None:
        """The saved record, or None when there is none; `unreadable` naming the file when it cannot be read
        as one."""
        field, unreadable = self.field, self.unreadable
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise unreadable(field, self.path, f"cannot be read ({error.strerror})") from None
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, ValueError) as error:
            raise unreadable(field, self.path, f"is not JSON ({error})") from None
        if not isinstance(data, dict):
            raise unreadable(field, self.path, "is not a JSON object")
        version = data.get("version")
        if version != self.version:
            raise unreadable(
                field,
                self.path,
                f"has version {version!r}; this controller reads version {self.version} "
                "(written by another stormdeck release?)",
            )
        try:
            return self.record_type.model_validate(data)  # type: ignore[return-value]
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(top level)"
            raise unreadable(field, self.path, f"is damaged: {where}: {first['msg']}") from None

    def save(self, record: RecordT) -> None:
        """Replace the file with `record`, atomically (module docstring). Raises `OSError`."""
        directory = self.path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                text = record.model_dump_json(indent=1, exclude=self.not_kept)
                handle.write(text.encode() + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        directory_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(directory_fd)
        finally:
            os.close(directory_fd)
