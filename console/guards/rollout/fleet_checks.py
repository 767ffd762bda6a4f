"""The fleet's checks a rollout's start and its resume both ask: nodes down, nodes in rotation, headroom —
and how each says what a fleet that cannot add capacity can do instead.
"""

from __future__ import annotations

from console.figures import first_named
from console.guards.capacity import NodeRoom
from console.guards.thresholds import Thresholds
from console.guards.verdict import check
from console.protocol import (
    Check,
    FleetSnapshot,
    NodeState,
    VerdictLevel,
)


def nodes_down_check(snapshot: FleetSnapshot) -> Check:
    """The nodes `down` against none, failing to `confirm`: asked before a rollout starts and before one
    resumes — a controller's rollout halts on a batch node gone down ("restart it, then resume"), and a
    resume with it still down sends the next batches onto the nodes already holding its clients. Confirm,
    not blocked: restarting may be what fixes the crash."""
    down = [node.id for node in snapshot.nodes if node.state is NodeState.DOWN]
    named_down = first_named(down)
    return check(
        "nodes_down",
        len(down),
        0,
        fails_to=VerdictLevel.CONFIRM,
        # `down` is a loss outside a planned restart (a rollout's own is `restarting`): its clients already
        # sit on the rest, and each batch takes one more node away from them (node_down alarm).
        why=(
            f"{named_down} down (killed, crashed or hung): each batch takes another node from the ones "
            "holding its clients — restart it first"
            if down
            else "no node down outside a planned restart"
        ),
    )


def why_cannot_add(room: NodeRoom | None) -> str | None:
    """Why the fleet cannot add capacity ("this fleet adds no nodes"); None when it can or its snapshot does
    not say — then the checks keep the seed's "add capacity"."""
    why_not = None if room is None else room.why_not()
    return None if why_not is None else f"this fleet {why_not}"


WAIT_FOR_HEADROOM = "wait for headroom to come back"


def rotation_check(snapshot: FleetSnapshot, fails_to: VerdictLevel, when_none: str) -> Check:
    """The nodes in rotation (`ready`) against one: asked before a rollout starts (blocked with none: a
    restart has nowhere to move its batches' clients, and a start said so as bad input, "batch_size:
    expected 1 … 0", of a field the operator had not got wrong) and before one resumes (typed: the batch it
    halted on may be what holds every node out of rotation, and finishing it the way back)."""
    ready = sum(1 for node in snapshot.nodes if node.state is NodeState.READY)
    return check(
        "nodes_in_rotation",
        ready,
        1,
        bound="min",
        fails_to=fails_to,
        why=(
            "nodes in rotation (ready): they take each batch's clients"
            if ready
            else f"no node in rotation — every one drained, draining, down or restarting: {when_none}"
        ),
    )


def start_rotation_check(snapshot: FleetSnapshot) -> Check:
    return rotation_check(
        snapshot,
        VerdictLevel.BLOCKED,
        "none would take a batch's clients; undrain a node, or restart one that is down, first",
    )


def headroom_check(
    snapshot: FleetSnapshot, thresholds: Thresholds, fails_to: VerdictLevel, why: str, move: str
) -> Check:
    """The fleet's headroom now against `headroom_min_pct` (outage seed: no safe restart below it): blocked
    before a rollout starts and before one resumes — the same figure, budget and level on both; a resume
    asks instead only while its own batch is what holds the fleet under it (`judge_rollout_resume`)."""
    return check(
        "headroom_pct",
        snapshot.totals.headroom_pct,
        thresholds.headroom_min_pct,
        bound="min",
        fails_to=fails_to,
        why=why,
        move=move,
    )
