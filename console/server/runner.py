"""Running the fleet API under uvicorn: in the foreground for `sim serve`, or in a thread for tests.

The socket is bound before uvicorn starts, so the port (ephemeral or not) is known at once, and the
server says it is ready only once the app's lifespan has started the feed and the socket accepts.
"""

from __future__ import annotations

import asyncio
import concurrent.futures.thread  # noqa: F401 (registers its exit hook before ours: ours runs first)
import contextlib
import ipaddress
import logging
import socket
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator

import uvicorn
from fastapi import FastAPI

from console.stop_signals import answering_stop_signals

#: How long shutdown waits for open streams to finish before it closes them.
GRACEFUL_SHUTDOWN_S = 3
#: After a forced exit, how long the app's own shutdown (stopping the feed) may take.
FORCED_SHUTDOWN_S = 3.0


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: uvicorn's default; its `create_server(sock=…)` listens again with the same.
LISTEN_BACKLOG = 2048


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host:port` (port 0: the OS picks a free one).

    It listens at once: with SO_REUSEADDR, `bind` succeeds on a port another socket has bound but not
    yet listened on, and the clash would only surface later, inside the server's start-up task."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


class _Server(uvicorn.Server):
    """uvicorn's server, telling us when it is ready and leaving signals to its caller."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if not self.should_exit:
            self._on_ready()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets=sockets)
        # A forced exit (a second Ctrl-C) skips the app's own shutdown in uvicorn; `asyncio.run` then
        # cancelled the waiting lifespan, which uvicorn logged as an ERROR traceback, and the feed was never
        # stopped. A second Ctrl-C means "stop waiting for open streams", not "skip the cleanup": the feed
        # stops here too, bounded in time.
        done = getattr(self.lifespan, "shutdown_event", None)
        if self.force_exit and done is not None and not done.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.lifespan.shutdown(), FORCED_SHUTDOWN_S)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn re-raises a captured SIGTERM after shutdown, which would kill us before our own cleanup
        # (the token file); `serve_foreground` handles the signals instead.
        yield


class DenialIsNotAnError(logging.Filter):
    """Drops uvicorn's "ASGI callable returned without completing handshake." after a refused upgrade.

    A stream refused before its handshake (401 without a token, 422 for a bad resume) is answered with a
    problem+json through the ASGI denial-response extension; uvicorn's websockets-sansio protocol sends
    it but never marks the handshake done, and logs an ERROR for every refused client (uvicorn PR #3138,
    open) — a wrong-token console reconnecting read as a server fault in `fleet up`'s log. Every
    WebSocket route here accepts or denies before it returns, so that message means only this."""

    MESSAGE = "ASGI callable returned without completing handshake."

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != self.MESSAGE


def quiet_denials() -> None:
    """Install `DenialIsNotAnError` on uvicorn's error log (once)."""
    log = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, DenialIsNotAnError) for f in log.filters):
        log.addFilter(DenialIsNotAnError())


def _config(app: FastAPI) -> uvicorn.Config:
    quiet_denials()
    return uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        # Compression is per connection: fifty clients would compress the same 2000-node frame fifty
        # times. Frames go over loopback or a LAN; CPU is the scarcer resource.
        ws_per_message_deflate=False,
        ws_max_size=64 * 1024,  # clients send nothing but control frames on the stream
    )


def serve_foreground(
    app: FastAPI,
    sock: socket.socket,
    on_ready: Callable[[], None],
    watch: Callable[[Callable[[], bool]], Awaitable[bool]] | None = None,
) -> int:
    """Serve until SIGINT, SIGTERM or SIGHUP, then shut down cleanly. Returns the exit status: 0, or 1 when the
    server never started (uvicorn has logged why) or `watch` ended it.

    `watch(stopping)` runs alongside on the server's loop (`fleet up` watches its children there);
    `stopping()` says whether the server is shutting down. When it returns True the server shuts down as
    on SIGTERM, and the status is 1."""
    server = _Server(_config(app), on_ready)
    watched_out = False

    async def watching(watch: Callable[[Callable[[], bool]], Awaitable[bool]]) -> None:
        nonlocal watched_out
        if await watch(lambda: server.should_exit):
            watched_out = server.should_exit = True

    async def run() -> None:
        task = asyncio.create_task(watching(watch)) if watch is not None else None
        try:
            await server.serve(sockets=[sock])
        finally:
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    # Answered until the loop is closed too: a press while it closes only sets the flags again.
    with answering_stop_signals(lambda: _request_exit(server)):
        asyncio.run(run())
    return 0 if server.started and not watched_out else 1


def _request_exit(server: uvicorn.Server) -> None:
    if server.should_exit:
        server.force_exit = True  # a second Ctrl-C: stop waiting for open streams
    server.should_exit = True


#: Servers started in this process and not yet stopped (weak: a forgotten one is not kept alive by this).
_RUNNING: weakref.WeakSet[ServerThread] = weakref.WeakSet()


def _stop_servers_at_exit() -> None:
    """Stop what is still served, before the interpreter shuts its thread pools at exit.

    Python's exit hooks (`threading._register_atexit`, run in reverse order before `atexit`'s) shut every
    ThreadPoolExecutor down, the event loop's default executor too. A server still running then — never
    stopped, or stopped from `atexit` — kept its feed ticking, and every tick's `asyncio.to_thread` was
    refused: "tick failed (N in a row) … cannot schedule new futures after shutdown", a traceback a
    second, though nothing had failed. Stopped here, the feed stops first, while its pool still works."""
    for server in list(_RUNNING):
        with contextlib.suppress(Exception):  # an exit hook that raises prints a traceback of its own
            server.stop()


# CPython's hook for this (concurrent.futures uses it); `atexit` runs after the pools are shut. Private: where
# it is missing, an unstopped server logs its failed ticks at exit, as before, and nothing else changes.
_register_exit_hook = getattr(threading, "_register_atexit", None)
if _register_exit_hook is not None:
    _register_exit_hook(_stop_servers_at_exit)


class ServerThread:
    """The app served from a background thread, for tests and benchmarks; a context manager. One still
    running when the interpreter exits is stopped then, before the thread pools its feed uses."""

    def __init__(self, app: FastAPI, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self._sock = bind_socket(host, port)
        self.url = base_url(self._sock)
        self._ready = threading.Event()
        self._server = _Server(_config(app), self._ready.set)
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="stormdeck-server", daemon=True)

    def _run(self) -> None:
        try:
            asyncio.run(self._server.serve(sockets=[self._sock]))
        except BaseException as error:  # surfaced to the starting thread by `start`
            self._failure = error
        finally:
            self._ready.set()

    def start(self, timeout_s: float = 10.0) -> ServerThread:
        _RUNNING.add(self)
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise TimeoutError(f"server at {self.url} not ready within {timeout_s} s")
        if self._failure is not None or not self._thread.is_alive():
            raise RuntimeError(f"server at {self.url} failed to start") from self._failure
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        _RUNNING.discard(self)
        self._server.should_exit = True
        self._thread.join(timeout_s)
        self._sock.close()
        if self._thread.is_alive():
            raise TimeoutError(f"server at {self.url} did not stop within {timeout_s} s")

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
