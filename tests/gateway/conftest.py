"""Fixtures for the gateway tests: in-process nodes and child processes on 127.0.0.1 ephemeral ports."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from console.audit import AuditLog
from console.gateway.controller import Controller
from console.gateway.node import Lifetime, NodeConfig
from console.gateway.processes import NodeProcess, RedisProcess
from console.gateway.serve import RunningNode
from console.gateway.tokens import TokenSigner
from console.protocol import AdmissionSettings
from console.server.app import create_app
from console.server.tokens import parse_tokens

#: Tests that are not about handshake cost use a cheap token so client counts stay affordable on 2 cores.
CHEAP_WORK_FACTOR = 200
CHEAP_SIGNER = TokenSigner(work_factor=CHEAP_WORK_FACTOR)
TOKEN = "controller-token-for-tests"


@asynccontextmanager
async def operator_api(controller: Controller, audit_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The fleet API over `controller`, in process, as an operator (the action routes need no running feed),
    auditing to `audit_path`; the audit log is closed on the way out."""
    audit = AuditLog(audit_path)
    app = create_app(controller, parse_tokens("operator op-token ops\n"), audit_log=audit)
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://fleet",
            headers={"Authorization": "Bearer op-token"},
        ) as api:
            yield api
    finally:
        audit.close()


def node_config(node_id: str = "n1", **overrides: object) -> NodeConfig:
    settings = dict(
        node_id=node_id,
        signer=CHEAP_SIGNER,
        admission=AdmissionSettings(rate_per_s=None, max_connections=None, retry_after_s=(1.0, 2.0)),
        lifetime=Lifetime(),
        seed=7,
    )
    settings.update(overrides)
    return NodeConfig(**settings)  # type: ignore[arg-type]


@pytest.fixture
async def start_node() -> AsyncIterator[Callable[..., object]]:
    """Start in-process nodes (this test's event loop); all are stopped afterwards. `admin_port`: a node's
    again, to stand for its process restarted (a new stream epoch on the same admin URL)."""
    started: list[RunningNode] = []

    async def start(
        config: NodeConfig | None = None, history_url: str | None = None, admin_port: int = 0
    ) -> RunningNode:
        running = RunningNode(config or node_config(), admin_port, history_url=history_url, token=TOKEN)
        await running.start()
        started.append(running)
        return running

    yield start
    for running in started:
        await running.stop()


@pytest.fixture
def node_processes() -> Iterator[Callable[..., NodeProcess]]:
    """Start `stormdeck gateway serve` children; each is stopped (by pid) afterwards."""
    started: list[NodeProcess] = []

    def start(
        node_id: str, *args: str, history: str | None = None, port: int = 0, admin_port: int = 0
    ) -> NodeProcess:
        node = NodeProcess(
            node_id, list(args), token=TOKEN, history=history, port=port, admin_port=admin_port
        )
        started.append(node)
        return node.start()

    yield start
    for node in started:
        node.kill()


#: `stormdeck gateway serve` on any free ports, as the CLI tests start it (add the option under test).
SERVE_ARGV = ["gateway", "serve", "--port", "0", "--admin-port", "0", "--node-id", "a"]


#: .ci/run installs redis-server; elsewhere the tests that need it say so instead of failing.
needs_redis = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="needs redis-server (see .ci/run)"
)


@pytest.fixture
def redis_server() -> Iterator[RedisProcess]:
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server (apt-get install -y redis-server; .ci/run does)")
    server = RedisProcess().start()
    yield server
    server.stop()


async def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll a condition until it holds — the tests' only way of waiting."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(0.02)


async def wait_while_progressing(
    condition: Callable[[], bool], progress: Callable[[], object], stall_s: float, cap_s: float, what: str
) -> float:
    """Poll a condition until it holds, failing once `progress()` has not changed for `stall_s` (or after
    `cap_s` in all). For waits whose length is the harness's speed: one process playing thousands of
    clients on a loaded machine moves them late, but a stuck move still fails `stall_s` after it stops.
    Returns the seconds waited."""
    started = time.monotonic()
    last, moved = progress(), started
    while not condition():
        now = time.monotonic()
        if (seen := progress()) != last:
            last, moved = seen, now
        if now - moved > stall_s or now - started > cap_s:
            stalled = f"no progress for {now - moved:.1f} s" if now - moved > stall_s else f"cap {cap_s} s"
            raise AssertionError(f"timed out after {now - started:.1f} s ({stalled}) waiting for {what}")
        await asyncio.sleep(0.02)
    return time.monotonic() - started
