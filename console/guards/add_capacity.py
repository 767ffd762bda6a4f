"""Guards for adding capacity: the outage seed's fix ("stopping the restart and adding 200 nodes").

Adding nodes is the safe direction — it never takes a connection away — so the verdict is `ok` unless the
add is large against the fleet (a spend to confirm). What the operator needs to see is *when* it helps:
new nodes serve only once provisioned (the seed's 200 took 4 minutes), so the verdict projects the ready
time and the headroom then, and warns when the fleet is hot now (halt and shed load meanwhile) or when even
this add leaves headroom under the budget. A request beyond the fleet's room or the configured maximum is
bad input, naming `count` and the allowed range: nothing is judged, nothing applied.
"""

from __future__ import annotations

import math

from console.errors import InputError
from console.figures import headroom_pct
from console.guards.capacity import FleetCapacity, NodeRoom
from console.guards.fleet import fleet_load, max_serving_cpu_pct
from console.guards.rollout import ACTIVE
from console.guards.thresholds import Thresholds
from console.guards.verdict import check, verdict
from console.protocol import CapacityRequest, FleetSnapshot, NodeState, Verdict, VerdictLevel


def add_capacity_allowed(snapshot: FleetSnapshot, capacity: FleetCapacity, thresholds: Thresholds) -> int:
    """The most nodes one add may ask for now: the fleet's room, capped by `add_capacity_max_nodes`."""
    return min(NodeRoom(capacity.max_nodes, len(snapshot.nodes)).room, thresholds.add_capacity_max_nodes)


def check_count(snapshot: FleetSnapshot, capacity: FleetCapacity, count: int, thresholds: Thresholds) -> None:
    """`InputError` naming `count` and its range when the fleet cannot take `count` more nodes."""
    if capacity.max_nodes <= 0:
        raise InputError(
            "count",
            count,
            f"no nodes: fleet {snapshot.fleet!r} cannot add capacity (its backend provisions no nodes)",
        )
    allowed = add_capacity_allowed(snapshot, capacity, thresholds)
    if allowed < 1:
        raise InputError(
            "count", count, f"no nodes: fleet {snapshot.fleet!r} is at its most, {capacity.max_nodes} nodes"
        )
    if not 1 <= count <= allowed:
        room = capacity.max_nodes - len(snapshot.nodes)
        bound = (
            f"room left in the fleet: {room} of {capacity.max_nodes} nodes"
            if room <= thresholds.add_capacity_max_nodes
            else f"add_capacity_max_nodes = {thresholds.add_capacity_max_nodes}"
        )
        raise InputError("count", count, f"an integer in [1, {allowed}] ({bound})")


def nodes_for_headroom(snapshot: FleetSnapshot, capacity: FleetCapacity, headroom_pct: float) -> int | None:
    """The fewest nodes to add (beyond those already provisioning) for `headroom_pct` once all are ready;
    None when no number of nodes can give it (100 %)."""
    if headroom_pct >= 100:
        return None
    load = fleet_load(snapshot, capacity, ())
    provisioning = sum(node.state is NodeState.PROVISIONING for node in snapshot.nodes)
    needed_connections = load.serving_connections / (1 - headroom_pct / 100)
    short = needed_connections - load.survivor_capacity_connections
    return max(math.ceil(short / capacity.connections_per_node - provisioning), 0)


def _headroom_move(snapshot: FleetSnapshot, capacity: FleetCapacity, thresholds: Thresholds) -> str:
    """The add that brings headroom back to the budget once ready (`nodes_for_headroom`), said as the fleet
    can take it: in one add, in two where `add_capacity_max_nodes` caps one, or not at all where the fleet
    has no room for it — an add it would refuse as bad input is no move."""
    needed = nodes_for_headroom(snapshot, capacity, thresholds.headroom_min_pct)
    if needed is None:
        return ""
    allowed = add_capacity_allowed(snapshot, capacity, thresholds)
    room = NodeRoom(capacity.max_nodes, len(snapshot.nodes)).room
    if needed <= allowed:
        return f": an add of {needed} nodes would reach it"
    if needed <= room:
        return f": {needed} nodes would reach it, {allowed} in this add (add_capacity_max_nodes) and the rest after"
    return f": {needed} nodes would reach it, more than the {room} this fleet has room for"


def judge_add_capacity(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    request: CapacityRequest,
    thresholds: Thresholds | None = None,
) -> Verdict:
    t = thresholds or Thresholds()
    count = request.count
    check_count(snapshot, capacity, count, t)
    nodes_now = len(snapshot.nodes)
    provisioning = sum(node.state is NodeState.PROVISIONING for node in snapshot.nodes)
    load = fleet_load(snapshot, capacity, ())
    # Nodes already provisioning count as capacity once ready: the headroom the operator will have.
    arriving = (provisioning + count) * capacity.connections_per_node
    # Unrounded (`places=None`): judged against the budget.
    headroom_now = headroom_pct(load.serving_connections, load.survivor_capacity_connections, places=None)
    headroom_ready = headroom_pct(
        load.serving_connections, load.survivor_capacity_connections + arriving, places=None
    )
    cpu_max = max_serving_cpu_pct(snapshot.nodes)
    ready_in_s = capacity.provisioning_s if capacity.provisioning_s > 0 else None
    wait = f"in {ready_in_s:g} s" if ready_in_s is not None else "once provisioned"
    checks = [
        check(
            "added_share_pct",
            count / max(nodes_now, 1) * 100,
            t.add_capacity_confirm_pct,
            fails_to=VerdictLevel.CONFIRM,
            why="a large add against the fleet is a spend to confirm (the outage seed's 200 of 480 was 42 %)",
        ),
        check(
            "headroom_when_ready_pct",
            headroom_ready,
            t.headroom_min_pct,
            bound="min",
            fails_to=VerdictLevel.OK,
            why="with these nodes ready, headroom against the budget; under it, no restart is safe yet "
            "(outage seed: provision 35 %)",
            move=_headroom_move(snapshot, capacity, t),
        ),
        check(
            "cpu_now_pct",
            cpu_max,
            t.cpu_pause_pct,
            fails_to=VerdictLevel.OK,
            why=f"the hottest node now; new nodes serve only {wait}",
            # A passing 40 % said "halt the rollout and tighten admission meanwhile", and with no rollout
            # under way there is none to halt.
            move=": while a node is this hot, "
            + (
                "halt the rollout and "
                if snapshot.rollout is not None and snapshot.rollout.state in ACTIVE
                else ""
            )
            + "tighten admission meanwhile (outage seed: halted at 04:11, nodes ready 4 minutes later)",
        ),
    ]
    projections = {
        "nodes_now": nodes_now,
        "nodes_after": nodes_now + count,
        "provisioning_now": provisioning,
        "room_nodes": capacity.max_nodes - nodes_now,
        "ready_in_s": ready_in_s,
        "ready_at_s": snapshot.time_s + ready_in_s if ready_in_s is not None else None,
        "headroom_now_pct": headroom_now,
        "headroom_when_ready_pct": headroom_ready,
        "nodes_for_headroom": nodes_for_headroom(snapshot, capacity, t.headroom_min_pct),
    }
    return verdict("add_capacity", checks, projections)
