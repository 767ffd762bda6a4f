"""A rollout's plan and the states it moves through: one rule for both backends and the guards."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from console.errors import InputError
from console.figures import first_named
from console.protocol import (
    FleetSnapshot,
    NodeState,
    RolloutState,
)

T = TypeVar("T")


def plan_batches(nodes: Sequence[T], batch_size: int) -> list[list[T]]:
    """A rollout's plan, one rule for both backends and the guard that projects it: every node of the
    fleet, in the fleet's order, `batch_size` at a time — nodes out of rotation (drained, draining, down)
    included, as their batches come to them. The guard counted only the nodes in rotation: on a 3-node
    fleet with one drained its verdict said 2 batches where the controller ran 3."""
    if batch_size < 1:
        raise InputError("batch_size", batch_size, "an integer ≥ 1")
    return [list(nodes[k : k + batch_size]) for k in range(0, len(nodes), batch_size)]


ACTIVE = frozenset({RolloutState.RUNNING, RolloutState.PAUSED})
RESUMABLE = frozenset({RolloutState.PAUSED, RolloutState.HALTED})
HALTABLE = (RolloutState.RUNNING, RolloutState.PAUSED)

#: States `undrain` takes back into rotation (judge_undrain in console.guards.drain; the one set).
UNDRAINABLE = frozenset({NodeState.DRAINING, NodeState.DRAINED})


def stopped_on_batch(snapshot: FleetSnapshot) -> list[str]:
    """The nodes of the batch a paused or halted rollout stopped on (`batch` k of its plan), by the plan
    both backends run (`plan_batches` over the fleet's order); none before its first batch, or where the
    status does not say its batch size (an older source)."""
    rollout = snapshot.rollout
    if not rollout.batch or not rollout.batch_size:
        return []
    batches = plan_batches([node.id for node in snapshot.nodes], rollout.batch_size)
    return batches[rollout.batch - 1] if rollout.batch <= len(batches) else []


def undrain_first(snapshot: FleetSnapshot, resuming: bool = False) -> str:
    """The nodes out of rotation an operator can put back, "undrain gw-004, gw-005 first": capacity a fleet
    that cannot add nodes still has (headroom counts the nodes in rotation, and each takes its share of a
    batch's or a drain's clients) — the rollout and drain guards' move where an add is refused. `resuming`: not those of the batch the paused or halted rollout stopped on — undrained,
    the rollout halts on them and its resume drains them again (docs/actions.md). Empty when there are none."""
    stopped_on = set(stopped_on_batch(snapshot)) if resuming else set()
    out = [n.id for n in snapshot.nodes if n.state in UNDRAINABLE and n.id not in stopped_on]
    return f"undrain {first_named(out)} first" if out else ""
