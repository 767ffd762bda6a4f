"""The fleet as the guards see it when some nodes leave rotation: who survives, how loaded they are, what
they can still admit, and what a drain's reconnects would do to their CPU."""

from __future__ import annotations

import difflib
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from console.errors import InputError
from console.figures import headroom_pct
from console.guards.capacity import (
    AdmissionLimit,
    FleetCapacity,
    admission_limit_text,
    spare_admission_per_s,
)
from console.guards.thresholds import Thresholds
from console.guards.verdict import check
from console.protocol import AdmissionInForce, Check, FleetSnapshot, NodeState, NodeStatus, VerdictLevel

#: Nodes still holding clients; their connections must fit somewhere once the leaving nodes are gone.
SERVING = frozenset({NodeState.READY, NodeState.DRAINING})


@dataclass(frozen=True)
class FleetLoad:
    """The fleet once `leaving` nodes are out of rotation."""

    survivors: int  # ready nodes that stay in rotation
    survivor_cpu_max_pct: float
    serving_connections: int  # every connection held now (they all need a survivor in the end)
    survivor_capacity_connections: float
    draining_nodes: int
    drain_rate_per_s: float  # closes per second of the drains already running
    moving_accepts_per_s: float  # new connections the leaving nodes admit now; survivors inherit them
    admission_capacity_per_s: float  # what survivors can admit per second
    spare_admission_per_s: float  # of which is spare beyond their other inflow
    # The smallest admission rate_per_s that, under a survivor's handshake ceiling, limits what it admits
    # (`AdmissionLimit.set_by_admission`); None where only the ceilings do.
    admission_limit_per_s: float | None = None
    other_accepts_per_s: float = 0.0  # new connections beyond the drains' own reconnects, every ready node
    handshakes_per_s: float | None = None  # a survivor's handshake ceiling (the capacity record's)

    def admission_limit_text(self, lead: str = "under") -> str:
        """ ", under their admission limit of 2/s a node" (`lead`: "under", "set by") where the operator's
        admission limit sets the survivors' spare admission, "" elsewhere: said beside what it slows, so a
        slow absorb names its cause — the limit to raise, not the nodes."""
        return admission_limit_text(self.admission_limit_per_s, lead)

    def wait_for_drains(self) -> str:
        """ "wait for the 3 drains under way to finish" ("the drain" for one): a move only where there is a
        drain under way to wait for, "" where there is none."""
        if not self.draining_nodes:
            return ""
        drains = "drain" if self.draining_nodes == 1 else f"{self.draining_nodes} drains"
        return f"wait for the {drains} under way to finish"

    def wait_for_inflow(self, closes_per_s: float) -> str:
        """ "wait for the inflow to fall" where its falling could make room for `closes_per_s` more closes a
        second: there is inflow beyond the drains' own to fall, and without it the survivors would admit
        the drains under way and these; "" where it could not — a loopback fleet at an inflow of 0 was told
        to wait for it to fall (found in review)."""
        room_without_inflow = self.admission_capacity_per_s - self.drain_rate_per_s
        if self.other_accepts_per_s > 0 and closes_per_s <= room_without_inflow:
            return "wait for the inflow to fall"
        return ""

    def admission_to_admit_per_s(self, closes_per_s: float) -> float | None:
        """The admission rate_per_s a node, set fleet-wide, at which the survivors admit the drains under
        way and `closes_per_s` more beyond their other inflow (rounded up to a tenth: the rate a move names
        must pass, not fall a rounding short); None where the operator's admission limit does not set what
        they admit, or where that rate is over their handshake ceiling (no admission gets them there)."""
        if self.admission_limit_per_s is None or not self.survivors:
            return None
        closes = self.drain_rate_per_s + closes_per_s
        rate = math.ceil((closes + self.other_accepts_per_s) / self.survivors * 10) / 10
        # `fleet_load` adds the survivors' rates one by one: a rate right at the need can come out a float's
        # width short of it, and the move named would fail the check it names.
        if sum(rate for _ in range(self.survivors)) - self.other_accepts_per_s < closes:
            rate = round(rate + 0.1, 1)
        if self.handshakes_per_s is not None and rate > self.handshakes_per_s:
            return None
        return rate

    def raise_admission(self, closes_per_s: float) -> str:
        """The admission move for `closes_per_s` more closes a second, with the rate that makes the room:
        "raise admission rate_per_s to at least 50/s a node (now 30/s)"; "" where no admission rate does
        (`admission_to_admit_per_s`)."""
        rate = self.admission_to_admit_per_s(closes_per_s)
        if rate is None or self.admission_limit_per_s is None:
            return ""
        return (
            f"raise admission rate_per_s to at least {rate:g}/s a node (now {self.admission_limit_per_s:g}/s)"
        )

    @property
    def headroom_after_pct(self) -> float:
        """The survivors' headroom (`figures.headroom_pct`, unrounded: judged against the budget)."""
        return headroom_pct(self.serving_connections, self.survivor_capacity_connections, places=None)

    def projected_cpu_pct(
        self, added_rate_per_s: float, capacity: FleetCapacity, thresholds: Thresholds
    ) -> float:
        """CPU of the busiest survivor once it absorbs `added_rate_per_s` more handshakes across the fleet
        (plus the leaving nodes' own inflow), taking `reconnect_skew` times its even share (outage seed)."""
        if self.survivors == 0:
            return float("inf")
        per_node = (added_rate_per_s + self.moving_accepts_per_s) / self.survivors * thresholds.reconnect_skew
        return self.survivor_cpu_max_pct + per_node * capacity.cpu_pct_per_handshake_per_s

    def pause_room_per_s(
        self, capacity: FleetCapacity, thresholds: Thresholds, line_pct: float | None = None
    ) -> float:
        """Handshakes per second the survivors can take on before the busiest crosses the pause line (or
        `line_pct`: the drain planner's, a margin under it)."""
        return pause_room_per_s(self.survivor_cpu_max_pct, self.survivors, capacity, thresholds, line_pct)


