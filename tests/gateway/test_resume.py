"""Resume across a gateway restart: with Redis history clients recover; in-process, they cannot."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import time
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from console.alarms import AlarmEngine, Thresholds
from console.gateway.controller import Controller
from console.gateway.history import COMMAND_TIMEOUT_S, RedisHistory
from console.gateway.loadgen import ClientPool
from console.gateway.nodes_file import NodeEntry
from console.gateway.processes import NodeProcess, RedisProcess
from console.policies import make_policy
from tests.gateway.conftest import CHEAP_SIGNER, CHEAP_WORK_FACTOR, TOKEN, wait_for

pytestmark = pytest.mark.timeout(90)

CLIENTS = 100


@pytest.mark.parametrize("redis_history", [True, False], ids=["redis", "in_process"])
async def test_resume_across_restart(node_processes, redis_server, redis_history: bool) -> None:
    history = redis_server.url if redis_history else None
    args = ("--work-factor", str(CHEAP_WORK_FACTOR), "--publish-rate-per-s", "20")
    node = node_processes("gw", *args, history=history)
    # Retry every 200 ms: the restart takes about a second, and this test is about resume, not backoff.
    pool = ClientPool([node.url], CLIENTS, make_policy("fixed", {"delay_ms": 200}), signer=CHEAP_SIGNER)
    pool.start()
    try:
        await pool.wait_connected(CLIENTS, timeout_s=20)
        await wait_for(lambda: pool.stats.messages >= CLIENTS * 10, 10, "messages flowing")
        node.stop()  # SIGTERM: reconnect hints, 1012s, exit
        restarted = node_processes("gw", *args, history=history, port=node.port)
        await wait_for(
            lambda: (
                all(c.node == "gw" for c in pool.clients)
                and pool.stats.resumes + pool.stats.full_resyncs >= CLIENTS
            ),
            20,
            "every client back after the restart",
        )
        received = pool.stats.messages
        await wait_for(lambda: pool.stats.messages >= received + CLIENTS * 5, 10, "messages flowing again")
        assert restarted.status()["connections"] == CLIENTS
    finally:
        await pool.stop()
    stats = pool.stats
    if redis_history:
        assert (stats.resumes, stats.full_resyncs) == (CLIENTS, 0)
        assert stats.gaps == 0 and stats.duplicates == 0
    else:
        assert (stats.resumes, stats.full_resyncs) == (0, CLIENTS)  # a new epoch: recovered: false


async def test_live_feed_comes_back_after_redis_restarts(node_processes, redis_server) -> None:
    """Redis goes away under a node and comes back (on-call's restart, no persistence): the node's clients
    get messages again, and its log says so in a line each — the feed had ended for good with the first
    lost connection while the node stayed `ready`, and the publisher wrote a traceback a tick."""
    async with clients_receiving(node_processes, redis_server, publish_rate_per_s=20) as (node, pool):
        redis_server.stop()
        restarted = RedisProcess(port=redis_server.port).start()
        try:
            received = pool.stats.messages
            await wait_for(lambda: pool.stats.messages >= received + 20 * 5, 15, "messages flowing again")
            await wait_for(lambda: "live feed back" in node_log(node), 5, "the node's all-clear")
            # Redis came back empty: a new stream, so each client is told to reconnect (hints up to 5 s).
            await wait_for(lambda: pool.stats.full_resyncs >= 20, 15, "every client resynced")
            log = node_log(node)  # before this Redis stops too
        finally:
            restarted.stop()
    assert "Traceback" not in log
    assert log.count("live feed lost") == 1 and log.count("live feed back") == 1
    assert log.count("publish failed") <= 1  # the node's own publisher, if a tick fell in the outage
    # None read the new stream's messages as duplicates of the old one's (and dropped them).
    assert "lost the channel's history" in log
    assert (pool.stats.full_resyncs, pool.stats.duplicates, pool.stats.gaps) == (20, 0, 0)


async def test_live_feed_catches_up_what_it_missed(node_processes, redis_server) -> None:
    """Redis drops the node's subscription (a failover, `CLIENT KILL`) while the history stays: what was
    published meanwhile reaches the clients from the history — no gap, nothing twice."""
    async with clients_receiving(node_processes, redis_server, publish_rate_per_s=50) as (node, pool):
        for kills in range(1, 4):  # each loses the messages published until the node has subscribed again
            assert redis_command(redis_server.port, "CLIENT", "KILL", "TYPE", "pubsub").startswith(b":1")
            await wait_for(
                lambda k=kills: node_log(node).count("live feed back") >= k, 10, "subscribed again"
            )
        received = pool.stats.messages
        await wait_for(lambda: pool.stats.messages >= received + 20 * 10, 10, "messages flowing again")
    assert (pool.stats.gaps, pool.stats.duplicates) == (0, 0)


@contextlib.asynccontextmanager
async def clients_receiving(
    node_processes, redis_server, publish_rate_per_s: int
) -> AsyncIterator[tuple[NodeProcess, ClientPool]]:
    """A node on `redis_server` publishing at the rate, and 20 clients on it already receiving."""
    args = ("--work-factor", str(CHEAP_WORK_FACTOR), "--publish-rate-per-s", str(publish_rate_per_s))
    node = node_processes("gw", *args, history=redis_server.url)
    pool = ClientPool([node.url], 20, make_policy("fixed", {"delay_ms": 200}), signer=CHEAP_SIGNER)
    pool.start()
    try:
        await pool.wait_connected(20, timeout_s=20)
        await wait_for(lambda: pool.stats.messages >= 20 * 5, 10, "messages flowing")
        yield node, pool
    finally:
        await pool.stop()


def node_log(node: NodeProcess) -> str:
    node._stderr.seek(0)
    return node._stderr.read()


def redis_command(port: int, *words: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), 2) as sock:
        sock.sendall(" ".join(words).encode() + b"\r\n")
        return sock.recv(256)


async def test_clients_arriving_while_redis_is_away_are_told_to_come_back(
    node_processes, redis_server
) -> None:
    """Clients arriving while the history's Redis is away are closed with 1013 (try again later) — each
    was a "connection handler failed" traceback in the node's log — and served once it is back, every
    one, though the pool's connections that Redis closed are stale (they failed 8 of 10 arrivals)."""
    node = node_processes("gw", "--work-factor", str(CHEAP_WORK_FACTOR), history=redis_server.url)
    assert [m["type"] for m in await asyncio.gather(*[arrive(node) for _ in range(10)])] == ["hello"] * 10
    redis_server.stop()
    assert await asyncio.gather(*[arrive(node) for _ in range(5)]) == [{"closed": 1013}] * 5
    restarted = RedisProcess(port=redis_server.port).start()
    try:
        answers = await asyncio.gather(*[arrive(node) for _ in range(10)])
    finally:
        restarted.stop()
    assert [m.get("type") for m in answers] == ["hello"] * 10
    log = node_log(node)
    assert "Traceback" not in log and log.count("closing arriving clients with 1013") == 1


async def arrive(node: NodeProcess, wait_s: float = 5.0) -> dict:
    """A client arriving at `node`: its first frame, or how the node closed the connection."""
    token = CHEAP_SIGNER.mint("probe", time.time() + 600)
    async with connect(f"{node.url}?token={token}", open_timeout=5) as ws:
        try:
            return json.loads(await asyncio.wait_for(ws.recv(), wait_s))
        except ConnectionClosed as closed:
            return {"closed": closed.rcvd.code if closed.rcvd else None}


async def test_clients_arriving_while_redis_hangs_are_told_to_come_back(node_processes, redis_server) -> None:
    """A hung Redis (SIGSTOP: its connections stay open, nothing answers) is an absent one within seconds:
    clients arriving are closed with 1013, more of them than the pool has connections, and once it answers
    again a later one is served and the live feed delivers — no gap, nothing twice. Each arrival's replay
    waited for its answer (redis-py 8's default 5 s read timeout, none before 8), then failed with 1011 and
    a traceback each."""
    node = node_processes(
        "gw", "--work-factor", str(CHEAP_WORK_FACTOR), "--publish-rate-per-s", "20", history=redis_server.url
    )
    token = CHEAP_SIGNER.mint("watcher", time.time() + 600)
    offsets: list[int] = []

    async def watch() -> None:  # connected before the hang, through it and after
        async with connect(f"{node.url}?token={token}", open_timeout=5) as ws:
            async for text in ws:
                if (message := json.loads(text))["type"] == "message":
                    offsets.append(message["offset"])

    watcher = asyncio.create_task(watch())
    await wait_for(lambda: len(offsets) >= 5, 10, "messages flowing")
    assert redis_server.process is not None
    os.kill(redis_server.process.pid, signal.SIGSTOP)
    try:
        hung_at = len(offsets)
        # 20 at once: more than the pool's 16 connections, so some queue behind stuck calls. The bound is
        # two command timeouts (those that began before the first timed out, then those sharing a probe)
        # and slack for a loaded machine: nothing waits on a Redis that may never answer.
        answers = await asyncio.wait_for(
            asyncio.gather(*[arrive(node, wait_s=60) for _ in range(20)]), 2 * COMMAND_TIMEOUT_S + 4
        )
        assert answers == [{"closed": 1013}] * 20
    finally:
        os.kill(redis_server.process.pid, signal.SIGCONT)
    try:
        later = await arrive(node)
        assert later["type"] == "hello"
        await wait_for(lambda: len(offsets) >= hung_at + 20, 10, "the live feed delivering again")
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
    assert offsets == list(range(offsets[0], offsets[-1] + 1))  # no gap, nothing twice
    log = node_log(node)
    assert "Traceback" not in log and log.count("closing arriving clients with 1013") == 1
    assert log.count("history answers again") == 1


async def test_a_restarted_redis_costs_no_publish_or_replay_on_stale_connections(redis_server) -> None:
    """The pool's connections that a restarted Redis closed fail once when next used: each publish and
    replay tries again at once, so none of those that come after the restart fails."""
    history = RedisHistory(redis_server.url, "fleet")
    await history.start()
    try:
        await asyncio.gather(*[history.publish({"k": k}) for k in range(10)])  # ten pooled connections
        redis_server.stop()
        restarted = RedisProcess(port=redis_server.port).start()
        try:
            published = await asyncio.gather(*[history.publish({"k": k}) for k in range(10)])
            replays = await asyncio.gather(*[history.replay(1, history.epoch) for _ in range(10)])
        finally:
            restarted.stop()
    finally:
        await history.stop()
    assert sorted(published) == list(range(1, 11))  # a new stream (no persistence): offsets from 1
    assert all(isinstance(replay.head, int) for replay in replays)


async def test_a_hung_redis_fails_a_storm_of_replays_within_seconds(redis_server) -> None:
    """100 replays at once on a hung Redis (as clients arriving in a storm) all fail within two command
    timeouts, and every one after it answers again succeeds: each waiting on its own, the pool's 16
    connections let 16 through every `COMMAND_TIMEOUT_S`, and the last waited 21 s."""
    history = RedisHistory(redis_server.url, "fleet")
    await history.start()
    assert redis_server.process is not None
    try:
        await history.publish({"k": 0})
        os.kill(redis_server.process.pid, signal.SIGSTOP)
        try:
            failed = await asyncio.wait_for(
                asyncio.gather(
                    *[history.replay(0, history.epoch) for _ in range(100)], return_exceptions=True
                ),
                2 * COMMAND_TIMEOUT_S + 3,
            )
        finally:
            os.kill(redis_server.process.pid, signal.SIGCONT)
        replays = await asyncio.gather(*[history.replay(0, history.epoch) for _ in range(100)])
    finally:
        await history.stop()
    assert [type(error).__name__ for error in failed] == ["HistoryUnreachable"] * 100
    assert [len(replay.messages) for replay in replays] == [1] * 100


class Followed:
    """A controller following one node, and an alarm engine over the fleet's frames."""

    def __init__(self, node: NodeProcess, thresholds: Thresholds) -> None:
        self.controller = Controller([NodeEntry("gw", node.admin_url, node.url)], TOKEN)
        self.engine = AlarmEngine(thresholds)

    def unreachable(self) -> str | None:
        """What the fleet's frame says of the node's history now (the engine judges that frame)."""
        frame = self.controller.frame()
        self.engine.update(frame)
        return frame.nodes[0].history_unreachable

    async def __aenter__(self) -> Followed:
        await self.controller.start()
        await wait_for(lambda: self.controller.frame().nodes[0].state.value == "ready", 10, "gw followed")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.controller.close()


async def test_the_fleet_says_which_node_cannot_reach_redis_and_when_it_answers_again(
    node_processes, redis_server
) -> None:
    """Redis away: the node answered arriving clients 1013, but its status, the fleet's frames and the
    console said nothing. Now the node's status says so — with nobody arriving — the controller's frames
    carry it, an event says when it began and ended, and an alarm is raised once it lasts."""
    node = node_processes("gw", "--work-factor", str(CHEAP_WORK_FACTOR), history=redis_server.url)
    async with Followed(node, Thresholds(history_unreachable_for_s=2.0)) as fleet:
        unreachable, engine = fleet.unreachable, fleet.engine
        assert unreachable() is None
        redis_server.stop()
        await wait_for(lambda: unreachable() is not None, 10, "gw saying its Redis is away")
        assert (unreachable() or "").startswith(f"Redis at {redis_server.url}: ")
        await wait_for(
            lambda: unreachable() is not None and [a.name for a in engine.active] == ["history_unreachable"],
            10,
            "the alarm, once it lasted 2 s",
        )
        assert engine.active[0].nodes == ["gw"]
        restarted = RedisProcess(port=redis_server.port).start()
        try:
            await wait_for(lambda: unreachable() is None, 15, "gw saying its Redis answers again")
        finally:
            restarted.stop()
        said = [e.message for e in fleet.controller.drain_events() if e.kind == "history"]
        assert len(said) == 2 and said[0].startswith(f"gw: history unreachable: Redis at {redis_server.url}")
        assert said[1] == "gw: history answers again"


async def test_a_node_says_its_redis_hangs_though_no_client_arrives(node_processes, redis_server) -> None:
    """A hung Redis (SIGSTOP) keeps its connections open and closes nothing, so the live feed never
    notices; only a command finds out. With no client arriving, none ran: the node went on saying
    nothing. It asks Redis itself each second, so it says so within a command timeout, and once Redis
    answers again it says that too."""
    node = node_processes("gw", "--work-factor", str(CHEAP_WORK_FACTOR), history=redis_server.url)
    assert redis_server.process is not None
    async with Followed(node, Thresholds()) as fleet:
        unreachable = fleet.unreachable
        os.kill(redis_server.process.pid, signal.SIGSTOP)
        try:
            await wait_for(lambda: unreachable() is not None, COMMAND_TIMEOUT_S + 5, "gw saying Redis hangs")
            assert "TimeoutError" in (unreachable() or "")
        finally:
            os.kill(redis_server.process.pid, signal.SIGCONT)
        await wait_for(lambda: unreachable() is None, 10, "gw saying its Redis answers again")
