"""The nodes a drain takes out of rotation, and what of each its deadline force-closes: one rule for the
planner and the verdict."""

from __future__ import annotations

from collections.abc import Sequence

from console.errors import InputError
from console.guards.deadline import force_closed
from console.guards.fleet import find_nodes
from console.protocol import FleetSnapshot, NodeState, NodeStatus

__all__ = ["force_closed", "leaving_nodes"]


def leaving_nodes(snapshot: FleetSnapshot, node_ids: str | Sequence[str]) -> list[NodeStatus]:
    """The nodes a drain takes out of rotation, each of them in it (ready): `InputError` naming `node`
    otherwise."""
    ids = [node_ids] if isinstance(node_ids, str) else list(node_ids)
    nodes = find_nodes(snapshot, ids, field="node")
    for node in nodes:
        if node.state is not NodeState.READY:
            raise InputError("node", node.id, f"a node in rotation (state ready); it is {node.state.value}")
    return nodes
