"""A recording's frames as columns: one value a frame, at the frames' fleet times, and the wave bins.

The key figures, the charts and the findings read these columns, never the frames again. Pure: frames in.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from console.figures import BINS_PER_S
from console.guards.capacity import NodeRoom, node_room
from console.guards.rollout import HALTABLE, UNDRAINABLE
from console.protocol import TOTAL_COUNTERS, AdmissionInForce, Frame, RolloutState


@dataclass
class Series:
    """One value a frame, at the frames' fleet times; wave bins at 100 ms from `bins_start_s`."""

    times_s: list[float] = field(default_factory=list)
    connections: list[int] = field(default_factory=list)
    attempts_per_s: list[float] = field(default_factory=list)
    rejects_per_s: list[float] = field(default_factory=list)
    timeouts_per_s: list[float] = field(default_factory=list)
    headroom_pct: list[float] = field(default_factory=list)
    max_cpu_pct: list[float] = field(default_factory=list)
    hottest_node: list[str | None] = field(default_factory=list)
    span_s: list[float] = field(default_factory=list)
    epochs: list[str] = field(default_factory=list)
    #: The frames' running counts (`totals.*_total`), None where a frame has none (an older source).
    running: dict[str, list[int | None]] = field(
        default_factory=lambda: {name: [] for name in TOTAL_COUNTERS}
    )
    rollout_running: list[bool] = field(default_factory=list)
    admission_limited: list[bool] = field(default_factory=list)
    #: Each frame's `max_nodes` (None where it does not say: an older server or recording) and its nodes,
    #: every state counted: the fleet's room then (`room_at`), which the findings advise "add capacity" by.
    max_nodes: list[int | None] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)
    #: What else a fleet without room could do then, as headroom_low's advice names it: a rollout to halt
    #: (running or paused), and how many nodes were out of rotation to undrain (draining or drained).
    rollout_haltable: list[bool] = field(default_factory=list)
    out_of_rotation: list[int] = field(default_factory=list)
    bins: list[int] = field(default_factory=list)
    bins_start_s: float = 0.0

    def add(self, frame: Frame) -> None:
        if not self.times_s:
            self.bins_start_s = frame.time_s - len(frame.waves.attempts) / BINS_PER_S
        self.times_s.append(frame.time_s)
        totals = frame.totals
        self.connections.append(totals.connections)
        self.attempts_per_s.append(totals.attempts_per_s)
        self.rejects_per_s.append(totals.rejects_per_s)
        self.timeouts_per_s.append(totals.timeouts_per_s)
        # A server running faster than real time sends one frame per several fleet seconds (`span_s`, a
        # field the server adds); its rates are the last second's, so they stand for the whole span.
        self.span_s.append(float(getattr(frame, "span_s", 1.0) or 0.0))
        self.epochs.append(frame.epoch)
        for name, values in self.running.items():
            values.append(getattr(totals, name, None))
        self.headroom_pct.append(totals.headroom_pct)
        hottest = max(frame.nodes, key=lambda n: n.cpu_pct, default=None)
        self.max_cpu_pct.append(max(hottest.cpu_pct if hottest else 0.0, totals.max_cpu_pct))
        self.hottest_node.append(hottest.id if hottest else None)
        self.rollout_running.append(frame.rollout is not None and frame.rollout.state is RolloutState.RUNNING)
        # Set on some nodes only (`admission_overrides`), a limit is in force all the same.
        in_force = AdmissionInForce.of(frame, ())
        self.admission_limited.append(in_force is not None and in_force.limits_rate)
        self.max_nodes.append(frame.max_nodes)
        self.nodes.append(len(frame.nodes))
        self.rollout_haltable.append(frame.rollout is not None and frame.rollout.state in HALTABLE)
        self.out_of_rotation.append(sum(node.state in UNDRAINABLE for node in frame.nodes))
        # Bins land at their place in time, so a gap in the recording stays a gap.
        end = round((frame.time_s - self.bins_start_s) * BINS_PER_S)
        start = end - len(frame.waves.attempts)
        if start < len(self.bins):  # overlap (a restarted source): keep the newest
            del self.bins[max(start, 0) :]
        self.bins.extend([0] * (max(start, 0) - len(self.bins)))
        self.bins.extend(frame.waves.attempts[max(-start, 0) :])

    def frame_at(self, time_s: float) -> int | None:
        """The index of the newest frame at or before `time_s`; None before the first."""
        i = bisect_right(self.times_s, time_s) - 1
        return i if 0 <= i < len(self.max_nodes) else None

    def room_at(self, time_s: float) -> NodeRoom | None:
        """The fleet's room as the newest frame at or before `time_s` said it (the add guard's rule,
        `NodeRoom`); None where that frame does not say, or there is none."""
        i = self.frame_at(time_s)
        return None if i is None else node_room(self.max_nodes[i], self.nodes[i])
