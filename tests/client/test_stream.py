"""The stream client against an in-test server (tests/client/fake_fleet_server.py, until `sim serve`)."""

from __future__ import annotations

import asyncio
import random

import pytest

from console.client.stream import StreamClient, stream_url
from console.model import FleetModel, LinkState, LinkStatus
from console.policies import FullJitter

from .fake_fleet_server import TOKEN, FakeFleetServer, wait_for

FAST = FullJitter(base_ms=20.0, multiplier=2.0, max_ms=100.0)


def test_stream_url_from_a_base_url():
    assert stream_url("http://h:1") == "ws://h:1/v1/stream"
    assert stream_url("https://h/api/") == "wss://h/api/v1/stream"
    assert stream_url("h:2", since=7, epoch="e 1") == "ws://h:2/v1/stream?since=7&epoch=e+1"


@pytest.fixture
async def server():
    fake = FakeFleetServer()
    await fake.start()
    yield fake
    await fake.stop()


async def attach(url: str, token: str = TOKEN) -> tuple[FleetModel, list[LinkStatus], asyncio.Task]:
    model = FleetModel()
    links: list[LinkStatus] = []

    def sink(item):
        model.apply(item)
        if isinstance(item, LinkStatus):
            links.append(item)

    task = asyncio.create_task(StreamClient(url, token, policy=FAST).run(sink))
    return model, links, task


async def test_hello_then_frames_with_the_bearer_header(server):
    model, _, task = await attach(server.url)
    try:
        await wait_for(lambda: model.frames_applied >= 3, what="three frames")
        assert model.fleet == "demo-fleet" and model.epoch == "e1"
        assert model.link.state is LinkState.LIVE
        assert server.requests[0] == ("/v1/stream", f"Bearer {TOKEN}")
    finally:
        task.cancel()


async def test_a_wrong_token_is_refused_and_retried_with_backoff(server):
    model, links, task = await attach(server.url, token="nope")
    try:
        await wait_for(lambda: sum(link.state is LinkState.REFUSED for link in links) >= 3, what="refusals")
        refused = [link for link in links if link.state is LinkState.REFUSED]
        assert (
            refused[0].reason
            == "HTTP 401: the token was not accepted — check --token-file or STORMDECK_TOKEN"
        )
        assert [link.attempt for link in refused[:3]] == [1, 2, 3]
        assert all(0 <= link.next_in_s <= FAST.max_ms / 1000 for link in refused)
        assert model.frames_applied == 0
    finally:
        task.cancel()


async def test_resume_recovers_missed_frames_without_a_gap(server):
    server.drop_after = 3
    model, links, task = await attach(server.url)
    try:
        await wait_for(lambda: model.frames_applied >= 8, what="frames across reconnects")
        resumed = [path for path, _ in server.requests if "since=" in path]
        assert resumed and "epoch=e1" in resumed[0]
        assert model.gaps == 0  # every missed frame was replayed
        assert any(link.state is LinkState.RECONNECTING for link in links)
    finally:
        task.cancel()


async def test_a_restarted_history_is_a_fresh_start_with_a_marked_gap(server):
    model, _, task = await attach(server.url)
    try:
        await wait_for(lambda: model.frames_applied >= 3, what="first frames")
        server.drop_after = 1
        server.restart_history("e2")
        await wait_for(lambda: model.epoch == "e2" and model.frames_applied >= 5, what="the new epoch")
        assert model.gaps >= 1
        assert model.link.state in (LinkState.LIVE, LinkState.RECONNECTING, LinkState.CONNECTING)
    finally:
        task.cancel()


async def test_malformed_messages_are_counted_and_the_stream_goes_on(server):
    server.garbage = ["{not json", '{"type": "frame", "seq": "x"}', "[]", '{"type": "martian"}']
    model, _, task = await attach(server.url)
    try:
        await wait_for(
            lambda: model.malformed == 4 and model.frames_applied >= 3, what="frames after garbage"
        )
        assert model.malformed_reason
    finally:
        task.cancel()


