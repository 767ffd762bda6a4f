"""What a recording holds besides the stream's own frames, events and hellos.

Every record is one JSON object with a `type`, so `zcat FILE | jq` reads a recording without stormdeck.
Frames, events and hellos are the stream's messages (console.protocol models); the records here are the
recording's own: its header, each action attempt with its verdict, the operator's confirmations and, for a
drill, how its objectives went.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from console.protocol import UNNAMED_INSTRUCTOR, Event, Frame, Hello, Source, Verdict
from console.record.container import RecordKind

#: Bumped when a record's meaning changes (a field may be added without a bump).
RECORDING_VERSION = 1


class _Record(BaseModel):
    # A newer stormdeck may add fields; an older reader keeps them rather than failing.
    model_config = ConfigDict(extra="allow")


class DrillInfo(_Record):
    """Which drill a recording came from: the hook the after-action report reads objectives through."""

    name: str
    title: str | None = None
    seed_source: str | None = Field(default=None, description="the seed the drill rehearses, cited")
    speed: float | None = None
    clock_start_s: int | None = Field(
        default=None,
        description="the time of day fleet second 0 shows as on the drill's clock, in seconds after midnight "
        "(`clock_start`): a replay shows the drill's clock, as the drill's console did; null in recordings "
        "older than the field, which replay on the fleet clock",
    )


class RecordingHeader(_Record):
    type: Literal["recording"] = "recording"
    recording_version: int = RECORDING_VERSION
    stormdeck_version: str
    fleet: str | None = Field(default=None, description="from the stream's hello when not known up front")
    source: Source | None = None
    url: str | None = Field(default=None, description="the fleet API recorded from, when live")
    started_unix_s: float
    scenario: str | None = None
    seed: int | None = None
    overrides: list[str] | None = Field(
        default=None,
        description="the `--set key=value`s the scenario ran with, in order ([] none); with `scenario` and "
        "`seed`, how to run it again; null when not known (a real fleet, an older server or recording)",
    )
    drill: DrillInfo | None = None
    trimmed_before_s: float | None = Field(
        default=None,
        description="retention dropped the frames and events before the first frame kept, at this fleet time",
    )


class ActionRecord(_Record):
    """One action attempt, whatever became of it: the request, the server's verdict, the outcome."""

    type: Literal["action"] = "action"
    time_s: float = Field(description="fleet time of the newest frame when the attempt was made")
    actor: str = Field(description="who acted: a trainee, an operator's token name, a script")
    action: str = Field(
        description="as a verdict names it: drain, undrain, rollout_start, rollout_halt, admission, …"
    )
    target: str | None = Field(default=None, description="node id, or null for a fleet action")
    request: dict[str, Any] = Field(default_factory=dict, description="the request body as sent")
    verdict: Verdict | None = None
    outcome: Literal[
        "applied", "dry_run", "needs_confirmation", "blocked", "overridden", "failed", "cancelled"
    ]
    status: int | None = Field(default=None, description="HTTP status of the answer")
    detail: str | None = None
    audit_seq: int | None = Field(
        default=None, description="the server's audit record of it, when it answered with one"
    )


def without_tokens(action: ActionRecord) -> ActionRecord:
    """The attempt as a recording may hold it: no confirmation token, in its verdict (a 409's carries one)
    or in its request (`confirm`, the answer sent back). The writer keeps every recording to this."""
    verdict = action.verdict
    if (verdict is None or verdict.confirm_token is None) and "confirm" not in action.request:
        return action
    return action.model_copy(
        update={
            "verdict": verdict.model_copy(update={"confirm_token": None}) if verdict is not None else None,
            "request": {key: value for key, value in action.request.items() if key != "confirm"},
        }
    )


def _without(token: str | None, text: str | None) -> str | None:
    return text.replace(token, "…") if token and text else text


def action_audit_record(action: ActionRecord) -> dict[str, Any]:
    """An attempt as the audit panel lists a server's record (`GET /v1/audit`), at its fleet `time_s`:
    who, what, the verdict's level, the outcome, the status and the detail — never the request body or a
    confirmation token (a writer that kept one in the verdict does not get it shown)."""
    token = action.verdict.confirm_token if action.verdict is not None else None
    return {
        "time_s": action.time_s,
        "actor": action.actor,
        "action": action.action,
        "target": action.target,
        "verdict": {"level": action.verdict.level.value} if action.verdict is not None else None,
        "outcome": action.outcome,
        "status": action.status,
        "detail": _without(token, action.detail),
    }


def is_told_action(event: Event) -> bool:
    """An `action` event as the fleet API's write side tells one (console.server.desk): with its actor
    and action. (The console's synthetic stream has `action` events of its own, without them.)"""
    return event.kind == "action" and "actor" in event.data and "action" in event.data


