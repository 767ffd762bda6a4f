"""Run one gateway node: the client-facing WebSocket server, the admin API, and the 1 s frame ticker.

`RunningNode` is what both the CLI and the tests use (in-process on 127.0.0.1, ephemeral ports), so the
tests exercise exactly what `stormdeck gateway serve` runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import sys
import time
from collections.abc import Iterator

import uvicorn

from console.errors import InputError, StormdeckError
from console.gateway.admin import create_admin_app, node_frame
from console.gateway.framelog import FrameLog
from console.gateway.history import open_history
from console.gateway.node import GatewayNode, NodeConfig
from console.gateway.stall import next_frame_s
from console.server.runner import bind_socket
from console.stop_signals import answering_stop_signals, soon
from console.userfiles import read_user_text, warn_if_others_may_read

log = logging.getLogger("stormdeck.gateway")


class _AdminServer(uvicorn.Server):
    """uvicorn without its own signal handling: the node owns SIGTERM and shuts down in order."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def read_token_file(path: str, field: str = "--token-file") -> str:
    """The controller's token: the first non-empty line of the file (`field` is the option naming it)."""
    for line in read_user_text(field, path).splitlines():
        if line.strip():
            warn_if_others_may_read(field, path)
            return line.strip()
    raise InputError(field, path, "a file whose first non-empty line is the controller's token")


class RunningNode:
    def __init__(
        self,
        config: NodeConfig,
        admin_port: int = 0,
        history_url: str | None = None,
        token: str | None = None,
    ) -> None:
        self.node = GatewayNode(config, open_history(history_url, config.channel))
        self.frames = FrameLog()
        self.token = token or secrets.token_urlsafe(24)
        self._admin_socket = bind_socket(config.host, admin_port)  # a taken port fails here, not in a task
        self.admin_port: int = self._admin_socket.getsockname()[1]
        app = create_admin_app(self.node, self.frames, self.token)
        self._admin = _AdminServer(
            uvicorn.Config(app, log_level="warning", lifespan="off", ws="websockets-sansio", access_log=False)
        )
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def port(self) -> int:
        return self.node.port

    @property
    def url(self) -> str:
        return f"ws://{self.node.config.host}:{self.node.port}/channel/{self.node.config.channel}"

    @property
    def admin_url(self) -> str:
        return f"http://{self.node.config.host}:{self.admin_port}"

    async def start(self) -> None:
        try:
            await self.node.start()
        except OSError:
            self._admin_socket.close()
            raise
        admin = asyncio.create_task(self._admin.serve(sockets=[self._admin_socket]))
        self._tasks.append(admin)
        self._tasks.append(asyncio.create_task(self._tick()))
        while not self._admin.started:
            if admin.done():  # uvicorn's start-up failed: say why instead of waiting for ever
                await self.stop()
                failure = admin.exception()
                raise StormdeckError(
                    f"the admin API on {self.admin_url} did not start: {failure}"
                ) from failure
            await asyncio.sleep(0.01)

    async def _tick(self) -> None:
        """One frame a second, at each whole second of the wall clock (`next_frame_s`): every node of a
        fleet takes its frame at the same instant, so the controller folds counts taken together. On its
        own schedule from its start, each node's frame was up to a second apart from the others': a client
        that moved between them in that second was counted on neither, or — read against the drained
        clients due back — twice. After a hang (SIGSTOP … SIGCONT) one frame covers it: the frames missed
        are not sent at once (each rolled the meter over a few microseconds: CPU read 99–101 %)."""
        due_s = math.floor(time.time()) + 1.0
        while True:
            await asyncio.sleep(max(0.0, due_s - time.time()))
            self.frames.append(node_frame(self.node, self.frames).model_dump_json())
            due_s = next_frame_s(due_s, time.time())

    async def stop(self) -> None:
        for task in self._tasks[1:]:
            task.cancel()
        await self.node.stop()
        self._admin.should_exit = True
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._admin_socket.close()


async def serve_until_signalled(running: RunningNode, say_token: bool = False) -> None:
    """Serve `running` until a stop signal; `say_token`: print the controller token it made (no
    --token-file), once it serves."""
    stop = asyncio.Event()
    with answering_stop_signals(soon(asyncio.get_running_loop(), stop.set)):
        try:
            await running.start()
        except OSError as error:
            config = running.node.config
            allowed = f"a free port on {config.host} ({error.strerror or error})"
            raise InputError("--port", config.port, allowed) from None
        if say_token:
            print(f"controller token (no --token-file given): {running.token}", file=sys.stderr, flush=True)
        print(
            f"gateway {running.node.config.node_id}: clients {running.url}  admin {running.admin_url}",
            flush=True,
        )
        await stop.wait()
        await running.stop()
