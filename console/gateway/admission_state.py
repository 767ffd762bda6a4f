"""The admission the operator set, on disk: a controller restarted (a crash, a deploy of the controller itself)
comes back with the fleet's admission and the per-node overrides the one before it had set, and gives them to
every node's new process as that one did — a node restarted after it came back unlimited, in a storm shed at
400/s, and nothing said so.

The file lives beside the controller's audit log (`FLEET.jsonl` → `FLEET.admission.json`) and is replaced
whole on every change, as every state file of the controller (`state_file.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from console.gateway.state_file import StateFile, StateFileUnreadable
from console.model.admission import settings_words
from console.protocol import AdmissionRequest, AdmissionSettings

#: Bumped when the file's shape changes; a controller refuses a version it does not know rather than guess.
STATE_VERSION = 1

#: A request's two-phase controls and its `nodes`: not part of one node's settings (the record says whose).
_NOT_SETTINGS = {"dry_run", "confirm", "override_reason", "nodes"}


class AdmissionStateUnreadable(StateFileUnreadable):
    """The admission state file is there but is not one this controller can read."""

    moved_aside = (
        "to start without the admission set before (the nodes keep what they run; a node's new process then "
        "runs its start-up settings until the operator sets admission again)"
    )


class AdmissionRecord(BaseModel):
    """What the operator set, as `Controller` keeps it: the fleet's admission (None until set fleet-wide) and
    each node's override. Kept as the requests that give them back, so a value out of range is refused at
    start naming its field, not sent to a node."""

    model_config = ConfigDict(extra="forbid")

    version: int = STATE_VERSION
    fleet: str
    saved_unix_s: float
    fleet_admission: AdmissionRequest | None = None
    overrides: dict[str, AdmissionRequest] = Field(default_factory=dict)

    @classmethod
    def of(
        cls,
        fleet: str,
        fleet_admission: AdmissionSettings | None,
        overrides: dict[str, AdmissionSettings],
        saved_unix_s: float,
    ) -> AdmissionRecord:
        return cls(
            fleet=fleet,
            saved_unix_s=saved_unix_s,
            fleet_admission=_kept(fleet_admission) if fleet_admission is not None else None,
            overrides={node_id: _kept(settings) for node_id, settings in overrides.items()},
        )

    def fleet_settings(self) -> AdmissionSettings | None:
        return self.fleet_admission.settings() if self.fleet_admission is not None else None

    def override_settings(self) -> dict[str, AdmissionSettings]:
        return {node_id: request.settings() for node_id, request in self.overrides.items()}


def _kept(settings: AdmissionSettings) -> AdmissionRequest:
    return AdmissionRequest.restoring(settings.bare())


class AdmissionStateFile(StateFile[AdmissionRecord]):
    """The admission state file of one controller."""

    suffix = "admission.json"
    field = "admission state file"
    record_type = AdmissionRecord
    version = STATE_VERSION
    unreadable = AdmissionStateUnreadable
    not_kept: ClassVar[dict[str, Any] | None] = {
        "fleet_admission": _NOT_SETTINGS,
        "overrides": {"__all__": _NOT_SETTINGS},
    }


def restored_words(record: AdmissionRecord, dropped: list[str]) -> str:
    """What a restored record holds, in one line: "fleet admission rate 400/s per node, …; per node: c: rate
    100/s per node, …", and the overrides of nodes no longer in the nodes file, dropped."""
    fleet = record.fleet_settings()
    said = [f"fleet admission {settings_words(fleet)}" if fleet is not None else "no fleet-wide admission"]
    by_settings: dict[tuple, tuple[AdmissionSettings, list[str]]] = {}
    for node_id, settings in record.override_settings().items():
        if node_id not in dropped:
            by_settings.setdefault(settings.limits_key(), (settings, []))[1].append(node_id)
    if by_settings:
        said.append(
            "per node: "
            + "; ".join(f"{', '.join(nodes)}: {settings_words(s)}" for s, nodes in by_settings.values())
        )
    if dropped:
        owners = ", ".join(f"{node_id}'s" for node_id in dropped)
        said.append(f"dropped {owners} (not in the nodes file)")
    return "; ".join(said)


def restored_note(record: AdmissionRecord, path: Path, dropped: list[str]) -> str:
    """The event a controller says at start when it took up what the one before had set."""
    return (
        f"admission restored from {path}: {restored_words(record, dropped)} — a node found running other "
        "settings is given these, as is every node's new process"
    )
