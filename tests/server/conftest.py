"""A real uvicorn serving the fleet API on 127.0.0.1 (ephemeral port), over the scripted fleet."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection

from console.server.app import create_app
from console.server.runner import ServerThread
from console.server.tokens import parse_tokens
from tests.server.fleet_fixture import ScriptedFleet

TOKENS = {
    "viewer": "viewer-token-0123456789",
    "operator": "operator-token-0123456789",
    "admin": "admin-token-0123",
}
TOKEN_FILE = "\n".join(f"{role} {token} {role}-person" for role, token in TOKENS.items())

#: Frames every 50 ms: the tests see a second's worth of behaviour in a twentieth of one.
FAST_FRAME_INTERVAL_S = 0.05
HISTORY_FRAMES = 40
REPLAY_CAP_FRAMES = 20


@dataclass
class Live:
    url: str
    fleet: ScriptedFleet
    server: ServerThread

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://") + "/v1/stream"

    @property
    def feed(self) -> Any:
        return self.server.app.state.feed


def auth(role: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[role]}"}


def start_live(**options: Any) -> Live:
    fleet = ScriptedFleet(nodes=options.pop("nodes", 4))
    app = create_app(
        fleet,
        parse_tokens(TOKEN_FILE),
        frame_interval_s=options.pop("frame_interval_s", FAST_FRAME_INTERVAL_S),
        history_frames=options.pop("history_frames", HISTORY_FRAMES),
        replay_cap_frames=options.pop("replay_cap_frames", REPLAY_CAP_FRAMES),
        **options,
    )
    server = ServerThread(app).start()
    return Live(server.url, fleet, server)


@pytest.fixture
def live() -> Iterator[Live]:
    running = start_live()
    yield running
    running.server.stop()


async def receive(ws: ClientConnection, timeout_s: float = 5.0) -> dict[str, Any]:
    import asyncio

    return json.loads(await asyncio.wait_for(ws.recv(), timeout_s))


async def receive_until(ws: ClientConnection, predicate, timeout_s: float = 5.0) -> list[dict[str, Any]]:
    """Every message up to and including the first that satisfies `predicate`."""
    seen = []
    while True:
        message = await receive(ws, timeout_s)
        seen.append(message)
        if predicate(message):
            return seen
