"""The simulated fleet's clock: `GET`/`POST /v1/sim/clock` (pause, resume, speed)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from console.protocol import ClockRequest, ClockState
from console.server.auth import TokenFirstRoute, require
from console.server.feed import FleetFeed
from console.server.problems import ApiProblem, problem_responses
from console.server.routes.fleet import feed_of
from console.server.tokens import Principal, Role

# The token first: `POST /v1/sim/clock` has a body, and an anonymous caller learns nothing of it.
router = APIRouter(prefix="/v1/sim", tags=["simulator"], route_class=TokenFirstRoute)


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
    response_model=ClockState,
    summary="Pause or resume the simulated fleet, or change its speed (fleet seconds per wall second)",
    responses=problem_responses(401, 403, 409, 422),
)
async def set_clock(
    change: ClockRequest,
    feed: Annotated[FleetFeed, Depends(feed_of)],
    _: Annotated[Principal, Depends(require(Role.OPERATOR))],
) -> ClockState:
    if not feed.backend.clock_control:
        raise ApiProblem(
            409,
            f"clock: fleet {feed.backend.fleet_name!r} is {feed.backend.source.value}, and only a simulated "
            "fleet's clock can be paused or sped up",
            field="clock",
        )
    feed.clock.set(paused=change.paused, speed=change.speed)
    return feed.clock_state()
