"""The load generator: many SDK clients per process, a worker process per core when asked, loopback only.

It reports what an operator needs to recognise a storm: attempts per 100 ms and their `lockstep_index`
(console.waves — the same function the simulator and the console use), connect latency, 503s, resumes vs
full resyncs, and the stream's gaps and duplicates.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import math
import os
import random
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, fields, replace
from itertools import zip_longest
from multiprocessing import get_context
from typing import Any
from urllib.parse import urlsplit

from console.errors import InputError
from console.gateway.client import ClientStats, StreamClient
from console.gateway.meter import percentile
from console.gateway.tokens import DEFAULT_WORK_FACTOR, TokenSigner
from console.policies import Policy, make_policy
from console.protocol import WAVE_BIN_MS
from console.stop_signals import answering_stop_signals, soon
from console.userfiles import read_user_text
from console.waves import lockstep_index, lockstep_text, to_hundredths

MAX_CLIENTS = 20_000  # one file descriptor each, under this machine's 20,000 limit per process
#: The longest timed run: a day's soak. (It was 600 s, a bound nothing needed but what a timed run keeps,
#: which `samples_kept_for` bounds now, and the tokens' hour, which `TOKEN_LIFETIME_S` outlasts.)
MAX_DURATION_S = 86_400.0
#: A timed run up to this long keeps every sample: its length bounds them (2.4 M attempts at most, 20,000
#: clients each reconnecting every 5 s). A longer one keeps the newest, as a load until stopped does.
KEEP_EVERY_SAMPLE_UP_TO_S = 600.0
#: How long a pool's client tokens are valid: longer than any run (a pool mints a few once — minting costs
#: what verifying does). An hour, as before, had every reconnect after the first hour refused (401).
TOKEN_LIFETIME_S = 366 * 86_400.0
#: How often a load following a nodes file reads it for nodes added since.
NODES_FILE_POLL_S = 1.0
#: Distinct client tokens per process: minting costs what verifying does (~1 ms), so clients share a few.
TOKEN_POOL = 16
#: A load until stopped, or timed longer than KEEP_EVERY_SAMPLE_UP_TO_S, keeps this many of each sample
#: (attempt and due times, connect latencies, hints): ~3 MB each at most, where keeping all grew its process
#: ~75 KB/s under a 300-client churn.
UNTIL_STOPPED_SAMPLES = 100_000


def samples_kept_for(duration_s: float) -> int | None:
    """How many of each sample a run of `duration_s` keeps (0: until stopped); None: every one."""
    return None if 0 < duration_s <= KEEP_EVERY_SAMPLE_UP_TO_S else UNTIL_STOPPED_SAMPLES


def check_loopback(urls: list[str]) -> None:
    """Refuse anything but ws:// on a loopback address: this tool makes storms, and storms stay local."""
    for url in urls:
        parts = urlsplit(url)
        host = parts.hostname or ""
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if parts.scheme != "ws" or not loopback:
            raise InputError("URL", url, "a ws:// URL on a loopback address (127.0.0.0/8, ::1, localhost)")


