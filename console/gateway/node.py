"""The gateway node, client side: admission, auth, the channel stream, resume, drains and lifetimes.

One asyncio process. `process_request` runs before websockets computes any handshake response, so an
over-limit upgrade costs an HTTP parse and a 503, never the handshake (DESIGN.md, "admission").
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import http
import json
import logging
import math
import random
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from console.gateway.admission import Admission
from console.gateway.drain import DrainPlan
from console.gateway.history import CHECK_EVERY_S, HistoryUnreachable, InProcessHistory, RedisHistory
from console.gateway.meter import Meter
from console.gateway.stall import AWAKE_TICK_S, Schedule, StallClock
from console.gateway.tokens import TokenSigner
from console.protocol import (
    WAVE_BIN_MS,
    AdmissionSettings,
    DrainProgress,
    DrainRequest,
    DueBack,
    NodeState,
    NodeStatus,
)

log = logging.getLogger("stormdeck.gateway")

#: RFC 6455 1012 "service restart": the close code of a planned close; clients should come back.
CLOSE_RESTART = 1012

#: How long a resuming client waits for the live feed to reach the history it was replayed from.
FEED_CATCH_UP_S = 2.0

#: A frame's `due_back` holds at most this many bins: 100 ms each up to a minute of hints (the
#: connections_drop window), wider beyond (an hour's hint in 600 bins of 6 s, not 36,000 of 100 ms).
DUE_BACK_BINS = 600


@dataclass(frozen=True)
class Lifetime:
    """Maximum connection lifetime, its dither and the close grace — Zuul's defaults (field guide)."""

    max_s: float = 1800.0
    dither_s: float = 180.0
    close_grace_s: float = 4.0
    hint_ms: tuple[int, int] = (0, 5000)


@dataclass
class NodeConfig:
    node_id: str
    host: str = "127.0.0.1"
    port: int = 0
    channel: str = "fleet"
    admission: AdmissionSettings = field(
        default_factory=lambda: AdmissionSettings(
            rate_per_s=None, max_connections=None, retry_after_s=(1, 30)
        )
    )
    signer: TokenSigner = field(default_factory=TokenSigner)
    lifetime: Lifetime = field(default_factory=Lifetime)
    ping_interval_s: float = 20.0
    ping_timeout_s: float = 20.0
    capacity_connections: int = 10_000
    publish_rate_per_s: float = 0.0
    seed: int | None = None


async def publish_forever(history: InProcessHistory | RedisHistory, rate_per_s: float, source: str) -> None:
    """Publish `rate_per_s` messages a second on the schedule, not drifting by the time each one takes.

    Ticks missed while the process stood still (a hang, a long stall) are lost: made up, a 5 s hang at
    10/s sent 51 messages to every client at once at resume — a fan-out spike the feed never had."""
    schedule = Schedule(1 / rate_per_s, time.monotonic() + 1 / rate_per_s)
    failed = 0  # ticks in a row that could not publish
    while True:
        await asyncio.sleep(schedule.wait_s(time.monotonic()))
        schedule.ticked(time.monotonic())
        try:
            await history.publish({"from": source, "t": round(time.time(), 3)})
        except Exception as error:  # a Redis hiccup must not end the stream; the next tick tries again
            # One line when publishing stops and one when it is back: a traceback a tick filled `fleet up`'s
            # terminal with thousands of lines while Redis was away (found in the fault review).
            if not failed:
                log.warning("publish failed: %s: %s; retrying every tick", type(error).__name__, error)
            failed += 1
            continue
        if failed:
            log.warning("publishing again after %d failed ticks", failed)
            failed = 0


