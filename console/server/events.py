"""Coalescing a second's burst of like events into one. Pure.

In a storm a single second can raise hundreds of events that differ only in their node ("gw-001
restarted: ready → restarting" on 200 nodes). Each is a WebSocket message to every client: 250 × 50
clients is 12,500 sends, which at ~11 µs each holds the server's loop for ~140 ms (measured with `bench
server --storm-at`). One event naming the 250 nodes says the same thing, reads better at 4 a.m., and costs
one send per client. The merged event has `node` null and the nodes in `data.nodes`, as a rollout batch's
event does; `Event.node_ids()` reads both forms.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from console.protocol import Event

#: A second's alike events on more nodes than this go out as one (`sim serve --coalesce-events`). A
#: rollout batch of 30 is one line; a drain of a node or two keeps its own.
COALESCE_OVER = 10

_NODE = "\x00node\x00"  # where the event's own node id stood in its message


def coalesce_events(events: Sequence[Event], over: int) -> list[Event]:
    """Events of one second with more than `over` alike — same kind and data, and the same message but
    for the node's own id — become one event with `node` null and `data.nodes` listing the nodes in order.
    Order is kept: the merged event stands where the first of its group stood."""
    groups: dict[tuple[float, str, str, str], list[Event]] = {}
    for event in events:
        if event.node is not None:
            groups.setdefault(_likeness(event), []).append(event)
    merged: list[Event] = []
    placed: set[tuple[float, str, str, str]] = set()
    for event in events:
        key = _likeness(event) if event.node is not None else None
        if key is None or len(groups[key]) <= over:
            merged.append(event)
        elif key not in placed:
            placed.add(key)
            nodes = [member.node for member in groups[key]]
            merged.append(
                event.model_copy(
                    update={
                        "node": None,
                        "message": _group_message(key[2], len(nodes)),
                        "data": {**event.data, "nodes": nodes},
                    }
                )
            )
    return merged


def _likeness(event: Event) -> tuple[float, str, str, str]:
    assert event.node is not None
    # The id alone, not inside a longer one ("gw-1" in "gw-12").
    message = re.sub(rf"(?<![\w.-]){re.escape(event.node)}(?![\w.-])", _NODE, event.message)
    return (event.time_s, event.kind, message, json.dumps(event.data, sort_keys=True, default=str))


def _group_message(message: str, count: int) -> str:
    """On 200 nodes, "gw-001 restarted: …" reads "200 nodes restarted: …", and "ready → down" (a message
    without its node's id) reads "200 nodes: ready → down"."""
    if _NODE in message:
        return message.replace(_NODE, f"{count} nodes")
    return f"{count} nodes: {message}"
