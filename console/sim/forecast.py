"""A forecast: fork the running simulation and run it ahead with and without an action (issue #4).

Both twins start from the same state and the same position of the random stream, so the difference between
their runs is the action's, not chance's. Each runs on the engine's own tick (the scenario's `tick_ms`):
a forecast that disagreed with the fleet it forecasts would be worse than none, and at 480 nodes and
13 M clients both 60 s runs fit in the 0.5 s budget on two threads (the kernels release the GIL) — see
docs/benchmarks.md, "Actions". The summary names the tick it used.

The interface a backend offers the server is `Forecaster`: anything that can say what an action would do
over the next minute. A real fleet's controller can implement it by building a `Simulation` from a snapshot
and its capacity record; the simulator backend implements it by forking itself (`fork_pair` + `run_pair`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

from console.sim import kernel as k
from console.sim.engine import Simulation

#: Seconds the forecast looks ahead (issue #4: "run 60 s ahead").
HORIZON_S = 60


@dataclass(frozen=True)
class RunSummary:
    """One twin's minute: the figures a verdict shows, and per-second series for sparklines."""

    connections_min: int
    connections_end: int
    cpu_max_pct: float
    attempts_per_s_peak: float
    connections: list[int]
    cpu_max_pct_series: list[float]
    attempts_per_s: list[float]


@dataclass(frozen=True)
class Forecast:
    horizon_s: int
    tick_ms: float
    without_action: RunSummary
    with_action: RunSummary
    compute_ms: float
    model: str = "simulator fork"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Forecaster(Protocol):
    """What a backend offers for forecasts: an action's effect over the next `horizon_s` seconds."""

    async def forecast(
        self, act: Callable[[Simulation], None], horizon_s: int = HORIZON_S
    ) -> Forecast | None: ...


def run_ahead(sim: Simulation, seconds: int) -> RunSummary:
    """Step `sim` (a twin: it is consumed) and summarize; no protocol records are built."""
    connections: list[int] = []
    cpu: list[float] = []
    attempts: list[float] = []
    for result in sim.run(seconds):
        assert result.node_totals is not None
        connections.append(result.connections_total)
        cpu.append(round(result.max_cpu_pct, 1))
        attempts.append(float(result.node_totals[k.ON_ATTEMPTS] + result.fleet_out[k.OF_REFUSED]))
    return RunSummary(
        connections_min=min(connections),
        connections_end=connections[-1],
        cpu_max_pct=max(cpu),
        attempts_per_s_peak=max(attempts),
        connections=connections,
        cpu_max_pct_series=cpu,
        attempts_per_s=attempts,
    )


def fork_pair(sim: Simulation, act: Callable[[Simulation], None]) -> tuple[Simulation, Simulation]:
    """Two twins of `sim`, the second with `act` applied. Needs `sim` to stand still (the caller's lock);
    `act` may raise `InputError`, and then `sim` is untouched."""
    without = sim.fork(with_history=False)
    acted = sim.fork(with_history=False)
    act(acted)
    return without, acted


_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="stormdeck-forecast")


def run_pair(without: Simulation, acted: Simulation, horizon_s: int = HORIZON_S) -> Forecast:
    """Run both twins `horizon_s` ahead, in parallel (the kernels release the GIL)."""
    started = time.perf_counter()
    pending = _POOL.submit(run_ahead, acted, horizon_s)
    base = run_ahead(without, horizon_s)
    with_action = pending.result()
    return Forecast(
        horizon_s=horizon_s,
        tick_ms=float(without.tick_ms),
        without_action=base,
        with_action=with_action,
        compute_ms=round((time.perf_counter() - started) * 1000, 1),
    )


def forecast(sim: Simulation, act: Callable[[Simulation], None], horizon_s: int = HORIZON_S) -> Forecast:
    """Fork `sim` and run both twins: for callers that own `sim` outright (tests, the bench)."""
    started = time.perf_counter()
    without, acted = fork_pair(sim, act)
    result = run_pair(without, acted, horizon_s)
    total_ms = round((time.perf_counter() - started) * 1000, 1)
    return replace(result, compute_ms=total_ms)


def agreement(a: RunSummary, b: RunSummary) -> dict[str, float]:
    """Relative differences of two runs' summary figures (for comparing ticks or seeds)."""

    def rel(x: float, y: float) -> float:
        return abs(x - y) / max(abs(x), abs(y), 1e-9)

    return {
        "connections_min": rel(a.connections_min, b.connections_min),
        "connections_end": rel(a.connections_end, b.connections_end),
        "cpu_max_pct": rel(a.cpu_max_pct, b.cpu_max_pct),
        "attempts_per_s_peak": rel(a.attempts_per_s_peak, b.attempts_per_s_peak),
    }
