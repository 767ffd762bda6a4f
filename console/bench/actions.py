"""`stormdeck bench actions`: what a guarded action costs at full thundering-herd scale (issue #4, §7).

The scenario runs from calm through the rolling restart's storms; at evenly spaced fleet seconds a drain of
a ready node is judged (the server's path: the live snapshot, then the guards) and forecast (two 60 s
twins). Figures are wall times on this machine; the forecast's tick is the engine's own.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from console.guards import Thresholds
from console.protocol import ActionKind, DrainRequest, NodeState
from console.server.actions import FleetAction, judge
from console.server.simulator import apply_action, capacity_of

SCENARIO = "thundering-herd"
#: Issue #4: forecast ≤ 500 ms, both runs together.
TARGET_FORECAST_MS = 500.0
#: The interview's drain: 833 closes/s, a 10 min window, a 1–15 s hint.
DRAIN = DrainRequest(rate_per_s=833, deadline_s=600, hint_ms=(1000, 15000))


def bench_actions(samples: int = 30, until_s: int = 690) -> dict[str, Any]:
    from console.sim.engine import Simulation
    from console.sim.forecast import forecast
    from console.sim.scenario_loader import load_scenario

    sim = Simulation(load_scenario(SCENARIO))
    sim.step()  # compiles (or loads) the kernel outside the measurements
    capacity = capacity_of(sim)
    thresholds = Thresholds()
    at = set(np.linspace(15, until_s, samples).astype(int).tolist())
    verdict_ms: list[float] = []
    forecast_ms: list[float] = []
    tick_ms = float(sim.tick_ms)
    for second in range(1, until_s + 1):
        sim.step()
        if second not in at:
            continue
        node = next(sim.node_ids[i] for i in range(sim.n_nodes) if sim.state_of(i) is NodeState.READY)
        action = FleetAction(ActionKind.DRAIN, DRAIN, node)
        started = time.perf_counter()
        judge(sim.live_snapshot(), capacity, action, thresholds)
        verdict_ms.append((time.perf_counter() - started) * 1000)
        result = forecast(sim, lambda twin, action=action: apply_action(twin, action))
        forecast_ms.append(result.compute_ms)
    return {
        "scenario": SCENARIO,
        "nodes": sim.n_nodes,
        "clients": sim.scenario.clients.count,
        "samples": len(forecast_ms),
        "verdict_ms_p50": _pct(verdict_ms, 50),
        "verdict_ms_p99": _pct(verdict_ms, 99),
        "forecast_ms_p50": _pct(forecast_ms, 50),
        "forecast_ms_p99": _pct(forecast_ms, 99),
        "forecast_ms_max": round(max(forecast_ms), 1),
        "forecast_tick_ms": tick_ms,
        "forecast_horizon_s": 60,
        "target_forecast_ms": TARGET_FORECAST_MS,
    }


def _pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 1)
