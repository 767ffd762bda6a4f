"""The simulated fleet's clock: `GET`/`POST /v1/sim/clock` (pause, resume, speed).

Whose clock it is depends on the server: on `sim serve` it is the operator's own simulator; in a served
drill it is the instructor's (admin), as injections are — a trainee must not pause the drill or run it at
100×. Every change, and every refused attempt, goes into the actions' audit log when the server has one.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.routing import APIRoute

from console.protocol import ClockRequest, ClockState
from console.server.auth import TokenFirstRoute, require
from console.server.feed import FleetFeed
from console.server.problems import ApiProblem, problem_responses
from console.server.routes.actions import AuditedRoute, desk_of
from console.server.routes.fleet import feed_of
from console.server.tokens import Principal, Role

#: The audit record kind of a clock change (actions' records carry no `record` field).
RECORD_KIND = "clock"


def make_router(setter: Role = Role.OPERATOR, audited: bool = False) -> APIRouter:
    """The clock's routes; `setter` is the lowest role that may change it. `audited` (the server has an
    audit log): refusals before the route — a role too low, a body that does not parse — are recorded too."""
    # The token first: `POST /v1/sim/clock` has a body, and an anonymous caller learns nothing of it.
    route_class: type[APIRoute] = AuditedRoute if audited else TokenFirstRoute
    router = APIRouter(prefix="/v1/sim", tags=["simulator"], route_class=route_class)
    # A default, not `Annotated[…]`: these annotations are strings, read where `setter` is not in scope.
    setter_token = Depends(require(setter))

    @router.get(
        "/clock",
        response_model=ClockState,
        summary="The fleet clock: paused or not, and its speed",
        responses=problem_responses(401, 403),
        dependencies=[Depends(require(Role.VIEWER))],
    )
    async def get_clock(feed: Annotated[FleetFeed, Depends(feed_of)]) -> ClockState:
        return feed.clock_state()

    @router.post(
        "/clock",
        name=RECORD_KIND,
        response_model=ClockState,
        summary="Pause or resume the simulated fleet, or change its speed (fleet seconds per wall second); "
        f"{setter.label} or higher (a served drill's clock is the instructor's: admin)",
        responses=problem_responses(401, 403, 409, 422),
    )
    async def set_clock(
        change: ClockRequest,
        request: Request,
        feed: Annotated[FleetFeed, Depends(feed_of)],
        principal: Principal = setter_token,
    ) -> ClockState:
        if not feed.backend.clock_control:
            raise ApiProblem(
                409,
                f"clock: fleet {feed.backend.fleet_name!r} is {feed.backend.source.value}, and only a "
                "simulated fleet's clock can be paused or sped up",
                field="clock",
            )
        feed.clock.set(paused=change.paused, speed=change.speed)
        state = feed.clock_state()
        if audited:
            await _audit(request, principal, change, state)
        return state

    return router


async def _audit(request: Request, principal: Principal, change: ClockRequest, state: ClockState) -> None:
    said = []
    if change.paused is not None:
        said.append("paused the fleet clock" if change.paused else "resumed the fleet clock")
    if change.speed is not None:
        said.append(f"set the fleet clock to {state.speed:g}×")
    record = {
        "record": RECORD_KIND,
        "actor": principal.name,
        "role": principal.role.label,
        "action": RECORD_KIND,
        "parameters": change.model_dump(mode="json", exclude_none=True),
        "status": 200,
        "outcome": "applied",
        "detail": f"{', '.join(said) or 'left the fleet clock as it was (nothing asked)'} at fleet second "
        f"{state.time_s:g}",
    }
    await asyncio.to_thread(desk_of(request).audit.append, record)
