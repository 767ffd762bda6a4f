"""The fleet API's HTTP side against a real uvicorn on loopback."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from websockets.asyncio.client import connect

from console.protocol import Alarm, Event, FleetSnapshot, Frame, NodeDetail, Severity
from tests.server.conftest import Live, auth, start_live

PROBLEM = "application/problem+json"


def assert_problem(response: httpx.Response, status: int, field: str | None, *fragments: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["status"] == status and body["title"]
    if field is not None:
        assert body["field"] == field
    for fragment in fragments:
        assert fragment in body["detail"], body["detail"]
    return body


async def get(live: Live, path: str, role: str | None = "viewer", **kwargs) -> httpx.Response:
    headers = auth(role) if role else {}
    async with httpx.AsyncClient(base_url=live.url, timeout=5) as client:
        return await client.get(path, headers=headers, **kwargs)


async def post(live: Live, path: str, body: object, role: str | None = "operator") -> httpx.Response:
    headers = auth(role) if role else {}
    async with httpx.AsyncClient(base_url=live.url, timeout=5) as client:
        return await client.post(path, headers=headers, json=body)


@pytest.mark.parametrize("path", ["/v1/fleet", "/v1/nodes/node-1", "/v1/sim/clock"])
async def test_every_v1_path_needs_a_token(live: Live, path: str) -> None:
    response = await get(live, path, role=None)
    assert_problem(response, 401, "authorization", "bearer token is required")
    assert response.headers["www-authenticate"].startswith("Bearer")


async def test_an_unknown_token_is_401(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        response = await client.get("/v1/fleet", headers={"Authorization": "Bearer not-a-token"})
    assert_problem(response, 401, "authorization", "not one this server accepts")


async def test_a_viewer_may_not_touch_the_clock(live: Live) -> None:
    response = await post(live, "/v1/sim/clock", {"paused": True}, role="viewer")
    assert_problem(response, 403, "authorization", "operator role", "viewer-person")
    assert not live.feed.clock.paused


async def test_the_snapshot_has_the_contract_fields(live: Live) -> None:
    response = await get(live, "/v1/fleet")
    assert response.status_code == 200
    body = response.json()
    for name in ("api_version", "fleet", "time_s", "nodes", "totals", "rollout", "admission", "alarms"):
        assert name in body, name
    snapshot = FleetSnapshot.model_validate(body)
    assert snapshot.api_version == "v1" and snapshot.fleet == "scripted" and snapshot.alarms == []
    assert [node.id for node in snapshot.nodes] == ["node-0", "node-1", "node-2", "node-3"]
    assert snapshot.totals.connections == sum(node.connections for node in snapshot.nodes)
    assert snapshot.epoch == live.feed.epoch and snapshot.seq >= 1


async def test_a_node_comes_with_its_history_and_events(live: Live) -> None:
    await live_until_seq(live, 7)
    response = await get(live, "/v1/nodes/node-0", params={"history_frames": 5})
    assert response.status_code == 200
    detail = NodeDetail.model_validate(response.json())
    assert detail.node.id == "node-0"
    assert len(detail.history) == 5
    seqs = [sample.seq for sample in detail.history]
    assert seqs == sorted(seqs) and seqs[-1] >= 6
    assert all(sample.connections == 1000 + int(sample.time_s) for sample in detail.history)
    assert any(event.message == "tick five" for event in detail.events)


async def test_an_unknown_node_is_a_404_naming_it_and_how_to_list(live: Live) -> None:
    response = await get(live, "/v1/nodes/node-99")
    assert_problem(response, 404, "node_id", "'node-99'", "GET /v1/fleet")


@pytest.mark.parametrize(
    ("body", "field", "fragments"),
    [
        ({"speed": 0}, "speed", ["(0, 100]"]),
        ({"speed": 100.5}, "speed", ["(0, 100]", "100.5"]),
        ({"speed": "fast"}, "speed", ["valid number"]),
        ({"paused": "maybe"}, "paused", ["boolean"]),
        # Read literally: no coercion of a string or a bool into what the field wants.
        ({"paused": "yes"}, "paused", ["boolean", "'yes'"]),
        ({"paused": 1}, "paused", ["boolean"]),
        ({"speed": True}, "speed", ["valid number", "True", "(0, 100]"]),
        ({"speed": "2"}, "speed", ["valid number", "'2'"]),
        # An unknown field is refused, named, with the fields there are: a typo never passes unnoticed.
        ({"bogus": 1}, "bogus", ["unknown field", "paused, speed"]),
        ({"paused": True, "sped": 2}, "sped", ["unknown field", "did you mean 'speed'?"]),
    ],
)
async def test_bad_clock_input_is_a_problem_naming_field_and_range(
    live: Live, body, field, fragments
) -> None:
    assert_problem(await post(live, "/v1/sim/clock", body), 422, field, *fragments)
    assert live.feed.clock.speed == 1.0 and not live.feed.clock.paused


@pytest.mark.parametrize("given", [5000, -1, "many"])
async def test_bad_query_input_is_a_problem_naming_field_and_range(live: Live, given) -> None:
    """A query parameter's problem says its range as a body field's does: `history_frames=-1` said only
    'Input should be greater than or equal to 0', not that 600 is the most."""
    response = await get(live, "/v1/nodes/node-0", params={"history_frames": given})
    assert_problem(
        response, 422, "history_frames", f"(got '{given}')", "allowed: [0, 600] (frames of history to include"
    )


async def test_a_malformed_body_is_a_problem(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        response = await client.post(
            "/v1/sim/clock",
            headers={**auth("operator"), "content-type": "application/json"},
            content=b'{"speed": 2,\n "paused": }',
        )
    # The field is the body (not FastAPI's character position), and the detail says where and what.
    assert_problem(response, 422, "body", "not valid JSON", "line 2 column 12 (char 24)", "a JSON object")
    assert live.feed.clock.speed == 1.0


async def test_a_json_body_sent_without_its_content_type_says_so(live: Live) -> None:
    """`curl -X POST … -d '{"speed": 2}'` (curl's default: a form) read "body: Input should be a valid
    dictionary or object to extract fields from (got b'{"speed": 2}')" — an object, refused as not one."""
    async with httpx.AsyncClient(base_url=live.url) as client:
        response = await client.post(
            "/v1/sim/clock",
            headers={**auth("operator"), "content-type": "application/x-www-form-urlencoded"},
            content=b'{"speed": 2}',
        )
    body = assert_problem(
        response, 422, "content-type", "application/x-www-form-urlencoded", "Content-Type: application/json"
    )
    assert "dictionary" not in body["detail"]
    assert live.feed.clock.speed == 1.0


async def test_a_body_that_is_not_an_object_is_a_problem(live: Live) -> None:
    body = assert_problem(await post(live, "/v1/sim/clock", [True]), 422, "body", "object")
    # The type the action desk's bad input has: it was about:blank here, …:invalid there.
    assert body["type"] == "urn:stormdeck:problem:invalid"


async def test_an_unknown_path_is_a_problem(live: Live) -> None:
    assert_problem(await get(live, "/v1/nope"), 404, None, "/openapi.json")


async def test_the_stream_asked_for_over_plain_http_says_it_is_a_websocket(live: Live) -> None:
    # It answered 404 "no such path '/v1/stream'" — to curl, the one path every client needs.
    response = await get(live, "/v1/stream")
    assert_problem(response, 426, None, "/v1/stream is a WebSocket", "ws://", "stormdeck attach")
    assert response.headers["upgrade"] == "websocket"


async def test_a_method_a_path_does_not_take_names_those_it_does(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=5) as client:
        response = await client.delete("/v1/fleet", headers=auth("operator"))
    assert_problem(response, 405, None, "method DELETE is not allowed on /v1/fleet; allowed: GET")


async def test_clock_pause_and_speed(live: Live) -> None:
    response = await post(live, "/v1/sim/clock", {"paused": True})
    assert response.status_code == 200 and response.json()["paused"] is True
    paused_at = (await get(live, "/v1/fleet")).json()["time_s"]
    await live_until_seq(live, live.feed.history.newest_seq + 3)
    assert (await get(live, "/v1/fleet")).json()["time_s"] == paused_at

    response = await post(live, "/v1/sim/clock", {"paused": False, "speed": 4})
    assert response.json() == {**response.json(), "paused": False, "speed": 4.0}
    await live_until_seq(live, live.feed.history.newest_seq + 3)
    assert live.fleet.ticks_asked[-1] == 4
    clock = (await get(live, "/v1/sim/clock")).json()
    assert clock["time_s"] > paused_at and clock["speed"] == 4.0


async def test_a_live_fleet_has_no_clock_to_set() -> None:
    running = start_live()
    running.fleet.clock_control = False
    try:
        response = await post(running, "/v1/sim/clock", {"speed": 2})
        assert_problem(response, 409, "clock", "only a simulated fleet")
    finally:
        running.server.stop()


async def test_openapi_names_the_contract(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        spec = (await client.get("/openapi.json")).json()
    assert {"/v1/fleet", "/v1/nodes/{node_id}", "/v1/sim/clock"} <= set(spec["paths"])
    assert "HTTPBearer" in spec["components"]["securitySchemes"]
    speed = spec["components"]["schemas"]["ClockRequest"]["properties"]["speed"]
    assert "exclusiveMinimum" in str(speed) and "maximum" in str(speed)
    # What a fleet can do, typed and described (optional in v1): why it cannot roll out, its room to grow.
    schemas = spec["components"]["schemas"]
    assert "no_restart_command" in schemas["RolloutStatus"]["properties"]["unavailable_reason"]["description"]
    assert "0 when it cannot add nodes" in schemas["FleetSnapshot"]["properties"]["max_nodes"]["description"]


async def live_until_seq(live: Live, seq: int, timeout_s: float = 5.0) -> None:
    """Wait (on the server's own counter) until frame `seq` has been published."""
    import asyncio

    async def reached() -> None:
        while live.feed.history.newest_seq < seq:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(reached(), timeout_s)


class CountingAlarms:
    """Stands in for console.alarms at the hook: sees every frame, holds one alarm."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, str]] = []
        self.active = [
            Alarm(name="connections_drop", severity=Severity.CRITICAL, since_s=0.0, message="test")
        ]
        self.history: list[Alarm] = []

    def update(self, frame: Frame) -> list[Event]:
        self.seen.append((frame.seq, frame.epoch))
        return []


async def test_the_alarms_hook_sees_every_stamped_frame_and_feeds_the_snapshot() -> None:
    alarms = CountingAlarms()
    running = start_live(alarms=alarms)
    try:
        await live_until_seq(running, 4)
        body = (await get(running, "/v1/fleet")).json()
        assert [alarm["name"] for alarm in body["alarms"]] == ["connections_drop"]
        assert alarms.seen[:4] == [(seq, running.feed.epoch) for seq in (1, 2, 3, 4)]
    finally:
        running.server.stop()


async def test_the_alarm_engine_raises_on_the_stream_and_in_the_snapshot(live: Live) -> None:
    live.fleet.headroom_pct = 20.0  # under the 35 % budget (outage seed)
    url = live.url.replace("http://", "ws://") + "/v1/stream"
    async with connect(url, additional_headers=auth("viewer"), max_queue=None) as ws:
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), 5))
            if message["type"] == "event" and message["kind"] == "alarm":
                break
    assert message["data"]["change"] == "raised" and message["seq"] >= 1
    snapshot = (await get(live, "/v1/fleet")).json()
    raised = [alarm for alarm in snapshot["alarms"] if alarm["name"] == message["data"]["name"]]
    assert raised and raised[0]["active"] is True


async def test_a_failing_tick_does_not_stop_the_stream() -> None:
    running = start_live()
    original = running.fleet.tick
    failures = []

    async def flaky(fleet_seconds: int, budget_s: float):
        if not failures:
            failures.append(fleet_seconds)
            raise RuntimeError("backend hiccup")
        return await original(fleet_seconds, budget_s)

    running.fleet.tick = flaky  # type: ignore[method-assign]
    try:
        await live_until_seq(running, 4)
        assert failures == [1]
    finally:
        running.server.stop()


async def test_a_declared_body_over_the_bound_is_refused_before_it_is_read(live: Live) -> None:
    # Bodies are parsed before the token is checked: a body of any size from anyone was held whole.
    # Only the headers are sent: the answer must come without the server waiting for a gigabyte.
    from console.server.bodylimit import MAX_BODY_BYTES

    host, port = live.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        b"POST /v1/sim/clock HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000000000\r\n\r\n"
    )
    await writer.drain()
    # The whole answer: its head, then as many bytes as it says (one read() may end between the two).
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 413 "), head
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    body = json.loads(await asyncio.wait_for(reader.readexactly(length), 5))
    writer.close()
    assert body["field"] == "body" and body["status"] == 413
    assert f"at most {MAX_BODY_BYTES} bytes" in body["detail"]


async def test_a_chunked_body_over_the_bound_is_refused(live: Live) -> None:
    from console.server.bodylimit import MAX_BODY_BYTES

    async def chunks():  # no Content-Length: the bound is counted as the body arrives
        yield b'{"paused": true, "pad": "'
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b"x" * 65536
        yield b'"}'

    async with httpx.AsyncClient(base_url=live.url, timeout=5) as client:
        response = await client.post("/v1/sim/clock", headers=auth("operator"), content=chunks())
    assert_problem(response, 413, "body", "at most")
    assert not live.feed.clock.paused


async def test_a_body_within_the_bound_is_read_whole(live: Live) -> None:
    async def chunks():  # chunked, as a client streaming its body sends it
        yield b'{"paused": '
        yield b"true}"

    async with httpx.AsyncClient(base_url=live.url, timeout=5) as client:
        headers = {**auth("operator"), "Content-Type": "application/json"}
        response = await client.post("/v1/sim/clock", headers=headers, content=chunks())
    assert response.status_code == 200, response.text
    assert live.feed.clock.paused
