"""`GET /v1/thresholds`: the lines the guards of this server judge every action with, and who set each.

A console pre-fills its forms against these, not its own: a server run with STORMDECK_CPU_PAUSE_PCT=60
judged the 75 % pause line a console with the defaults pre-filled, and asked for the fleet's name typed.
Served beside the write side (its desk holds the thresholds), to any token: a read, like `GET /v1/capacity`.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from console.protocol import ThresholdsRecord
from console.server.auth import TokenFirstRoute, require
from console.server.problems import problem_responses
from console.server.routes.actions import desk_of
from console.server.tokens import Role

router = APIRouter(
    prefix="/v1", tags=["actions"], dependencies=[Depends(require(Role.VIEWER))], route_class=TokenFirstRoute
)


@router.get(
    "/thresholds",
    response_model=ThresholdsRecord,
    responses=problem_responses(401, 403),
    summary="The thresholds the guards judge with: each one's value and source (default, a file, env)",
)
async def get_thresholds(request: Request) -> ThresholdsRecord:
    return ThresholdsRecord.model_validate({"thresholds": desk_of(request).loaded_thresholds().report()})