def pause_room_per_s(
    cpu_max_pct: float,
    nodes: int,
    capacity: FleetCapacity,
    thresholds: Thresholds,
    line_pct: float | None = None,
) -> float:
    """New handshakes per second `nodes` nodes can take on, spread as the outage seed saw them spread (the
    busiest, now at `cpu_max_pct`, taking `reconnect_skew` times its even share), before the busiest crosses
    the pause line (`line_pct` when given) — below 0 when it is over it already:
    `FleetLoad.projected_cpu_pct` turned round."""
    if nodes == 0:
        return 0.0
    line = thresholds.cpu_pause_pct if line_pct is None else line_pct
    per_handshake_pct = capacity.cpu_pct_per_handshake_per_s * thresholds.reconnect_skew / nodes
    return (line - cpu_max_pct) / per_handshake_pct


def node_capacity_connections(node: NodeStatus, capacity: FleetCapacity) -> float:
    return node.capacity_connections if node.capacity_connections > 0 else capacity.connections_per_node


def fleet_load(snapshot: FleetSnapshot, capacity: FleetCapacity, leaving: Collection[str]) -> FleetLoad:
    limit = AdmissionLimit(AdmissionInForce.of(snapshot), capacity)
    survivors = 0
    cpu_max = 0.0
    serving_connections = 0
    survivor_capacity = 0.0
    draining = 0
    drain_rate = 0.0
    moving = 0.0
    admit = 0.0
    accepts = 0.0
    set_by_admission: list[float] = []
    for node in snapshot.nodes:
        if node.state in SERVING:
            serving_connections += node.connections
        if node.state is NodeState.DRAINING:
            draining += 1
            drain_rate += node.drain.rate_per_s if node.drain is not None else node.closes_per_s
        if node.state is not NodeState.READY:
            continue
        accepts += node.accepts_per_s
        if node.id in leaving:
            moving += node.accepts_per_s
            continue
        survivors += 1
        cpu_max = max(cpu_max, node.cpu_pct)
        survivor_capacity += node_capacity_connections(node, capacity)
        admit += limit.for_node(node.id) or capacity.handshakes_per_s
        if (rate := limit.set_by_admission(node.id)) is not None:
            set_by_admission.append(rate)
    return FleetLoad(
        survivors=survivors,
        survivor_cpu_max_pct=cpu_max,
        serving_connections=serving_connections,
        survivor_capacity_connections=survivor_capacity,
        draining_nodes=draining,
        drain_rate_per_s=drain_rate,
        moving_accepts_per_s=moving,
        admission_capacity_per_s=admit,
        spare_admission_per_s=spare_admission_per_s(admit, accepts, drain_rate),
        admission_limit_per_s=min(set_by_admission, default=None),
        other_accepts_per_s=max(accepts - drain_rate, 0.0),
        handshakes_per_s=capacity.handshakes_per_s,
    )


