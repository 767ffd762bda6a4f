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


@dataclass(frozen=True)
class FanoutFigures:
    clients: int
    nodes: int
    seconds: float
    frames_per_client: float
    frame_kb: float
    fanout_p50_ms: float
    fanout_p99_ms: float
    fanout_max_ms: float
    api_p50_ms: float
    api_p99_ms: float
    api_requests: int
    clients_cut_off: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def _serve(nodes: int, token: str, reply: Connection) -> None:
    """Child process: the fleet API over the synthetic fleet, until SIGTERM."""
    from console.server.app import create_app
    from console.server.runner import base_url, bind_socket, serve_foreground
    from console.server.synthetic import SyntheticFleet
    from console.server.tokens import parse_tokens

    sock = bind_socket("127.0.0.1", 0)
    app = create_app(SyntheticFleet(nodes), parse_tokens(f"viewer {token} bench"))
    serve_foreground(app, sock, lambda: reply.send(base_url(sock)))


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def _stream_client(
    url: str, headers: dict[str, str], until: float, delays_ms: list[float]
) -> tuple[int, int]:
    """Collect publish→receive delays; returns (frames received, bytes of the last frame)."""
    frames = size = 0
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
            if frames > 1:  # the first frame is the newest one at connect time, not a fresh publish
                delays_ms.append((received - float(stamp)) * 1000)
            if received >= until:
                break
    return frames, size


async def _api_client(base: str, headers: dict[str, str], until: float, latencies_ms: list[float]) -> None:
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=10) as client:
        turn = 0
        while time.time() < until:
            path = "/v1/fleet" if turn % 2 == 0 else "/v1/nodes/gw-0007"
            started = time.perf_counter()
            response = await client.get(path)
            latencies_ms.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
            turn += 1
            await asyncio.sleep(0.1)  # pacing of the probe, ten a second


async def _measure(
    base: str, token: str, clients: int, seconds: float
) -> tuple[list[float], list[float], list[tuple[int, int]]]:
    headers = {"Authorization": f"Bearer {token}"}
    until = time.time() + seconds
    delays_ms: list[float] = []
    latencies_ms: list[float] = []
    stream_url = base.replace("http://", "ws://") + "/v1/stream"
    results = await asyncio.gather(
        *(_stream_client(stream_url, headers, until, delays_ms) for _ in range(clients)),
        _api_client(base, headers, until, latencies_ms),
        return_exceptions=True,
    )
    counts = [result for result in results[:-1] if isinstance(result, tuple)]
    return delays_ms, latencies_ms, counts


def run_fanout(clients: int = 50, nodes: int = 2000, seconds: float = 15.0) -> FanoutFigures:
    from console.server.tokens import new_token

    token = new_token()
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    server = context.Process(target=_serve, args=(nodes, token, sender), name="stormdeck-bench-server")
    server.start()
    try:
        if not receiver.poll(60):
            raise RuntimeError("the benchmark server did not start within 60 s")
        base = receiver.recv()
        delays_ms, latencies_ms, counts = asyncio.run(_measure(base, token, clients, seconds))
    finally:
        server.terminate()  # SIGTERM: the server shuts down cleanly
        server.join(10)
        if server.is_alive():
            server.kill()
            server.join()
    return FanoutFigures(
        clients=clients,
        nodes=nodes,
        seconds=seconds,
        frames_per_client=statistics.fmean(count for count, _ in counts) if counts else 0.0,
        frame_kb=round(max((size for _, size in counts), default=0) / 1024, 1),
        fanout_p50_ms=round(_percentile(delays_ms, 0.50), 1),
        fanout_p99_ms=round(_percentile(delays_ms, 0.99), 1),
        fanout_max_ms=round(max(delays_ms, default=float("nan")), 1),
        api_p50_ms=round(_percentile(latencies_ms, 0.50), 1),
        api_p99_ms=round(_percentile(latencies_ms, 0.99), 1),
        api_requests=len(latencies_ms),
        clients_cut_off=clients - len(counts),
    )
