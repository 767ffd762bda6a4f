"""A node's history as the server holds it (`GET /v1/nodes/{id}`), joined to what the console has seen.

When the console attaches mid-storm it holds only the frames since; the server holds minutes more. The
detail screen shows the server's samples up to the moment it asked, then the frames that came after.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from console.model.history import NODE_METRICS
from console.protocol import Event, NodeState, NodeStatus


@dataclass
class ServerHistory:
    """What `GET /v1/nodes/{id}` returned, as series per metric, and when (frames applied at the time)."""

    series: dict[str, np.ndarray] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    frames_applied_at_fetch: int = 0

    @property
    def length(self) -> int:
        return max((values.size for values in self.series.values()), default=0)


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return float("nan")
    return float(value)


def parse_node_detail(payload: Any, frames_applied: int) -> ServerHistory:
    """Tolerant: a sample or event that does not parse is skipped, never raised (the server may be newer)."""
    if not isinstance(payload, dict):
        return ServerHistory(frames_applied_at_fetch=frames_applied)
    samples = payload.get("history")
    samples = [s for s in samples if isinstance(s, dict)] if isinstance(samples, list) else []
    series = {
        name: np.array([_number(s.get(name)) for s in samples], dtype=np.float64) for name in NODE_METRICS
    }
    events: list[Event] = []
    for raw in payload.get("events") or []:
        try:
            events.append(Event.model_validate(raw))
        except ValueError:
            continue
    return ServerHistory(series, events, frames_applied)


def joined_series(
    server: ServerHistory | None, seen: np.ndarray, frames_applied: int, metric: str
) -> np.ndarray:
    """The server's samples, then the frames the console applied after it asked; else what it has seen."""
    seen = np.asarray(seen, dtype=np.float64)
    if server is None or metric not in server.series:
        return seen
    since = max(0, frames_applied - server.frames_applied_at_fetch)
    after = seen[seen.size - since :] if since else seen[:0]
    joined = np.concatenate((server.series[metric], after))
    return joined if joined.size > seen.size else seen


def joined_events(server: ServerHistory | None, seen: list[Event], limit: int) -> list[Event]:
    """Newest first, without the duplicates both sides hold. `seen` is newest first (as
    `FleetModel.node_events` gives it); within a second, the later event comes first too — a batch's
    disconnect listed under the restart that caused it read as happening before it.

    A restarted server has a new epoch, and its events come after all of an earlier epoch's, whatever their
    times: a restarted simulator's clock starts again at 0 (a controller's goes on since it keeps its
    clock's origin, but one from before that, or without its state directory, started at 0 too) — sorted by
    time alone, the old controller's "0:01:02 restarting → ready" sat above the new one's "0:00:25 draining
    → down" and its drain's end. Epochs are ordered as they arrived; one only the server holds is the newest (the server
    asked is the one serving now)."""
    arrival: dict[str | None, int] = {}
    for event in reversed(seen):
        arrival.setdefault(event.epoch, len(arrival))
    for event in server.events if server else []:
        arrival.setdefault(event.epoch, len(arrival))
    merged: dict[tuple[str | None, float, str, str], Event] = {}
    for event in [*(server.events if server else []), *reversed(seen)]:  # both oldest first
        merged.setdefault((event.epoch, event.time_s, event.kind, event.message), event)
    return sorted(merged.values(), key=lambda e: (arrival[e.epoch], e.time_s))[::-1][:limit]


def ended_drain(node: NodeStatus, events: list[Event]) -> Event | None:
    """The event that ended this node's drain when the node went down (a real fleet's controller sends
    one, kind `drain`), while the node is still down after it; `events` newest first. Once the node is
    back, what its own frames say stands: draining (with progress) or not."""
    if node.drain is not None or node.state is not NodeState.DOWN:
        return None
    for event in events:
        if event.kind == "drain" and event.data.get("ended"):
            return event
        if event.kind == "node_state" and event.data.get("to") != NodeState.DOWN.value:
            return None  # it came back since: that drain is not this down's
    return None
