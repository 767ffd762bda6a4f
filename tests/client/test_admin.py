"""The admin client over httpx: Bearer token, typed snapshot, problem+json turned into ApiError."""

from __future__ import annotations

import json

import httpx
import pytest

from console.client.admin import AdminClient, ApiError, FleetUnreachable, NotAFleetApi
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


async def test_nothing_answering_is_unreachable_not_answered_0():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("All connection attempts failed", request=request)

    async with AdminClient("http://fleet:1", "good", transport=httpx.MockTransport(refuse)) as admin:
        with pytest.raises(FleetUnreachable) as error:
            await admin.fleet()
    assert str(error.value) == (
        "cannot reach the fleet API at http://fleet:1: ConnectError: All connection attempts failed — is the "
        "server running?"
    )
    assert error.value.status == 0 and error.value.exit_code == 1


@pytest.mark.parametrize("status", [200, 404, 501])
async def test_an_answer_that_is_not_json_is_not_a_fleet_api(status: int):
    def html(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status, text="<!DOCTYPE HTML><html>…</html>", headers={"content-type": "text/html"}
        )

    async with AdminClient("http://fleet", "good", transport=httpx.MockTransport(html)) as admin:
        with pytest.raises(NotAFleetApi) as error:
            await admin.node("gw-0001")
    assert str(error.value) == f"http://fleet is not a stormdeck fleet API (HTTP {status} text/html)"
    assert error.value.exit_code == 1


@pytest.mark.parametrize(("status", "exit_code"), [(422, 2), (404, 2), (401, 1), (403, 1), (500, 1)])
def test_api_errors_exit_as_act_does(status: int, exit_code: int):
    assert ApiError(status, "detail").exit_code == exit_code
