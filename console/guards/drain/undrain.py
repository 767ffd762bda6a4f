"""The undrain guard (`judge_undrain`): back into rotation is always `ok`; its checks warn of a node that
looks unhealthy, and ask first of one in the batch under way of a drain-mode rollout."""

from __future__ import annotations

from console.errors import InputError
from console.guards.fleet import find_nodes
from console.guards.rollout import ACTIVE, UNDRAINABLE, plan_batches
from console.guards.thresholds import Thresholds
from console.guards.verdict import note, verdict
from console.protocol import (
    Check,
    FleetSnapshot,
    RolloutMode,
    Verdict,
    VerdictLevel,
)

#: An undrain's move for a node that looks unhealthy: it is `ok` all the same (back into rotation is the
#: safe direction), so what is left to do comes after.
WATCH_IT = "watch it once it is back in rotation"


def judge_undrain(snapshot: FleetSnapshot, node_id: str, thresholds: Thresholds | None = None) -> Verdict:
    """Back into rotation: always `ok`; the checks only warn when the node looks unhealthy."""
    t = thresholds or Thresholds()
    (node,) = find_nodes(snapshot, [node_id], field="node")
    if node.state not in UNDRAINABLE:
        raise InputError("node", node_id, f"a draining or drained node; it is {node.state.value}")
    checks = [
        note(
            "node_cpu_pct",
            node.cpu_pct,
            t.cpu_pause_pct,
            ok=node.cpu_pct <= t.cpu_pause_pct,
            why="the node's CPU against the pause line",
            move=f": a hot node taking new connections again gets hotter — {WATCH_IT}",
        ),
        note(
            "node_timeouts_per_s",
            node.timeouts_per_s,
            0.0,
            ok=node.timeouts_per_s <= 0,
            # A passing 0 said "handshakes timing out on this node: it may not be healthy" of a healthy node.
            why="handshakes that time out on this node, per second",
            move=f": it may not be healthy — {WATCH_IT}",
        ),
    ]
    checks += _rollout_batch_check(snapshot, node.id)
    return verdict("undrain", checks, {"connections": node.connections})


def _rollout_batch_check(snapshot: FleetSnapshot, node_id: str) -> list[Check]:
    """A node draining in the batch under way of a running (or paused) drain-mode rollout: undrained, the
    rollout halts on it and its resume drains it again, on both backends — asked first, not found in the
    rollout panel afterwards (the simulator's rollout used to go on without restarting it)."""
    rollout = snapshot.rollout
    if rollout is None or rollout.state not in ACTIVE or rollout.mode is not RolloutMode.DRAIN:
        return []
    if not rollout.batch or not rollout.batch_size:
        return []
    batches = plan_batches([n.id for n in snapshot.nodes], rollout.batch_size)
    if rollout.batch > len(batches) or node_id not in batches[rollout.batch - 1]:
        return []
    return [
        Check(
            name="rollout_batch",
            value=f"batch {rollout.batch} of {rollout.batches}",
            limit="not in the batch under way",
            ok=False,
            level=VerdictLevel.CONFIRM,
            why=f"{node_id} drains in the rollout's batch {rollout.batch}: undrained, the rollout halts, and "
            f"its resume drains {node_id} again to restart it; left alone, the rollout restarts it with its "
            "batch and brings it back",
        )
    ]
