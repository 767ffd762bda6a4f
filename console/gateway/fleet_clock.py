"""The fleet clock's origin on disk: a restarted controller's clock goes on where the last one's was.

The fleet clock (`time_s` in frames, events, drains and the rollout) counts seconds since the fleet was
first served. Its nodes outlive the controller — a crash or a deploy of the controller is not a restart of
the fleet — so the clock must not start again at 0: the console's alarms read time going backwards as a new
fleet (every active alarm cleared, and raised again once its rule held again), and past alarms were listed
under two clocks. The origin is kept beside the audit log (`FLEET.jsonl` → `FLEET.clock.json`), written
once when first served, as every state file of the controller (`state_file.py`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from console.gateway.state_file import StateFile, StateFileUnreadable


class FleetClockUnreadable(StateFileUnreadable):
    """The fleet clock file is there but is not one this controller can read."""

    moved_aside = (
        "to start the fleet clock again at 0:00 (a console attached then starts a new history: its active "
        "alarms clear)"
    )


class FleetClockRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    fleet: str
    #: When the fleet clock read 0, in Unix seconds.
    zero_unix_s: float = Field(gt=0)


class FleetClockFile(StateFile[FleetClockRecord]):
    suffix = "clock.json"
    field = "fleet clock file"
    record_type = FleetClockRecord
    unreadable = FleetClockUnreadable


def kept_clock_zero(clock_file: FleetClockFile) -> float | None:
    """The fleet clock's origin kept in `clock_file`, None when there is none yet. `FleetClockUnreadable`
    naming the file when it is there and cannot be read."""
    record = clock_file.load()
    return record.zero_unix_s if record is not None else None


def keep_clock_zero(clock_file: FleetClockFile, fleet: str, zero_unix_s: float) -> str | None:
    """Keep a new fleet clock's origin in `clock_file`, once the controller is sure to serve (a start
    refused later would leave an origin for a fleet never served). What to tell the operator when it could
    not be kept, None when it was."""
    try:
        clock_file.save(FleetClockRecord(fleet=fleet, zero_unix_s=zero_unix_s))
    except OSError as error:
        return (
            f"fleet clock not kept in {clock_file.path} ({error.strerror or error}): a controller restarted "
            "now starts the fleet clock again at 0:00"
        )
    return None