class ClientPool:
    """`count` clients of one policy against `urls`, started over `ramp_s`, sharing one ClientStats.

    Each starts on a random node unless `start_index` pins them all to one (to load a single node).
    """

    def __init__(
        self,
        urls: list[str],
        count: int,
        policy: str | Policy,
        *,
        seed: int = 0,
        ramp_s: float = 0.0,
        signer: TokenSigner | None = None,
        stable_s: float = 10.0,
        ping_interval_s: float | None = 20.0,
        start_index: int | None = None,
        samples_kept: int | None = None,
    ) -> None:
        policy = make_policy(policy) if isinstance(policy, str) else policy
        signer = signer or TokenSigner()
        expires = time.time() + TOKEN_LIFETIME_S
        tokens = [signer.mint(f"load-{os.getpid()}-{k}", expires) for k in range(min(TOKEN_POOL, count))]
        self.stats = ClientStats(samples_kept=samples_kept)
        self.ramp_s = ramp_s
        rng = random.Random(seed)
        self.clients = [
            StreamClient(
                urls,
                policy,
                tokens[i % len(tokens)],
                self.stats,
                random.Random(rng.getrandbits(64)),
                stable_s=stable_s,
                ping_interval_s=ping_interval_s,
                start_index=start_index,
            )
            for i in range(count)
        ]
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        step_ms = 1000 * self.ramp_s / max(1, len(self.clients))
        self._tasks = [asyncio.create_task(c.run(i * step_ms)) for i, c in enumerate(self.clients)]

    @property
    def connected(self) -> int:
        return sum(1 for c in self.clients if c.connected.is_set())

    async def wait_connected(self, count: int, timeout_s: float, stall_s: float | None = None) -> None:
        """Wait until at least `count` clients hold a connection (after their hello), for `timeout_s` at
        most — or, with `stall_s`, for as long as more keep connecting: only `stall_s` without one more
        gives up (within `timeout_s`). A busy machine connects them slower, not never: 1,333 of 3,000 in
        30 s at a load of 6, where 3,000 took 3 s at 1."""
        started = time.monotonic()
        moved, most = started, 0
        while (now := self.connected) < count:
            clock = time.monotonic()
            if now > most:
                moved, most = clock, now
            if clock - started > timeout_s:
                raise TimeoutError(f"{now} of {count} clients connected after {timeout_s:g} s")
            if stall_s is not None and clock - moved > stall_s:
                raise TimeoutError(
                    f"{now} of {count} clients connected after {clock - started:.0f} s, none more in {stall_s:g} s"
                )
            await asyncio.sleep(0.05)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(*(c.close() for c in self.clients), return_exceptions=True)


@dataclass
class LoadReport:
    clients: int
    policy: str
    duration_s: float
    attempts: int
    connects: int
    rejects_503: int
    unauthorized: int
    failures: int
    drops: int
    planned_reconnects: int
    resumes: int
    full_resyncs: int
    messages: int
    gaps: int
    duplicates: int
    #: None (JSON null, "—" in the text) when no client connected: 0.00 read as connects that took no time.
    connect_p50_ms: float | None
    connect_p99_ms: float | None
    #: None (JSON null) when no 2 s window held 50 attempts: 0.00 read as measured, below a smooth smear.
    lockstep_index: float | None
    bin_ms: int
    attempts_per_bin: list[int]

    def summary(self) -> str:
        """The text report. Floats to a hundredth: the run's measured length read `7.524341583251953`
        (found in review), nine digits below what a 100 ms wave bin can tell; --json keeps them exact."""

        def shown(name: str, value: object) -> object:
            if name == "lockstep_index":  # as the console and the report say it: None is too quiet to judge
                return lockstep_text(value)  # type: ignore[arg-type]
            if value is None:
                return "—"
            return f"{value:.2f}" if isinstance(value, float) else value

        return "\n".join(
            f"{f.name:20} {shown(f.name, getattr(self, f.name))}"
            for f in fields(self)
            if f.name != "attempts_per_bin"
        )


def bin_attempts(attempt_times_s: Iterable[float], t0_s: float, duration_s: float) -> list[int]:
    bins = [0] * max(1, math.ceil(duration_s * 1000 / WAVE_BIN_MS))
    for t in attempt_times_s:
        k = int((t - t0_s) * 1000) // WAVE_BIN_MS
        if 0 <= k < len(bins):
            bins[k] += 1
    return bins


