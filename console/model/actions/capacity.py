"""The add-capacity form's starting values: the nodes that bring headroom back to its budget, and the
fleet's room to check the typed count against."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.guards import FleetCapacity, Thresholds, nodes_for_headroom
from console.guards.add_capacity import check_count
from console.model.actions.form import Prefill
from console.model.units import counted
from console.protocol import FleetSnapshot, Frame, NodeState, Source


def add_capacity_prefill(
    frame: Frame | None, fleet: str, capacity: FleetCapacity | None, thresholds: Thresholds
) -> Prefill:
    """The nodes that would bring headroom back to the budget once ready (the outage seed: provision
    35 %), from the newest frame; one node when the console knows no capacity record."""
    if frame is None or capacity is None:
        return Prefill({"count": "1"}, "no capacity record here: the verdict shows the headroom then")
    return add_capacity_prefill_of(
        FleetSnapshot.of_frame(frame, fleet, Source.SIMULATOR), capacity, thresholds
    )


def add_capacity_prefill_of(
    snapshot: FleetSnapshot, capacity: FleetCapacity, thresholds: Thresholds
) -> Prefill:
    """`add_capacity_prefill` over a snapshot (`GET /v1/fleet`: what `act add-capacity` checks against)."""
    needed = nodes_for_headroom(snapshot, capacity, thresholds.headroom_min_pct)

    def room(body: Mapping[str, Any]) -> None:
        check_count(snapshot, capacity, int(body["count"]), thresholds)

    budget = f"{thresholds.headroom_min_pct:g} %"
    now = f"now {snapshot.totals.headroom_pct:.0f} %"
    # Nodes already provisioning count once ready: say so, or "at the budget" contradicts the gauge beside it.
    provisioning = sum(node.state is NodeState.PROVISIONING for node in snapshot.nodes)
    coming = f"the {counted(provisioning, 'node')} already provisioning"
    if not needed and provisioning:
        return Prefill(
            {"count": "1"}, f"headroom reaches the {budget} budget once {coming} are ready ({now})", room
        )
    if not needed:
        return Prefill({"count": "1"}, f"headroom already meets the {budget} budget ({now})", room)
    beyond = f", beyond {coming}" if provisioning else ""
    return Prefill(
        {"count": str(needed)}, f"the nodes that bring headroom to {budget} once ready{beyond} ({now})", room
    )
