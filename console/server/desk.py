"""The action desk: every mutating call of the fleet API passes here (issue #4, section 2).

    judge (guards, against the fleet now) → dry run? → blocked? (admin override) → confirm/typed?
    (two-phase token) → apply (backend, between ticks) → audit (fsynced) → answer

One action is decided at a time (an `asyncio.Lock`), so two operators cannot both pass a guard that only
one of them should. Every attempt leaves one audit record before its answer leaves; a retry with the same
`Idempotency-Key` gets the first answer back and applies nothing again. The forecast is computed for the
answers an operator reads before deciding (dry run, 409, 422), outside the lock.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from console.alarms.tracking import SteadyAttempts
from console.audit import AuditLog
from console.errors import InputError
from console.guards import Thresholds
from console.guards.add_capacity import check_count
from console.guards.config import LoadedThresholds, given_thresholds
from console.model.units import time_of_day
from console.protocol import PROBLEM_TYPE_PREFIX, ActionResult, Problem, Verdict, VerdictLevel
from console.server.actions import FleetAction, judge
from console.server.backend import ActingBackend, DrillServingBackend, FleetBackend
from console.server.confirm import Binding, ConfirmTokens, TokenRefused
from console.server.idempotency import IdempotencyKeys, StoredAnswer, fingerprint
from console.server.problems import PROBLEM_MEDIA_TYPE, ApiProblem
from console.server.tokens import Principal, Role

log = logging.getLogger(__name__)

JSON = "application/json"


@dataclass
class Answer:
    """What the desk answers, and what the audit record says of it."""

    status: int
    body: dict[str, Any]
    outcome: str  # applied, overridden, dry_run, needs_confirmation, confirm_refused, typed_mismatch,
    #               blocked, invalid, forbidden, refused_by_fleet, drill_ended, replayed
    verdict: Verdict | None = None
    detail: str = ""
    media_type: str = JSON
    forecast_wanted: bool = False
    audit: dict[str, Any] = field(default_factory=dict)  # extra fields for its audit record
    recorded: bool = False  # its audit record is already written (an applied action's, before applying)


def problem_answer(
    status: int,
    kind: str,
    title: str,
    detail: str,
    outcome: str,
    *,
    field_name: str | None = None,
    verdict: Verdict | None = None,
    extra: dict[str, Any] | None = None,
) -> Answer:
    problem = Problem(
        type=PROBLEM_TYPE_PREFIX + kind, title=title, status=status, detail=detail, field=field_name
    )
    body = problem.model_dump(mode="json", exclude_none=True)
    if verdict is not None:
        body["verdict"] = verdict.model_dump(mode="json")
    body.update(extra or {})
    return Answer(
        status, body, outcome, verdict, detail, PROBLEM_MEDIA_TYPE, forecast_wanted=verdict is not None
    )


def fleet_refusal(error: InputError, verdict: Verdict | None = None) -> Answer:
    """The fleet's own refusal (the backend's, before or while applying): 422 `refused-by-fleet`, titled
    as the fleet's — "Invalid input" called it input the operator typed wrong where nothing typed was (a
    node down) — with what the refusal offers a client to act on (`InputError.problem_members`)."""
    return problem_answer(
        422,
        "refused-by-fleet",
        "Refused by the fleet",
        f"{error}; nothing applied",
        "refused_by_fleet",
        field_name=error.field,
        verdict=verdict,
        extra=error.problem_members(),
    )


def drill_over(backend: FleetBackend) -> str | None:
    """Why a served drill's fleet takes no more actions — its time is up (the end its stream told, which
    a hello carries from then on) — or None. Its score is final and its console froze the fleet there: an
    `add_capacity` applied after the end once added nodes that would never finish provisioning."""
    if not isinstance(backend, DrillServingBackend):
        return None
    served = backend.served_drill()
    if served.ended is None:
        return None
    at = time_of_day(served.clock_start_s + served.ended.time_s)
    return (
        f"the drill {served.name} ended at {at} (fleet second {served.ended.time_s:g}): its score is "
        "final and its fleet takes no more actions; nothing applied"
    )


#: Puts an event of the server's own on the stream: (kind, message, node, data, fleet time) —
#: `FleetFeed.tell`.
Teller = Callable[[str, str, str | None, dict[str, Any], float], None]


class ActionDesk:
    def __init__(
        self,
        backend: FleetBackend,
        thresholds: Thresholds,
        audit: AuditLog,
        confirmations: ConfirmTokens | None = None,
        idempotency: IdempotencyKeys | None = None,
        tell: Teller | None = None,
        threshold_sources: Mapping[str, str] | None = None,
        steady: SteadyAttempts | None = None,
    ) -> None:
        self.backend = backend
        # The steady attempts the feed learns over the frames it publishes (None: a desk with no feed);
        # read here as the attempts gauge reads them, a frame behind at most.
        self.steady = steady
        self.tell = tell
        self.thresholds = thresholds
        # Who set each line (`GET /v1/thresholds`); handed none, a line at its default is the default's.
        given = given_thresholds(thresholds).sources
        self.threshold_sources = given if threshold_sources is None else {**given, **threshold_sources}
        self.audit = audit
        self.confirmations = ConfirmTokens() if confirmations is None else confirmations
        self.idempotency = IdempotencyKeys() if idempotency is None else idempotency
        self._lock = asyncio.Lock()

    def loaded_thresholds(self) -> LoadedThresholds:
        """The thresholds every verdict here is judged with, and who set each."""
        return LoadedThresholds(self.thresholds, dict(self.threshold_sources), files=())

    async def act(
        self, principal: Principal, action: FleetAction, path: str, idempotency_key: str | None
    ) -> Answer:
        body = action.request.model_dump(mode="json")
        if idempotency_key is not None:
            stored = self.idempotency.begin(principal.name, idempotency_key, fingerprint("POST", path, body))
            if stored is not None:
                answer = Answer(stored.status, dict(stored.body), "replayed", media_type=stored.media_type)
                await self._record(principal, action, answer, idempotency_key, replayed_status=stored.status)
                return answer
        try:
            answer = await self._decide(principal, action, idempotency_key)
            if answer.forecast_wanted and answer.verdict is not None:
                await self._add_forecast(action, answer)
            if not answer.recorded:
                await self._record(principal, action, answer, idempotency_key)
        except BaseException:
            if idempotency_key is not None:
                self.idempotency.finish(principal.name, idempotency_key, None)
            raise
        if idempotency_key is not None:
            self.idempotency.finish(
                principal.name, idempotency_key, StoredAnswer(answer.status, answer.body, answer.media_type)
            )
        return answer

    async def record_refusal(
        self,
        principal: Principal | None,
        kind: str,
        target: str | None,
        status: int,
        detail: str,
        parameters: Any = None,
        idempotency_key: str | None = None,
    ) -> None:
        """Audit an attempt stopped before the desk (a role too low, a body that does not parse, a key
        already used for another request)."""
        outcome = "forbidden" if status == 403 else "invalid"
        record = {
            "actor": principal.name if principal else None,
            "role": principal.role.label if principal else None,
            "action": kind,
            "target": target,
            "parameters": parameters,
            "idempotency_key": idempotency_key,
            "status": status,
            "outcome": outcome,
            "detail": detail,
        }
        await asyncio.to_thread(self.audit.append, record)

    async def count_refusal(self, count: int) -> InputError | None:
        """Add capacity's `count` judged against the fleet's room now, by the guard's own check
        (`check_count`, as `judge_add_capacity` runs it): its refusal, naming `count` and the fleet's range,
        or None (a read-only fleet, or a count it could take)."""
        backend = self.backend
        if not isinstance(backend, ActingBackend):
            return None
        snapshot = await backend.current_snapshot()
        try:
            check_count(snapshot, backend.capacity(), count, self.thresholds)
        except InputError as error:
            return error
        return None

    # --- deciding ---------------------------------------------------------------------------------------

    async def _decide(self, principal: Principal, action: FleetAction, key: str | None) -> Answer:
        backend = self.backend
        if not isinstance(backend, ActingBackend):
            return problem_answer(
                409,
                "no-actions",
                "Conflict",
                f"fleet {backend.fleet_name!r} is served read-only: this backend takes no actions",
                "invalid",
            )
        request = action.request
        override = (request.override_reason or "").strip()
        async with self._lock:
            over = drill_over(backend)
            if over is not None:  # a dry run too: nothing sent now can play out in the drill
                return problem_answer(409, "drill-ended", "Conflict", over, "drill_ended")
            cannot = backend.refuses(action)
            if cannot is not None:  # (a dry run would say ok to what the fleet then refuses)
                return fleet_refusal(cannot)
            snapshot = await backend.current_snapshot()
            try:
                calm_per_s = self.steady.level_per_s if self.steady is not None else None
                verdict = judge(snapshot, backend.capacity(), action, self.thresholds, calm_per_s)
            except InputError as error:
                return problem_answer(
                    422, "invalid", "Invalid input", str(error), "invalid", field_name=error.field
                )
            binding = Binding.of(
                principal.name, action.kind.value, action.target, action.parameters(), verdict
            )
            level = verdict.level
            said = action.describe(snapshot)  # (an admission change: what it changes, against the fleet now)
            if request.dry_run:
                return self._result(
                    action,
                    verdict,
                    200,
                    "dry_run",
                    applied=False,
                    dry_run=True,
                    message=f"dry run: {level.value}; nothing applied",
                    forecast=True,
                )
            if level is VerdictLevel.BLOCKED:
                if not override:
                    return problem_answer(
                        422,
                        "blocked",
                        "Blocked by a guard",
                        f"{said} is blocked: {_failed(verdict, VerdictLevel.BLOCKED)}; nothing "
                        "applied (an admin may force it with override_reason)",
                        "blocked",
                        field_name=_first_failed(verdict, VerdictLevel.BLOCKED),
                        verdict=verdict,
                    )
                if principal.role < Role.ADMIN:
                    return problem_answer(
                        403,
                        "override-forbidden",
                        "Forbidden",
                        f"override_reason: only an admin token may force a blocked action; the token of "
                        f"{principal.name!r} has {principal.role.label}",
                        "forbidden",
                        field_name="override_reason",
                        verdict=verdict,
                    )
                return await self._apply(
                    principal, action, key, verdict, "overridden", snapshot.time_s, said, overridden=True
                )
            if level in (VerdictLevel.CONFIRM, VerdictLevel.TYPED):
                answer = self._confirmation(action, verdict, binding, said)
                if answer is not None:
                    return answer
            return await self._apply(principal, action, key, verdict, "applied", snapshot.time_s, said)

    def _confirmation(
        self, action: FleetAction, verdict: Verdict, binding: Binding, said: str
    ) -> Answer | None:
        """None when the request carries a valid confirmation (then spent); else the answer refusing it."""
        confirm = action.request.confirm
        if confirm is None:
            return self._needs_confirmation(action, verdict, binding, None, said)
        try:
            self.confirmations.check(confirm.token, binding)
        except TokenRefused as refused:
            return self._needs_confirmation(action, verdict, binding, refused, said)
        if verdict.level is VerdictLevel.TYPED:
            expected = verdict.typed_expected or action.target
            if (confirm.typed or "").strip() != expected:
                return problem_answer(
                    422,
                    "typed-mismatch",
                    "Confirmation does not match",
                    f"confirm.typed: {confirm.typed!r} does not match; type {expected!r} to confirm "
                    "(the token stays valid until it expires)",
                    "typed_mismatch",
                    field_name="confirm.typed",
                    verdict=verdict,
                )
        self.confirmations.spend(confirm.token)
        return None

    def _needs_confirmation(
        self,
        action: FleetAction,
        verdict: Verdict,
        binding: Binding,
        refused: TokenRefused | None,
        said: str,
    ) -> Answer:
        token, ttl_s = self.confirmations.issue(binding)
        verdict = verdict.model_copy(update={"confirm_token": token})
        ask = (
            "type " + repr(verdict.typed_expected) + " back"
            if verdict.level is VerdictLevel.TYPED
            else "confirm"
        )
        if refused is None:
            return problem_answer(
                409,
                "confirmation-required",
                "Confirmation required",
                # "needs typed confirmation", "needs confirmation" (it read "needs confirm confirmation")
                f"{said} needs "
                f"{'typed ' if verdict.level is VerdictLevel.TYPED else ''}confirmation: "
                f"{_failed(verdict, verdict.level)}; repeat the call with confirm.token (and {ask})",
                "needs_confirmation",
                field_name="confirm",
                verdict=verdict,
                extra={"confirm_token": token, "expires_in_s": ttl_s},
            )
        return problem_answer(
            409,
            "confirm-refused",
            "Confirmation refused",
            f"{refused.detail}. Nothing applied; a fresh confirm_token for the request as sent is attached",
            "confirm_refused",
            field_name="confirm.token",
            verdict=verdict,
            extra={"confirm_token": token, "expires_in_s": ttl_s, "reason": refused.reason},
        )

    async def _apply(
        self,
        principal: Principal,
        action: FleetAction,
        key: str | None,
        verdict: Verdict,
        outcome: str,
        time_s: float,
        said: str,
        overridden: bool = False,
    ) -> Answer:
        """Record, then apply: the fleet never changes without its audit record on disk first (if the
        write fails, nothing is applied). A fleet that refuses right after gets a second record."""
        assert isinstance(self.backend, ActingBackend)
        status = 202 if action.kind.runs_on else 200
        message = f"{said}: applied" + (" (admin override)" if overridden else "")
        later = self.backend.deferred(action)
        if later is not None:  # before the record: the audit says what the answer says
            message += f"; {later}"
        if action.kind.runs_on:
            message += "; it goes on in the fleet — follow it in the frames"
        answer = self._result(
            action, verdict, status, outcome, applied=True, overridden=overridden, message=message
        )
        await self._record(principal, action, answer, key)
        answer.recorded = True
        try:
            await self.backend.apply(action)
        except InputError as error:
            refusal = fleet_refusal(error, verdict)
            refusal.audit["supersedes"] = answer.body["audit_seq"]  # the record written before applying
            return refusal
        if self.tell is not None:
            self.tell(*_told(principal, action, answer, verdict, said), time_s)
        return answer

    def _result(
        self,
        action: FleetAction,
        verdict: Verdict,
        status: int,
        outcome: str,
        *,
        applied: bool,
        message: str,
        dry_run: bool = False,
        overridden: bool = False,
        forecast: bool = False,
    ) -> Answer:
        result = ActionResult(
            action=action.kind.value,
            node=action.node_id,
            applied=applied,
            dry_run=dry_run,
            overridden=overridden,
            verdict=verdict,
            message=message,
        )
        return Answer(
            status, result.model_dump(mode="json"), outcome, verdict, message, forecast_wanted=forecast
        )

    async def _add_forecast(self, action: FleetAction, answer: Answer) -> None:
        backend = self.backend
        if not isinstance(backend, ActingBackend):
            return
        try:
            forecast = await backend.forecast(action)
        except InputError:
            return  # the action cannot be applied even to a twin: the verdict already says why
        except Exception:  # a forecast is advice: its failure must not lose the verdict
            log.exception("forecast of %s failed", action.describe())
            return
        if forecast is None:
            return
        answer.body["verdict"]["forecast"] = forecast

    # --- the audit record -------------------------------------------------------------------------------

    async def _record(
        self,
        principal: Principal,
        action: FleetAction,
        answer: Answer,
        key: str | None,
        replayed_status: int | None = None,
    ) -> None:
        verdict = answer.verdict
        record: dict[str, Any] = {
            "actor": principal.name,
            "role": principal.role.label,
            "action": action.kind.value,
            "target": action.target,
            "parameters": action.parameters(),
            "dry_run": action.request.dry_run,
            "confirmed": action.request.confirm is not None,
            "override_reason": (action.request.override_reason or None),
            "idempotency_key": key,
            "status": answer.status,
            "outcome": answer.outcome,
            "detail": answer.detail,
        }
        if verdict is not None:
            record["verdict"] = {
                "level": verdict.level.value,
                "checks": [check.model_dump(mode="json") for check in verdict.checks],
            }
        if replayed_status is not None:
            record["replayed_status"] = replayed_status
        record.update(answer.audit)
        sealed = await asyncio.to_thread(self.audit.append, record)
        if replayed_status is None:  # a replay answers exactly what the first request was answered
            answer.body["audit_seq"] = sealed["seq"]
            answer.body["audit_hash"] = sealed["hash"]


def _told(
    principal: Principal, action: FleetAction, answer: Answer, verdict: Verdict, said: str
) -> tuple[str, str, str | None, dict[str, Any]]:
    """An applied action as the stream tells it to every console and recorder: who, what, and its audit
    record (a second operator sees who drained the node; a `stormdeck record` recording holds the actions).
    Stamped with the fleet time it was judged and applied at, as the fleet's own events of it are."""
    overridden = " (admin override)" if answer.outcome == "overridden" else ""
    message = f"{principal.name} ({principal.role.label}): {said}{overridden}"
    data = {
        "actor": principal.name,
        "role": principal.role.label,
        "action": action.kind.value,
        "target": action.target,
        "parameters": action.parameters(),
        "outcome": answer.outcome,
        "level": verdict.level.value,
        "audit_seq": answer.body.get("audit_seq"),
    }
    return "action", message, action.node_id, data


def _failed(verdict: Verdict, level: VerdictLevel) -> str:
    names = [check.name for check in verdict.checks if not check.ok and check.level is level]
    names = names or [check.name for check in verdict.checks if not check.ok]  # e.g. abrupt mode's floor
    return "failed " + ", ".join(names) if names else f"level {level.value}"


def _first_failed(verdict: Verdict, level: VerdictLevel) -> str | None:
    return next((check.name for check in verdict.checks if not check.ok and check.level is level), None)


__all__ = ["ActionDesk", "Answer", "ApiProblem"]
