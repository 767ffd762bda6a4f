"""The write side of the fleet API (issue #4): drain, undrain, rollout, admission, add capacity, the drain
plan.

Each route turns its path and body into a `FleetAction` and hands it to the `ActionDesk`, which judges,
confirms, applies and audits it. Answers: 200 (applied at once, or a dry run), 202 (applied and going on
in the fleet: a drain, a rollout, nodes provisioning), 409 (confirm or typed: a `confirm_token` is attached), 422 (blocked, or
bad input), 403 (a viewer; an operator asking for an override), 401. Every error is problem+json.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Header, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from console.guards import plan_drain
from console.protocol import (
    ActionKind,
    ActionRequest,
    ActionResult,
    AdmissionRequest,
    AuditPage,
    CapacityRecord,
    CapacityRequest,
    DrainPlanResult,
    DrainRequest,
    RolloutRequest,
)
from console.server.actions import FleetAction
from console.server.auth import TokenFirstRoute, require
from console.server.backend import ActingBackend
from console.server.desk import ActionDesk
from console.server.problems import ApiProblem, problem_response, problem_responses, validation_problem
from console.server.tokens import Principal, Role

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        max_length=200,
        description="retries with the same key and body get the first answer; nothing is applied twice",
    ),
]
Operator = Annotated[Principal, Depends(require(Role.OPERATOR))]
_ACTION_RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {
        "model": ActionResult,
        "description": "Applied; it goes on in the fleet (a drain, a rollout, nodes provisioning)",
    },
    **problem_responses(401, 403, 409, 422),
}


class AuditedRoute(TokenFirstRoute):
    """A route whose refusals before the desk (a role too low, a body that does not parse) are audited
    too: issue #4 wants one record per attempt, not per attempt that got far enough. Its token is checked
    before its body is read (`TokenFirstRoute`)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        kind = self.name

        async def audited(request: Request) -> Response:
            try:
                return await handler(request)
            except (ApiProblem, RequestValidationError) as error:
                # What the caller is told, not pydantic's error list: the audit log is read by people.
                if isinstance(error, ApiProblem):
                    problem = error.problem
                else:
                    problem = validation_problem(request, error, await _fleet_words(request, kind, error))
                header = request.headers.get("authorization", "")
                principal = request.app.state.tokens.lookup(header.partition(" ")[2].strip())
                if principal is not None:  # an anonymous 401 has no one to record
                    body = (await request.body())[:2000].decode("utf-8", "replace")
                    await desk_of(request).record_refusal(
                        principal,
                        kind,
                        request.path_params.get("node_id"),
                        problem.status,
                        problem.detail[:2000],
                        {"body": body},
                        (request.headers.get("idempotency-key") or "")[:2000] or None,
                    )
                if isinstance(error, RequestValidationError):
                    return problem_response(problem, request)
                raise

        return audited


#: pydantic's error types for a number beyond a field's bound (`ge`, `le`).
_BEYOND_BOUND = ("greater_than_equal", "less_than_equal")


async def _fleet_words(request: Request, kind: str, error: RequestValidationError) -> dict[str, str]:
    """Add capacity's `count` below 1 or beyond the API's bound (10 000), refused in the fleet's range as a
    count within those bounds is by the guard (`check_count`), and as the console's form and `act
    add-capacity` say it: the model's words ("Input should be greater than or equal to 1 (got 0); allowed:
    [1, 10000]") name a range this fleet cannot take. {} for any other refusal."""
    if kind != ActionKind.ADD_CAPACITY.value:
        return {}
    counts = [
        item.get("input")
        for item in error.errors()
        if tuple(item.get("loc", ())) == ("body", "count") and item.get("type") in _BEYOND_BOUND
    ]
    count = counts[0] if counts else None
    if isinstance(count, bool) or not isinstance(count, int | float) or not float(count).is_integer():
        return {}
    refusal = await desk_of(request).count_refusal(int(count))
    return {"count": str(refusal)} if refusal is not None else {}


router = APIRouter(prefix="/v1", tags=["actions"], route_class=AuditedRoute)
reads = APIRouter(
    prefix="/v1", tags=["actions"], dependencies=[Depends(require(Role.VIEWER))], route_class=TokenFirstRoute
)


def desk_of(request: Request) -> ActionDesk:
    return request.app.state.desk


async def _act(request: Request, principal: Principal, action: FleetAction, key: str | None) -> Response:
    answer = await desk_of(request).act(principal, action, request.url.path, key)
    return JSONResponse(answer.body, status_code=answer.status, media_type=answer.media_type)


@router.post(
    "/nodes/{node_id}/drain",
    name=ActionKind.DRAIN.value,
    response_model=ActionResult,
    responses=_ACTION_RESPONSES,
    summary="Drain a node: out of rotation, close at rate_per_s with a reconnect hint, force-close at the deadline",
)
async def drain(
    node_id: str, body: DrainRequest, request: Request, principal: Operator, key: IdempotencyKey = None
) -> Response:
    return await _act(request, principal, FleetAction(ActionKind.DRAIN, body, node_id), key)


