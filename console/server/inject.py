"""An instructor's injection through the action desk's audit log (issue #5, section 2, "Instructor").

    admin? (the route) → check against the fleet now → audit record (fsynced) → apply → `injection` event

All but the role check happen in one turn of the backend's lock, between two fleet seconds: what was
checked is what is applied, and the fleet never changes before its audit record is on disk. Records go
into the same hash-chained log as actions (one log, one chain), told apart by `"record": "injection"`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from console.errors import InputError
from console.protocol import InjectionRequest, InjectionResult
from console.server.backend import InjectingBackend
from console.server.desk import ActionDesk, Answer, problem_answer
from console.server.idempotency import StoredAnswer, fingerprint
from console.server.tokens import Principal
from console.sim.injection import INJECTIONS, Injection

#: The audit record kind of an injection (actions' records carry no `record` field).
RECORD_KIND = "injection"


async def inject(
    desk: ActionDesk, principal: Principal, request: InjectionRequest, path: str, key: str | None
) -> Answer:
    """Inject once: a retry with the same `Idempotency-Key` (the CLI retries a call lost in transport)
    gets the first answer back, through the desk's own key store, and disconnects nobody twice."""
    if key is None:
        return await _inject(desk, principal, request)
    print_ = fingerprint("POST", path, request.model_dump(mode="json"))
    stored = desk.idempotency.begin(principal.name, key, print_)
    if stored is not None:
        answer = Answer(stored.status, dict(stored.body), "replayed", media_type=stored.media_type)
        answer.audit["replayed_status"] = stored.status
        await _audit(desk, principal, request.event, request.params, answer, answer_gets_seq=False)
        return answer
    try:
        answer = await _inject(desk, principal, request)
    except BaseException:
        desk.idempotency.finish(principal.name, key, None)
        raise
    desk.idempotency.finish(principal.name, key, StoredAnswer(answer.status, answer.body, answer.media_type))
    return answer


async def _inject(desk: ActionDesk, principal: Principal, request: InjectionRequest) -> Answer:
    backend = desk.backend
    if not isinstance(backend, InjectingBackend):
        answer = problem_answer(
            409,
            "no-injections",
            "Conflict",
            f"event: fleet {backend.fleet_name!r} is {backend.source.value}; only a simulated fleet (a served "
            "drill, `sim serve`) takes injections",
            "invalid",
            field_name="event",
        )
        await _audit(desk, principal, request.event, request.params, answer)
        return answer
    written: dict[str, Any] = {}

    def record_before_applying(injection: Injection) -> dict[str, Any]:
        # Worker thread, under the backend's lock: the record is on disk before the fleet changes.
        message = f"injected {injection.describe()}"
        written.update(
            desk.audit.append(_record(principal, injection.event, injection.params, 200, "applied", message))
        )
        # Who, for the stream's `injection` event (as an applied action's event names its operator).
        return {"actor": principal.name, "role": principal.role.label, "audit_seq": written["seq"]}

    try:
        injection, time_s = await backend.inject(request.event, dict(request.params), record_before_applying)
    except InputError as error:
        refused_after_record = bool(written)
        answer = problem_answer(
            422,
            "invalid",
            "Invalid injection",
            f"{error}; nothing applied",
            "refused_by_fleet" if refused_after_record else "invalid",
            field_name=error.field,
            extra={"allowed": error.allowed, "events": list(INJECTIONS)},
        )
        if refused_after_record:
            answer.audit["supersedes"] = written["seq"]
        await _audit(desk, principal, request.event, request.params, answer)
        return answer
    result = InjectionResult(
        event=injection.event,
        params=injection.params,
        applied=True,
        time_s=time_s,
        message=f"injected {injection.describe()} after fleet second {time_s:g}",
        audit_seq=written["seq"],
        audit_hash=written["hash"],
    )
    return Answer(200, result.model_dump(mode="json"), "applied", detail=result.message, recorded=True)


def _record(
    principal: Principal, event: str, params: dict[str, Any], status: int, outcome: str, detail: str
) -> dict[str, Any]:
    return {
        "record": RECORD_KIND,
        "actor": principal.name,
        "role": principal.role.label,
        "action": "inject",
        "event": event,
        "parameters": params,
        "status": status,
        "outcome": outcome,
        "detail": detail,
    }


async def _audit(
    desk: ActionDesk,
    principal: Principal,
    event: str,
    params: dict[str, Any],
    answer: Answer,
    answer_gets_seq: bool = True,
) -> None:
    record = _record(principal, event, params, answer.status, answer.outcome, answer.detail)
    record.update(answer.audit)
    sealed = await asyncio.to_thread(desk.audit.append, record)
    if answer_gets_seq:  # a replay answers exactly what the first request was answered
        answer.body["audit_seq"] = sealed["seq"]
        answer.body["audit_hash"] = sealed["hash"]
