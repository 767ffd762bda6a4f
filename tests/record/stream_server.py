"""A tiny fleet stream for the recorder's tests: the /v1/stream protocol over recorded simulator ticks.

Not the real server (console/server, branch `server`): just enough of the contract — bearer token, hello,
each tick's events then its frame (all tagged with the frame's seq), resume with `?since=&epoch=`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response

from console.protocol import Hello, Source
from tests.record.conftest import Tick

TOKEN = "viewer-token-for-tests"


@dataclass
class FleetStream:
    ticks: list[Tick]
    #: Close the connection after sending this many frames in it (None: keep it open at the end).
    drop_after_frames: int | None = None
    epoch: str = "sim"
    resumes: list[tuple[str | None, str | None]] = field(default_factory=list)
    url: str = ""

    def _authorize(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return connection.respond(HTTPStatus.UNAUTHORIZED, "a viewer token is needed\n")
        return None

    async def _handle(self, connection: ServerConnection) -> None:
        query = parse_qs(urlsplit(connection.request.path).query)
        since = query.get("since", [None])[0]
        epoch = query.get("epoch", [None])[0]
        self.resumes.append((since, epoch))
        recovered = since is not None and epoch == self.epoch
        start = int(since) if recovered else 0
        hello = Hello(
            fleet="stream-fleet",
            source=Source.SIMULATOR,
            epoch=self.epoch,
            seq=self.ticks[-1].frame.seq,
            recovered=recovered if since is not None else None,
        )
        await connection.send(hello.model_dump_json())
        sent = 0
        for tick in self.ticks:
            if tick.frame.seq <= start:
                continue
            for event in tick.events:
                await connection.send(
                    event.model_copy(update={"seq": tick.frame.seq, "epoch": self.epoch}).model_dump_json()
                )
            await connection.send(tick.frame.model_dump_json())
            sent += 1
            if self.drop_after_frames is not None and sent >= self.drop_after_frames:
                return  # the server goes away mid-stream
        await connection.wait_closed()

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[FleetStream]:
        async with serve(
            self._handle, "127.0.0.1", 0, process_request=self._authorize, max_size=None
        ) as server:
            host, port = next(iter(server.sockets)).getsockname()[:2]
            self.url = f"http://{host}:{port}"
            yield self
            server.close()
            await asyncio.wait_for(server.wait_closed(), 5)
