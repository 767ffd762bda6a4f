"""`POST /v1/sim/inject`: an instructor's event in a served drill — admin only, checked, audited."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from console.protocol import InjectionRequest, InjectionResult
from console.server.auth import require
from console.server.inject import inject as inject_event
from console.server.problems import problem_responses
from console.server.routes.actions import AuditedRoute, IdempotencyKey, desk_of
from console.server.tokens import Principal, Role

# Refusals before the desk (a viewer's or operator's 403, a body that does not parse) are audited too.
router = APIRouter(prefix="/v1/sim", tags=["simulator"], route_class=AuditedRoute)


@router.post(
    "/inject",
    name="inject",
    response_model=InjectionResult,
    responses=problem_responses(401, 403, 409, 422),
    summary="Inject an event into the simulated fleet (admin): restart_nodes, kill_nodes, "
    "disconnect_fraction, add_nodes, set_policy",
)
async def inject(
    body: InjectionRequest,
    request: Request,
    principal: Annotated[Principal, Depends(require(Role.ADMIN))],
    key: IdempotencyKey = None,
) -> Response:
    answer = await inject_event(desk_of(request), principal, body, request.url.path, key)
    return JSONResponse(answer.body, status_code=answer.status, media_type=answer.media_type)
