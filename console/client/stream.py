"""The stream client: one WebSocket to `/v1/stream`, kept alive across server restarts.

It reconnects with full-jitter backoff (interview seed: U(0, min(cap, base × 2^n))) so that a thousand
consoles do not come back in lockstep — the console must not be one more client in the storm — and
resumes with `?since=SEQ&epoch=E` so the server can replay what was missed.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode, urlsplit, urlunsplit

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from console.client.decode import StreamDecoder
from console.model.link import LinkState, LinkStatus, Malformed, Received, StreamItem
from console.policies import Backoff, FullJitter, Policy
from console.protocol import Frame, Hello

#: The console's own reconnect policy: 0.5 s base, 30 s cap, full jitter.
CONSOLE_BACKOFF = FullJitter(base_ms=500.0, multiplier=2.0, max_ms=30_000.0)

#: 2000 nodes make ~0.5 MB frames; leave room for larger fleets.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024


def stream_url(base_url: str, since: int | None = None, epoch: str | None = None) -> str:
    """http(s)://host:port[/prefix] → ws(s)://host:port[/prefix]/v1/stream[?since=&epoch=]."""
    parts = urlsplit(base_url if "://" in base_url else f"http://{base_url}")
    scheme = {"https": "wss", "wss": "wss"}.get(parts.scheme, "ws")
    path = parts.path.rstrip("/")
    if not path.endswith("/v1/stream"):
        path += "/v1/stream"
    query = urlencode({"since": since, "epoch": epoch}) if since is not None and epoch is not None else ""
    return urlunsplit((scheme, parts.netloc, path, query, ""))


#: What a refused stream means for the person at the console, and what to do about it.
_REFUSALS = {
    401: "the token was not accepted — check --token-file or STORMDECK_TOKEN",
    403: "this token may not read the stream — ask for a viewer token",
}


#: Close codes a server sends when it stops (1001 going away; 1012 service restart: uvicorn's shutdown).
_SERVER_STOPPING = frozenset({1001, 1012})


def lost_reason(error: Exception) -> str:
    """Why a stream ended, for the operator: a server's own stop in words ("received 1012 (service
    restart); then sent 1012 …" was what `fleet up` stopping read as), a refused or unanswered connect
    too ("ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 1)"), anything else as it
    came."""
    if isinstance(error, ConnectionClosed) and error.rcvd is not None and error.rcvd.code in _SERVER_STOPPING:
        return f"the server closed the stream: it is stopping or restarting ({error.rcvd.code})"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return f"no such host ({error.strerror or error})"
    if isinstance(error, TimeoutError):
        return "no answer (timed out)"
    return f"{type(error).__name__}: {error}"[:120]


async def first_done(*awaitables: Awaitable[object]) -> list[asyncio.Task[object]]:
    """Wait for the first of `awaitables` to finish, cancel the rest and let them end; the tasks come
    back so the caller can read how each ended (a result, an exception, cancelled)."""
    tasks = [asyncio.ensure_future(awaitable) for awaitable in awaitables]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return tasks


class StreamClient:
    def __init__(
        self,
        base_url: str,
        token: str,
        policy: Policy = CONSOLE_BACKOFF,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.base_url = base_url
        self._token = token
        self.backoff = Backoff(policy, _rng=rng or random.Random())
        self.clock = clock
        self.sleep = sleep
        self.decoder = StreamDecoder()
        self.epoch: str | None = None
        self.last_seq: int | None = None
        self.connects = 0
        self._retry_now = asyncio.Event()

    async def run(self, sink: Callable[[StreamItem], None]) -> None:
        """Forever: connect, pass every item to `sink`, and on any failure back off and resume."""
        attempt = 0
        while True:
            sink(LinkStatus(LinkState.CONNECTING, attempt, at_s=self.clock()))
            reason, refused = await self._session(sink)
            attempt += 1
            delay_s = self.backoff.next_delay_ms() / 1000.0
            state = LinkState.REFUSED if refused else LinkState.RECONNECTING
            # (reached: a stream was had once; before that, a failure is a fleet not reached yet, not lost)
            sink(LinkStatus(state, attempt, delay_s, reason, at_s=self.clock(), reached=self.connects > 0))
            await self._wait(delay_s)

    def retry_now(self) -> None:
        """Cut the current backoff short (the operator knows the server is back: the full-jitter delay
        can be half a minute). No effect while connected."""
        self._retry_now.set()

    async def _wait(self, delay_s: float) -> None:
        self._retry_now.clear()
        await first_done(self.sleep(delay_s), self._retry_now.wait())

    async def _session(self, sink: Callable[[StreamItem], None]) -> tuple[str, bool]:
        url = stream_url(self.base_url, self.last_seq, self.epoch)
        headers = {"Authorization": f"Bearer {self._token}"}
        try:
            async with connect(
                url, additional_headers=headers, max_size=MAX_MESSAGE_BYTES, open_timeout=10
            ) as ws:
                self.connects += 1
                async for raw in ws:
                    self._receive(raw, sink)
                return f"closed by the server ({ws.close_code})", False
        except InvalidStatus as error:
            status = error.response.status_code
            if status in (401, 403):
                return f"HTTP {status}: {_REFUSALS[status]}", True
            return f"HTTP {status}", False
        except (OSError, WebSocketException, TimeoutError) as error:
            return lost_reason(error), False

    def _receive(self, raw: str | bytes, sink: Callable[[StreamItem], None]) -> None:
        message = self.decoder.feed(raw)
        now_s = self.clock()
        if message is None:
            sink(Malformed(self.decoder.counts.last_reason or "malformed", now_s))
            return
        sink(Received(message, now_s))
        if isinstance(message, Hello):
            if message.epoch != self.epoch:
                self.last_seq = None
            self.epoch = message.epoch
            self.backoff.reset()
            sink(LinkStatus(LinkState.LIVE, at_s=now_s))
        elif isinstance(message, Frame):
            self.epoch = message.epoch
            self.last_seq = message.seq
