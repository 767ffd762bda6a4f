"""What a drain's deadline force-closes, and the share of the fleet that is as the connections_drop alarm
counts it: one rule for the drain guard (`console.guards.drain`) and a drain-mode rollout's batches
(`console.guards.rollout.force_close`). Apart from both packages because the rollout guard cannot import
the drain package (it imports the alarms, which import the rollout guard)."""

from __future__ import annotations

import math

from console.protocol import NodeStatus


def force_closed(node: NodeStatus, rate_per_s: float, deadline_s: float) -> int:
    """A node's connections still open at `deadline_s` when it closes `rate_per_s`: the deadline closes them
    at once."""
    return max(0, math.ceil(node.connections - rate_per_s * deadline_s))


def force_close_drop_pct(forced: int, fleet_connections: int) -> float:
    """What a drain's deadline force-close takes off the fleet's connections at once, as the
    connections_drop alarm counts it: a forced close is lost until its client is back, never held as a
    paced close within its hint is (`console.figures.WithinHint`). One figure for the drain verdict's
    and a rollout start's `force_close_drop_pct` checks, and the planner that keeps under it
    (`_plan_deadline_s`)."""
    return forced / max(fleet_connections, 1) * 100
