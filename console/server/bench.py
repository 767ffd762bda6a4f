"""`stormdeck bench server`: stream fan-out and API latency of one fleet API server under many clients.

The server runs in its own process (as in production, and so the clients' CPU is not the server's),
over the synthetic fleet at 2000 nodes. Each of `clients` stream clients notes, for every frame, the
time from the server publishing it (`published_unix_s`, same machine, same clock) to the client having
it — the delay the fan-out adds. Meanwhile one HTTP client asks `GET /v1/fleet` and
`GET /v1/nodes/{id}` ten times a second. Figures: `fanout_p50_ms`, `fanout_p99_ms` (target ≤ 100 ms),
`api_p99_ms` (target ≤ 100 ms).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import statistics
import time
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection

import httpx
from websockets.asyncio.client import connect

_STAMP = '"published_unix_s":'
#: Seconds after start-up not measured: the first ticks load the simulator's compiled kernels.
WARMUP_S = 3.0


@dataclass(frozen=True)
class FanoutFigures:
    source: str
    speed: float
    coalesce_events_over: int | None
    clients: int
    nodes: int
    seconds: float
    frames_per_client: float
    frame_gap_p99_ms: float
    frame_gap_max_ms: float
    frame_kb: float
    fanout_p50_ms: float
    fanout_p99_ms: float
    fanout_max_ms: float
    server_fanout_p50_ms: float  # publish → the client's socket took it (server side only)
    server_fanout_p99_ms: float
    api_p50_ms: float
    api_p99_ms: float
    api_requests: int
    clients_cut_off: int
    effective_speed: float | None

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def _serve(
    nodes: int,
    scenario: str | None,
    speed: float,
    storm_at_s: float | None,
    coalesce_events_over: int | None,
    token: str,
    reply: Connection,
) -> None:
    """Child process: the fleet API over the synthetic fleet or a scenario, until SIGTERM."""
    from console.server.app import create_app
    from console.server.backend import FleetBackend
    from console.server.runner import base_url, bind_socket, serve_foreground
    from console.server.simulator import SimulatorBackend
    from console.server.synthetic import SyntheticBackend
    from console.server.tokens import parse_tokens

    backend: FleetBackend = (
        SyntheticBackend(nodes, storm_at_s=storm_at_s)
        if scenario is None
        else SimulatorBackend.from_scenario(scenario, [])
    )
    sock = bind_socket("127.0.0.1", 0)
    tokens = parse_tokens(f"viewer {token} bench")
    app = create_app(backend, tokens, speed=speed, coalesce_events_over=coalesce_events_over)
    serve_foreground(app, sock, lambda: reply.send(base_url(sock)))
    reply.send(list(app.state.feed.broadcaster.deliveries))  # after SIGTERM: the server-side delays


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def _stream_client(
    url: str,
    headers: dict[str, str],
    until: float,
    measure_s: float,
    delays_ms: list[float],
    gaps_ms: list[float] | None,
) -> tuple[int, int]:
    """Collect publish→receive delays (and gaps between frames); returns (frames, bytes of the last)."""
    frames = size = 0
    previous: float | None = None
    measure_from = until - measure_s
    async with connect(url, additional_headers=headers, max_size=None, max_queue=None) as ws:
        async for message in ws:
            received = time.time()
            assert isinstance(message, str)
            stamp_at = message.rfind(_STAMP)
            if stamp_at < 0 or not message.startswith('{"type":"frame"'):
                continue
            end = message.find(",", stamp_at)
            stamp = message[stamp_at + len(_STAMP) : end if end > 0 else -1].rstrip("}")
            frames += 1
            size = len(message)
            # The first frame is the newest one at connect time, not a fresh publish; and the first
            # seconds after start-up (numba loading its compiled kernels) are not the steady state.
            if frames > 1 and received >= measure_from:
                delays_ms.append((received - float(stamp)) * 1000)
                if gaps_ms is not None and previous is not None:
                    gaps_ms.append((received - previous) * 1000)
                previous = received
            if received >= until:
                break
    return frames, size


async def _api_client(
    base: str,
    headers: dict[str, str],
    until: float,
    measure_s: float,
    latencies_ms: list[float],
    node_id: str,
) -> float | None:
    """Probe the read API ten times a second; returns the clock's effective speed at the end."""
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=10) as client:
        turn = 0
        while time.time() < until:
            path = "/v1/fleet" if turn % 2 == 0 else f"/v1/nodes/{node_id}"
            started = time.perf_counter()
            response = await client.get(path)
            if time.time() >= until - measure_s:  # after the warm-up
                latencies_ms.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
            turn += 1
            await asyncio.sleep(0.1)  # pacing of the probe, ten a second
        return (await client.get("/v1/sim/clock")).json().get("effective_speed")