def told_actions(events: Iterable[Event], recorded: Iterable[ActionRecord]) -> list[ActionRecord]:
    """The applied actions the stream told (`action` events: every operator's, as the server applied them)
    that the recording does not already hold as the acting console's own records (same audit record).
    A `stormdeck record` recording has only these; `attach --record` has its own and its colleagues'."""
    held = {action.audit_seq for action in recorded if action.audit_seq is not None}
    found = []
    for event in events:
        data = event.data
        if not is_told_action(event) or data.get("audit_seq") in held:
            continue
        outcome = data.get("outcome")
        found.append(
            ActionRecord(
                time_s=event.time_s,
                actor=str(data.get("actor", "?")),
                action=str(data.get("action", "?")),
                target=None if data.get("target") in (None, "fleet") else str(data["target"]),
                request=dict(data.get("parameters") or {}),
                outcome=outcome if outcome in ("applied", "overridden") else "applied",
                detail=str(data.get("level") or ""),  # what the report's verdict column shows
                audit_seq=data.get("audit_seq"),
            )
        )
    return found


class Confirmation(_Record):
    """The operator's answer to a `confirm` or `typed` verdict."""

    type: Literal["confirmation"] = "confirmation"
    time_s: float
    actor: str
    action: str
    target: str | None = None
    answer: Literal["confirmed", "cancelled", "expired"]
    typed: str | None = Field(default=None, description="what was typed back for a `typed` verdict")


def is_told_injection(event: Event) -> bool:
    """An instructor's injection as the stream tells it (console.server.simulator): the event it names."""
    return event.kind == "injection" and isinstance(event.data.get("event"), str)


def injection_audit_record(event: Event) -> dict[str, Any]:
    """An instructor's injection as a row of the audit panel (`action_audit_record`), as the server's
    audit log lists it (`inject`, applied, its words): who injected it, when and what. An older
    recording's event does not name the instructor: "instructor"."""
    message = event.message
    injected = message[message.index("injected ") :] if "injected " in message else message
    return {
        "time_s": event.time_s,
        "actor": str(event.data.get("actor") or UNNAMED_INSTRUCTOR),
        "action": "inject",
        "target": None,  # the fleet: the nodes it names are in its words
        "verdict": None,
        "outcome": "applied",  # the stream tells only what was applied
        "status": 200,
        "detail": injected,
    }


def confirmation_audit_record(answer: Confirmation) -> dict[str, Any]:
    """The operator's answer to a confirm/typed verdict as a row of the audit panel (`action_audit_record`)."""
    typed = f"typed {answer.typed!r}" if answer.typed else ""
    return {
        "time_s": answer.time_s,
        "actor": answer.actor,
        "action": answer.action,
        "target": answer.target,
        "verdict": None,
        "outcome": answer.answer,
        "status": None,
        "detail": f"the operator's answer to the verdict{': ' + typed if typed else ''}",
    }


class ObjectiveOutcome(_Record):
    name: str
    met: bool
    standing: str | None = Field(
        default=None,
        description="the end screen's word for it: 'met', 'failed', or 'not needed' — met only because what it "
        "answers never came (no abort criterion, no dip); null in recordings older than the field",
    )
    detail: str | None = Field(
        default=None,
        description="what became of it, as the drill's end screen said it (on the drill's clock: 'halted "
        "04:03:20, 39 s after the abort criterion (04:02:41, gw-024)'); in recordings older than `why`, the "
        "scorer's words, in fleet seconds",
    )
    why: str | None = Field(
        default=None,
        description="the scorer's own words, times in fleet seconds ('abort criterion at 161 s (gw-024); "
        "halted at 200 s'), as `drill --headless --json` prints them; null in recordings older than the field",
    )
    points: float | None = Field(default=None, description="points earned")
    max_points: float | None = Field(default=None, description="points the objective is worth")


class DrillOutcome(_Record):
    """Written by a drill when it ends; the report shows it under "Objectives". Score = the points of the
    objectives met − `penalty` (`minutes_below` fleet minutes under `penalty_below_pct` % of the starting
    connections), at least 0."""

    type: Literal["drill_outcome"] = "drill_outcome"
    time_s: float
    score: float | None = None
    objectives: list[ObjectiveOutcome] = Field(default_factory=list)
    max_score: float | None = None
    penalty: float | None = None
    minutes_below: float | None = None
    penalty_below_pct: float | None = None


Recorded = RecordingHeader | Frame | Event | Hello | ActionRecord | Confirmation | DrillOutcome

#: The model each kind of record is read back as.
MODEL_OF_KIND: dict[RecordKind, type[BaseModel]] = {
    RecordKind.HEADER: RecordingHeader,
    RecordKind.FRAME: Frame,
    RecordKind.EVENT: Event,
    RecordKind.HELLO: Hello,
    RecordKind.ACTION: ActionRecord,
    RecordKind.CONFIRMATION: Confirmation,
    RecordKind.DRILL_OUTCOME: DrillOutcome,
}
_KIND_OF_MODEL = {model: kind for kind, model in MODEL_OF_KIND.items()}


def kind_of(record: Recorded) -> RecordKind:
    return _KIND_OF_MODEL[type(record)]


def parse_record(kind: RecordKind, payload: bytes) -> Recorded:
    return MODEL_OF_KIND[kind].model_validate_json(payload)  # type: ignore[return-value]
