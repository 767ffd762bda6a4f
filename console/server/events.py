"""Coalescing a tick's burst of like events into one. Pure.

In a storm a single second can raise hundreds of events that differ only in their node ("ready → down"
on 250 nodes). Each is a WebSocket message to every client: 250 × 50 clients is 12,500 sends, which at
~11 µs each holds the server's loop for ~140 ms (measured with `bench server --storm-at`). One event
naming the 250 nodes says the same thing, reads better at 4 a.m., and costs one send per client.
Off unless the server is asked (`create_app(coalesce_events_over=N)`): a console that lists a node's
events by `event.node` must also look in `data["nodes"]` once it is on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from console.protocol import Event


def coalesce_events(events: Sequence[Event], over: int) -> list[Event]:
    """Events of one tick with more than `over` alike (same kind, message and data, each on one node)
    become one event with `node` null and `data.nodes` listing the nodes in order. Order is kept: the
    merged event stands where the first of its group stood."""
    groups: dict[tuple[str, str, str], list[Event]] = {}
    for event in events:
        if event.node is not None:
            groups.setdefault(_likeness(event), []).append(event)
    merged: list[Event] = []
    placed: set[tuple[str, str, str]] = set()
    for event in events:
        key = _likeness(event) if event.node is not None else None
        if key is None or len(groups[key]) <= over:
            merged.append(event)
        elif key not in placed:
            placed.add(key)
            group = groups[key]
            nodes = [member.node for member in group]
            merged.append(
                event.model_copy(
                    update={
                        "node": None,
                        "message": f"{len(nodes)} nodes: {event.message}",
                        "data": {**event.data, "nodes": nodes},
                    }
                )
            )
    return merged


def _likeness(event: Event) -> tuple[str, str, str]:
    return (event.kind, event.message, json.dumps(event.data, sort_keys=True, default=str))


def names_node(event: Event, node_id: str) -> bool:
    """Whether the event is about the node, alone or as one of a coalesced group."""
    return event.node == node_id or node_id in (event.data.get("nodes") or ())
