"""The load generator's own footprint: a load that runs until stopped (`fleet up`'s) must not grow with the
connections it makes."""

from __future__ import annotations

import asyncio
import os
import signal

from console.gateway import loadgen
from console.gateway.client import NODES_SEEN_KEPT
from console.gateway.loadgen import LoadSpec
from console.gateway.node import Lifetime
from console.gateway.serve import RunningNode
from tests.gateway.conftest import CHEAP_WORK_FACTOR, node_config, wait_for

SAMPLE_LISTS = ("attempt_times_s", "due_times_s", "connect_latency_ms", "reconnect_times_s")


async def test_a_load_until_stopped_keeps_only_its_newest_samples(start_node, monkeypatch) -> None:
    # Each reconnect appended a float to each of these lists and a node id to the client's nodes_seen, for
    # as long as the load ran: a 300-client load on 4 s lifetimes grew ~75 KB/s. Bounded now, the report's
    # percentiles and waves cover the newest samples; its counters still cover the whole run.
    monkeypatch.setattr(loadgen, "UNTIL_STOPPED_SAMPLES", 40, raising=False)
    clients = []
    monkeypatch.setattr(loadgen, "ClientPool", _recording(loadgen.ClientPool, clients))
    before = signal.getsignal(signal.SIGINT)
    life = Lifetime(max_s=0.05, dither_s=0.02, close_grace_s=0.0, hint_ms=(0, 5))
    running: RunningNode = await start_node(node_config(lifetime=life))
    spec = LoadSpec(
        [running.url],
        clients=4,
        policy="full_jitter",
        duration_s=0,
        ramp_s=0.0,
        work_factor=CHEAP_WORK_FACTOR,
    )
    load = asyncio.create_task(loadgen._run_pool(spec))
    await wait_for(lambda: running.node.meter.totals.accepts >= 120, 30.0, "120 connects by 4 clients")
    # Stopped as `fleet up` stops it: a stop signal, answered until the pool has stopped, then handed back.
    assert signal.getsignal(signal.SIGINT) is not before, "the load answers stop signals while it runs"
    os.kill(os.getpid(), signal.SIGINT)
    stats = (await load)["stats"]
    assert signal.getsignal(signal.SIGINT) is before
    # The counter covers the whole run, past the 40 samples kept; the node counts an accept before its client
    # has its handshake back, so each client may have one in flight when the load stops (119 seen in CI).
    assert stats["connects"] >= 120 - spec.clients
    assert {name: len(stats[name]) for name in SAMPLE_LISTS if len(stats[name]) > 40} == {}
    assert len(stats["attempt_times_s"]) == 40
    assert max(len(client.nodes_seen) for client in clients) <= NODES_SEEN_KEPT


