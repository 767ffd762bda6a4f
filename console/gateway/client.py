"""The client SDK: an asyncio reconnecting stream client.

Its delays come from `console.policies` — the same definitions the simulator draws cohorts from, so a
policy's storm on loopback and in the simulator are one policy. On top of the policy it does what the seeds
ask of a good client: it honours the server's `Retry-After` (503) and `reconnect.after_ms` (planned close)
instead of its own schedule, resets its backoff only after a connection has stayed up for the stable
period (so a flapping node does not reset everyone to the fastest retry), and resumes with offset + epoch.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import deque
from dataclasses import InitVar, dataclass, field
from urllib.parse import urlencode

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from console.policies import Backoff, Policy

#: A connection up this long resets the backoff (seconds). Shorter-lived ones keep the client's state.
STABLE_S = 10.0
#: The nodes a client remembers having been served by, newest last (a drain's check reads the last two).
NODES_SEEN_KEPT = 8
#: ClientStats' samples, one per attempt, connect or hint (the report's waves and latency percentiles).
SAMPLE_FIELDS = (
    "attempt_times_s",
    "due_times_s",
    "connect_latency_ms",
    "retry_after_ms",
    "reconnect_times_s",
)


@dataclass
class ClientStats:
    """Counters shared by many clients (the load generator sums a whole process's clients in one).

    The samples keep every entry, or the newest `samples_kept` of each: a load that runs until stopped
    appends one a connection for hours, and only a bound keeps its process from growing with them."""

    attempts: int = 0
    connects: int = 0
    rejects_503: int = 0
    failures: int = 0
    fatal: int = 0
    unauthorized: int = 0  # of the fatal: 401, a token the node cannot verify (another --work-factor?)
    resumes: int = 0
    full_resyncs: int = 0
    messages: int = 0
    gaps: int = 0
    duplicates: int = 0
    planned_reconnects: int = 0
    drops: int = 0
    attempt_times_s: deque[float] = field(default_factory=deque)
    #: When each attempt was due (the end of the delay its client chose), one per attempt as above. One
    #: process playing many clients begins a wave's attempts one after another, later under load: the
    #: due times are the wave the clients made, the attempt times the wave this process could deliver.
    due_times_s: deque[float] = field(default_factory=deque)
    connect_latency_ms: deque[float] = field(default_factory=deque)
    retry_after_ms: deque[int] = field(default_factory=deque)
    reconnect_times_s: deque[float] = field(default_factory=deque)  # when planned-close hints arrived
    samples_kept: InitVar[int | None] = None

    def __post_init__(self, samples_kept: int | None) -> None:
        for name in SAMPLE_FIELDS:
            setattr(self, name, deque(getattr(self, name), maxlen=samples_kept))


@dataclass
class StreamPosition:
    """Where a client is in the channel: the last offset it holds and the epoch it belongs to."""

    epoch: str | None = None
    offset: int | None = None

    def take(self, offset: int, stats: ClientStats) -> None:
        """Count one message by its id: a jump forward is a gap, a step back or repeat a duplicate."""
        stats.messages += 1
        if self.offset is not None:
            if offset <= self.offset:
                stats.duplicates += 1
                return
            if offset > self.offset + 1:
                stats.gaps += offset - self.offset - 1
        self.offset = offset


def retry_after_ms(response_headers: object, rng: random.Random) -> int | None:
    """The server's Retry-After in ms: the exact draw if sent, else whole seconds smeared by U(0, 1 s)
    (integer seconds alone would bring every rejected client back on the same second boundary)."""
    headers = response_headers  # websockets Headers: case-insensitive .get
    exact = headers.get("Retry-After-Ms")  # type: ignore[attr-defined]
    if exact is not None and exact.isdigit():
        return int(exact)
    seconds = headers.get("Retry-After")  # type: ignore[attr-defined]
    if seconds is not None and seconds.isdigit():
        return int(seconds) * 1000 + rng.randrange(1000)
    return None


class StreamClient:
    """One client. `urls` are the fleet's nodes; after any close or failure it moves to another, at random —
    as a load balancer would send it (always the next one piled a drained node's clients onto one node)."""

    def __init__(
        self,
        urls: list[str],
        policy: Policy,
        token: str,
        stats: ClientStats,
        rng: random.Random,
        *,
        stable_s: float = STABLE_S,
        open_timeout_s: float = 10.0,
        ping_interval_s: float | None = 20.0,
        start_index: int | None = None,
    ) -> None:
        self.urls = urls
        self.backoff = Backoff(policy, _rng=rng)
        self.token = token
        self.stats = stats
        self.rng = rng
        self.stable_s = stable_s
        self.open_timeout_s = open_timeout_s
        self.ping_interval_s = ping_interval_s
        self.position = StreamPosition()
        self.url_index = rng.randrange(len(urls)) if start_index is None else start_index
        self.node: str | None = None  # node id from the current connection's hello
        self.nodes_seen: deque[str] = deque(maxlen=NODES_SEEN_KEPT)
        self.connected = asyncio.Event()
        self._ws: ClientConnection | None = None
        # Nodes tried at once in a row after an out-of-rotation refusal: one each, then the Retry-After.
        self._moved_on = 0

    def _url(self) -> str:
        query = {"token": self.token}
        if self.position.offset is not None and self.position.epoch is not None:
            query |= {"offset": str(self.position.offset), "epoch": self.position.epoch}
        return f"{self.urls[self.url_index]}?{urlencode(query)}"

    async def run(self, first_delay_ms: float = 0.0) -> None:
        """Connect, live, reconnect — until cancelled, or a fatal answer (401, 404)."""
        delay_ms: float | None = first_delay_ms
        while delay_ms is not None:
            self.stats.due_times_s.append(time.time() + max(0.0, delay_ms) / 1000)
            if delay_ms > 0:
                await asyncio.sleep(delay_ms / 1000)
            delay_ms = await self._attempt()

    async def close(self) -> None:
        """Close the current connection cleanly (after cancelling `run`)."""
        ws = self._ws
        if ws is not None:
            self._ws = None
            await ws.close()

    async def _attempt(self) -> float | None:
        """One connection attempt and, if it opens, its whole life. Returns the delay before the next."""
        stats = self.stats
        stats.attempts += 1
        started = time.time()
        stats.attempt_times_s.append(started)
        try:
            ws = await connect(
                self._url(),
                open_timeout=self.open_timeout_s,
                ping_interval=self.ping_interval_s,
                ping_timeout=self.ping_interval_s,
                close_timeout=2.0,
                compression=None,
                max_size=2**16,
            )
        except InvalidStatus as error:
            self._next_url()
            if error.response.status_code != 503:
                stats.fatal += 1  # 401, 404: retrying will not help
                stats.unauthorized += error.response.status_code == 401
                return None
            stats.rejects_503 += 1
            out_of_rotation = error.response.headers.get("Stormdeck-Rejection") == "not_in_rotation"
            if out_of_rotation and self._moved_on < len(self.urls) - 1:
                # A draining or drained node: a load balancer would not have sent us there. Its Retry-After
                # is its admission window, meant for a node that is full, not for the fleet.
                self._moved_on += 1
                return 0.0
            self._moved_on = 0
            hinted = retry_after_ms(error.response.headers, self.rng)
            if hinted is None:
                return self.backoff.next_delay_ms()
            stats.retry_after_ms.append(hinted)
            return hinted
        except (OSError, TimeoutError, InvalidHandshake, ConnectionClosed):
            self._moved_on = 0
            stats.failures += 1
            self._next_url()
            return self.backoff.next_delay_ms()
        self._moved_on = 0
        stats.connects += 1
        stats.connect_latency_ms.append(1000 * (time.time() - started))
        opened = time.monotonic()
        self._ws = ws
        after_ms = await self._receive(ws)
        self._ws = None
        if time.monotonic() - opened >= self.stable_s:
            self.backoff.reset()
        self.node = None
        self.connected.clear()
        self._next_url()
        if after_ms is not None:
            stats.planned_reconnects += 1
            return after_ms
        stats.drops += 1
        return self.backoff.next_delay_ms()

    async def _receive(self, ws: ClientConnection) -> int | None:
        """Read until the connection ends; returns the reconnect hint if one came."""
        resuming = self.position.offset is not None
        after_ms: int | None = None
        try:
            async for raw in ws:
                message = json.loads(raw)
                kind = message.get("type")
                if kind == "message":
                    self.position.take(message["offset"], self.stats)
                elif kind == "hello":
                    self._hello(message, resuming)
                elif kind == "reconnect":
                    after_ms = int(message.get("after_ms", 0))
                    self.stats.reconnect_times_s.append(time.time())
        except ConnectionClosed:
            pass
        return after_ms

    def _hello(self, hello: dict[str, object], resuming: bool) -> None:
        if resuming and hello.get("recovered"):
            self.stats.resumes += 1
        else:
            if resuming:
                self.stats.full_resyncs += 1  # the resume window was missed: start over from the head
            self.position = StreamPosition(str(hello["epoch"]), int(hello["offset"]))  # type: ignore[arg-type]
        self.node = str(hello.get("node"))
        self.nodes_seen.append(self.node)
        self.connected.set()

    def _next_url(self) -> None:
        if len(self.urls) > 1:
            self.url_index = (self.url_index + self.rng.randrange(1, len(self.urls))) % len(self.urls)
