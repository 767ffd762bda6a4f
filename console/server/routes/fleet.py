"""Reads: `GET /v1/fleet` and `GET /v1/nodes/{id}`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from console.protocol import AdmissionInForce, FleetSnapshot, NodeDetail
from console.server.auth import TokenFirstRoute, require
from console.server.feed import FleetFeed
from console.server.history import DEFAULT_HISTORY_FRAMES
from console.server.problems import ApiProblem, problem_responses
from console.server.tokens import Role

router = APIRouter(
    prefix="/v1", tags=["fleet"], dependencies=[Depends(require(Role.VIEWER))], route_class=TokenFirstRoute
)

#: Events of one node kept in its detail: enough for the detail screen's list.
NODE_EVENTS_LIMIT = 50


def feed_of(request: Request) -> FleetFeed:
    return request.app.state.feed


@router.get(
    "/fleet",
    response_model=FleetSnapshot,
    summary="The fleet now: every node, the totals, rollout, admission and alarms",
    responses=problem_responses(401, 403),
)
async def get_fleet(feed: Annotated[FleetFeed, Depends(feed_of)]) -> Response:
    # Already serialized once per frame (and so not validated again by FastAPI on the way out).
    return Response(await feed.snapshot_json(), media_type="application/json")


@router.get(
    "/nodes/{node_id}",
    response_model=NodeDetail,
    summary="One node now, with its recent history (oldest first) and its recent events",
    responses=problem_responses(401, 403, 404, 422),
)
async def get_node(
    node_id: str,
    feed: Annotated[FleetFeed, Depends(feed_of)],
    history_frames: Annotated[
        int, Query(ge=0, le=DEFAULT_HISTORY_FRAMES, description="frames of history to include, newest last")
    ] = 300,
) -> NodeDetail:
    status = feed.history.current_node(node_id)
    snapshot = feed.snapshot()
    if status is None:
        status = next((node for node in snapshot.nodes if node.id == node_id), None)
    if status is None:
        raise ApiProblem(
            404,
            f"node_id: no node {node_id!r} in fleet {snapshot.fleet!r} ({len(snapshot.nodes)} nodes); "
            "list the ids with GET /v1/fleet (nodes[].id)",
            field="node_id",
        )
    in_force = AdmissionInForce.of(snapshot)
    return NodeDetail(
        fleet=snapshot.fleet,
        time_s=snapshot.time_s,
        node=status,
        admission=in_force.for_node(node_id) if in_force is not None else None,
        history=feed.history.node_history(node_id, history_frames),
        events=feed.history.node_events(node_id, NODE_EVENTS_LIMIT),
    )
