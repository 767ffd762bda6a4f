"""`stormdeck bench gateway`: what one node holds and costs, measured on loopback child processes.

Costs are the node process's own CPU (its `process_cpu_seconds_total`) over a batch of attempts, so the
client side's work never counts against the node.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict, dataclass

from console.gateway.drain import achieved_rate_per_s
from console.gateway.loadgen import ClientPool
from console.gateway.probe import Answer, upgrade
from console.gateway.processes import NodeProcess
from console.gateway.tokens import DEFAULT_WORK_FACTOR, TokenSigner

#: Admission settings that turn every upgrade away (one token banked, refilled once a day).
REJECT_ALL = {"rate_per_s": 1 / 86_400, "burst": 1, "retry_after_s": [1, 30]}
UNLIMITED = {"retry_after_s": [1, 30]}


async def fire(
    node: NodeProcess, token: str, count: int, over_s: float, concurrency: int = 64
) -> list[Answer]:
    """`count` upgrade attempts spread evenly over `over_s` (0: as fast as `concurrency` allows)."""
    host, port = "127.0.0.1", node.port
    path = f"/channel/fleet?token={token}"
    gate = asyncio.Semaphore(concurrency)
    started = time.monotonic()
    answers: list[Answer] = []

    async def one(k: int) -> None:
        if over_s > 0:
            await asyncio.sleep(max(0.0, started + k * over_s / count - time.monotonic()))
        async with gate:
            try:
                answers.append(await upgrade(host, port, path))
            except (OSError, TimeoutError, ValueError, asyncio.IncompleteReadError):
                answers.append(Answer(0, {}, 0.0, time.time()))

    await asyncio.gather(*(one(k) for k in range(count)))
    return answers


def set_admission(node: NodeProcess, body: dict) -> None:
    with node.admin() as admin:
        admin.put("/v1/node/admission", json=body).raise_for_status()


@dataclass
class Costs:
    handshake_cpu_ms: float
    reject_cpu_ms: float
    handshakes_per_s: float
    rejects_per_s: float

    @property
    def reject_cost_ratio(self) -> float:
        return self.reject_cpu_ms / self.handshake_cpu_ms


async def measure_costs(node: NodeProcess, token: str, count: int) -> Costs:
    """Node CPU per accepted handshake and per 503, each over `count` attempts fired flat out."""
    figures: dict[str, tuple[float, float]] = {}
    for kind, admission, status in (("handshake", UNLIMITED, 101), ("reject", REJECT_ALL, 503)):
        set_admission(node, admission)
        cpu0, wall0 = node.cpu_s(), time.monotonic()
        answers = await fire(node, token, count, over_s=0)
        wall_s, cpu_s = time.monotonic() - wall0, node.cpu_s() - cpu0
        done = sum(1 for a in answers if a.status == status)
        figures[kind] = (1000 * cpu_s / max(1, done), done / wall_s)
    set_admission(node, UNLIMITED)
    return Costs(figures["handshake"][0], figures["reject"][0], figures["handshake"][1], figures["reject"][1])


async def measure_idle(node: NodeProcess, clients: int, signer: TokenSigner, timeout_s: float) -> dict:
    """Hold `clients` idle connections on one node; the node's RSS growth per connection."""
    rss0 = node.rss_kb()
    # One process opens them all: ramp at ~600/s so its own handshakes never queue past their timeout
    # (a faster ramp on a busy machine turns into a little storm of timeouts and backoffs).
    ramp_s = clients / 600
    pool = ClientPool([node.url], clients, "full_jitter", signer=signer, ramp_s=ramp_s, ping_interval_s=None)
    pool.start()
    try:
        await pool.wait_connected(clients, timeout_s)
        held = node.status()["connections"]
        rss1 = node.rss_kb()
    finally:
        await pool.stop()
    return {"idle_conns_per_node": held, "kb_per_idle_conn": round((rss1 - rss0) / max(1, held), 1)}


async def measure_drain(node: NodeProcess, clients: int, rate_per_s: float, signer: TokenSigner) -> dict:
    """Drain `clients` at `rate_per_s`: the node's achieved close rate, and the rate the clients saw the
    hints arrive at. The error is the node's (the clients' view adds this machine's scheduling noise)."""
    pool = ClientPool([node.url], clients, "fixed", signer=signer, ping_interval_s=None, ramp_s=0.5)
    pool.start()
    try:
        await pool.wait_connected(clients, 30)
        with node.admin() as admin:
            body = {"rate_per_s": rate_per_s, "deadline_s": 120, "hint_ms": [60_000, 60_000]}
            admin.post("/v1/node/drain", json=body).raise_for_status()
        deadline = time.monotonic() + clients / rate_per_s + 10
        while len(pool.stats.reconnect_times_s) < clients and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        seen = achieved_rate_per_s(sorted(pool.stats.reconnect_times_s))
        achieved = node.status()["drain"]["achieved_rate_per_s"]
    finally:
        await pool.stop()
        with node.admin() as admin:
            admin.post("/v1/node/undrain")
    error_pct = None if achieved is None else round(100 * abs(achieved - rate_per_s) / rate_per_s, 2)
    return {
        "drain_rate_per_s": rate_per_s,
        "drain_achieved_per_s": achieved,
        "drain_seen_by_clients_per_s": seen,
        "drain_rate_error_pct": error_pct,
    }


async def bench_gateway(idle_clients: int = 10_000, cost_attempts: int = 2000) -> dict:
    """All the figures of `stormdeck bench gateway`, each on a fresh child node."""
    signer = TokenSigner(work_factor=DEFAULT_WORK_FACTOR)
    token = signer.mint("bench", time.time() + 3600)
    figures: dict[str, object] = {"work_factor": DEFAULT_WORK_FACTOR}
    node = NodeProcess("bench-cost").start()
    try:
        costs = await measure_costs(node, token, cost_attempts)
    finally:
        node.stop()
    figures |= asdict(costs) | {"reject_cost_ratio": round(costs.reject_cost_ratio, 3)}
    # What one core could admit if the node had it to itself (the measured rate shares the machine).
    figures["handshakes_per_s_cpu_bound"] = round(1000 / costs.handshake_cpu_ms, 1)
    cheap = TokenSigner(work_factor=100)  # idle density and drain pacing are not about handshake cost
    node = NodeProcess("bench-idle", ["--work-factor", "100", "--ping-interval-s", "20"]).start()
    try:
        figures |= await measure_idle(node, idle_clients, cheap, timeout_s=60 + idle_clients / 100)
    finally:
        node.stop()
    node = NodeProcess("bench-drain", ["--work-factor", "100"]).start()
    try:
        figures |= await measure_drain(node, 500, 100.0, cheap)
    finally:
        node.stop()
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in figures.items()}


def render(figures: dict, as_json: bool) -> str:
    if as_json:
        return json.dumps(figures)
    return "\n".join(f"{name:24} {value}" for name, value in figures.items())
