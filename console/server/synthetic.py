"""A synthetic fleet backend: plausible frames for any node count at almost no CPU, from one seed.

For benchmarks of the transport and the console (a 2000-node stream at 1 Hz, issue #3 section 6), where
the simulator's own cost would blur what is measured. It is not a model of anything: figures wander
around steady values, and a wave of reconnects arrives every `wave_period_s`.
"""

from __future__ import annotations

import asyncio

import numpy as np

from console.protocol import (
    WAVE_BIN_MS,
    AdmissionSettings,
    FleetSnapshot,
    Frame,
    NodeState,
    NodeStatus,
    RolloutStatus,
    Source,
    Totals,
    Waves,
)
from console.server.backend import Tick, fold_frames

#: 13 M clients over 480 nodes (outage seed): about 27 k connections a node.
CONNECTIONS_PER_NODE = 27_000
BINS_PER_S = 1000 // WAVE_BIN_MS


class SyntheticFleet:
    source = Source.SIMULATOR
    clock_control = True

    def __init__(
        self, nodes: int = 2000, seed: int = 7, wave_period_s: int = 20, fleet_name: str = "synthetic"
    ):
        self.fleet_name = fleet_name
        self.node_ids = [f"gw-{index:04d}" for index in range(nodes)]
        self.wave_period_s = wave_period_s
        self._random = np.random.default_rng(seed)
        self._connections = np.full(nodes, CONNECTIONS_PER_NODE, dtype=np.int64)
        self._time_s = 0

    def _frame(self) -> tuple[Frame, FleetSnapshot]:
        count = len(self.node_ids)
        in_wave = self._time_s % self.wave_period_s < 3
        self._connections += self._random.integers(-40, 41, count)
        attempts = self._random.gamma(4.0, 0.5 if not in_wave else 40.0, count)
        cpu = np.clip(30 + self._random.normal(0, 3, count) + (25 if in_wave else 0), 0, 100)
        rejects = np.where(in_wave, attempts * 0.2, 0.0)
        nodes = [
            NodeStatus(
                id=node_id,
                state=NodeState.READY,
                connections=int(self._connections[index]),
                cpu_pct=round(float(cpu[index]), 1),
                attempts_per_s=round(float(attempts[index]), 2),
                accepts_per_s=round(float(attempts[index] - rejects[index]), 2),
                rejects_per_s=round(float(rejects[index]), 2),
                timeouts_per_s=0.0,
                handshake_p99_ms=round(float(8 + cpu[index] / 4), 1),
                capacity_connections=40_000,
            )
            for index, node_id in enumerate(self.node_ids)
        ]
        total = int(self._connections.sum())
        totals = Totals(
            connections=total,
            attempts_per_s=float(attempts.sum()),
            accepts_per_s=float((attempts - rejects).sum()),
            rejects_per_s=float(rejects.sum()),
            headroom_pct=round(100 * (1 - total / (40_000 * count)), 1),
            drain_inflow_ratio=None,
            max_cpu_pct=float(cpu.max()),
        )
        # In a wave, attempts bunch into every other 100 ms bin: lockstep, as the outage seed describes.
        shape = np.array([1.9, 0.1] * (BINS_PER_S // 2)) if in_wave else np.ones(BINS_PER_S)
        bins = self._random.poisson(attempts.sum() / BINS_PER_S * shape)
        rollout, admission = (
            RolloutStatus(),
            AdmissionSettings(rate_per_s=None, max_connections=None, retry_after_s=(1.0, 30.0)),
        )
        frame = Frame(
            seq=0,
            epoch="",
            time_s=float(self._time_s),
            nodes=nodes,
            totals=totals,
            waves=Waves(attempts=[int(value) for value in bins]),
            rollout=rollout,
            admission=admission,
        )
        snapshot = FleetSnapshot(
            fleet=self.fleet_name,
            source=self.source,
            time_s=float(self._time_s),
            nodes=nodes,
            totals=totals,
            rollout=rollout,
            admission=admission,
        )
        return frame, snapshot

    async def start(self) -> FleetSnapshot:
        return (await asyncio.to_thread(self._frame))[1]

    async def tick(self, fleet_seconds: int, budget_s: float) -> Tick:
        return await asyncio.to_thread(self._advance, fleet_seconds)

    def _advance(self, fleet_seconds: int) -> Tick:
        frames = []
        snapshot = None
        for _ in range(max(1, fleet_seconds)):
            self._time_s += 1
            frame, snapshot = self._frame()
            frames.append(frame)
        assert snapshot is not None
        return Tick(fold_frames(frames), [], snapshot, len(frames))

    async def close(self) -> None:
        return None