@dataclass
class _Samples:
    delays_ms: list[float]
    gaps_ms: list[float]
    latencies_ms: list[float]
    counts: list[tuple[int, int]]
    effective_speed: float | None


async def _measure(base: str, token: str, clients: int, seconds: float) -> tuple[_Samples, int]:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
        node_ids = [node["id"] for node in (await client.get("/v1/fleet")).json()["nodes"]]
    node_id = node_ids[7 % len(node_ids)]
    until = time.time() + WARMUP_S + seconds
    samples = _Samples([], [], [], [], None)
    stream_url = base.replace("http://", "ws://") + "/v1/stream"
    results = await asyncio.gather(
        *(
            _stream_client(
                stream_url,
                headers,
                until,
                seconds,
                samples.delays_ms,
                samples.gaps_ms if index == 0 else None,
            )
            for index in range(clients)
        ),
        _api_client(base, headers, until, seconds, samples.latencies_ms, node_id),
        return_exceptions=True,
    )
    samples.counts = [result for result in results[:-1] if isinstance(result, tuple)]
    speed = results[-1]
    samples.effective_speed = speed if isinstance(speed, float) else None
    return samples, len(node_ids)


def run_fanout(
    clients: int = 50,
    nodes: int = 2000,
    seconds: float = 15.0,
    scenario: str | None = None,
    speed: float = 1.0,
    storm_at_s: float | None = None,
    coalesce_events_over: int | None = None,
) -> FanoutFigures:
    """Measure; `scenario` serves that simulator scenario instead of the synthetic fleet of `nodes`, whose
    storm (an eighth of the nodes down at once, one event each) comes at `storm_at_s` if given."""
    from console.server.tokens import new_token

    token = new_token()
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    server = context.Process(
        target=_serve,
        args=(nodes, scenario, speed, storm_at_s, coalesce_events_over, token, sender),
        name="stormdeck-bench-server",
    )
    server.start()
    try:
        if not receiver.poll(120):
            raise RuntimeError("the benchmark server did not start within 120 s")
        base = receiver.recv()
        measure_from = time.time() + WARMUP_S
        samples, served_nodes = asyncio.run(_measure(base, token, clients, seconds))
    finally:
        server.terminate()  # SIGTERM: the server shuts down cleanly, then sends its own delays
        deliveries = receiver.recv() if receiver.poll(15) else []
        server.join(10)
        if server.is_alive():
            server.kill()
            server.join()
    counts = samples.counts
    server_ms = [delay for published_at, delay in deliveries if published_at >= measure_from]
    return FanoutFigures(
        source=scenario or ("synthetic" if storm_at_s is None else f"synthetic, storm at {storm_at_s:g} s"),
        speed=speed,
        coalesce_events_over=coalesce_events_over,
        clients=clients,
        nodes=served_nodes,
        seconds=seconds,
        frames_per_client=statistics.fmean(count for count, _ in counts) if counts else 0.0,
        frame_gap_p99_ms=round(_percentile(samples.gaps_ms, 0.99), 1),
        frame_gap_max_ms=round(max(samples.gaps_ms, default=float("nan")), 1),
        frame_kb=round(max((size for _, size in counts), default=0) / 1024, 1),
        fanout_p50_ms=round(_percentile(samples.delays_ms, 0.50), 1),
        fanout_p99_ms=round(_percentile(samples.delays_ms, 0.99), 1),
        fanout_max_ms=round(max(samples.delays_ms, default=float("nan")), 1),
        server_fanout_p50_ms=round(_percentile(server_ms, 0.50), 1),
        server_fanout_p99_ms=round(_percentile(server_ms, 0.99), 1),
        api_p50_ms=round(_percentile(samples.latencies_ms, 0.50), 1),
        api_p99_ms=round(_percentile(samples.latencies_ms, 0.99), 1),
        api_requests=len(samples.latencies_ms),
        clients_cut_off=clients - len(counts),
        effective_speed=samples.effective_speed,
    )
