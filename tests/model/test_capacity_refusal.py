"""`c` on a fleet that cannot add capacity (its frames say `max_nodes`: 0 on a controller over a nodes file,
or every node it may hold already there) is answered at the key with why and what this fleet can do
instead, as R is on a fleet that cannot roll out; where it can, or the frame does not say, the form opens."""

from __future__ import annotations

import pytest

from console.model.actions.refusals import cannot_add_capacity
from console.protocol import NodeState
from tests.fleet_builders import node


def test_a_fleet_that_adds_no_nodes_names_the_moves_it_has() -> None:
    nodes = [node("a"), node("b", NodeState.DOWN), node("c", NodeState.DRAINED)]
    assert cannot_add_capacity(0, nodes) == (
        "this fleet cannot add capacity — it adds no nodes: start b again where it runs, undrain c, "
        "or shed load with admission; nothing sent"
    )
    assert cannot_add_capacity(0, [node("a")]) == (
        "this fleet cannot add capacity — it adds no nodes: shed load with admission; nothing sent"
    )
    down = [node("a", NodeState.DOWN), node("b", NodeState.DOWN), node("c")]
    assert "start a, b again where they run, or shed" in str(cannot_add_capacity(0, down))


def test_a_fleet_at_its_most_is_refused_without_advising_a_start_nothing_there_does() -> None:
    # fleet up at 16 nodes: its down node is its own child, started by nothing the operator runs.
    nodes = [node("a"), node("b", NodeState.DOWN)]
    assert cannot_add_capacity(2, nodes) == (
        "this fleet cannot add capacity — it is at its most, 2 nodes: shed load with admission; nothing sent"
    )


@pytest.mark.parametrize("max_nodes", [None, 3, 16])
def test_a_fleet_with_room_or_that_does_not_say_gets_the_form(max_nodes: int | None) -> None:
    assert cannot_add_capacity(max_nodes, [node("a"), node("b", NodeState.DOWN)]) is None
