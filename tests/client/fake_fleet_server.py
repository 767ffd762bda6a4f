"""A tiny in-test fleet stream server (websockets, loopback, ephemeral port).

It speaks the stream contract of `stormdeck sim serve` (hello, frames with seq/epoch, `?since=&epoch=`
resume from a bounded history, Bearer auth, 401 without a token) from the synthetic fleet, and lets a test
script what the real server will not do on demand: garbage, drops, a stop and a restart on the same port.
tests/ui/test_live_server.py runs the real server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from console.client.synthetic import SyntheticFleet

TOKEN = "test-token-123"


class FakeFleetServer:
    def __init__(
        self, nodes: int = 6, interval_s: float = 0.02, history: int = 50, epoch: str = "e1"
    ) -> None:
        self.fleet = SyntheticFleet(nodes=nodes, storm_at_s=None, epoch=epoch)
        self.interval_s = interval_s
        self.history_limit = history
        self.history: list[str] = []
        self.epoch = epoch
        self.port = 0
        self.server = None
        self.requests: list[tuple[str, str | None]] = []  # (path with query, Authorization)
        self.garbage: list[str] = []  # sent before the next frame, once
        self.drop_after: int | None = None  # frames sent on a connection before the server aborts it

    def _auth(self, connection: ServerConnection, request: Request) -> Response | None:
        header = request.headers.get("Authorization")
        self.requests.append((request.path, header))
        if header != f"Bearer {TOKEN}":
            return connection.respond(HTTPStatus.UNAUTHORIZED, "missing or wrong token\n")
        return None

    def restart_history(self, epoch: str) -> None:
        self.epoch = epoch
        self.fleet = SyntheticFleet(nodes=len(self.fleet.ids), storm_at_s=None, epoch=epoch)
        self.history = []

    async def _handler(self, ws: ServerConnection) -> None:
        # the client going away, or the server stopping, is part of these tests
        with contextlib.suppress(ConnectionClosed):
            await self._stream(ws)

    async def _stream(self, ws: ServerConnection) -> None:
        query = parse_qs(urlsplit(ws.request.path).query)
        since = int(query["since"][0]) if "since" in query else None
        epoch = query.get("epoch", [None])[0]
        oldest = self.fleet.seq - len(self.history) + 1
        recovered = None
        replay: list[str] = []
        if since is not None:
            recovered = epoch == self.epoch and since + 1 >= oldest
            if recovered:
                replay = self.history[since - oldest + 1 :]
        await ws.send(json.dumps(self.fleet.hello(recovered)))
        for raw in replay:
            await ws.send(raw)
        sent = 0
        while True:
            for bad in self.garbage:
                await ws.send(bad)
            self.garbage = []
            frame = json.dumps(self.fleet.next_frame())
            self.history = [*self.history, frame][-self.history_limit :]
            await ws.send(frame)
            sent += 1
            if self.drop_after is not None and sent >= self.drop_after:
                ws.transport.abort()  # no close frame: the client sees 1006
                return
            await asyncio.sleep(self.interval_s)

    async def start(self) -> None:
        self.server = await serve(self._handler, "127.0.0.1", self.port, process_request=self._auth)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        self.server.close()
        await self.server.wait_closed()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


async def wait_for(condition, timeout_s: float = 10.0, what: str = "condition") -> None:
    """Poll a condition until it holds; fail with `what` after `timeout_s` (no bare sleeps in tests)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)
