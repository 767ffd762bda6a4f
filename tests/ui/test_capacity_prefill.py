"""The add-capacity form's prefill says what it counts: nodes already provisioning count once ready, and
the form said "headroom is at the 35 % budget already" beside a ✖ 20 % gauge (found in review)."""

from __future__ import annotations

from console.guards import FleetCapacity, Thresholds
from console.model.actions.capacity import add_capacity_prefill
from console.protocol import NodeState

from ..fleet_builders import frame, nodes

CAPACITY = FleetCapacity(handshakes_per_s=1500, cpu_pct_per_handshake_per_s=0.07, connections_per_node=50_000)


def test_nodes_already_provisioning_are_named_with_the_headroom_now() -> None:
    # 10 nodes at 40 k of 50 k: 20 % headroom now; 400 k ÷ 0.65 = 615 k needed: 3 more nodes' worth,
    # and 3 are provisioning already.
    fleet = nodes(10, connections=40_000) + [
        node.model_copy(update={"state": NodeState.PROVISIONING, "connections": 0}) for node in nodes(3)
    ]
    prefill = add_capacity_prefill(frame(100.0, fleet=fleet, headroom_pct=20.0), "f", CAPACITY, Thresholds())
    assert "already" in prefill.source and "3 nodes already provisioning" in prefill.source
    assert "now 20 %" in prefill.source
    assert not prefill.source.startswith("headroom is at")


def test_without_provisioning_nodes_the_prefill_counts_and_shows_the_headroom_now() -> None:
    tight = add_capacity_prefill(
        frame(100.0, fleet=nodes(10, connections=40_000), headroom_pct=20.0), "f", CAPACITY, Thresholds()
    )
    assert (
        tight.values == {"count": "3"} and "provisioning" not in tight.source and "now 20 %" in tight.source
    )
    roomy = add_capacity_prefill(
        frame(100.0, fleet=nodes(10, connections=20_000), headroom_pct=60.0), "f", CAPACITY, Thresholds()
    )
    assert roomy.source == "headroom already meets the 35 % budget (now 60 %)"  # (was "is at the … budget")
