"""What one node can absorb, and the spare admission capacity that drains must stay under.

`FleetCapacity` holds the figures a backend knows and a frame does not carry: the simulator fills it from its
node model; a real fleet's controller from its load tests (the field guide: "quote your own 3.3× number").
The guards, the drain planner and the drain-pacing alarm all read spare capacity through this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from console.errors import InputError
from console.protocol import AdmissionInForce, AdmissionSettings, FleetSnapshot


@dataclass(frozen=True)
class FleetCapacity:
    """Per-node capacity of the fleet's gateway nodes.

    handshakes_per_s: new connections one node can complete per second (its handshake ceiling).
    cpu_pct_per_handshake_per_s: CPU percentage points one node spends on each handshake per second it
        completes (the outage seed: reconnecting, not holding, is what burns CPU).
    connections_per_node: connections one node holds at 100 % (the planning target behind headroom); a
        node's own `capacity_connections`, when the frame carries one, wins.
    steady_inflow_per_s: the fleet's new connections per second in calm times (clients ÷ connection
        lifetime); 0 when the backend does not know it. Admission guards use it.
    max_nodes: the most nodes the fleet can have, the ones it has included (the simulator's preallocated
        room, a controller's provisioner's limit); 0 when the backend cannot add nodes at all.
    provisioning_s: seconds from adding a node to its being ready (the outage seed: 200 nodes took 4
        minutes); 0 when the backend does not know.
    batch_drain_rate_per_s, batch_drain_deadline_s: the drain the backend applies to each node of a
        drain-mode rollout batch — closes per second per node, and the deadline that force-closes the rest
        (the simulator: the scenario's `rollout.drain_*`, else 833/s over 600 s; a controller: its
        `DEFAULT_BATCH_DRAIN`, 100/s over 600 s). The rollout guard judges this drain, not a window of its
        own; 0 when the backend does not say (the guard then assumes the drain window).
    restart_s: seconds from a node's restart to its being back in rotation; 0 when the backend does not
        know (a rollout's projected duration then leaves it out and says so).
    hint_max_ms: the longest reconnect hint the fleet can give a drained client (the simulator's timing
        wheel reaches only so far ahead); 0 when only the API's own bound applies (real gateway nodes).
    handshakes_planned: `handshakes_per_s`, and so `cpu_pct_per_handshake_per_s`, is a planning figure, not
        a measurement (a controller whose nodes file has no `[capacity] handshakes_per_s`): the guards' CPU
        projections say so (`planned_cpu_note`). An admission `rate_per_s` is never taken for the ceiling:
        it is a limit the operator set, and the guards read it from the snapshot's admission.
    cpu_pct_per_connection: CPU points one node spends holding one connection (the simulator:
        `nodes.hold_cpu_pct_at_capacity` ÷ `nodes.capacity_connections`); 0 when the backend does not know
        (holding is then left out of `node_cpu_demand_pct`).
    cpu_pct_per_reject_per_s: CPU points one node spends per refusal per second (the simulator: its
        `nodes.reject_cost` share of a handshake's); 0 when the backend does not know.
    """

    handshakes_per_s: float
    cpu_pct_per_handshake_per_s: float
    connections_per_node: int
    steady_inflow_per_s: float = 0.0
    max_nodes: int = 0
    provisioning_s: float = 0.0
    batch_drain_rate_per_s: float = 0.0
    batch_drain_deadline_s: float = 0.0
    restart_s: float = 0.0
    hint_max_ms: int = 0
    handshakes_planned: bool = False
    cpu_pct_per_connection: float = 0.0
    cpu_pct_per_reject_per_s: float = 0.0

    def __post_init__(self) -> None:
        for name in ("handshakes_per_s", "cpu_pct_per_handshake_per_s", "connections_per_node"):
            if not getattr(self, name) > 0:
                raise InputError(name, getattr(self, name), "a number > 0")
        for name in (
            "steady_inflow_per_s",
            "max_nodes",
            "provisioning_s",
            "batch_drain_rate_per_s",
            "batch_drain_deadline_s",
            "restart_s",
            "hint_max_ms",
            "cpu_pct_per_connection",
            "cpu_pct_per_reject_per_s",
        ):
            if not getattr(self, name) >= 0:
                raise InputError(name, getattr(self, name), "a number ≥ 0")


def planned_cpu_note(capacity: FleetCapacity) -> str:
    """What a CPU projection stands on, where it is a planning figure, and where a measured one goes: "; CPU
    projected from a planning figure (500 handshakes/s a node, not measured: set [capacity] handshakes_per_s)",
    put before a check's move; "" where the ceiling was measured."""
    if not capacity.handshakes_planned:
        return ""
    return (
        f"; CPU projected from a planning figure ({capacity.handshakes_per_s:g} handshakes/s a node, "
        "not measured: set [capacity] handshakes_per_s)"
    )


def node_cpu_demand_pct(
    capacity: FleetCapacity, connections: float, handshakes_per_s: float, rejects_per_s: float = 0.0
) -> float:
    """One node's CPU demand in % of its capacity — over 100, handshakes queue and time out — as the
    simulator's node model costs it (console/sim/kernel.py: held connections, completed handshakes,
    refusals): what the admission guard projects a `rate_per_s` with."""
    return (
        connections * capacity.cpu_pct_per_connection
        + handshakes_per_s * capacity.cpu_pct_per_handshake_per_s
        + rejects_per_s * capacity.cpu_pct_per_reject_per_s
    )


def handshakes_under_line_per_s(
    capacity: FleetCapacity, line_pct: float, connections: float, attempts_per_s: float = 0.0
) -> float:
    """The most handshakes per second a node holding `connections` completes with its CPU demand at
    `line_pct`, refusing what of `attempts_per_s` it does not complete: `node_cpu_demand_pct` turned round;
    0 where holding and refusing alone reach the line. A refusal costs no more than a handshake (the
    scenario schema's `reject_cost` ≤ 1), so the fewer completed, the lower the demand."""
    handshake = capacity.cpu_pct_per_handshake_per_s
    room_pct = line_pct - connections * capacity.cpu_pct_per_connection
    rate = room_pct / handshake
    if rate > attempts_per_s:  # every attempt completed: none refused
        return rate
    # Below the attempts each handshake more is one refusal fewer.
    saved = handshake - capacity.cpu_pct_per_reject_per_s
    if saved <= 0:
        return 0.0
    return max((room_pct - attempts_per_s * capacity.cpu_pct_per_reject_per_s) / saved, 0.0)


@dataclass(frozen=True)
class NodeRoom:
    """Whether a fleet can add capacity, and how much room it has left: the one rule the add-capacity guard
    and the alarms' advice count room by, so an alarm never advises an add the guard refuses.

    max_nodes: the most nodes the fleet may hold, those it has included (`Frame.max_nodes`, the capacity
        record's); 0 when it cannot add nodes at all (a controller over a nodes file: no provisioner).
    nodes: the nodes it holds now, every state counted (down and provisioning too), as an add's room counts
        them.
    """

    max_nodes: int
    nodes: int

    @property
    def room(self) -> int:
        """Nodes it may still add: 0 at its most (or past it), and when it adds none."""
        return max(self.max_nodes - self.nodes, 0)

    @property
    def can_add(self) -> bool:
        return self.room > 0

    def why_not(self) -> str | None:
        """Why an add is refused here, in the add guard's words ("this fleet …"); None when it can add."""
        if self.max_nodes <= 0:
            return "adds no nodes"
        if not self.can_add:
            return f"is at its most, {self.max_nodes} nodes"
        return None


def node_room(max_nodes: int | None, nodes: int) -> NodeRoom | None:
    """The fleet's room as its frames or snapshots say it; None when they do not (`max_nodes` null: an older
    server, or frames built straight from the simulation) — then nothing is guessed about it."""
    return None if max_nodes is None else NodeRoom(max_nodes, nodes)


def snapshot_room(snapshot: FleetSnapshot) -> NodeRoom | None:
    """The fleet's room as its snapshot says it (`FleetSnapshot.max_nodes`, every node counted); None when
    it does not (an older server, a snapshot built straight from a frame without it). The drain and rollout
    guards advise "add capacity" by it."""
    return node_room(snapshot.max_nodes, len(snapshot.nodes))


class AdmissionLimit:
    """New connections per second one node in rotation can admit: the admission `rate_per_s` it runs (its
    per-node override, else the fleet's: `AdmissionInForce`), its handshake ceiling, the smaller when both
    are known, None when neither is (unlimited admission and no capacity record)."""

    def __init__(
        self, admission: AdmissionInForce | AdmissionSettings | None, capacity: FleetCapacity | None
    ) -> None:
        self._handshakes = capacity.handshakes_per_s if capacity is not None else None
        self._in_force = AdmissionInForce.said(admission)

    def _rate(self, node_id: str) -> float | None:
        return self._in_force.for_node(node_id).rate_per_s if self._in_force is not None else None

    def for_node(self, node_id: str) -> float | None:
        known = [x for x in (self._rate(node_id), self._handshakes) if x is not None]
        return min(known) if known else None

    def set_by_admission(self, node_id: str) -> float | None:
        """The admission `rate_per_s` where it, not the node's handshake ceiling, limits what the node admits
        (the node runs one, and it is under the ceiling or no ceiling is known); None elsewhere. A verdict
        names it as what slows the survivors' absorb: the operator's limit, the one to raise."""
        rate = self._rate(node_id)
        return rate if rate is not None and (self._handshakes is None or rate < self._handshakes) else None


def admission_limit_text(limit_per_s: float | None, lead: str = "under") -> str:
    """ ", under their admission limit of 2/s a node" (`lead`: "under", "set by") for the admission
    `rate_per_s` that sets the survivors' spare admission (`AdmissionLimit.set_by_admission`), "" for None:
    one wording for the guards' reasons and the drain form's plan."""
    if limit_per_s is None:
        return ""
    return f", {lead} their admission limit of {limit_per_s:g}/s a node"


def spare_admission_per_s(
    admission_capacity_per_s: float, accepts_per_s: float, drain_rate_per_s: float
) -> float:
    """What the nodes in rotation can still admit per second beyond their other inflow.

    Drained clients reconnect, so the current accepts already hold the drains' own reconnects: those are
    taken out before judging what is spare (the field guide's pacing budget counts the drains against it).
    """
    other_accepts_per_s = max(accepts_per_s - drain_rate_per_s, 0.0)
    return max(admission_capacity_per_s - other_accepts_per_s, 0.0)
