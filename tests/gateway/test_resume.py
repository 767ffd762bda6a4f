"""Resume across a gateway restart: with Redis history clients recover; in-process, they cannot."""

from __future__ import annotations

import pytest

from console.gateway.loadgen import ClientPool
from console.policies import make_policy
from tests.gateway.conftest import CHEAP_SIGNER, CHEAP_WORK_FACTOR, wait_for

pytestmark = pytest.mark.timeout(90)

CLIENTS = 100


@pytest.mark.parametrize("redis_history", [True, False], ids=["redis", "in_process"])
async def test_resume_across_restart(node_processes, redis_server, redis_history: bool) -> None:
    history = redis_server.url if redis_history else None
    args = ("--work-factor", str(CHEAP_WORK_FACTOR), "--publish-rate-per-s", "20")
    node = node_processes("gw", *args, history=history)
    # Retry every 200 ms: the restart takes about a second, and this test is about resume, not backoff.
    pool = ClientPool([node.url], CLIENTS, make_policy("fixed", {"delay_ms": 200}), signer=CHEAP_SIGNER)
    pool.start()
    try:
        await pool.wait_connected(CLIENTS, timeout_s=20)
        await wait_for(lambda: pool.stats.messages >= CLIENTS * 10, 10, "messages flowing")
        node.stop()  # SIGTERM: reconnect hints, 1012s, exit
        restarted = node_processes("gw", *args, history=history, port=node.port)
        await wait_for(
            lambda: (
                all(c.node == "gw" for c in pool.clients)
                and pool.stats.resumes + pool.stats.full_resyncs >= CLIENTS
            ),
            20,
            "every client back after the restart",
        )
        received = pool.stats.messages
        await wait_for(lambda: pool.stats.messages >= received + CLIENTS * 5, 10, "messages flowing again")
        assert restarted.status()["connections"] == CLIENTS
    finally:
        await pool.stop()
    stats = pool.stats
    if redis_history:
        assert (stats.resumes, stats.full_resyncs) == (CLIENTS, 0)
        assert stats.gaps == 0 and stats.duplicates == 0
    else:
        assert (stats.resumes, stats.full_resyncs) == (0, CLIENTS)  # a new epoch: recovered: false
