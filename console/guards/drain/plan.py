"""The drain planner: the largest safe drain for some nodes, with its hint window and its deadline."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from console.guards.capacity import FleetCapacity, NodeRoom, snapshot_room
from console.guards.drain.hint import force_close_drop_pct, planned_hint_ms
from console.guards.drain.leaving import force_closed, leaving_nodes
from console.guards.drain.rate import RateBasis, planned_basis
from console.guards.fleet import FleetLoad, fleet_load
from console.guards.reconnects import (
    ReconnectLine,
    force_close_burst_per_s,
    peak_reconnects_per_s,
    reconnect_line,
)
from console.guards.thresholds import Thresholds
from console.protocol import DrainRequest, FleetSnapshot, NodeStatus, limits


@dataclass(frozen=True)
class DrainPlan:
    """The largest safe drain for some nodes, and what it takes."""

    node_ids: tuple[str, ...]
    rate_per_s: float  # closes per second, per node; 0 when no rate is safe
    duration_s: float  # until the fullest node is empty at that rate (inf at rate 0)
    deadline_s: float  # the drain window (interview: 10 min)
    hint_ms: tuple[int, int]
    force_closed: int  # connections still open at the deadline, at that rate
    limited_by: str  # which limit set the rate, one of `LIMITED_BY`
    connections: int  # what the drain moves to the survivors (the drain verdict's projection)
    # CPU points the busiest survivor is kept under the pause line (`drain_plan_cpu_margin_pct`): a real
    # node's CPU moves between the plan and the verdict, and a rate on the line was typed seconds later.
    cpu_margin_pct: float = 0.0
    # The share of the survivors' spare admission (%) the plan leaves free (`drain_plan_admission_margin_pct`):
    # their other accepts move between the plan and the drain, and the planner's rate on the spare itself
    # raised drain_pacing_exceeded at once (review, fleet up).
    admission_margin_pct: float = 0.0
    # Nodes the fleet may still add (`NodeRoom.room`; 0: it cannot add capacity, none at all or at its
    # most); None when its snapshot does not say. With no rate, "add capacity" is a way on only with room.
    room_nodes: int | None = None
    # The admission rate_per_s, under the nodes' handshake ceiling, that sets the survivors' spare
    # admission (`FleetLoad.admission_limit_per_s`); None where only the ceilings do. Where spare admission
    # sets the rate (`drain_pacing`), the form names it as the guards do: the limit to raise.
    admission_limit_per_s: float | None = None

    def request(self) -> DrainRequest:
        """The plan as a request, to pre-fill the console's form: at the planned rate however slow it is
        (a floor above it would pre-fill a drain its own guard refuses — the property test found 0.069/s
        raised to 0.1), and at 0.1/s only when there is no room at all: a request needs a rate above 0,
        and this one's verdict says why it is not safe (the console's form shows no rate then,
        `console.model.actions.drain.drain_prefill_from_plan`)."""
        rate = self.rate_per_s if self.rate_per_s > 0 else 0.1
        return DrainRequest(rate_per_s=rate, deadline_s=self.deadline_s, hint_ms=self.hint_ms)


def plan_drain(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    node_ids: str | Sequence[str],
    thresholds: Thresholds | None = None,
    calm_baseline_per_s: float | None = None,
) -> DrainPlan:
    """The largest safe drain rate for a node or a batch, from the spare handshake capacity, with the
    busiest survivor `drain_plan_cpu_margin_pct` under the pause line (`rate_basis`): it still passes when
    every node's CPU has risen by less than the margin. Its deadline is the drain window, or longer where
    what that would force-close comes back over a line (`_plan_deadline_s`). `calm_baseline_per_s`: the
    steady attempts the fleet API learned while calm, the reconnect alarm's baseline (`reconnect_line`)."""
    t = thresholds or Thresholds()
    nodes = leaving_nodes(snapshot, node_ids)
    load = fleet_load(snapshot, capacity, {n.id for n in nodes})
    line = reconnect_line(snapshot, capacity, load, t, calm_baseline_per_s)
    basis, hint_ms, deadline_s = planned_drain(snapshot, load, nodes, capacity, t, line)
    rate = basis.rate_per_s
    fullest = max(node.connections for node in nodes)
    duration_s = fullest / rate if rate > 0 else math.inf
    return DrainPlan(
        node_ids=tuple(node.id for node in nodes),
        rate_per_s=rate,
        duration_s=duration_s,
        deadline_s=deadline_s,
        hint_ms=hint_ms,
        force_closed=sum(force_closed(node, rate, deadline_s) for node in nodes),
        limited_by=basis.limited_by,
        connections=sum(node.connections for node in nodes),
        cpu_margin_pct=t.drain_plan_cpu_margin_pct,
        admission_margin_pct=t.drain_plan_admission_margin_pct,
        room_nodes=_room_nodes(snapshot_room(snapshot)),
        admission_limit_per_s=load.admission_limit_per_s,
    )


