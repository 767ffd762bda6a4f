"""Which fleet actions a fleet can take at all, as its frames say it: the keys the console offers.

A `stormdeck controller` over a nodes file whose nodes have no restart command (max_nodes 0) cannot start
a rollout nor add a node, whatever the guards say; its footer listed "R rollout … c capacity" and the rollout
box "actions R h r a c" all the same. This is a fleet's standing, not a moment's: a halt with no rollout
running is refused by `pointless` at the key, and its key stays offered where a rollout can start — an
operator learns the keys before the storm, and a footer that reflowed at each change of the rollout's state
would move them under the eyes at the moment to halt. Where the frame does not say (the fields null: an
older server, a recording of one), every key is offered, as before. Pure: a frame in, a mapping out.
"""

from __future__ import annotations

from console.guards.capacity import node_room
from console.guards.rollout import HALTABLE, RESUMABLE
from console.model.actions.refusals import rollout_lacks, rollout_unavailable
from console.protocol import ActionKind, Frame

#: A rollout in these states exists: h or r may act on it, even on a fleet that cannot start another.
ROLLOUT_UNDER_WAY = frozenset(HALTABLE) | RESUMABLE


def not_on_this_fleet(frame: Frame | None) -> dict[ActionKind, str]:
    """The fleet actions this fleet cannot take at all, each with why in a few words (help says "not on
    this fleet: …"); their keys still answer, with the longer words of `pointless` and
    `cannot_add_capacity`. Drain, undrain and admission are the moves every fleet has: never here.

    h and r only act on a rollout that exists: they are off where none can start and none is running,
    paused or halted (one may be, on a fleet that cannot start another: a newer server's reason, said
    mid-rollout), and back as soon as a frame says one is."""
    if frame is None:
        return {}
    off: dict[ActionKind, str] = {}
    rollout = frame.rollout
    unavailable = rollout_unavailable(rollout)
    if rollout is not None and unavailable is not None:
        reason = rollout.unavailable_reason
        # The typed reason in a few words where there is one; an older server's words whole (they say why)
        off[ActionKind.ROLLOUT_START] = rollout_lacks(reason) if reason else unavailable
        if rollout.state not in ROLLOUT_UNDER_WAY:
            off[ActionKind.ROLLOUT_HALT] = "it cannot start a rollout, so none runs to halt"
            off[ActionKind.ROLLOUT_RESUME] = "it cannot start a rollout, so none waits to resume"
    room = node_room(frame.max_nodes, len(frame.nodes))
    why_not = room.why_not() if room is not None else None
    if why_not is not None:
        off[ActionKind.ADD_CAPACITY] = f"it {why_not}"
    return off


def keys_not_offered(frame: Frame | None, drill_ended: bool = False) -> frozenset[ActionKind]:
    """The fleet actions whose keys a footer does not draw: those this fleet cannot take at all
    (`not_on_this_fleet`) — and, once a drill has ended, every one: its score is final and its server
    refuses them (their keys still answer why, as `actions_disabled_reason` words it)."""
    if drill_ended:
        return frozenset(ActionKind)
    return frozenset(not_on_this_fleet(frame))
