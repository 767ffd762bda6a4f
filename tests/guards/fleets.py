"""A calm 20-node fleet and its capacity record, with knobs for what each guard test changes."""

from __future__ import annotations

from typing import Any

from console.guards import FleetCapacity
from console.protocol import AdmissionSettings, FleetSnapshot, NodeState, NodeStatus, RolloutStatus
from tests.fleet_builders import node, snapshot

# 2000 handshakes/s per node, 0.02 CPU points per handshake/s: a node at its handshake ceiling spends 40 %
# on handshakes alone — the outage seed's point that reconnecting, not holding, burns CPU.
CAPACITY = FleetCapacity(
    handshakes_per_s=2000.0, cpu_pct_per_handshake_per_s=0.02, connections_per_node=50_000
)


def fleet(
    count: int = 20,
    *,
    cpu_pct: float = 40.0,
    connections: int = 27_000,
    accepts_per_s: float = 20.0,
    extra: list[NodeStatus] | None = None,
    rollout: RolloutStatus | None = None,
    admission: AdmissionSettings | None = None,
    **totals: Any,
) -> FleetSnapshot:
    members = [
        node(f"gw-{i:03d}", cpu_pct=cpu_pct, connections=connections, accepts_per_s=accepts_per_s)
        for i in range(count)
    ] + (extra or [])
    held = sum(member.connections for member in members)
    headroom_pct = (1 - held / (50_000 * count)) * 100
    values = {
        "connections": held,
        "headroom_pct": headroom_pct,
        # Every accept was an attempt: the drain guard draws the reconnect alarm's line from a calm second's
        # attempts (console.guards.reconnects), and 100 attempts/s beside 400 accepts/s drew it at 1,000/s.
        "attempts_per_s": accepts_per_s * count,
        "accepts_per_s": accepts_per_s * count,
    } | totals
    return snapshot(members, rollout=rollout, admission=admission, **values)


# fleet up's three nodes as its controller sees them (docs/gateway.md, `capacity_of`): 500 handshakes/s a
# node, the planning figure (no [capacity] table), so 100 ÷ 500 = 0.2 CPU points per handshake/s.
LOOPBACK = FleetCapacity(
    handshakes_per_s=500.0,
    cpu_pct_per_handshake_per_s=0.2,
    connections_per_node=10_000,
    handshakes_planned=True,
)


def loopback_fleet(cpu_pct: float) -> FleetSnapshot:
    members = [node(f"node-{i}", cpu_pct=cpu_pct, connections=1000, accepts_per_s=0.6) for i in (1, 2, 3)]
    return snapshot(members, headroom_pct=90.0, accepts_per_s=1.8)


def out_of_rotation(rollout: RolloutStatus | None = None) -> FleetSnapshot:
    """A fleet with every node out of rotation: drained, draining, down — none `ready`."""
    members = [
        node("gw-000", state=NodeState.DRAINED, connections=0, cpu_pct=5.0),
        node("gw-001", state=NodeState.DRAINING, connections=4_000, cpu_pct=20.0, drain_rate_per_s=50.0),
        node("gw-002", state=NodeState.DOWN, connections=0, cpu_pct=0.0),
    ]
    return snapshot(members, rollout=rollout, headroom_pct=0.0, connections=4_000)


def last_in_rotation() -> FleetSnapshot:
    """One node in rotation (gw-001, 5 000 connections) and one drained: its drain leaves no survivor."""
    members = [node("gw-000", state=NodeState.DRAINED, connections=0), node("gw-001", connections=5_000)]
    return snapshot(members, headroom_pct=0.0, connections=5_000)


#: Words that tell the operator what to do about a failure: a passing check carries none of them (a pass
#: that went on "…: add capacity first" or "…: wait for a drain to finish" told the operator to act on a
#: failure there was not). `console.guards.verdict.check` says a check's `move` only when it fails.
MOVE_WORDS = (
    "a smaller batch",
    "wait for",
    "add capacity",
    "shed ",
    "undrain ",
    "raise ",
    "a higher",
    "lower ",
    "slow the",
    "fewer nodes",
    "lengthen",
    "widen",
    "watch it",
    "halt the rollout",
    "tighten",
    "smaller steps",
    "name the fleet",
    "would reach it",
    "left alone",
)


def says_a_move(why: str) -> list[str]:
    """The move words in `why` (none, for a passing check)."""
    return [word for word in MOVE_WORDS if word in why]
