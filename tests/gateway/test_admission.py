"""Admission on a real node process: 5,000 attempts in about a second against a node limited to 200/s."""

from __future__ import annotations

import asyncio
import itertools
import random
import statistics
import time

import pytest

from console.gateway.bench import REJECT_ALL, fire, measure_costs, set_admission
from console.gateway.client import ClientStats, StreamClient
from console.gateway.loadgen import bin_attempts
from console.gateway.tokens import TokenSigner
from console.policies import make_policy
from console.waves import lockstep_index
from tests.gateway.conftest import CHEAP_SIGNER, CHEAP_WORK_FACTOR, wait_for

pytestmark = pytest.mark.timeout(90)

RATE_PER_S, BURST, WINDOW_S = 200, 50, (1.0, 3.0)


async def test_excess_gets_503_with_a_spread_retry_after(node_processes) -> None:
    # A cheap token here: this test is about the rate, so the node must be able to afford the admitted
    # handshakes on a shared 2-core machine; the cost ratio is measured below with the real work factor.
    node = node_processes(
        "admission",
        *("--rate-per-s", str(RATE_PER_S), "--burst", str(BURST), "--retry-after-s", *map(str, WINDOW_S)),
        *("--work-factor", str(CHEAP_WORK_FACTOR)),
    )
    token = CHEAP_SIGNER.mint("flood", time.time() + 600)
    answers = await fire(node, token, 5000, over_s=1.0, concurrency=5000)
    first_s = min(a.started_s for a in answers)
    fired_s = max(a.started_s for a in answers) - first_s
    span_s = max(a.started_s + a.elapsed_ms / 1000 for a in answers) - first_s
    admitted = [a for a in answers if a.status == 101]
    rejected = [a for a in answers if a.status == 503]
    assert len(admitted) + len(rejected) == 5000, {a.status for a in answers}
    print(f"fired over {fired_s:.2f} s, answered over {span_s:.2f} s: {len(admitted)} admitted, ", end="")
    print(f"{len(rejected)} answered 503")
    # Scheduled over 1 s (1.2–1.6 s measured); when other work starves this process the firing stretches
    # (3 s seen under a load average of 4 on 2 cores, 5.5 s under 5–6). The checks below hold whatever the
    # span; what they need is a flood, attempts offered well above the rate, so that is what is checked.
    # (At 500/s this demanded firing within 5 s and failed at 5.5; at 200/s the same 5,000 are a flood
    # until the firing takes 12.5 s, and the bound on the admitted is the tighter for it.)
    offered_per_s = len(answers) / max(fired_s, 1e-3)
    assert offered_per_s >= 2 * RATE_PER_S, f"the 5,000 attempts took {fired_s:.2f} s to fire: no flood"
    # The bucket refills while the node works through its accept queue, so the bound is over the span.
    assert len(admitted) <= BURST + RATE_PER_S * span_s + 5, (len(admitted), span_s)
    assert len(rejected) >= 5000 - BURST - RATE_PER_S * span_s - 5
    low_ms, high_ms = (1000 * w for w in WINDOW_S)
    for answer in rejected:
        assert answer.headers["retry-after"] in ("1", "2", "3")
        assert low_ms <= int(answer.headers["retry-after-ms"]) <= high_ms

    # Clients honouring Retry-After come back spread across the window, not in one wave.
    retry_at = sorted(
        a.started_s + a.elapsed_ms / 1000 + int(a.headers["retry-after-ms"]) / 1000 for a in rejected
    )
    delays = [int(a.headers["retry-after-ms"]) / 1000 for a in rejected]
    assert statistics.pstdev(delays) > 0.45  # uniform on [1, 3] s: 0.58 s; one fixed value: 0
    retry_bins = bin_attempts(retry_at, retry_at[0], retry_at[-1] - retry_at[0])
    index = lockstep_index(retry_bins)
    print(f"retry delays: stdev {statistics.pstdev(delays):.2f} s, lockstep_index {index:.2f}")
    assert index < 2.5
    retries = await _retry_at(node, token, retry_at[:: max(1, len(retry_at) // 400)])  # a sample, for real
    assert {a.status for a in retries} <= {101, 503}


async def test_a_rejection_costs_a_small_fraction_of_a_handshake(node_processes) -> None:
    """The 503 is answered before any token work. The < 0.1 target is `stormdeck bench gateway`'s
    (docs/benchmarks.md: 0.066): CPU seconds are a timing, and under a neighbour's load single rounds read
    0.09–0.16 here (a 503's cost is mostly Python's accept and HTTP parse, which contention inflates). The
    bound below holds under that load and still fails if a rejection did the handshake's work (~1)."""
    node = node_processes("cost")  # the real work factor: a handshake costs what a TLS + JWT one would
    token = TokenSigner().mint("cost", time.time() + 600)
    rounds = [await measure_costs(node, token, 400) for _ in range(3)]
    ratio = statistics.median(costs.reject_cost_ratio for costs in rounds)
    print(rounds, f"median ratio {ratio:.3f}")
    assert ratio < 0.3, rounds
    # What makes it cheap, exactly: a rejected upgrade never reaches the token check.
    set_admission(node, REJECT_ALL)  # (a bucket of one: the first attempt may still be admitted)
    statuses = [a.status for a in await fire(node, "not-a-token", 50, over_s=0)]
    assert statuses.count(503) >= 49 and set(statuses) <= {503, 401}, statuses
    assert _counter(node, "auth_failures_total") == statuses.count(401)


def _counter(node, name: str) -> float:
    with node.admin() as admin:
        lines = admin.get("/metrics").text.splitlines()
    return next(float(line.split()[-1]) for line in lines if line.startswith(f"stormdeck_gateway_{name}{{"))


async def _retry_at(node, token: str, times_s: list[float]) -> list:
    async def one(at_s: float) -> list:
        await asyncio.sleep(max(0.0, at_s - time.time()))
        return await fire(node, token, 1, over_s=0)

    return [a for batch in await asyncio.gather(*(one(t) for t in times_s)) for a in batch]


async def test_sdk_client_waits_the_retry_after(node_processes) -> None:
    node = node_processes(
        "full",
        "--rate-per-s",
        "0.001",
        "--burst",
        "1",
        "--retry-after-s",
        "0.4",
        "0.6",
        "--work-factor",
        "200",
    )
    stats = ClientStats()
    blocker = StreamClient([node.url], make_policy("fixed", {"delay_ms": 0}), _token(), stats, _rng(1))
    client = StreamClient([node.url], make_policy("fixed", {"delay_ms": 0}), _token(), stats, _rng(2))
    holding = asyncio.create_task(blocker.run())
    retrying: asyncio.Task | None = None
    try:
        await asyncio.wait_for(blocker.connected.wait(), 5)
        stats.attempt_times_s.clear()
        stats.retry_after_ms.clear()
        retrying = asyncio.create_task(client.run())
        await wait_for(lambda: len(stats.attempt_times_s) >= 4, 10, "four attempts by the rejected client")
    finally:
        for task in (holding, retrying):
            if task is not None:
                task.cancel()
        await asyncio.gather(*(t for t in (holding, retrying) if t is not None), return_exceptions=True)
        await blocker.close()
    attempts, hints_s = stats.attempt_times_s, [ms / 1000 for ms in stats.retry_after_ms]
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    print("gaps", gaps, "hints", hints_s)
    assert stats.rejects_503 >= 3 and len(gaps) >= 3 and len(hints_s) >= len(gaps)
    assert all(0.4 <= hint <= 0.6 for hint in hints_s), hints_s  # the server's window, drawn per answer
    # Its own policy said 0 ms: each wait is the hint of the 503 before it. Load can only lengthen a wait
    # (by the 503's round trip and the sleep's lateness), so the lower bound is exact; the upper one is a
    # guard a loaded machine meets and a client waiting Retry-After's whole second (+ ≥ 0.4 s) does not.
    excess = [gap - hint for gap, hint in zip(gaps, hints_s, strict=False)]
    assert all(0 <= e < 0.35 for e in excess), (gaps, hints_s)


def _token() -> str:
    return CHEAP_SIGNER.mint("sdk", time.time() + 600)


def _rng(seed: int) -> random.Random:
    return random.Random(seed)
