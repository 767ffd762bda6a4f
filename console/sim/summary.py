"""What a run shows: the figures `stormdeck sim run` prints (issue #2, "Contract").

`RunRecorder` takes each simulated second (arrays, not records) and `summary()` computes the figures.
Pure: the wall time is passed in by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from console.figures import EVENT_EXCLUSION_S, RECOVERED_SHARE, Lockstep, recovery, storm_lockstep_index
from console.sim import kernel as k
from console.sim.engine import SecondResult, Simulation
from console.waves import to_hundredths

__all__ = ["EVENT_EXCLUSION_S", "RECOVERED_SHARE", "RunRecorder"]


@dataclass
class RunRecorder:
    sim: Simulation
    times: list[float] = field(default_factory=list)
    connections: list[int] = field(default_factory=list)
    bins: list[np.ndarray] = field(default_factory=list)
    max_cpu: list[float] = field(default_factory=list)
    # Each second's totals over the nodes and its fleet figures, summed when the summary is asked for (per
    # second, a float of each was most of a quiet second's bookkeeping). Whole numbers: exact in any order.
    node_totals: list[np.ndarray] = field(default_factory=list)
    fleet: list[np.ndarray] = field(default_factory=list)
    draining_closes: float = 0.0
    draining_node_seconds: int = 0
    disconnect_times: list[float] = field(default_factory=list)

    def record(self, result: SecondResult) -> None:
        self.times.append(result.time_s)
        self.connections.append(result.connections_total)
        self.bins.append(result.bins)  # (each second's own array: nothing writes to it again)
        self.max_cpu.append(result.max_cpu_pct)
        assert result.node_totals is not None  # (summed over the nodes by the kernel)
        self.node_totals.append(result.node_totals)
        self.fleet.append(result.fleet_out)
        if result.draining:
            n = self.sim.n_nodes
            out = result.node_out[:, :n]
            draining = result.states[:n] == k.DRAINING
            # A draining second counts while the node still had something to close.
            active = draining & ((out[k.ON_CLOSES] > 0) | (result.connections[:n] > 0))
            # The rate is the paced closes; what the deadline force-closes is reported on its own.
            self.draining_closes += float((out[k.ON_CLOSES] - out[k.ON_FORCED])[active].sum())
            self.draining_node_seconds += int(active.sum())
        for event in result.events:
            if event.data.get("mass"):
                # The event happened at the start of this second.
                start = result.time_s - 1.0
                if not self.disconnect_times or self.disconnect_times[-1] != start:
                    self.disconnect_times.append(start)

    def summary(self, wall_s: float, alarms_fired: dict[str, float] | None = None) -> dict[str, Any]:
        conns = np.array(self.connections, dtype=np.float64)
        times = np.array(self.times)
        bins = np.concatenate(self.bins) if self.bins else np.zeros(0, dtype=np.int64)
        min_index = int(conns.argmin()) if conns.size else 0
        first = self.disconnect_times[0] if self.disconnect_times else None
        recovery_s, recovered_at = self._recovery(conns, times, first)
        rollout = self.sim.rollout
        totals = np.sum(self.node_totals, axis=0) if self.node_totals else np.zeros(k.ON_FIELDS)
        fleet = np.array(self.fleet) if self.fleet else np.zeros((0, k.OF_FIELDS))
        backlog = fleet[:, k.OF_RESYNC_BACKLOG].astype(np.int64)
        lockstep = self._lockstep(bins, first, recovered_at)
        return {
            "scenario": self.sim.scenario.name,
            "seed": self.sim.seed,
            "clients": self.sim.scenario.clients.count,
            "nodes": self.sim.n_nodes,
            "nodes_at_start": self.sim.scenario.nodes.count,
            "simulated_s": float(times[-1]) if times.size else 0.0,
            "peak_attempts_per_100ms": int(bins.max()) if bins.size else 0,
            # null when not measured (0.0 read as measured and smoother than a smooth smear), and why
            "lockstep_index": to_hundredths(lockstep.index),
            "lockstep_note": lockstep.unmeasured,
            "min_connections": int(conns.min()) if conns.size else 0,
            "min_connections_at_s": float(times[min_index]) if conns.size else 0.0,
            "recovery_s": recovery_s,
            "max_node_cpu_pct": round(max(self.max_cpu, default=0.0), 1),
            "rejects_total": int(totals[k.ON_REJECTS]),
            "timeouts_total": int(totals[k.ON_TIMEOUTS]),
            "full_resyncs_total": int(fleet[:, k.OF_RESYNCS].sum()),
            "peak_resync_backlog": int(backlog.max()) if backlog.size else 0,
            "resync_backlog_cleared_s": self._backlog_cleared(backlog, times, first),
            "drain_close_rate_per_s": (
                round(self.draining_closes / self.draining_node_seconds, 1)
                if self.draining_node_seconds
                else None
            ),
            "forced_closes_total": int(totals[k.ON_FORCED]),
            # How long the rollout took (its start to its completion); the fleet seconds of both beside it,
            # so a reader need not guess which of the two "completed 240 s" meant.
            "rollout_completed_s": (
                round(rollout.completed_at_s - (rollout.started_at_s or 0.0), 1)
                if rollout.completed_at_s is not None
                else None
            ),
            "rollout_started_at_s": _seconds(rollout.started_at_s),
            "rollout_completed_at_s": _seconds(rollout.completed_at_s),
            "rollout_state": rollout.state.value,
            "rollout_note": rollout.pause_reason,
            "alarms_fired": alarms_fired or {},
            "wall_s": round(wall_s, 2),
        }

    def _backlog_cleared(self, backlog: np.ndarray, times: np.ndarray, first: float | None) -> float | None:
        """Seconds from the first disconnecting event until the full-resync backlog is empty for good."""
        if first is None or not backlog.size or backlog.max() == 0:
            return None
        busy = np.flatnonzero(backlog > 0)
        if busy[-1] == backlog.size - 1:
            return None
        return round(float(times[busy[-1] + 1]) - first, 1)

    def _recovery(
        self, conns: np.ndarray, times: np.ndarray, first: float | None
    ) -> tuple[float | None, float]:
        """Seconds from the first disconnecting event until connections are back to ≥ 95 % for good."""
        return recovery(conns, times, first)

    def _lockstep(self, bins: np.ndarray, first: float | None, until: float) -> Lockstep:
        """lockstep_index over the storm window, each stretch between excluded spans judged on its own."""
        return storm_lockstep_index(bins, self.disconnect_times if first is not None else [], until)


def _seconds(time_s: float | None) -> float | None:
    return None if time_s is None else round(float(time_s), 1)
