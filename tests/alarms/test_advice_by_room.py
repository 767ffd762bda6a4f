"""The alarms' advice names only what the fleet can do: "add capacity" where its frames say it can grow
(`max_nodes` above its nodes), the ways it does have where they say it cannot (`max_nodes` 0: a controller
over a nodes file; or the fleet at its most nodes), and today's words where they do not say (null: an older
server, frames built straight from the simulation)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from console.protocol import Frame, NodeStatus, RolloutState, RolloutStatus
from tests.alarms.judging import judged, with_room
from tests.alarms.test_rules import NO_RESTART
from tests.fleet_builders import node, nodes, series

#: Today's words, kept where the frame does not say whether the fleet can grow, and where it can.
HEADROOM_CAN_ADD = "no restart is safe; add capacity instead."
ABORT_CAN_ADD = "no rollout is running to halt: ration the returning clients (admission) or add capacity."


def _message(frames: list[Frame], name: str, as_columns: bool = False) -> str:
    """`name`'s message once `frames` are judged; `as_columns`: as the console judges them, each frame
    without its node records (the nodes gathered as columns, as `node_down`'s advice is tested)."""
    return {a.name: a.message for a in judged(frames, as_columns).active}[name]


# --- headroom_low ---------------------------------------------------------------------------------------


def _headroom_advice(
    max_nodes: int | None,
    fleet: Sequence[NodeStatus] | None = None,
    rollout: RolloutStatus | None = None,
    as_columns: bool = False,
) -> str:
    frames = with_room(series(0, 3, headroom_pct=20.0, fleet=fleet, rollout=rollout), max_nodes)
    message = _message(frames, "headroom_low", as_columns)
    assert message.startswith("Headroom 20 % is under the 35 % budget: "), message
    return message.split("budget: ", 1)[1]


@pytest.mark.parametrize("max_nodes", [None, 16])
def test_headroom_low_says_add_capacity_where_the_fleet_can_or_does_not_say(max_nodes: int | None) -> None:
    assert _headroom_advice(max_nodes) == HEADROOM_CAN_ADD


def test_headroom_low_over_a_nodes_file_says_what_that_fleet_can_do_instead() -> None:
    """A controller over a nodes file adds no nodes (`max_nodes` 0): "add capacity instead" sent the operator
    to `c`, which refuses ("cannot add capacity"). What it can do: shed load with admission."""
    advice = _headroom_advice(0)
    assert advice.startswith("no restart is safe, and this fleet adds no nodes:"), advice
    assert "shed load with admission" in advice, advice
    assert "add capacity" not in advice, advice
    # Nothing out of rotation, no rollout: neither is named.
    assert "undrain" not in advice and "halt" not in advice, advice


def test_headroom_low_at_the_fleets_most_nodes_says_so() -> None:
    """`fleet up` at 4 of its 4 nodes: an add is refused "at its most", so it is not advised either."""
    advice = _headroom_advice(4)
    assert advice.startswith("no restart is safe, and this fleet is at its most, 4 nodes:"), advice
    assert "shed load with admission" in advice and "add capacity" not in advice, advice
    # The nodes counted from the view, as the console judges frames sent without their node records.
    assert _headroom_advice(4, as_columns=True) == advice
    assert _headroom_advice(5) == HEADROOM_CAN_ADD  # one node of room: add capacity is a way on


def test_headroom_low_without_room_names_the_nodes_to_undrain_and_the_rollout_to_halt() -> None:
    """A drained node's capacity is out of rotation (headroom counts the nodes in rotation): undrain puts it
    back; a rollout under way keeps restarting nodes the budget says are not safe to restart."""
    fleet = [*nodes(3), node("gw-003", state="drained"), node("gw-004", state="draining")]
    advice = _headroom_advice(0, fleet=fleet, rollout=RolloutStatus(state=RolloutState.RUNNING))
    assert advice == (
        "no restart is safe, and this fleet adds no nodes: halt the rollout; undrain gw-003, gw-004; "
        "shed load with admission."
    ), advice
    # Where the fleet can grow, today's words: adding is the seed's fix.
    assert _headroom_advice(16, fleet=fleet, rollout=RolloutStatus(state=RolloutState.RUNNING)) == (
        HEADROOM_CAN_ADD
    )


def test_headroom_low_over_a_nodes_file_with_a_node_down_says_start_it_again_first() -> None:
    """A nodes file's controller (`max_nodes` 0, no restart commands) with node gw-003 down: node_down said
    "start it again where it runs", headroom_low only "shed load with admission" — though the down node's
    capacity is the headroom lost, and starting it is the one way this fleet has to get it back."""
    fleet = [*nodes(3), node("gw-003", state="down", connections=0)]
    advice = _headroom_advice(0, fleet=fleet, rollout=NO_RESTART)
    assert advice == (
        "no restart is safe, and this fleet adds no nodes: start gw-003 again where it runs; "
        "shed load with admission."
    ), advice
    assert _headroom_advice(0, fleet=fleet, rollout=NO_RESTART, as_columns=True) == advice
    # Several down (first_named), before the nodes to undrain; with restart commands, restart them.
    several = [*nodes(1), *(node(f"gw-00{i}", state="down", connections=0) for i in (1, 2, 3, 4))]
    several.append(node("gw-005", state="drained"))
    assert _headroom_advice(0, fleet=several, rollout=NO_RESTART) == (
        "no restart is safe, and this fleet adds no nodes: start gw-001, gw-002, gw-003 and 1 more again "
        "where they run; undrain gw-005; shed load with admission."
    )
    assert _headroom_advice(0, fleet=fleet).startswith(
        "no restart is safe, and this fleet adds no nodes: restart gw-003; "
    )
    # At its most (`fleet up`, the down node counted), node_down names no way to bring it back: nor does this.
    assert "gw-003" not in _headroom_advice(4, fleet=fleet, rollout=NO_RESTART)
    assert _headroom_advice(16, fleet=fleet, rollout=NO_RESTART) == HEADROOM_CAN_ADD


# --- cpu_abort with no rollout to halt ----------------------------------------------------------------


def _hot(extra: Sequence[NodeStatus] = ()) -> list[NodeStatus]:
    return [node(f"gw-{i:03d}", cpu_pct=85.0 if i == 2 else 40.0) for i in range(4)] + list(extra)


def _abort_advice(
    max_nodes: int | None,
    state: RolloutState = RolloutState.IDLE,
    extra: Sequence[NodeStatus] = (),
    as_columns: bool = False,
) -> str:
    frames = with_room(series(0, 35, fleet=_hot(extra), rollout=RolloutStatus(state=state)), max_nodes)
    message = _message(frames, "cpu_abort", as_columns)
    return message.split("on gw-002 85 %: ", 1)[1]


@pytest.mark.parametrize("max_nodes", [None, 16])
def test_cpu_abort_says_add_capacity_where_the_fleet_can_or_does_not_say(max_nodes: int | None) -> None:
    assert _abort_advice(max_nodes) == ABORT_CAN_ADD


@pytest.mark.parametrize(
    ("max_nodes", "why"), [(0, "this fleet adds no nodes"), (4, "this fleet is at its most, 4 nodes")]
)
def test_cpu_abort_without_room_rations_and_does_not_say_add_capacity(max_nodes: int, why: str) -> None:
    advice = _abort_advice(max_nodes)
    assert advice == f"no rollout is running to halt, and {why}: ration the returning clients (admission).", (
        advice
    )
    assert _abort_advice(max_nodes, as_columns=True) == advice


def test_cpu_abort_without_room_names_the_nodes_to_undrain() -> None:
    """Undrained, a node out of rotation takes its share of the returning clients off the hot ones."""
    advice = _abort_advice(0, extra=[node("gw-004", state="drained")])
    assert advice == (
        "no rollout is running to halt, and this fleet adds no nodes: ration the returning clients "
        "(admission); undrain gw-004."
    ), advice


@pytest.mark.parametrize("max_nodes", [None, 0, 4, 16])
def test_cpu_abort_under_a_rollout_says_halt_it_whatever_the_room(max_nodes: int | None) -> None:
    assert _abort_advice(max_nodes, RolloutState.RUNNING) == "halt the rollout and reassess."


@pytest.mark.parametrize("as_columns", [False, True], ids=["records", "columns"])
def test_headroom_low_with_nodes_provisioning_does_not_ask_for_an_add_as_if_none_came(
    as_columns: bool,
) -> None:
    """Review: 9 nodes added mid-storm (the add form's count), and headroom_low kept saying "add capacity
    instead" while they provisioned — as if nothing had been done. It names them, and asks for more only
    if they will not reach the budget."""
    fleet = [*nodes(4), node("gw-004", state="provisioning"), node("gw-005", state="provisioning")]
    advice = _headroom_advice(16, fleet, as_columns=as_columns)
    assert advice == (
        "no restart is safe; 2 nodes are provisioning: add more only if they will not reach the budget once "
        "ready (the add's verdict says)."
    ), advice
