"""A rollout's state on disk: a controller restarted mid-rollout (a crash, a deploy of the controller itself)
comes back with the rollout it was running — halted, never resumed by itself — and says what it knew.

The file lives beside the controller's audit log (`FLEET.jsonl` → `FLEET.rollout.json`) and is replaced
whole on every change, as every state file of the controller (`state_file.py`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from console.figures import first_named
from console.gateway.state_file import StateFile, StateFileUnreadable
from console.protocol import DrainRequest, RolloutMode, RolloutState

#: A drain request's two-phase controls: not part of the drain a batch gets.
_REQUEST_CONTROLS = {"dry_run", "confirm", "override_reason"}

#: Bumped when the file's shape changes; a controller refuses a version it does not know rather than guess.
STATE_VERSION = 1


class RolloutStateUnreadable(StateFileUnreadable):
    """The state file is there but is not a rollout state this controller can read."""

    moved_aside = (
        "to start without the rollout it held (the nodes keep whatever state they are in: check for drained "
        "nodes)"
    )


class RolloutRecord(BaseModel):
    """What a restarted controller needs to show the rollout and go on with it when resumed. Times are
    Unix seconds: a file kept without the fleet clock's (`fleet_clock.py`) still reads right."""

    model_config = ConfigDict(extra="forbid")

    version: int = STATE_VERSION
    fleet: str
    saved_unix_s: float
    state: RolloutState
    mode: RolloutMode
    batch_size: int = Field(gt=0)
    interval_s: float = Field(gt=0)
    pause_cpu_pct: float = Field(gt=0, le=100)
    batch_drain: DrainRequest
    batches: list[list[str]]
    batch: int = Field(ge=0, description="batches started so far")
    batches_done: int = Field(ge=0)
    pause_reason: str | None = None
    # When its first batch started: null before (a rollout paused on a hot survivor at once). An older
    # controller's file always has one, the time it was started.
    started_at_unix_s: float | None = None
    completed_at_unix_s: float | None = None
    # When it was halted, while halted (an older controller's file has none).
    halted_at_unix_s: float | None = None
    # When the latest batch started: the next is due `interval_s` after it, and a resume keeps what is left
    # of that (an older controller's file has none: the resume then waits a whole interval).
    batch_started_at_unix_s: float | None = None
    #: The batch under way, node by node: a drain sent and not yet seen drained; a restart command started
    #: whose outcome the controller did not see; a restart command that succeeded.
    draining: list[str] = Field(default_factory=list)
    restarting: list[str] = Field(default_factory=list)
    restarted: list[str] = Field(default_factory=list)
    #: The stream epoch each node of the batch under way had before its restart: a node showing another
    #: one is a new process (restarted), so a resumed rollout does not restart it again.
    epochs_before: dict[str, str | None] = Field(default_factory=dict)

    # Where the rollout stands must lie inside its plan: the controller reads the batch it names (a batch
    # past the plan stopped it with an IndexError traceback) and resumes after `batches_done` (one past the
    # plan resumed as "completed", its nodes never restarted).
    @field_validator("batch")
    @classmethod
    def _batch_in_plan(cls, batch: int, info: ValidationInfo) -> int:
        planned = len(info.data.get("batches", []))
        if batch > planned:
            raise ValueError(f"{batch} is past the plan of {planned} batches: an integer in [0, {planned}]")
        return batch

    @field_validator("batches_done")
    @classmethod
    def _done_before_batch(cls, batches_done: int, info: ValidationInfo) -> int:
        batch = info.data.get("batch")
        if batch is not None and not batch - 1 <= batches_done <= batch:
            allowed = f"{batch - 1} or {batch}" if batch else "0"
            raise ValueError(f"{batches_done} does not fit batch {batch}: {allowed}")
        return batches_done

    @property
    def unfinished(self) -> bool:
        """Running, paused or halted: a rollout a restarted controller takes up (halted)."""
        return self.state in (RolloutState.RUNNING, RolloutState.PAUSED, RolloutState.HALTED)


class RolloutStateFile(StateFile[RolloutRecord]):
    """The rollout state file of one controller."""

    suffix = "rollout.json"
    field = "rollout state file"
    record_type = RolloutRecord
    version = STATE_VERSION
    unreadable = RolloutStateUnreadable
    not_kept: ClassVar[dict[str, Any] | None] = {"batch_drain": _REQUEST_CONTROLS}


def restart_note(record: RolloutRecord) -> str:
    """Why a restored rollout is halted, and what the controller knew of its batch when it stopped —
    "controller restarted during batch 3 of 8: gw-5, gw-6 were draining; …"."""
    of = f"of {len(record.batches)}"
    if record.state is RolloutState.HALTED:
        where = f"while the rollout was halted at batch {record.batch} {of} ({record.pause_reason})"
    elif record.state is RolloutState.PAUSED:
        where = f"while the rollout was paused before batch {record.batch + 1} {of} ({record.pause_reason})"
    elif record.batch == record.batches_done and record.batch > 0:
        where = f"after batch {record.batch} {of}, before the next"
    else:
        where = f"during batch {record.batch} {of}"
    known = [
        _nodes(record.draining, "was draining", "were draining"),
        _nodes(
            record.restarting,
            "was being restarted (outcome not seen)",
            "were being restarted (outcome not seen)",
        ),
        _nodes(record.restarted, "was restarted", "were restarted"),
    ]
    said = "; ".join(part for part in known if part)
    return f"controller restarted {where}" + (f": {said}" if said else "") + " — resume goes on from there"


def _nodes(node_ids: list[str], one: str, many: str) -> str:
    if not node_ids:
        return ""
    return f"{', '.join(node_ids)} {one if len(node_ids) == 1 else many}"


#: Nodes a line names before it says how many more.
NAMED_NODES = 5


def left_untouched_note(state_file: RolloutStateFile) -> str | None:
    """The line a server that keeps no rollout state (`fleet up`: its nodes are its own, new, with no restart
    command) says of the state file beside its audit log — another controller's, which shares the default
    audit log — when there is a rollout to take up there, or a file it cannot read: it is left as it is, for
    that controller. None when there is neither."""
    try:
        record = state_file.load()
    except RolloutStateUnreadable as error:
        said = f"another controller's {state_file.path} is left untouched: {error.allowed}"
        return f"rollout state: not kept; {said}"
    if record is None or not record.unfinished:
        return None
    nodes = [node for batch in record.batches for node in batch]
    named = first_named(nodes, NAMED_NODES)
    return (
        f"rollout state: not kept; another controller's unfinished rollout ({record.state.value} at batch "
        f"{record.batch} of {len(record.batches)} over nodes {named}) is left in {state_file.path}, untouched"
    )