#: What to do when a change would leave no node in rotation: said by a drain's `nodes_in_rotation_after` and
#: by the drain planner's "no safe rate now" for the last node in rotation (`no_survivors`).
ROTATION_MOVE = "undrain another node, or restart one that is down, first"


def rotation_after_check(load: FleetLoad, why: str) -> Check:
    """The nodes left in rotation (`ready`) once the leaving nodes leave, against one, blocked: asked in
    place of the room on the survivors (a drain's `headroom_after_pct`, a rollout batch's
    `batch_connections`) when none is left — "headroom 0 %: add capacity first" or "room 0 on the other
    nodes" said nothing of a fleet left with no node to take a client. `why` says what to do instead."""
    return check(
        "nodes_in_rotation_after", load.survivors, 1, bound="min", fails_to=VerdictLevel.BLOCKED, why=why
    )


def without_survivor_checks(
    checks: list[Check], load: FleetLoad, survivor_checks: Collection[str]
) -> list[Check]:
    """`checks` less a guard's checks of what its survivors absorb (`survivor_checks`) when `load` has no
    survivor: with none they had nothing to measure — a CPU of "—", a pacing limit and a safe rate of 0 —
    and failed beside the one reason, `rotation_after_check`, which "what would pass" then named alone."""
    if load.survivors:
        return checks
    return [item for item in checks if item.name not in survivor_checks]


def find_nodes(snapshot: FleetSnapshot, node_ids: Sequence[str], field: str = "nodes") -> list[NodeStatus]:
    """The named nodes, in order; an unknown or repeated id is an InputError naming `field`, the request's
    name for them (a drain's path names one `node`, an admission change a list of `nodes`). Every unknown
    id is named at once, with the fleet's ids and the nearest to each where one is near (`gw-01`:
    gw-001): naming the first alone had the operator fix one typo per attempt."""
    by_id = {node.id: node for node in snapshot.nodes}
    if len(set(node_ids)) != len(node_ids):
        raise InputError(field, list(node_ids), "distinct node ids")
    if not node_ids:
        raise InputError(field, [], "at least one node id")
    unknown = [node_id for node_id in node_ids if node_id not in by_id]
    if unknown:
        raise InputError(
            field, unknown[0] if len(unknown) == 1 else unknown, fleet_nodes_text(snapshot, unknown)
        )
    return [by_id[node_id] for node_id in node_ids]


#: Node ids a refusal lists in full; past them, the first and last and how many (a fleet of 10 000).
LISTED_IDS = 5


def fleet_nodes_text(snapshot: FleetSnapshot, unknown: Sequence[str]) -> str:
    """What an unknown id could have been: "a node of fleet 'prod': gw-000 … gw-479 (480 nodes); nearest
    to 'gw-01': gw-001" — the ids as the fleet lists them, in full for a small fleet (node-1, node-2,
    node-3)."""
    ids = [node.id for node in snapshot.nodes]
    if not ids:
        listed = "it has none"
    elif len(ids) <= LISTED_IDS:
        listed = ", ".join(ids)
    else:
        listed = f"{ids[0]} … {ids[-1]} ({len(ids):,} nodes)"
    nearest = [
        f"nearest to {node_id!r}: {close[0]}"
        for node_id in unknown[:LISTED_IDS]  # (each a pass over the fleet's ids, under the desk's lock)
        if (close := difflib.get_close_matches(node_id, ids, n=1))
    ]
    what = "a node" if len(unknown) == 1 else "nodes"
    return f"{what} of fleet {snapshot.fleet!r}: {listed}" + "".join(f"; {said}" for said in nearest)


def max_serving_cpu_pct(nodes: Sequence[NodeStatus]) -> float:
    return max((node.cpu_pct for node in nodes if node.state in SERVING), default=0.0)