#: The run's own clients made no attempts before it started or after it ended: with that said (a window's
#: worth of empty bins each side), a burst at the start is judged against the 2 s around it — without it,
#: no whole window held the burst, and 1,000 clients at once read 0.19, below "1 = a smooth smear".
QUIET = [0] * (2000 // WAVE_BIN_MS)


def report(stats: ClientStats, clients: int, policy: str, bins: list[int], duration_s: float) -> LoadReport:
    return LoadReport(
        clients=clients,
        policy=policy,
        duration_s=duration_s,
        **{k: getattr(stats, k) for k in _COUNTERS},
        connect_p50_ms=connect_ms(stats, 0.50),
        connect_p99_ms=connect_ms(stats, 0.99),
        lockstep_index=to_hundredths(lockstep_index(QUIET + bins + QUIET)),
        bin_ms=WAVE_BIN_MS,
        attempts_per_bin=bins,
    )


def connect_ms(stats: ClientStats, share: float) -> float | None:
    """A percentile of the connects' latency, or None when there were none."""
    if not stats.connect_latency_ms:
        return None
    return round(percentile(stats.connect_latency_ms, share), 2)


_COUNTERS = [
    "attempts",
    "connects",
    "rejects_503",
    "unauthorized",
    "failures",
    "drops",
    "planned_reconnects",
    "resumes",
    "full_resyncs",
    "messages",
    "gaps",
    "duplicates",
]


@dataclass(frozen=True)
class LoadSpec:
    """One process's share of a load run (picklable, for worker processes)."""

    urls: list[str]
    clients: int
    policy: str
    duration_s: float
    ramp_s: float = 1.0
    seed: int = 0
    work_factor: int = DEFAULT_WORK_FACTOR
    #: A file of client URLs, one a line, that grows as the fleet does (`fleet up` keeps one): clients
    #: reconnecting after a close then spread over the new nodes too, as behind a load balancer.
    nodes_file: str | None = None


def read_nodes_file(path: str) -> list[str]:
    lines = read_user_text("--nodes-file", path).splitlines()
    stripped = (line.strip() for line in lines)
    urls = [line for line in stripped if line and not line.startswith("#")]
    check_loopback(urls)
    return urls


async def follow_nodes_file(path: str, urls: list[str]) -> None:
    """Append to `urls` (the list every client of a pool shares) the nodes the file gains."""
    while True:
        await asyncio.sleep(NODES_FILE_POLL_S)
        try:
            listed = read_nodes_file(path)
        except InputError:
            continue  # mid-rewrite or gone: the nodes known so far still serve
        urls.extend(url for url in listed if url not in urls)


async def _run_pool(spec: LoadSpec) -> dict:
    signer = TokenSigner(work_factor=spec.work_factor)
    urls = list(spec.urls)
    if spec.nodes_file:  # the nodes listed now share the first connects too
        urls.extend(url for url in read_nodes_file(spec.nodes_file) if url not in urls)
    samples_kept = samples_kept_for(spec.duration_s)
    pool = ClientPool(
        urls,
        spec.clients,
        spec.policy,
        seed=spec.seed,
        ramp_s=spec.ramp_s,
        signer=signer,
        samples_kept=samples_kept,
    )
    started_s = time.time()
    pool.start()
    follower = asyncio.create_task(follow_nodes_file(spec.nodes_file, urls)) if spec.nodes_file else None
    with contextlib.ExitStack() as signals:
        if spec.duration_s > 0:
            await asyncio.sleep(spec.duration_s)  # the run's length is the measurement, not a synchronization
        else:
            # Until a stop signal: a load that runs as long as the fleet it loads. Signals are answered
            # until the pool has stopped too, so another Ctrl-C does not cut its stop short.
            stop = asyncio.Event()
            signals.enter_context(answering_stop_signals(soon(asyncio.get_running_loop(), stop.set)))
            await stop.wait()
        if follower is not None:
            follower.cancel()
        await pool.stop()
    # Each pool's attempts binned from its own start: a worker process can start a second or more after
    # the parent (spawn, imports), and binned from the parent's clock its ramp fell past the last bin.
    bins = attempt_bins(pool.stats.attempt_times_s, started_s, spec.duration_s, samples_kept, time.time())
    return {"stats": asdict(pool.stats), "bins": bins}


def attempt_bins(
    attempts: Sequence[float], started_s: float, duration_s: float, samples_kept: int | None, ended_s: float
) -> list[int]:
    """A pool's attempts per wave bin: from its start over its --duration, or, for a load until stopped or
    one that dropped its oldest attempts (`samples_kept` of them kept), from the oldest kept until it ended
    — from its start, the dropped ones' bins would read as a quiet start."""
    if samples_kept is not None and len(attempts) == samples_kept:
        started_s = attempts[0]
        duration_s = 0.0
    return bin_attempts(attempts, started_s, duration_s or ended_s - started_s)


def _worker(spec: LoadSpec) -> dict:
    return asyncio.run(_run_pool(spec))


def merge(parts: list[dict[str, Any]]) -> tuple[ClientStats, list[int]]:
    """The pools' stats summed, and their attempt bins added bin by bin from the end: the pools of one run
    end together, each its --duration after its own start, so their bins are as many — except where a pool
    dropped its oldest attempts (a run past KEEP_EVERY_SAMPLE_UP_TO_S), whose bins begin later."""
    total = ClientStats()
    newest_first: list[int] = []
    for part in parts:
        for key, value in part["stats"].items():
            setattr(total, key, getattr(total, key) + value)
        added = zip_longest(newest_first, reversed(part["bins"]), fillvalue=0)
        newest_first = [a + b for a, b in added]
    return total, newest_first[::-1]


def run_load(spec: LoadSpec, workers: int = 1) -> LoadReport:
    """Blocking: run the load for `spec.duration_s` (0: until SIGTERM or SIGINT, one worker) and report.
    Workers split the clients evenly."""
    check_load(spec, workers)
    t0 = time.time()
    if workers <= 1:
        parts = [asyncio.run(_run_pool(spec))]
    else:
        shares = [spec.clients // workers + (1 if k < spec.clients % workers else 0) for k in range(workers)]
        specs = [replace(spec, clients=share, seed=spec.seed + k) for k, share in enumerate(shares) if share]
        with ProcessPoolExecutor(len(specs), mp_context=get_context("spawn")) as pool:
            parts = list(pool.map(_worker, specs))
    stats, bins = merge(parts)
    return report(stats, spec.clients, spec.policy, bins, spec.duration_s or time.time() - t0)


def check_load(spec: LoadSpec, workers: int) -> None:
    """Refuse a load spec out of range (`InputError`, naming the option), before any client starts."""
    check_loopback(spec.urls)
    if spec.nodes_file is not None:
        read_nodes_file(spec.nodes_file)
    make_policy(spec.policy)  # an unknown policy fails here, before any process starts
    if not 1 <= spec.clients <= MAX_CLIENTS * max(1, workers):
        raise InputError("--clients", spec.clients, f"1 to {MAX_CLIENTS} per worker")
    if not 0 <= spec.duration_s <= MAX_DURATION_S:
        raise InputError(
            "--duration",
            spec.duration_s,
            f"seconds in [0, {MAX_DURATION_S:g}] ({MAX_DURATION_S / 3600:g} h; 0: until stopped)",
        )
    # Connects after the run's end would never happen (a ramp longer than --duration); a negative or
    # nan ramp would run as none at all. A load until stopped ramps within the longest timed run.
    ramp_limit_s = spec.duration_s or MAX_DURATION_S
    if not 0 <= spec.ramp_s <= ramp_limit_s:
        raise InputError("--ramp-s", spec.ramp_s, f"seconds in [0, {ramp_limit_s:g}] (at most --duration)")
    if not 1 <= workers <= 64:
        raise InputError("--workers", workers, "1 to 64")
    if spec.duration_s == 0 and workers > 1:
        raise InputError("--workers", workers, "1 when --duration is 0 (until stopped)")
