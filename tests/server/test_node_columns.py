"""A frame's nodes as the history keeps them: columns, sharing what did not change with the frame before."""

from __future__ import annotations

from console.protocol import NodeState
from console.server.node_columns import NodeColumns
from tests.server.fleet_fixture import ScriptedFleet


def test_unchanged_ids_and_states_are_the_frame_befores_and_a_changed_one_is_not() -> None:
    fleet = ScriptedFleet(nodes=3)
    first = NodeColumns.of(fleet.advance()[0].nodes)
    second = NodeColumns.of(fleet.advance()[0].nodes)
    assert first is not None and second is not None
    kept = second.sharing(first)
    assert kept.ids is first.ids and kept.objects["state"] is first.objects["state"]
    assert kept.numbers is second.numbers  # connections moved: every frame has its own numbers
    nodes = list(fleet.advance()[0].nodes)
    nodes[1] = nodes[1].model_copy(update={"state": NodeState.DOWN})
    third = NodeColumns.of(nodes)
    assert third is not None
    changed = third.sharing(kept)
    assert changed.ids is first.ids and changed.objects["state"] is not first.objects["state"]
    assert changed.fields(1)["state"] is NodeState.DOWN and changed.fields(0)["state"] is NodeState.READY