class GatewayConnection(ServerConnection):
    """A client connection with what the node remembers about it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.accepted_s = time.monotonic()  # TCP accept: handshake latency is measured from here
        self.client_id = ""
        self.since: int | None = None
        self.since_epoch: str | None = None
        self.handled = False
        self.planned = False
        self.buffer: list[tuple[int, str]] | None = None
        self.expiry: asyncio.TimerHandle | None = None
        self.lifetime_ends_s = 0.0  # on the node's running clock (GatewayNode._running_s)


@dataclass
class DrainRun:
    plan: DrainPlan
    lost_before_s: float  # the node's stalled seconds when the drain began (StallClock.lost_s)
    close_times_s: list[float] = field(default_factory=list)  # the paced closes'
    forced: int = 0  # force-closed at the deadline (not paced: not in the achieved rate)


class GatewayNode:
    def __init__(self, config: NodeConfig, history: InProcessHistory | RedisHistory) -> None:
        self.config = config
        self.history = history
        self.rng = random.Random(config.seed)
        self.admission = Admission(config.admission, self.rng)
        self.meter = Meter(time.time())
        self.state = NodeState.PROVISIONING
        self.stalls = StallClock(time.monotonic())
        self.drain_run: DrainRun | None = None
        self._admitted: set[GatewayConnection] = set()
        self._clients: set[GatewayConnection] = set()  # established and not yet told to leave
        self._live: set[GatewayConnection] = set()  # caught up: receive broadcasts directly
        self._pending: set[GatewayConnection] = set()  # replaying: live messages wait in a buffer
        self._tasks: set[asyncio.Task[object]] = set()
        self._history_away = False  # the history's Redis did not answer the last arriving client
        self._drain_task: asyncio.Task[None] | None = None
        # When each client closed at a drain's pace was told to come back (unix s, a heap): away by design
        # until then. Kept past the drain (an undrain, a new drain) until the last is due.
        self._due_back_s: list[float] = []
        self._publisher: asyncio.Task[None] | None = None
        self._history_check: asyncio.Task[None] | None = None
        self._stall_watch: asyncio.Task[None] | None = None
        self._server: Server | None = None
        self.port = config.port
        # The newest offset the live feed has handed us. With Redis the feed (pub/sub) can trail the
        # history a resuming client just read; a client joins the broadcast only once the feed caught up.
        self._delivered = 0
        self._delivery = asyncio.Event()
        history.subscribe(self._deliver)
        history.on_new_epoch(self._new_epoch)

    # --- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        await self.history.start()
        self._delivered = (await self.history.head())[1]
        self._server = await serve(
            self._handle,
            self.config.host,
            self.config.port,
            process_request=self._admit,
            create_connection=GatewayConnection,
            compression=None,  # a deflate context costs ~100 KB a connection: idle density matters more
            ping_interval=None,  # the node's own keepalive (_keepalive): its timeout counts running time
            close_timeout=2.0,
            max_size=2**16,
            backlog=4096,
            logger=logging.getLogger("stormdeck.gateway.ws"),
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self.stalls.observe(time.monotonic())
        self._stall_watch = asyncio.create_task(self._watch_stalls())
        if self.config.publish_rate_per_s > 0:
            self._publisher = asyncio.create_task(self._publish(self.config.publish_rate_per_s))
        self._history_check = asyncio.create_task(self._check_history())
        self.state = NodeState.READY

    async def stop(self, hint_ms: tuple[int, int] = (0, 1000)) -> None:
        """Shut down: every client gets a reconnect hint and a 1012, then the listener closes."""
        self.state = NodeState.DOWN
        for task in (self._publisher, self._drain_task, self._history_check, self._stall_watch):
            if task is not None:
                task.cancel()
        for conn in list(self._clients):
            self._close_planned(conn, self.rng.randint(*hint_ms), "shutdown")
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=3.0)
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        await self.history.stop()

    async def _watch_stalls(self) -> None:
        """Sight the running loop every tick, so a hang shows as a gap (console/gateway/stall.py)."""
        while True:
            await asyncio.sleep(AWAKE_TICK_S)
            self.stalls.observe(time.monotonic())

    # --- admission, then auth ----------------------------------------------------------------------

    def _admit(self, conn: ServerConnection, request: Request) -> Response | None:
        assert isinstance(conn, GatewayConnection)
        self.meter.attempt(time.time())
        decision = self.admission.decide(time.monotonic(), len(self._admitted), self.state.in_rotation)
        if not decision.admitted:
            assert decision.reason is not None
            self.meter.refused(decision.reason)
            response = conn.respond(http.HTTPStatus.SERVICE_UNAVAILABLE, f"{decision.reason}\n")
            response.headers["Retry-After"] = decision.retry_after_header
            # Integer seconds would bunch retries into 1 s steps; the SDK reads the exact draw.
            response.headers["Retry-After-Ms"] = str(decision.retry_after_ms)
            # Why: a client with the fleet's node list (no load balancer in front) tries another node at
            # once when this one is out of rotation, as a balancer would have sent it there.
            response.headers["Stormdeck-Rejection"] = str(decision.reason)
            return response
        # Auth after admission: this is the handshake cost admission exists to avoid paying for a reject.
        url = urlsplit(request.path)
        if url.path not in ("/", f"/channel/{self.config.channel}"):
            return conn.respond(http.HTTPStatus.NOT_FOUND, f"no channel at {url.path}\n")
        query = parse_qs(url.query)
        client_id = self.config.signer.verify(query.get("token", [""])[0], time.time())
        if client_id is None:
            self.meter.totals.auth_failures += 1
            return conn.respond(http.HTTPStatus.UNAUTHORIZED, "missing or invalid token\n")
        conn.client_id = client_id
        offset, epoch = query.get("offset", [""])[0], query.get("epoch", [""])[0]
        if offset.isdigit() and epoch:
            conn.since, conn.since_epoch = int(offset), epoch
        self._admitted.add(conn)
        conn.connection_lost_waiter.add_done_callback(lambda _: self._release(conn))
        return None

    def _release(self, conn: GatewayConnection) -> None:
        self._admitted.discard(conn)
        if not conn.handled:
            self.meter.totals.timeouts += 1  # admitted, but the client gave up before the handshake ended

    # --- the channel stream ------------------------------------------------------------------------

    def _deliver(self, offset: int, text: str) -> None:
        self._delivered = max(self._delivered, offset)
        self._delivery.set()
        self._delivery = asyncio.Event()
        for conn in self._pending:
            assert conn.buffer is not None
            conn.buffer.append((offset, text))
        broadcast(self._live, text)

    async def _handle(self, conn: ServerConnection) -> None:
        assert isinstance(conn, GatewayConnection)
        conn.handled = True
        self.meter.handshake(1000 * (time.monotonic() - conn.accepted_s))
        conn.buffer = []
        self._clients.add(conn)
        self._pending.add(conn)
        life = self.config.lifetime
        lifetime_s = max(0.0, life.max_s - self.rng.uniform(0, life.dither_s))
        conn.lifetime_ends_s = self._running_s(time.monotonic()) + lifetime_s
        conn.expiry = asyncio.get_running_loop().call_later(lifetime_s, self._expire, conn)
        if self.state is NodeState.DRAINED and self.drain_run is not None:
            # Admitted before the drain began, open only after it ended: nothing else would close it.
            self._close_drained(conn, self.drain_run.plan)
        keepalive = asyncio.create_task(self._keepalive(conn))
        try:
            await self._catch_up(conn)
            async for _ in conn:  # clients only talk in pings; reading keeps the close handshake going
                pass
        except HistoryUnreachable as error:
            # Redis is away: come back later (1013), on the client's own policy. One line while it is
            # away, not a "connection handler failed" traceback a client (found in the fault review).
            if not self._history_away:
                log.warning("%s; closing arriving clients with 1013 until it answers", error)
            self._history_away = True
            await conn.close(1013, "history unavailable")
        except ConnectionClosed:
            # Any close but 1000/1001 raises here — the 1012 of every lifetime, drain and shutdown close
            # among them. It is how a connection ends, not a failure: left to websockets, each was logged
            # as "connection handler failed" with a traceback, ~770 B a close, without bound.
            pass
        finally:
            keepalive.cancel()
            self._clients.discard(conn)
            self._pending.discard(conn)
            self._live.discard(conn)
            conn.expiry.cancel()
            if not conn.planned and conn.close_code in (None, 1006, 1011):
                self.meter.totals.drops += 1

    async def _keepalive(self, conn: GatewayConnection) -> None:
        """A ping every `ping_interval_s`; a client whose pong has not come `ping_timeout_s` later is
        dropped (1011), as websockets' own keepalive does — except that the wait counts the node's running
        time. Under websockets' keepalive a node resumed after a hang dropped every client it had pinged
        just before: their pongs had come in time and waited unread in the node's own socket buffers, but
        the timeouts had passed on the clock (99 of 200 clients with a 1 s ping, their pongs sent within
        0.55 s). Whether a client gives up on a hung node is the client's own timeout."""
        config = self.config
        with contextlib.suppress(ConnectionClosed):
            while True:
                await asyncio.sleep(config.ping_interval_s)
                pong = await conn.ping()
                answer_by_s = self._running_s(time.monotonic()) + config.ping_timeout_s
                while not pong.done() and (left_s := answer_by_s - self._running_s(time.monotonic())) > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(pong), left_s)
                if not pong.done():
                    await conn.close(1011, "keepalive ping timeout")
                    return
                await pong  # a pong, or ConnectionClosed when the connection ended meanwhile

    async def _catch_up(self, conn: GatewayConnection) -> None:
        """Hello, the replayed tail, then what arrived meanwhile — and only then the live broadcast."""
        resuming = conn.since is not None
        replay = await self.history.replay(conn.since, conn.since_epoch)
        if self._history_away:
            log.warning("history answers again: serving arriving clients")
            self._history_away = False
        hello = {
            "type": "hello",
            "node": self.config.node_id,
            "channel": self.config.channel,
            "epoch": replay.epoch,
            "offset": replay.head,
            "recovered": replay.recovered if resuming else None,
            "replayed": len(replay.messages),
        }
        await conn.send(json.dumps(hello))
        last = replay.head
        for _offset, text in replay.messages:
            await conn.send(text)
        assert conn.buffer is not None
        deadline = time.monotonic() + FEED_CATCH_UP_S
        while True:
            while conn.buffer:
                offset, text = conn.buffer.pop(0)
                if offset > last:
                    await conn.send(text)
                    last = offset
            if self._delivered >= last or time.monotonic() > deadline:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._delivery.wait(), max(0.0, deadline - time.monotonic()))
        self._pending.discard(conn)
        conn.buffer = None
        if conn in self._clients:
            self._live.add(conn)

    async def _check_history(self) -> None:
        """Ask the history whether it answers, every `CHECK_EVERY_S`: what `status()` reports."""
        while True:
            await self.history.check()
            await asyncio.sleep(CHECK_EVERY_S)

    async def _publish(self, rate_per_s: float) -> None:
        await publish_forever(self.history, rate_per_s, self.config.node_id)

    # --- planned closes ----------------------------------------------------------------------------

    def _close_planned(
        self, conn: GatewayConnection, after_ms: int, reason: str, grace_s: float = 0.0
    ) -> None:
        conn.planned = True
        self._clients.discard(conn)
        self.meter.totals.closes += 1
        task = asyncio.create_task(self._send_reconnect(conn, after_ms, reason, grace_s))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _close_drained(self, conn: GatewayConnection, plan: DrainPlan) -> None:
        """A drain's paced close, its client's told moment kept (`due_back`). Taken as the close starts:
        the client waits its hint from when the close reaches it, later, so it is never back before."""
        after_ms = plan.hint(self.rng)
        heapq.heappush(self._due_back_s, time.time() + after_ms / 1000.0)
        self._close_planned(conn, after_ms, "drain")

    def due_back(self, now_s: float) -> DueBack | None:
        """The drained clients due back after `now_s` (unix), by bin from it; None with none due and no
        drain (a draining node says so with an empty one: it reports them, an older node would not)."""
        due = self._due_back_s
        while due and due[0] <= now_s:
            heapq.heappop(due)
        if not due and self.drain_run is None:
            return None
        # From the millisecond at or before now: a frame's times carry 3 places, and a start rounded up
        # would put clients due just before it into a bin counted as away after it.
        start_s = math.floor(now_s * 1000.0) / 1000.0
        span_ms = (max(due) - start_s) * 1000.0 if due else 0.0
        bin_ms = WAVE_BIN_MS * max(1, math.ceil(span_ms / (WAVE_BIN_MS * DUE_BACK_BINS)))
        clients = [0] * (math.floor(span_ms / bin_ms) + 1 if due else 0)
        for moment_s in due:
            clients[math.floor((moment_s - start_s) * 1000.0 / bin_ms)] += 1
        return DueBack(start_s=start_s, bin_ms=bin_ms, clients=clients)

    async def _send_reconnect(
        self, conn: GatewayConnection, after_ms: int, reason: str, grace_s: float
    ) -> None:
        try:
            await conn.send(json.dumps({"type": "reconnect", "after_ms": after_ms, "reason": reason}))
            if grace_s > 0:
                # Zuul's close grace: the client may leave on its own before we close.
                await asyncio.wait_for(asyncio.shield(conn.wait_closed()), grace_s)
        except (TimeoutError, Exception):
            pass
        await conn.close(CLOSE_RESTART, reason)

    def _new_epoch(self, epoch: str) -> None:
        """The history restarted: the clients' offsets belong to the old stream, and each message of the
        new one read as a duplicate to them (the SDK dropped them all: 1.4 million in the fault review's
        load run). Each is told to reconnect within the lifetime's hint window, and its resume is answered
        `recovered: false` from the new stream's head."""
        for conn in list(self._clients):
            self._close_planned(conn, self.rng.randint(*self.config.lifetime.hint_ms), "history_reset")

    def _running_s(self, now_s: float) -> float:
        """Seconds on the monotonic clock less those the node stood still (console/gateway/stall.py)."""
        return now_s - self.stalls.observe(now_s)

    def _expire(self, conn: GatewayConnection) -> None:
        # A lifetime counts the time the node ran. Without this, every connection whose lifetime ended
        # during a hang closed in the same loop turn at resume — 209 of 300 after a 6 s SIGSTOP with
        # lifetimes dithered over 8 s — undoing the dither; moved on by the stall, they end as spread out
        # as they were scheduled.
        left_s = conn.lifetime_ends_s - self._running_s(time.monotonic())
        if left_s > 0:
            conn.expiry = asyncio.get_running_loop().call_later(left_s, self._expire, conn)
            return
        if conn in self._clients:
            life = self.config.lifetime
            self._close_planned(conn, self.rng.randint(*life.hint_ms), "lifetime", life.close_grace_s)

    def drain(self, request: DrainRequest) -> DrainProgress:
        """Out of rotation at once; closes start now at the requested rate. A new drain replaces the old."""
        if self._drain_task is not None:
            self._drain_task.cancel()
        self.state = NodeState.DRAINING
        now = time.monotonic()
        self.drain_run = DrainRun(DrainPlan.from_request(request, now), self.stalls.observe(now))
        self._drain_task = asyncio.create_task(self._run_drain(self.drain_run))
        return self.drain_progress()  # type: ignore[return-value]

    def undrain(self) -> None:
        """Cancel a drain: back into rotation; connections already told to leave still leave."""
        if self._drain_task is not None:
            self._drain_task.cancel()
            self._drain_task = None
        self.drain_run = None
        if self.state in (NodeState.DRAINING, NodeState.DRAINED):
            self.state = NodeState.READY

    async def _run_drain(self, run: DrainRun) -> None:
        plan = run.plan
        while self._clients:
            now = time.monotonic()
            if plan.past_deadline(now):  # also when the deadline passed while the node was stalled
                for conn in list(self._clients):  # force-close what remains at the deadline
                    self._close_planned(conn, plan.hint(self.rng), "drain_deadline")
                    run.forced += 1
                break
            # Closes that fell due while the node stood still are not made up: at resume a 3 s hang of
            # a 10/s drain closed 30 connections at once, the very wave a drain exists to prevent.
            lost_s = self.stalls.observe(now) - run.lost_before_s
            while len(run.close_times_s) < plan.due(now, lost_s) and self._clients:
                self._close_drained(self._clients.pop(), plan)
                run.close_times_s.append(now)
            wake = min(plan.next_close_s(len(run.close_times_s), lost_s), plan.deadline_s)
            await asyncio.sleep(max(0.0, wake - time.monotonic()))
        self.state = NodeState.DRAINED

    def drain_progress(self) -> DrainProgress | None:
        if self.drain_run is None:
            return None
        now = time.monotonic()
        run = self.drain_run
        return run.plan.progress(len(self._clients), run.close_times_s, run.forced, now, time.time() - now)

    # --- status ------------------------------------------------------------------------------------

    @property
    def connections(self) -> int:
        return len(self._clients)

    def status(self) -> NodeStatus:
        second = self.meter.latest
        ceiling = self.admission.settings.max_connections
        return NodeStatus(
            id=self.config.node_id,
            state=self.state,
            connections=self.connections,
            cpu_pct=round(second.cpu_pct, 1),
            attempts_per_s=second.attempts_per_s,
            accepts_per_s=second.accepts_per_s,
            rejects_per_s=second.rejects_per_s,
            timeouts_per_s=second.timeouts_per_s,
            handshake_p99_ms=round(second.handshake_p99_ms, 2),
            drops_per_s=second.drops_per_s,
            closes_per_s=second.closes_per_s,
            capacity_connections=ceiling or self.config.capacity_connections,
            drain=self.drain_progress(),
            history_unreachable=self.history.unreachable,
            due_back=self.due_back(time.time()),
        )
