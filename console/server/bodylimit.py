"""A bound on request bodies, before anything reads them.

A body reaches the server before any route has checked its token (routes check it before FastAPI parses the
body: `auth.TokenFirstRoute`, so an anonymous caller gets 401, never a 422 about the body), and FastAPI
reads a body whole before it parses it — so without a bound anyone who can reach the port could make the
server hold a body of any size (300 MB sent without a token grew `sim serve` by 600 MB). The largest body the API takes
is an admission change naming every node of the largest fleet (10 000 ids: ~200 KB); `MAX_BODY_BYTES`
leaves room for that and refuses anything larger with 413 problem+json, read no further.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from console.protocol import Problem
from console.server.problems import PROBLEM_MEDIA_TYPE

#: The most bytes a request body may have (1 MiB).
MAX_BODY_BYTES = 1024 * 1024
#: Read and thrown away before a 413, so a client still sending its body gets the answer: a server that
#: closes with unread bytes resets the connection, and the client loses the 413 with it (a test saw
#: httpx's ReadError instead, now and then). Past this, the 413 goes out at once, reset or not.
DISCARD_BYTES = 16 * MAX_BODY_BYTES


class BodyLimit:
    """ASGI middleware: a request whose body exceeds `max_bytes` is answered 413 without being held.

    A declared `Content-Length` over the bound is refused without holding a byte of the body; a body sent
    without one (chunked) is read up to the bound, held, and handed on only once it ended within it. Before
    a 413, up to `DISCARD_BYTES` of what is still coming is read and dropped, so the client reads the 413."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            if int(declared) <= DISCARD_BYTES:
                await _discard(receive, DISCARD_BYTES)
            await self._refuse(scope, send, f"a Content-Length of {int(declared)} bytes")
            return
        held: list[Message] = []
        size = 0
        while True:
            message = await receive()
            held.append(message)
            if message["type"] != "http.request":
                break  # a disconnect: the app hears it as it would have
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                held.clear()
                if message.get("more_body", False):
                    await _discard(receive, DISCARD_BYTES - size)
                await self._refuse(scope, send, f"more than {self.max_bytes} bytes")
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return held.pop(0) if held else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, send: Send, what: str) -> None:
        problem = Problem(
            title="Content too large",
            status=413,
            detail=f"body: {what}; a request body may have at most {self.max_bytes} bytes",
            field="body",
            instance=scope.get("path"),
        )
        body = problem.model_dump_json(exclude_none=True).encode()
        headers = [
            (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),  # the rest of the body is not read; the connection cannot go on
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def _discard(receive: Receive, budget: int) -> None:
    """Read what the client is still sending, holding none of it, until it ends or `budget` is spent."""
    while budget > 0:
        message = await receive()
        if message["type"] != "http.request":
            return
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return
