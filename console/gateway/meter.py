"""What a node counts: per-second rates, handshake latency, wave bins and process CPU.

Counters are plain integers bumped on the hot path; `roll(now)` turns them into one second's figures for
a frame. Waves are kept at the console's 100 ms resolution (WAVE_BIN_MS) so a node's own attempts show
lockstep the same way the simulator's do.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field

from console.gateway.admission import Rejection
from console.protocol import WAVE_BIN_MS


def percentile(values: Collection[float], share: float) -> float:
    """Nearest-rank percentile; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = min(len(ordered) - 1, max(0, round(share * len(ordered) + 0.5) - 1))
    return ordered[rank]


@dataclass
class Totals:
    """Monotonic counters since start (what /metrics exposes)."""

    attempts: int = 0
    accepts: int = 0
    rejects: int = 0  # admission's and the ceiling's 503s: `NodeStatus.rejects_per_s`
    # 503s to upgrades that reached the node out of rotation (`Rejection.NOT_IN_ROTATION`): not admission's,
    # so not rejects. No load balancer routes around the node in the loopback fleet; the client moves on.
    not_in_rotation: int = 0
    timeouts: int = 0
    closes: int = 0
    drops: int = 0
    auth_failures: int = 0


@dataclass
class Second:
    """One rolled interval's rates."""

    attempts_per_s: float = 0.0
    accepts_per_s: float = 0.0
    rejects_per_s: float = 0.0
    timeouts_per_s: float = 0.0
    closes_per_s: float = 0.0
    drops_per_s: float = 0.0
    handshake_p99_ms: float = 0.0
    cpu_pct: float = 0.0
    waves: list[int] = field(default_factory=list)
    waves_start_s: float = 0.0  # unix time of the first bin


class Meter:
    def __init__(self, now_s: float) -> None:
        self.totals = Totals()
        self._last = Totals()
        self._rolled_s = now_s
        self._cpu_s = time.process_time()
        self._handshake_ms: list[float] = []
        self._bins: dict[int, int] = {}
        self._bin_from = int(now_s * 1000) // WAVE_BIN_MS
        self.latest = Second()

    def attempt(self, now_s: float) -> None:
        self.totals.attempts += 1
        key = int(now_s * 1000) // WAVE_BIN_MS
        self._bins[key] = self._bins.get(key, 0) + 1

    def refused(self, reason: Rejection) -> None:
        """A 503. Only admission's and the ceiling's are rejects (the protocol's `rejects_per_s`): with a
        drained node's among them, the node read as refusing every upgrade (its 503 share critical) and the
        report advised admission to a fleet whose only 503s were that node's."""
        if reason is Rejection.NOT_IN_ROTATION:
            self.totals.not_in_rotation += 1
        else:
            self.totals.rejects += 1

    def handshake(self, duration_ms: float) -> None:
        self.totals.accepts += 1
        self._handshake_ms.append(duration_ms)

    def roll(self, now_s: float) -> Second:
        """Close the interval since the previous roll; `now_s` is the same clock `attempt` was given."""
        elapsed_s = max(1e-6, now_s - self._rolled_s)
        cpu_s = time.process_time()
        t, last = self.totals, self._last

        def rate(now: int, before: int) -> float:
            return (now - before) / elapsed_s

        bin_to = int(now_s * 1000) // WAVE_BIN_MS
        waves = [self._bins.pop(k, 0) for k in range(self._bin_from, bin_to)]
        self._bins = {k: v for k, v in self._bins.items() if k >= bin_to}
        self.latest = Second(
            attempts_per_s=rate(t.attempts, last.attempts),
            accepts_per_s=rate(t.accepts, last.accepts),
            rejects_per_s=rate(t.rejects, last.rejects),
            timeouts_per_s=rate(t.timeouts, last.timeouts),
            closes_per_s=rate(t.closes, last.closes),
            drops_per_s=rate(t.drops, last.drops),
            handshake_p99_ms=percentile(self._handshake_ms, 0.99),
            cpu_pct=100.0 * (cpu_s - self._cpu_s) / elapsed_s,
            waves=waves,
            waves_start_s=self._bin_from * WAVE_BIN_MS / 1000,
        )
        self._last = Totals(**vars(t))
        self._rolled_s, self._cpu_s, self._bin_from = now_s, cpu_s, bin_to
        self._handshake_ms = []
        return self.latest
