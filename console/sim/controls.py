"""The fleet's two automatic controls, decided once a second from the second's figures: the autoscaler
and the resync backend's cold-path breaker. Pure: figures in, a decision out; the engine applies it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from console.sim.scenario import Autoscale, Resync


@dataclass(frozen=True)
class ScaleUp:
    count: int
    mean_cpu_pct: float
    window_s: int


class Autoscaler:
    """Kubernetes HPA's rule: desired = ⌈nodes × mean CPU / target⌉, CPU averaged over the cooldown
    window, at most `step_nodes` added per decision, never above `max_nodes`."""

    def __init__(self, settings: Autoscale) -> None:
        self.settings = settings
        self._cpu_window: list[float] = []
        self._last_scaled_s = -math.inf

    def decide(self, time_s: float, ready_cpu_pct_sum: float, serving: int, nodes: int) -> ScaleUp | None:
        """serving: nodes ready or provisioning; nodes: every node there is (what max_nodes bounds)."""
        a = self.settings
        if serving:
            # As the HPA does when scaling up, nodes not yet ready count as using 0 % CPU.
            self._cpu_window.append(ready_cpu_pct_sum / serving)
        window = max(int(a.cooldown_s), 1)
        self._cpu_window = self._cpu_window[-window:]
        if time_s - self._last_scaled_s < a.cooldown_s or len(self._cpu_window) < window:
            return None
        mean_cpu = sum(self._cpu_window) / len(self._cpu_window)
        desired = math.ceil(serving * mean_cpu / a.cpu_target_pct)
        count = min(desired - serving, a.step_nodes, a.max_nodes - nodes)
        if count <= 0:
            return None
        self._last_scaled_s = time_s
        return ScaleUp(count, mean_cpu, window)


class ResyncBreaker:
    """Open while more than `breaker_failure_share` of the resyncs tried over `breaker_window_s` failed:
    the cold path then answers Retry-After instead of queueing (field guide, matrix.org)."""

    def __init__(self, settings: Resync) -> None:
        self.settings = settings
        self.open = False
        self._window: list[tuple[float, float]] = []

    def update(self, failed: float, done: float) -> float | None:
        """One second's failed and completed resyncs; returns the failed share when the breaker flips."""
        self._window.append((failed, failed + done))
        self._window = self._window[-int(self.settings.breaker_window_s) :]
        tried = sum(y for _, y in self._window)
        share = sum(x for x, _ in self._window) / tried if tried else 0.0
        now_open = share > self.settings.breaker_failure_share
        if now_open == self.open:
            return None
        self.open = now_open
        return share
