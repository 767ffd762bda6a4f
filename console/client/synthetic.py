"""A seeded, synthetic fleet stream: frames and events without a server.

For the screenshots, the snapshot tests and `stormdeck bench console` — places that need the same
deterministic storm every time and must not depend on the simulator's engine. It is a picture of a storm,
not a model of one: a share of the nodes dies at `storm_at_s`, their clients retry in lockstep waves
(the outage seed's fixed-interval backoff), admission sheds the excess with 503s, and they drain back.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from console.figures import headroom_pct
from console.protocol import WAVE_BIN_MS

_CAPACITY_PER_NODE = 40_000
_BINS_PER_S = 1000 // WAVE_BIN_MS


class SyntheticFleet:
    def __init__(
        self,
        nodes: int = 48,
        seed: int = 7,
        storm_at_s: float | None = 30.0,
        fleet: str = "demo-fleet",
        load: float = 0.5,
        failed_share: float = 0.125,
        lockstep: bool = True,
        epoch: str = "e1",
    ) -> None:
        self.fleet = fleet
        self.epoch = epoch
        self.storm_at_s = storm_at_s
        self.lockstep = lockstep
        self._rng = np.random.default_rng(seed)
        self.ids = [f"gw-{i:04d}" for i in range(nodes)]
        self.connections = (_CAPACITY_PER_NODE * load * self._rng.uniform(0.95, 1.05, nodes)).astype(np.int64)
        self.down = np.zeros(nodes, dtype=bool)
        self.failed = self._rng.choice(nodes, size=max(1, int(nodes * failed_share)), replace=False)
        self.draining = int(self._rng.integers(nodes))
        self.offline = 0
        self.admission_rate_per_s = 150.0
        self.seq = 0

    def hello(self, recovered: bool | None = None) -> dict[str, Any]:
        return {
            "type": "hello",
            "fleet": self.fleet,
            "source": "simulator",
            "epoch": self.epoch,
            "seq": self.seq,
            "recovered": recovered,
        }

    def _waves(self, attempts_per_s: float, t: float) -> list[int]:
        if self.lockstep and self.offline > 0:
            # Fixed-interval retries: the whole cohort lands in one or two bins a second.
            weights = np.full(_BINS_PER_S, 0.02)
            peak = int(t * 3) % _BINS_PER_S
            weights[peak] = 1.0
            weights[(peak + 1) % _BINS_PER_S] = 0.35
        else:
            weights = np.ones(_BINS_PER_S)
        weights = weights / weights.sum()
        return [int(v) for v in self._rng.multinomial(int(attempts_per_s), weights)]

    def next_frame(self) -> dict[str, Any]:
        self.seq += 1
        t = float(self.seq)
        n = len(self.ids)
        rng = self._rng
        if self.storm_at_s is not None and t == self.storm_at_s:
            self.offline += int(self.connections[self.failed].sum())
            self.connections[self.failed] = 0
            self.down[self.failed] = True
        ready = ~self.down
        ready[self.draining] = False
        steady = self.connections.sum() / 1800.0  # lifetime churn (Zuul: 1800 s lifetime)
        storm_attempts = self.offline * (0.45 if self.lockstep else 0.2)
        attempts_node = np.where(ready, steady / max(ready.sum(), 1), 0.0)
        attempts_node = attempts_node + np.where(ready, storm_attempts / max(ready.sum(), 1), 0.0)
        attempts_node *= rng.uniform(0.9, 1.1, n)
        accepts_node = np.minimum(attempts_node, self.admission_rate_per_s)
        rejects_node = attempts_node - accepts_node
        room = np.maximum(_CAPACITY_PER_NODE - self.connections, 0)
        gained = np.minimum(accepts_node - np.where(ready, steady / max(ready.sum(), 1), 0.0), room)
        gained = np.maximum(gained, 0).astype(np.int64)
        gained_total = int(min(gained.sum(), self.offline))
        if gained.sum() > 0:
            gained = (gained * gained_total // max(gained.sum(), 1)).astype(np.int64)
        self.connections += gained
        self.offline = max(0, self.offline - int(gained.sum()))
        drain_rate = 40.0
        self.connections[self.draining] = max(0, int(self.connections[self.draining] - drain_rate))
        load = self.connections / _CAPACITY_PER_NODE
        cpu = np.clip(22 + 40 * load + np.minimum(attempts_node / 8.0, 24.0) + rng.normal(0, 3, n), 0, 100)
        cpu[self.down] = 0
        p99 = 40 + 900 * np.clip(attempts_node / 400.0, 0, 3) + rng.uniform(0, 15, n)
        timeouts = np.where(p99 > 900, rejects_node * 0.05, 0.0)
        states = np.where(self.down, "down", "ready").astype(object)
        states[self.draining] = "draining"
        nodes = []
        for i, node_id in enumerate(self.ids):
            node: dict[str, Any] = {
                "id": node_id,
                "state": states[i],
                "connections": int(self.connections[i]),
                "cpu_pct": round(float(cpu[i]), 1),
                "attempts_per_s": round(float(attempts_node[i]), 1),
                "accepts_per_s": round(float(accepts_node[i]), 1),
                "rejects_per_s": round(float(rejects_node[i]), 1),
                "timeouts_per_s": round(float(timeouts[i]), 1),
                "handshake_p99_ms": round(float(p99[i]), 1),
                "capacity_connections": _CAPACITY_PER_NODE,
                "drain": None,
            }
            if i == self.draining:
                remaining = int(self.connections[i])
                node["drain"] = {
                    "remaining": remaining,
                    "rate_per_s": drain_rate,
                    "hint_ms": [1000, 30000],
                    "started_at_s": 0.0,
                    "deadline_at_s": 600.0,
                    "eta_s": remaining / drain_rate,
                }
            nodes.append(node)
        in_rotation_conns = self.connections[ready].sum()
        capacity = float(ready.sum() * _CAPACITY_PER_NODE)
        headroom = headroom_pct(float(in_rotation_conns), capacity, places=1)
        inflow = float(attempts_node.sum())
        drained = float(accepts_node.sum())
        return {
            "type": "frame",
            "seq": self.seq,
            "epoch": self.epoch,
            "time_s": t,
            "nodes": nodes,
            "totals": {
                "connections": int(self.connections.sum()),
                "attempts_per_s": round(inflow, 1),
                "accepts_per_s": round(drained, 1),
                "rejects_per_s": round(float(rejects_node.sum()), 1),
                "headroom_pct": headroom,
                "drain_inflow_ratio": round(drained / inflow, 3) if self.offline > 0 and inflow > 0 else None,
                "timeouts_per_s": round(float(timeouts.sum()), 1),
                "offline_clients": self.offline,
                "max_cpu_pct": round(float(cpu.max()), 1),
            },
            "waves": {"bin_ms": WAVE_BIN_MS, "attempts": self._waves(inflow, t)},
            "rollout": {"state": "idle", "batch": 0, "batches": 0},
            "admission": {
                "rate_per_s": self.admission_rate_per_s,
                "burst": 300,
                "max_connections": _CAPACITY_PER_NODE,
                "retry_after_s": [1.0, 30.0],
            },
        }

    def events_at(self, t: float) -> list[dict[str, Any]]:
        if t == 1.0:
            node = self.ids[self.draining]
            event = {"type": "event", "time_s": t, "node": node}
            return [
                {**event, "kind": "node_state", "message": "ready → draining"},
                {**event, "kind": "action", "message": "drain 40/s, deadline 600 s"},
            ]
        if self.storm_at_s is None or t != self.storm_at_s:
            return []
        return [
            {
                "type": "event",
                "time_s": t,
                "kind": "node_state",
                "node": self.ids[i],
                "message": "ready → down",
            }
            for i in sorted(self.failed.tolist())
        ]

    def next_messages(self) -> list[str]:
        """The next frame and the events that happened with it, as stream text."""
        frame = self.next_frame()
        events = self.events_at(frame["time_s"])
        return [json.dumps(event) for event in events] + [json.dumps(frame)]