async def test_retry_now_cuts_a_long_backoff_short(server):
    """With the server back, the console waited out a full-jitter delay of up to 30 s ("attempt 7, next
    in 26.1 s") with no way to try at once: Ctrl+R calls `retry_now`."""
    slow = FullJitter(base_ms=3_600_000.0, multiplier=2.0, max_ms=3_600_000.0)  # delays of up to an hour
    links: list[LinkStatus] = []
    client = StreamClient(server.url, "nope", policy=slow, rng=random.Random(3))
    task = asyncio.create_task(
        client.run(lambda item: links.append(item) if isinstance(item, LinkStatus) else None)
    )
    try:
        await wait_for(lambda: any(link.state is LinkState.REFUSED for link in links), what="a refusal")
        assert links[-1].next_in_s is not None and links[-1].next_in_s > 600  # (seeded: minutes away)
        client.retry_now()
        await wait_for(
            lambda: sum(link.state is LinkState.REFUSED for link in links) >= 2, what="a second try"
        )
        assert len(server.requests) >= 2
    finally:
        task.cancel()


def test_a_server_going_away_is_said_in_words():
    """On-call walk: `fleet up` stopped under the console was told as "ConnectionClosedError: received 1012
    (service restart); then sent 1012 (service restart)" — the server's own stop, in protocol words."""
    from websockets.exceptions import ConnectionClosedError, ConnectionClosedOK
    from websockets.frames import Close

    from console.client.stream import lost_reason

    for closed in (
        ConnectionClosedOK(Close(1001, ""), Close(1001, ""), True),
        ConnectionClosedError(Close(1012, ""), Close(1012, ""), True),
    ):
        said = lost_reason(closed)
        code = closed.rcvd.code
        assert said.startswith("the server closed the stream: it is stopping or restarting"), said
        assert f"({code})" in said
    assert lost_reason(ConnectionClosedOK(Close(1000, ""), Close(1000, ""), True)).startswith(
        "ConnectionClosedOK"
    )
    # A refused connect in the operator's words, not "ConnectionRefusedError: [Errno 111] Connect call
    # failed ('127.0.0.1', 1)".
    assert lost_reason(ConnectionRefusedError(111, "Connect call failed")) == "connection refused"


async def test_a_fleet_never_reached_is_told_as_never_reached_not_lost(server):
    """Review as a new user: `attach http://127.0.0.1:1` (nothing listening) said "link lost … keeps the
    last frame, marked stale" of a fleet it never reached. The status says it was never reached, and why;
    once a stream was had and lost, it is a lost link again."""
    url = server.url
    await server.stop()  # an ephemeral port nothing listens on now
    model, links, task = await attach(url)
    try:
        await wait_for(lambda: any(link.state is LinkState.RECONNECTING for link in links), what="a retry")
        first = next(link for link in links if link.state is LinkState.RECONNECTING)
        assert first.reached is False and first.reason == "connection refused", first
        told = first.describe(first.at_s)
        assert told.startswith("waiting for the fleet API (never reached: connection refused;"), told
        assert "reconnecting" not in told
        await server.start()  # the same port: reached, then lost
        await wait_for(lambda: model.frames_applied >= 2, what="frames once it listens")
        await server.stop()
        await wait_for(lambda: links[-1].state is LinkState.RECONNECTING, what="the loss")
        assert links[-1].reached is True and links[-1].describe(links[-1].at_s).startswith("reconnecting")
    finally:
        task.cancel()


def test_never_reached_says_so_without_a_lost_link_or_a_last_frame():
    from console.model.link import never_reached_text

    said = never_reached_text("connection refused", "http://127.0.0.1:1")
    assert said.startswith("never reached http://127.0.0.1:1: connection refused — is the server running?")
    assert "lost" not in said and "last frame" not in said and "stale" not in said
