"""The admin client over httpx: Bearer token, typed snapshot, problem+json turned into ApiError."""

from __future__ import annotations

import json

import httpx
import pytest

from console.client.admin import AdminClient, ApiError
from console.client.synthetic import SyntheticFleet


def snapshot() -> dict:
    frame = SyntheticFleet(nodes=3).next_frame()
    return {
        "fleet": "demo-fleet", "source": "simulator", "time_s": frame["time_s"], "nodes": frame["nodes"],
        "totals": frame["totals"], "rollout": frame["rollout"], "admission": frame["admission"], "alarms": [],
    }  # fmt: skip


def handler(request: httpx.Request) -> httpx.Response:
    if request.headers.get("Authorization") != "Bearer good":
        problem = {
            "title": "Unauthorized",
            "status": 401,
            "detail": "Authorization: a Bearer token is required",
        }
        return httpx.Response(401, json=problem, headers={"content-type": "application/problem+json"})
    if request.url.path == "/v1/fleet":
        return httpx.Response(200, json=snapshot())
    if request.url.path == "/v1/nodes/gw-0001":
        return httpx.Response(200, content=json.dumps({"id": "gw-0001", "history": []}))
    problem = {"title": "Not Found", "status": 404, "detail": "node: 'gw-9' is not a node of this fleet"}
    return httpx.Response(404, json=problem, headers={"content-type": "application/problem+json"})


async def test_fleet_snapshot_and_node():
    async with AdminClient("http://fleet", "good", transport=httpx.MockTransport(handler)) as admin:
        fleet = await admin.fleet()
        assert fleet.fleet == "demo-fleet" and len(fleet.nodes) == 3
        assert (await admin.node("gw-0001"))["id"] == "gw-0001"


async def test_problems_become_api_errors_with_the_detail():
    async with AdminClient("http://fleet", "bad", transport=httpx.MockTransport(handler)) as admin:
        with pytest.raises(ApiError) as error:
            await admin.fleet()
    assert error.value.status == 401 and "Bearer" in error.value.detail
    async with AdminClient("http://fleet", "good", transport=httpx.MockTransport(handler)) as admin:
        with pytest.raises(ApiError, match="not a node"):
            await admin.node("gw-9")
