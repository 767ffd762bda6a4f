"""A small deterministic backend for the server's tests: a test fixture, not a product backend.

Every figure is a function of the fleet second, so a test can predict what a frame holds.
"""

from __future__ import annotations

import asyncio

from console.protocol import (
    AdmissionSettings,
    Event,
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

BINS_PER_S = 10


class ScriptedFleet:
    """`nodes` nodes; node i holds 1000 + i + t connections at fleet second t; node-0 emits an event
    every 5th second."""

    clock_control = True

    def __init__(
        self, nodes: int = 4, fleet_name: str = "scripted", source: Source = Source.SIMULATOR
    ) -> None:
        self.fleet_name = fleet_name
        self.source = source
        self.node_ids = [f"node-{index}" for index in range(nodes)]
        self.time_s = 0
        self.ticks_asked: list[int] = []
        self.headroom_pct = 50.0
        self.closed = False

    def _nodes(self) -> list[NodeStatus]:
        return [
            NodeStatus(
                id=node_id,
                state=NodeState.READY,
                connections=1000 + index + self.time_s,
                cpu_pct=20.0 + index,
                attempts_per_s=5.0,
                accepts_per_s=5.0,
                rejects_per_s=0.0,
                timeouts_per_s=0.0,
                handshake_p99_ms=12.0,
            )
            for index, node_id in enumerate(self.node_ids)
        ]

    def _totals(self, nodes: list[NodeStatus]) -> Totals:
        return Totals(
            connections=sum(node.connections for node in nodes),
            attempts_per_s=5.0 * len(nodes),
            accepts_per_s=5.0 * len(nodes),
            rejects_per_s=0.0,
            headroom_pct=self.headroom_pct,
            drain_inflow_ratio=None,
        )

    def snapshot(self) -> FleetSnapshot:
        nodes = self._nodes()
        return FleetSnapshot(
            fleet=self.fleet_name,
            source=self.source,
            time_s=float(self.time_s),
            nodes=nodes,
            totals=self._totals(nodes),
            rollout=RolloutStatus(),
            admission=AdmissionSettings(rate_per_s=None, max_connections=None, retry_after_s=(1.0, 30.0)),
        )

    def advance(self) -> tuple[Frame, list[Event]]:
        self.time_s += 1
        nodes = self._nodes()
        # Garbage seq/epoch on purpose: the server must overwrite them.
        frame = Frame(
            seq=-7,
            epoch="backend-epoch",
            time_s=float(self.time_s),
            nodes=nodes,
            totals=self._totals(nodes),
            waves=Waves(attempts=[self.time_s] * BINS_PER_S),
        )
        events = []
        if self.time_s % 5 == 0:
            events.append(
                Event(time_s=float(self.time_s), kind="node_state", node="node-0", message="tick five")
            )
        return frame, events

    async def start(self) -> FleetSnapshot:
        return self.snapshot()

    async def tick(self, fleet_seconds: int, budget_s: float) -> Tick:
        self.ticks_asked.append(fleet_seconds)
        frames, events = [], []
        for _ in range(fleet_seconds):
            frame, new_events = self.advance()
            frames.append(frame)
            events.extend(new_events)
        await asyncio.sleep(0)
        return Tick(fold_frames(frames), events, self.snapshot(), fleet_seconds)

    async def close(self) -> None:
        self.closed = True
