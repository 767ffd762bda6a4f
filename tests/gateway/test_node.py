"""One in-process gateway node on 127.0.0.1: the client stream, resume, the admin API, planned closes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from console import __version__
from console.gateway.admin import prometheus_text
from console.gateway.client import ClientStats, StreamClient
from console.gateway.fold import fold_totals
from console.gateway.history import InProcessHistory
from console.gateway.node import GatewayNode, Lifetime, NodeConfig
from console.gateway.serve import RunningNode
from console.policies import make_policy
from console.protocol import AdmissionSettings, DrainRequest, Frame, Hello, NodeState, Source, Waves
from console.record.advice import retry_after
from console.record.key_figures import key_figures
from console.record.records import RecordingHeader
from console.record.review import Review
from console.record.series import Series
from tests.gateway.conftest import CHEAP_SIGNER, TOKEN, node_config, wait_for


def _token() -> str:
    return CHEAP_SIGNER.mint("test-client", time.time() + 60)


@contextlib.asynccontextmanager
async def bare_node(config: NodeConfig) -> AsyncIterator[GatewayNode]:
    """A node without the admin API's frame tick, so a test rolls its meter over a second it chooses: each
    rate then reads as the count of that second (RunningNode rolls it every wall second, at its own time)."""
    node = GatewayNode(config, InProcessHistory(config.channel))
    await node.start()
    try:
        yield node
    finally:
        await node.stop()


async def _refused_because(url: str) -> str:
    with pytest.raises(InvalidStatus) as refused:
        await connect(url)
    assert refused.value.response.status_code == 503
    return refused.value.response.headers["Stormdeck-Rejection"]


DRAIN = DrainRequest(rate_per_s=50, deadline_s=30, hint_ms=(100, 200))


async def _read(ws: object, count: int) -> list[dict]:
    return [json.loads(await ws.recv()) for _ in range(count)]  # type: ignore[attr-defined]


async def test_stream_offsets_and_resume_in_process(start_node) -> None:
    node: RunningNode = await start_node(node_config(publish_rate_per_s=50))
    async with connect(f"{node.url}?token={_token()}") as ws:
        hello, *messages = await _read(ws, 6)
    assert hello["type"] == "hello" and hello["recovered"] is None and hello["node"] == "n1"
    offsets = [m["offset"] for m in messages]
    assert offsets == list(range(offsets[0], offsets[0] + 5))
    await wait_for(lambda: node.node.history._head >= offsets[-1] + 5, 5, "five more messages")
    resume = f"{node.url}?token={_token()}&offset={offsets[-1]}&epoch={hello['epoch']}"
    async with connect(resume) as ws:
        hello2, *replayed = await _read(ws, 6)
    assert hello2["recovered"] is True and hello2["replayed"] >= 5
    assert [m["offset"] for m in replayed] == list(range(offsets[-1] + 1, offsets[-1] + 6))
    async with connect(f"{node.url}?token={_token()}&offset=1&epoch=another") as ws:
        (hello3,) = await _read(ws, 1)
    assert hello3["recovered"] is False


async def test_auth_runs_after_admission(start_node) -> None:
    node: RunningNode = await start_node()
    with pytest.raises(InvalidStatus) as missing:
        await connect(node.url)
    assert missing.value.response.status_code == 401
    with pytest.raises(InvalidStatus) as wrong_path:
        await connect(node.url.replace("/channel/fleet", "/channel/other") + f"?token={_token()}")
    assert wrong_path.value.response.status_code == 404
    assert node.node.meter.totals.auth_failures == 1


async def test_ceiling_answers_503_with_retry_after(start_node) -> None:
    settings = AdmissionSettings(rate_per_s=None, max_connections=2, retry_after_s=(3.0, 4.0))
    node: RunningNode = await start_node(node_config(admission=settings))
    async with connect(f"{node.url}?token={_token()}"), connect(f"{node.url}?token={_token()}"):
        with pytest.raises(InvalidStatus) as full:
            await connect(f"{node.url}?token={_token()}")
    headers = full.value.response.headers
    assert full.value.response.status_code == 503
    assert headers["Retry-After"] in ("3", "4") and 3000 <= int(headers["Retry-After-Ms"]) <= 4000


async def test_admin_api_drain_undrain_and_auth(start_node) -> None:
    node: RunningNode = await start_node()
    clients = [await connect(f"{node.url}?token={_token()}") for _ in range(5)]
    for ws in clients:
        await ws.recv()  # hello
    async with httpx.AsyncClient(base_url=node.admin_url) as admin:
        assert (await admin.get("/v1/node/ready")).status_code == 200
        body = {"rate_per_s": 50, "deadline_s": 30, "hint_ms": [100, 200]}
        assert (await admin.post("/v1/node/drain", json=body)).status_code == 401
        wrong = await admin.post("/v1/node/drain", json=body, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 403 and wrong.headers["content-type"] == "application/problem+json"
        auth = {"Authorization": f"Bearer {TOKEN}"}
        bad = await admin.post("/v1/node/drain", json={**body, "rate_per_s": -1}, headers=auth)
        assert bad.status_code == 422 and "rate_per_s" in bad.json()["detail"]
        started = await admin.post("/v1/node/drain", json=body, headers=auth)
        assert started.status_code == 200 and started.json()["drain"]["rate_per_s"] == 50
        assert (await admin.get("/v1/node/ready")).status_code == 503
        for ws in clients:
            hint = json.loads(await ws.recv())
            assert hint["type"] == "reconnect" and 100 <= hint["after_ms"] <= 200
            with pytest.raises(ConnectionClosed):
                await ws.recv()
            assert ws.close_code == 1012
        await wait_for(lambda: node.node.state == "drained", 5, "the node to report drained")
        with pytest.raises(InvalidStatus) as refused:
            await connect(f"{node.url}?token={_token()}")
        assert refused.value.response.status_code == 503  # out of rotation
        assert (await admin.post("/v1/node/undrain", headers=auth)).json()["state"] == "ready"
        assert (await admin.get("/v1/node/ready")).status_code == 200
        metrics = (await admin.get("/metrics")).text
        assert 'stormdeck_gateway_closes_total{node="n1"} 5' in metrics
        assert "# TYPE stormdeck_gateway_connections gauge" in metrics


async def test_the_admin_port_serves_no_pages_that_load_javascript_from_a_cdn(start_node) -> None:
    # FastAPI's /docs and /redoc load their scripts from a CDN: a browser on the admin port would run them.
    node: RunningNode = await start_node()
    async with httpx.AsyncClient(base_url=node.admin_url) as admin:
        for path in ("/docs", "/redoc"):
            page = await admin.get(path)
            assert page.status_code == 404 and "cdn.jsdelivr.net" not in page.text, path
        assert (await admin.get("/openapi.json")).json()["info"]["title"] == "stormdeck gateway node n1"


async def test_admission_update_through_admin(start_node) -> None:
    node: RunningNode = await start_node()
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=node.admin_url, headers=auth) as admin:
        body = {"rate_per_s": 0.01, "burst": 1, "retry_after_s": [5, 6]}
        assert (await admin.put("/v1/node/admission", json=body)).json()["applied"] is True
        other = await admin.put("/v1/node/admission", json={**body, "nodes": ["n9"]})
        assert other.json()["applied"] is False
        assert (await admin.get("/v1/node")).json()["admission"]["retry_after_s"] == [5.0, 6.0]
    async with connect(f"{node.url}?token={_token()}"):
        pass
    with pytest.raises(InvalidStatus) as limited:
        await connect(f"{node.url}?token={_token()}")
    assert limited.value.response.headers["Retry-After"] in ("5", "6")


async def test_lifetime_closes_with_a_hint(start_node) -> None:
    life = Lifetime(max_s=0.3, dither_s=0.1, close_grace_s=0.2, hint_ms=(10, 20))
    node: RunningNode = await start_node(node_config(lifetime=life))
    started = time.monotonic()
    async with connect(f"{node.url}?token={_token()}") as ws:
        await ws.recv()
        hint = json.loads(await ws.recv())
        lived_s = time.monotonic() - started
        assert hint == {"type": "reconnect", "after_ms": hint["after_ms"], "reason": "lifetime"}
        with pytest.raises(ConnectionClosed):
            await ws.recv()  # we did not leave: the node closes after the grace
        assert ws.close_code == 1012
    assert 0.15 <= lived_s < 1.0


async def test_planned_closes_log_no_handler_failure(start_node, caplog) -> None:
    # A client answers the node's 1012 with a 1012 (websockets does): not a normal closure, so reading the
    # closed connection raises. Left to websockets, each one logged "connection handler failed" and a
    # traceback (~770 B) — a node of 10,000 clients at the 1800 s lifetime wrote ~370 MB of them a day.
    life = Lifetime(max_s=0.2, dither_s=0.1, close_grace_s=0.05, hint_ms=(10, 20))
    running: RunningNode = await start_node(node_config(lifetime=life))
    caplog.set_level(logging.ERROR, logger="stormdeck.gateway.ws")
    for _ in range(5):
        async with connect(f"{running.url}?token={_token()}") as ws:
            with pytest.raises(ConnectionClosed):
                while True:
                    await ws.recv()
            assert ws.close_code == 1012
    await wait_for(
        lambda: running.node.meter.totals.closes == 5 and not running.node._live, 5.0, "5 handlers done"
    )
    await wait_for(lambda: not running.node._tasks, 5.0, "the planned closes done")
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_admin_stream_frames_and_resume(start_node) -> None:
    node: RunningNode = await start_node()
    stream = f"ws://127.0.0.1:{node.admin_port}/v1/node/stream"
    async with connect(stream) as ws:
        hello = Hello.model_validate_json(await ws.recv())
        first = Frame.model_validate_json(await ws.recv())
        second = Frame.model_validate_json(await ws.recv())
    assert hello.fleet == "n1" and first.epoch == hello.epoch
    assert second.seq == first.seq + 1 and second.nodes[0].id == "n1"
    assert 8 <= len(second.waves.attempts) <= 12  # one second of 100 ms bins
    await wait_for(lambda: node.frames.seq >= second.seq + 2, 5, "two more frames")
    async with connect(f"{stream}?since={second.seq}&epoch={hello.epoch}") as ws:
        resumed = Hello.model_validate_json(await ws.recv())
        missed = Frame.model_validate_json(await ws.recv())
    assert resumed.recovered is True and missed.seq == second.seq + 1
    async with connect(f"{stream}?since={second.seq}&epoch=stale") as ws:
        assert Hello.model_validate_json(await ws.recv()).recovered is False


@pytest.mark.parametrize(("stable_s", "state_after_three_drops"), [(10.0, 3), (0.05, 1)])
async def test_backoff_resets_only_after_the_stable_period(
    start_node, stable_s: float, state_after_three_drops: int
) -> None:
    node: RunningNode = await start_node()
    stats = ClientStats()
    policy = make_policy("exponential", {"base_ms": 20.0, "jitter_ms": 0.0})
    client = StreamClient([node.url], policy, _token(), stats, random.Random(1), stable_s=stable_s)
    running = asyncio.create_task(client.run())
    try:
        for drops in range(1, 4):
            await asyncio.wait_for(client.connected.wait(), 5)
            await asyncio.sleep(0.1)  # a connection this old: past 0.05 s, short of 10 s
            for conn in list(node.node._clients):
                conn.transport.abort()  # no close frame: a drop, which the policy paces
            await wait_for(lambda d=drops: stats.drops == d, 5, f"drop {drops}")
        assert client.backoff.state == state_after_three_drops
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await client.close()


async def test_admin_api_problems_name_the_field_the_value_and_the_allowed_range(start_node) -> None:
    # The fleet API's 422 says the value and the range; the node's said only "Input should be greater than
    # 0", and its 403 was titled "unauthorized".
    node: RunningNode = await start_node()
    body = {"rate_per_s": 50, "deadline_s": 30, "hint_ms": [100, 200]}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=node.admin_url) as admin:
        bad = (await admin.post("/v1/node/drain", json={**body, "rate_per_s": -1}, headers=auth)).json()
        assert bad["field"] == "rate_per_s"
        assert "(got -1)" in bad["detail"] and "allowed: (0, 1000000000] (closes per second)" in bad["detail"]
        missing = await admin.post("/v1/node/drain", json={"rate_per_s": 50}, headers=auth)
        assert missing.json()["field"] == "deadline_s" and "allowed: " in missing.json()["detail"]
        # A window short of its max, as the fleet API says it (was "hint_ms.1: Field required").
        short = (await admin.post("/v1/node/drain", json={**body, "hint_ms": [100]}, headers=auth)).json()
        assert short["field"] == "hint_ms" and short["detail"].startswith("hint_ms: max is missing"), short
        none = await admin.post("/v1/node/drain", json=body)
        wrong = await admin.post("/v1/node/drain", json=body, headers={"Authorization": "Bearer nope"})
    assert (none.status_code, none.json()["title"]) == (401, "Unauthorized")
    assert (wrong.status_code, wrong.json()["title"]) == (403, "Forbidden")
    assert node.node.state == "ready"  # nothing applied


async def test_a_client_refused_by_a_node_out_of_rotation_tries_another_at_once(start_node) -> None:
    """The loopback fleet has no load balancer: clients pick nodes themselves, and a drained node's 503
    carried its admission window's Retry-After (20–30 s here), so a client that picked it stayed away that
    long — as an LB that routes around nodes out of rotation never makes it (the simulator's balancer does
    not). The node says why it refused; the client moves to another node at once, once per node, and
    honours the Retry-After when every node it knows refused it."""
    slow_retry = AdmissionSettings(rate_per_s=None, max_connections=None, retry_after_s=(20.0, 30.0))
    drained = await start_node(node_config("a", admission=slow_retry))
    other = await start_node(node_config("b", admission=slow_retry))
    async with httpx.AsyncClient(base_url=drained.admin_url) as admin:
        body = {"rate_per_s": 50, "deadline_s": 30, "hint_ms": [100, 200]}
        started = await admin.post("/v1/node/drain", json=body, headers={"Authorization": f"Bearer {TOKEN}"})
        assert started.status_code == 200
    with pytest.raises(InvalidStatus) as refused:
        await connect(f"{drained.url}?token={_token()}")
    assert refused.value.response.headers["Stormdeck-Rejection"] == "not_in_rotation"

    stats = ClientStats()
    policy = make_policy("full_jitter", {})
    client = StreamClient([drained.url, other.url], policy, _token(), stats, random.Random(1), start_index=0)
    assert await client._attempt() == 0.0  # refused by the drained node: the other one, now
    assert stats.rejects_503 == 1 and list(stats.retry_after_ms) == []
    assert client.url_index == 1

    running = asyncio.create_task(client.run())
    try:
        await asyncio.wait_for(client.connected.wait(), 5)
        assert client.node == "b"
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await client.close()


async def test_a_client_every_node_refuses_as_out_of_rotation_waits_its_retry_after(start_node) -> None:
    slow_retry = AdmissionSettings(rate_per_s=None, max_connections=None, retry_after_s=(20.0, 30.0))
    nodes = [await start_node(node_config(name, admission=slow_retry)) for name in ("a", "b")]
    for node in nodes:
        async with httpx.AsyncClient(base_url=node.admin_url) as admin:
            body = {"rate_per_s": 50, "deadline_s": 30, "hint_ms": [100, 200]}
            drain = await admin.post(
                "/v1/node/drain", json=body, headers={"Authorization": f"Bearer {TOKEN}"}
            )
            assert drain.status_code == 200
    stats = ClientStats()
    client = StreamClient(
        [node.url for node in nodes], make_policy("full_jitter", {}), _token(), stats, random.Random(1)
    )
    assert await client._attempt() == 0.0  # the first refusal: another node may take it
    waited = await client._attempt()  # every node it knows has refused it: no tight loop
    assert waited is not None and 20_000 <= waited <= 31_000
    assert stats.rejects_503 == 2 and list(stats.retry_after_ms) == [waited]


async def test_a_node_out_of_rotation_does_not_count_its_refusals_as_rejects() -> None:
    """`rejects_per_s` is "503s answered by admission control or the connection ceiling". A drained node
    answers 503 `not_in_rotation` to a client that picked it (the loopback fleet has no load balancer to
    route around it; the client moves on at once): those counted as rejects, so a drained node read as one
    refusing every upgrade (the node table's 503 share: critical) and the fleet as under admission pressure
    it was not under. They are still upgrades that reached the node: attempts, and /metrics counts them."""
    ceiling = AdmissionSettings(rate_per_s=None, max_connections=1, retry_after_s=(1.0, 2.0))
    async with bare_node(node_config(admission=ceiling)) as node:
        url = f"ws://127.0.0.1:{node.port}/channel/fleet?token={_token()}"
        from_s = time.time()
        node.meter.roll(from_s)
        async with connect(url) as held:
            await held.recv()  # hello
            assert await _refused_because(url) == "ceiling"
        node.drain(DRAIN)
        for _ in range(3):
            assert await _refused_because(url) == "not_in_rotation"
        node.meter.roll(from_s + 1.0)  # one second: each rate is its count
        status = node.status()
        metrics = prometheus_text(node)
    assert status.state in (NodeState.DRAINING, NodeState.DRAINED)
    assert status.rejects_per_s == 1.0  # the ceiling's alone
    assert status.attempts_per_s == 5.0 and status.accepts_per_s == 1.0
    assert 'stormdeck_gateway_rejects_total{node="n1"} 1' in metrics
    assert 'stormdeck_gateway_not_in_rotation_total{node="n1"} 3' in metrics


async def test_a_fleet_whose_only_503s_came_from_a_drained_node_gets_no_admission_finding() -> None:
    """The after-action report's "Turn the surge away cheaply: admission …" said "128 upgrades answered
    503" of a loopback fleet that answered none but from its drained node, to clients that went straight on
    to another. Here, frames as the controller folds them (`fold_totals`) from two real nodes, one drained,
    through the report's series and key figures to the finding."""
    async with bare_node(node_config("a")) as drained, bare_node(node_config("b")) as ready:
        urls = [f"ws://127.0.0.1:{n.port}/channel/fleet?token={_token()}" for n in (drained, ready)]
        from_s = time.time()
        for node in (drained, ready):
            node.meter.roll(from_s)
        drained.drain(DRAIN)
        held = []
        for _ in range(4):  # each client picks the drained node first, and then the other
            assert await _refused_because(urls[0]) == "not_in_rotation"
            held.append(await connect(urls[1]))
        for node in (drained, ready):
            node.meter.roll(from_s + 1.0)
        nodes = [drained.status(), ready.status()]
        for ws in held:
            await ws.close()
    series = Series()
    series.add(
        Frame(seq=1, epoch="e", time_s=1.0, nodes=nodes, totals=fold_totals(nodes), waves=Waves(attempts=[]))
    )
    figures = key_figures(series, [])
    assert figures is not None and figures.rejects_total == 0
    review = Review(
        header=RecordingHeader(stormdeck_version=__version__, source=Source.LIVE, started_unix_s=from_s),
        series=series,
        figures=figures,
        alarms=[],
        events=[],
        actions=[],
        confirmations=[],
        drill_outcome=None,
        disconnect_times_s=[],
    )
    assert retry_after(review) is None
