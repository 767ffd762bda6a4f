"""Refusals the console gives before anything is sent: an action whose answer is known (`pointless`), a
rollout this fleet cannot start (`rollout_unavailable`, `rollout_lacks`), capacity it cannot add
(`cannot_add_capacity`), and why the console offers no actions at all (`actions_disabled_reason`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from console.figures import first_named
from console.guards.capacity import node_room
from console.guards.rollout import ACTIVE, UNDRAINABLE, nothing_to
from console.model.units import fleet_clock
from console.protocol import ActionKind, NodeState, NodeStatus, RolloutStatus, UnavailableReason

#: The console's keys for the next step a halt or resume with nothing to act on names (`nothing_to`).
_KEYS = {ActionKind.ROLLOUT_START: " (R)", ActionKind.ROLLOUT_RESUME: " (r)"}


def pointless(
    kind: ActionKind,
    node: NodeStatus | None,
    rollout: RolloutStatus | None = None,
    clock: Callable[[float], str] = fleet_clock,
) -> str | None:
    """Why a drain or undrain of `node`, or a halt or resume of `rollout`, could only be refused (the server
    refuses a drain of a node out of rotation, an undrain of one in it, a halt of a rollout neither running
    nor paused, a resume of one neither paused nor halted), or None. Not a verdict — the server judges —
    only sparing the operator a form whose answer is known, and the audit log a failed action. A rollout
    start on a fleet that says it cannot start one (`rollout_unavailable`: `fleet up`'s nodes have no
    restart command) is answered with the fleet's words, which say what to do. A halt or resume is said
    in the server's words (`nothing_to`), with this console's keys and `clock` (its clock face's)."""
    unavailable = rollout_unavailable(rollout) if kind is ActionKind.ROLLOUT_START else None
    if unavailable is not None:
        return f"this fleet cannot start a rollout — {unavailable}; nothing sent"
    if kind is ActionKind.ROLLOUT_START and rollout is not None and rollout.state in ACTIVE:
        # The server refuses it as bad input ("halt it first"): R opened the whole form, refused at its dry run.
        # A scheduled one is said so, with its start: "running (before batch 1 of 5)" was said of a restart
        # not yet begun (graceful-drain, whose task is to replace it).
        where = rollout.schedule_said(clock) or rollout.position()
        return f"{kind.title}: a rollout is {rollout.state_said()} ({where}): h halts it first; nothing sent"
    if rollout is not None and kind in (ActionKind.ROLLOUT_HALT, ActionKind.ROLLOUT_RESUME):
        said = nothing_to(kind, rollout, clock, _KEYS)
        return None if said is None else f"{kind.title}: {said}; nothing sent"
    if node is None:
        return None
    if kind is ActionKind.UNDRAIN and node.state not in UNDRAINABLE:
        return f"{node.id} is {node.state.value}: only a draining or drained node undrains"
    if kind is ActionKind.DRAIN and node.state is not NodeState.READY:
        hint = " (u undrains it)" if node.state in UNDRAINABLE else ""
        return f"{node.id} is {node.state.value}: only a ready node drains{hint}"
    return None


#: What a fleet lacks to roll out, by `rollout.unavailable_reason`; a reason not here (a newer server's) is
#: said by its name (`rollout_lacks`).
_LACKS = {UnavailableReason.NO_RESTART_COMMAND: "no restart command"}


def rollout_lacks(reason: str) -> str:
    """What a fleet lacks to roll out, named from its typed `unavailable_reason`: "no restart command"."""
    return _LACKS.get(reason, reason.replace("_", " "))


def rollout_unavailable(rollout: RolloutStatus | None) -> str | None:
    """Why this fleet cannot start a rollout whatever the guards say, as its frame says it: the server's
    words (`unavailable`: they say what to do), else its typed reason named; None where it can, or does not
    say. One rule for refusing R at the key (`pointless`) and for not offering it (`console.model.offered`):
    a start hidden from the footer opened its form when only the typed reason was sent."""
    if rollout is None:
        return None
    if rollout.unavailable:
        return rollout.unavailable
    return rollout_lacks(rollout.unavailable_reason) if rollout.unavailable_reason else None


def cannot_add_capacity(max_nodes: int | None, nodes: Sequence[NodeStatus]) -> str | None:
    """Why an add of capacity could only be refused here, and what this fleet can do instead; None where it
    can add, or its frame does not say (`max_nodes` null: an older server). `nodes`: every node the frame
    lists, down and provisioning too, as the add guard counts the room. A controller over a nodes file adds
    no nodes (`max_nodes` 0): its c opened a form pre-filled with the nodes headroom wanted, and only the
    submit was refused. Its down nodes are started again where they run (node_down's way on there); a
    fleet at its most, `fleet up` at 16, started its down nodes itself, so that is not said there."""
    room = node_room(max_nodes, len(nodes))
    why_not = room.why_not() if room is not None else None
    if room is None or why_not is None:
        return None
    moves: list[str] = []
    down = [node.id for node in nodes if node.state is NodeState.DOWN]
    if down and room.max_nodes <= 0:
        where = "it runs" if len(down) == 1 else "they run"
        moves.append(f"start {first_named(down)} again where {where}")
    out = [node.id for node in nodes if node.state in UNDRAINABLE]
    if out:  # capacity this fleet still has: headroom counts the nodes in rotation
        moves.append(f"undrain {first_named(out)}")
    moves.append("shed load with admission")
    said = moves[0] if len(moves) == 1 else ", ".join(moves[:-1]) + f", or {moves[-1]}"
    return f"this fleet cannot add capacity — it {why_not}: {said}; nothing sent"


#: Why the console offers no actions (`actions_disabled_reason`).
READ_ONLY = "read-only console"
NO_FLEET_API = "no fleet API"
VIEWER_TOKEN = "a viewer's token: it may watch, not act"
REFUSED_403 = "the server refused (403): a viewer token?"
#: A drill whose time is up (the stream's end event, or a hello carrying it): its score is final, and a
#: served drill's fleet refuses actions from then on (409 drill-ended) — they once went through and added
#: nodes to a fleet that would never run on to provision them.
DRILL_ENDED = "the drill has ended"
#: The same, where the console froze the fleet at the end (`stormdeck drill`: its clock paused).
DRILL_ENDED_FROZEN = "the drill has ended: the fleet is frozen"
#: The same in fewer words, for a narrow box's border: the rollout box's holds 26 cells at 80×24.
_BRIEF_REASONS = {
    VIEWER_TOKEN: "viewer token: watch only",
    REFUSED_403: "server refused (403)",
    DRILL_ENDED_FROZEN: DRILL_ENDED,
}


def actions_disabled_reason(
    read_only: bool,
    can_act: bool,
    refused: str | None,
    role: str | None = None,
    drill_over: str | None = None,
) -> str | None:
    """Why the console offers no actions (short: it goes in a box's border), or None when it does. Never
    hidden: the screens show it, and a key press says it again. `role`: the stream's hello's, so a
    viewer's console says so from the start instead of after its first refused action. `drill_over`: why a
    drill's end stops them (`DRILL_ENDED`), once it has."""
    if read_only:
        return READ_ONLY
    if not can_act:
        return NO_FLEET_API
    if drill_over is not None:
        return drill_over
    if role == "viewer":
        return VIEWER_TOKEN
    return refused


def brief_reason(reason: str) -> str:
    """`reason` in fewer words where it has them (`_BRIEF_REASONS`), else as it is."""
    return _BRIEF_REASONS.get(reason, reason)
