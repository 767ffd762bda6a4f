"""A node's drain as the console saw it, kept after it goes: what the drain box says of a drain cancelled
with `u` (undrain), which the frames no longer carry — they say only that the node is back in rotation."""

from __future__ import annotations

from dataclasses import dataclass

from console.protocol import DrainProgress, Event, NodeState, NodeStatus

#: The states an undrain takes a node out of, back to ready (a drain's own end goes to drained, or to
#: restarting in a rollout; only an undrain goes from these straight to ready).
_DRAINING = (NodeState.DRAINING.value, NodeState.DRAINED.value)


@dataclass(frozen=True)
class DrainSeen:
    """The first and the newest progress the console saw of one drain (`started_at_s` tells drains apart);
    `from_start`: the first was seen within a frame of the drain's start, so the remaining's fall since is
    what it closed (a simulated node counts no closes of its own)."""

    first: DrainProgress
    last: DrainProgress
    from_start: bool

    @classmethod
    def of(
        cls, previous: DrainSeen | None, progress: DrainProgress, time_s: float, span_s: float = 1.0
    ) -> DrainSeen:
        """`previous` with `progress` seen at fleet second `time_s` (in a frame of `span_s` seconds)."""
        if previous is not None and previous.first.started_at_s == progress.started_at_s:
            return cls(previous.first, progress, previous.from_start)
        # A second of slack: a drain is stamped at its second's start, the frame at its end.
        return cls(progress, progress, time_s - progress.started_at_s <= span_s + 1.0)

    @property
    def closed(self) -> int | None:
        """Connections it closed: the node's own count (a real node), else the fall of its remaining since
        its start; None when the console saw it only part way (attached mid-drain)."""
        if self.last.closed:
            return self.last.closed
        return max(0, self.first.remaining - self.last.remaining) if self.from_start else None


@dataclass(frozen=True)
class CancelledDrain:
    at_s: float  # fleet second of the undrain's state change
    closed: int | None  # None: not known (`DrainSeen.closed`)


def cancelled_drain(node: NodeStatus, events: list[Event], seen: DrainSeen | None) -> CancelledDrain | None:
    """The drain this node's newest state change cancelled — draining or drained straight back to ready,
    an undrain — while it is still ready with no drain; `events` the node's, newest first; `seen` what the
    console kept of its drain (`FleetModel.drains_seen`), for how many it had closed."""
    if node.drain is not None or node.state is not NodeState.READY:
        return None
    change = next((event for event in events if event.kind == "node_state"), None)
    if change is None or change.data.get("from") not in _DRAINING or change.data.get("to") != NodeState.READY:
        return None
    return CancelledDrain(change.time_s, seen.closed if seen is not None else None)