def planned_drain(
    snapshot: FleetSnapshot,
    load: FleetLoad,
    nodes: Sequence[NodeStatus],
    capacity: FleetCapacity,
    t: Thresholds,
    line: ReconnectLine,
) -> tuple[RateBasis, tuple[int, int], float]:
    """The planner's rate (and what set it), hint window and deadline: `planned_basis`'s rate, or 0 where
    not even the API's longest deadline empties the nodes at it. One answer for the plan and a verdict's
    suggestion: the verdict suggested 0.125/s where the plan said no rate (found by hypothesis)."""
    basis = planned_basis(snapshot, load, nodes, capacity, t, line)
    hint_ms = planned_hint_ms(basis.rate_per_s * len(nodes), t, capacity.hint_max_ms)
    fleet_connections = sum(node.connections for node in snapshot.nodes)
    deadline_s = _plan_deadline_s(
        nodes, basis.rate_per_s, hint_ms, load, capacity, t, line, fleet_connections
    )
    if deadline_s is None:  # not even the longest deadline empties the nodes at this rate
        return replace(basis, rate_per_s=0.0), planned_hint_ms(0.0, t, capacity.hint_max_ms), t.drain_window_s
    return basis, hint_ms, deadline_s


def _plan_deadline_s(
    nodes: Sequence[NodeStatus],
    rate_per_s: float,
    hint_ms: tuple[int, int],
    load: FleetLoad,
    capacity: FleetCapacity,
    t: Thresholds,
    line: ReconnectLine,
    fleet_connections: int,
) -> float | None:
    """The drain window (interview: 10 min) — or, where what it leaves to force-close comes back over the
    busiest survivor's CPU line (the planner's margin under the pause line), the spare admission or the
    reconnect alarm's line, or takes more of the fleet's connections at once than the connections_drop
    alarm's line (`force_close_drop_pct`: a forced close is never held), the whole seconds the fullest node
    takes to empty at the rate: a slow safe rate left most of a node to its deadline, a burst its own
    verdict judges. None where not even the API's longest deadline empties them (the rate is then no
    plan)."""
    window_s = t.drain_window_s
    forced = sum(force_closed(node, rate_per_s, window_s) for node in nodes)
    if rate_per_s <= 0 or forced == 0:
        return window_s
    total = rate_per_s * len(nodes)
    peak = peak_reconnects_per_s(total, forced, window_s, hint_ms)
    room = line.room_per_s()
    if (
        load.projected_cpu_pct(peak, capacity, t) <= t.cpu_pause_pct - t.drain_plan_cpu_margin_pct
        and force_close_burst_per_s(forced, hint_ms) <= load.spare_admission_per_s
        and (room is None or line.added_per_s(total, forced, window_s, hint_ms) <= room)
        and force_close_drop_pct(forced, fleet_connections) <= t.connections_drop_pct
    ):
        return window_s
    deadline_s = float(math.ceil(max(node.connections for node in nodes) / rate_per_s))
    while sum(force_closed(node, rate_per_s, deadline_s) for node in nodes):  # float noise: a second more
        deadline_s += 1
    return deadline_s if deadline_s <= limits.DRAIN_DEADLINE_S[1] else None


def _room_nodes(room: NodeRoom | None) -> int | None:
    return None if room is None else room.room