@router.post(
    "/nodes/{node_id}/undrain",
    name=ActionKind.UNDRAIN.value,
    response_model=ActionResult,
    responses=_ACTION_RESPONSES,
    summary="Put a draining or drained node back into rotation",
)
async def undrain(
    node_id: str,
    request: Request,
    principal: Operator,
    body: Annotated[ActionRequest | None, Body()] = None,
    key: IdempotencyKey = None,
) -> Response:
    return await _act(
        request, principal, FleetAction(ActionKind.UNDRAIN, body or ActionRequest(), node_id), key
    )


@router.post(
    "/rollout",
    name=ActionKind.ROLLOUT_START.value,
    response_model=ActionResult,
    responses=_ACTION_RESPONSES,
    summary="Start a rolling restart: batch_size nodes every interval_s, drained or abrupt",
)
async def rollout_start(
    body: RolloutRequest, request: Request, principal: Operator, key: IdempotencyKey = None
) -> Response:
    return await _act(request, principal, FleetAction(ActionKind.ROLLOUT_START, body), key)


@router.post(
    "/rollout/halt",
    name=ActionKind.ROLLOUT_HALT.value,
    response_model=ActionResult,
    responses=_ACTION_RESPONSES,
    summary="Halt the running or paused rollout (always ok: halting is the safe direction)",
)
async def rollout_halt(
    request: Request,
    principal: Operator,
    body: Annotated[ActionRequest | None, Body()] = None,
    key: IdempotencyKey = None,
) -> Response:
    return await _act(request, principal, FleetAction(ActionKind.ROLLOUT_HALT, body or ActionRequest()), key)


@router.post(
    "/rollout/resume",
    name=ActionKind.ROLLOUT_RESUME.value,
    response_model=ActionResult,
    responses=_ACTION_RESPONSES,
    summary="Resume a paused or halted rollout",
)
async def rollout_resume(
    request: Request,
    principal: Operator,
    body: Annotated[ActionRequest | None, Body()] = None,
    key: IdempotencyKey = None,
) -> Response:
    return await _act(
        request, principal, FleetAction(ActionKind.ROLLOUT_RESUME, body or ActionRequest()), key
    )


@router.put(
    "/admission",
    name=ActionKind.ADMISSION.value,
    response_model=ActionResult,
    responses=_ACTION_RESPONSES,
    summary="Set admission: token bucket rate_per_s and burst, max_connections, the Retry-After window",
)
async def admission(
    body: AdmissionRequest, request: Request, principal: Operator, key: IdempotencyKey = None
) -> Response:
    return await _act(request, principal, FleetAction(ActionKind.ADMISSION, body), key)


@router.post(
    "/capacity",
    name=ActionKind.ADD_CAPACITY.value,
    response_model=ActionResult,
    responses=_ACTION_RESPONSES,
    summary="Add capacity: provision count more nodes (ready after the fleet's provisioning time)",
)
async def add_capacity(
    body: CapacityRequest, request: Request, principal: Operator, key: IdempotencyKey = None
) -> Response:
    return await _act(request, principal, FleetAction(ActionKind.ADD_CAPACITY, body), key)


@reads.get(
    "/audit",
    response_model=AuditPage,
    responses=problem_responses(401, 403, 422),
    summary="The audit log: one hash-chained record per action attempt, newest last",
)
async def audit(
    request: Request,
    limit: Annotated[int, Query(ge=1, le=1000, description="newest records to return")] = 100,
) -> AuditPage:
    log = desk_of(request).audit
    records = await asyncio.to_thread(log.tail, limit)
    return AuditPage(records=records, total=log.seq)


def _acting(request: Request, wanted: str) -> ActingBackend:
    backend = desk_of(request).backend
    if not isinstance(backend, ActingBackend):
        raise ApiProblem(
            409, f"fleet {backend.fleet_name!r} is served read-only: no capacity record {wanted}"
        )
    return backend


@reads.get(
    "/capacity",
    response_model=CapacityRecord,
    responses=problem_responses(401, 403, 409),
    summary="What one node can take and the room to add nodes: the capacity record the guards judge with",
)
async def get_capacity(request: Request) -> CapacityRecord:
    capacity = _acting(request, "to show").capacity()
    return CapacityRecord(**dataclasses.asdict(capacity))


@reads.get(
    "/nodes/{node_id}/drain-plan",
    response_model=DrainPlanResult,
    responses=problem_responses(401, 403, 409, 422),
    summary="The largest safe drain of a node now (the planner), to pre-fill a drain",
)
async def drain_plan(node_id: str, request: Request) -> DrainPlanResult:
    desk = desk_of(request)
    backend = _acting(request, "to plan with")
    snapshot = await backend.current_snapshot()
    plan = plan_drain(snapshot, backend.capacity(), [node_id], desk.thresholds)
    return DrainPlanResult(
        nodes=list(plan.node_ids),
        rate_per_s=plan.rate_per_s,
        duration_s=plan.duration_s if plan.duration_s != float("inf") else None,
        deadline_s=plan.deadline_s,
        hint_ms=plan.hint_ms,
        force_closed=plan.force_closed,
        limited_by=plan.limited_by,
        connections=plan.connections,
        cpu_margin_pct=plan.cpu_margin_pct,
        admission_margin_pct=plan.admission_margin_pct,
        room_nodes=plan.room_nodes,
        admission_limit_per_s=plan.admission_limit_per_s,
        request=plan.request(),
    )