def _recording(pool_class: type, clients: list) -> type:
    class Recording(pool_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            clients.extend(self.clients)

    return Recording


def test_a_run_with_no_connects_has_no_connect_latency() -> None:
    """User pass: `loadgen` with no connects printed `connect_p50_ms 0.00` — as if they took no time."""
    import json
    from dataclasses import asdict

    from console.gateway.client import ClientStats

    empty = loadgen.report(ClientStats(attempts=5, failures=5), 10, "fixed", [5], 1.0)
    assert (empty.connect_p50_ms, empty.connect_p99_ms) == (None, None)
    assert json.loads(json.dumps(asdict(empty)))["connect_p99_ms"] is None
    lines = dict(line.split(None, 1) for line in empty.summary().splitlines())
    assert (lines["connect_p50_ms"], lines["connect_p99_ms"]) == ("—", "—")
    some = loadgen.report(ClientStats(connects=3, connect_latency_ms=[3.0, 5.0, 9.0]), 3, "fixed", [3], 1.0)
    assert (some.connect_p50_ms, some.connect_p99_ms) == (5.0, 9.0)


async def test_waiting_for_clients_gives_up_on_a_stall_not_on_a_slow_start() -> None:
    """`stall_s`: a busy machine connects clients slower, not never — the wait lasts while more connect,
    and gives up once none did for `stall_s`, saying how many and for how long."""
    pool = loadgen.ClientPool(["ws://127.0.0.1:9/"], 10, "fixed")  # never started: the test connects them

    async def connect_one_every(interval_s: float, until: int) -> None:
        for client in pool.clients[:until]:
            client.connected.set()
            await asyncio.sleep(interval_s)  # the pace of a slow start, not a wait for anything

    # 10 clients over ~1 s, none more than 0.1 s apart: longer than a stall window of 0.3 s would allow in all.
    feeding = asyncio.create_task(connect_one_every(0.1, 10))
    await pool.wait_connected(10, timeout_s=10, stall_s=0.3)
    await feeding
    for client in pool.clients[5:]:
        client.connected.clear()
    try:
        await pool.wait_connected(10, timeout_s=10, stall_s=0.3)
    except TimeoutError as error:
        assert str(error).startswith("5 of 10 clients connected after") and "none more in 0.3 s" in str(error)
    else:
        raise AssertionError("a pool stuck at 5 of 10 was waited for as if connected")


def test_a_timed_run_keeps_every_sample_up_to_ten_minutes_and_the_newest_past_that() -> None:
    """The 600 s limit on --duration bounded what a timed run keeps (every attempt's times, every connect's
    latency): a day's soak keeps the newest, as a load until stopped does."""
    assert loadgen.samples_kept_for(10.0) is None
    assert loadgen.samples_kept_for(loadgen.KEEP_EVERY_SAMPLE_UP_TO_S) is None
    assert loadgen.samples_kept_for(3600.0) == loadgen.UNTIL_STOPPED_SAMPLES
    assert loadgen.samples_kept_for(0) == loadgen.UNTIL_STOPPED_SAMPLES  # until stopped


def test_a_pools_tokens_outlive_the_longest_run() -> None:
    """Tokens were minted to expire an hour after the pool started: past it every reconnect was refused 401 —
    a day's soak, or `fleet up`'s load (until stopped) after its first hour."""
    import time

    from console.gateway.tokens import TokenSigner

    signer = TokenSigner(work_factor=CHEAP_WORK_FACTOR)
    pool = loadgen.ClientPool(["ws://127.0.0.1:9/"], 3, "fixed", signer=signer)
    later = time.time() + loadgen.MAX_DURATION_S + 3600
    assert all(signer.verify(client.token, later) for client in pool.clients)


def test_attempts_are_binned_from_the_oldest_kept_when_a_timed_run_dropped_some() -> None:
    """A long timed run that kept only its newest attempts bins them from the oldest kept, over the time
    since: binned from its start over its --duration, the first bins read as a quiet start."""
    kept = [1000.0 + k * 0.5 for k in range(4)]
    bins = loadgen.attempt_bins(kept, started_s=0.0, duration_s=3600.0, samples_kept=4, ended_s=1002.0)
    assert bins == loadgen.bin_attempts(kept, 1000.0, 2.0)
    assert sum(bins) == 4 and len(bins) == 20
    every = loadgen.attempt_bins(kept, started_s=1000.0, duration_s=5.0, samples_kept=None, ended_s=1005.0)
    assert len(every) == 50  # a run that kept all: its own length, from its start


def test_worker_pools_that_dropped_attempts_are_added_at_the_runs_end() -> None:
    """Workers of a long timed run each bin from the oldest attempt they kept, so their bins differ in
    length; they all end with the run: added from the end, the last bins are each pool's last."""
    from dataclasses import asdict

    from console.gateway.client import ClientStats

    parts = [
        {"stats": asdict(ClientStats(attempts=3)), "bins": [1, 0, 2]},
        {"stats": asdict(ClientStats(attempts=5)), "bins": [1, 4]},
    ]
    stats, bins = loadgen.merge(parts)
    assert bins == [1, 1, 6] and sum(bins) == stats.attempts
