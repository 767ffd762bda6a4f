"""A drain-mode batch's deadline force-close against the connections_drop alarm's line
(`force_close_drop_pct`), with the moves that bring it under: the drain guard's check, for a batch."""

from __future__ import annotations

import math

from console.guards.deadline import force_close_drop_pct, force_closed
from console.guards.rollout.pacing import BatchPacing, batch_drain, rate_text
from console.guards.verdict import any_of, check
from console.protocol import Check, NodeStatus, VerdictLevel


def force_close_drop_check(batch_pacing: BatchPacing) -> Check:
    """What the batch's drain deadline force-closes at once, in % of the fleet, against
    `connections_drop_pct`: the critical connections_drop alarm counts a forced close as lost, never held
    as a paced one within its hint is. A drain guard-typed at 137 of 300 force-closed (review, loopback
    fleet) was let through as a rollout's batch with nothing said. Typed, as the drain guard's own check."""
    t, drain = batch_pacing.thresholds, batch_pacing.drain
    fleet_connections = sum(node.connections for node in batch_pacing.snapshot.nodes)
    drop_pct = force_close_drop_pct(drain.force_closed, fleet_connections)
    moves: list[str] = []
    if drop_pct > t.connections_drop_pct:
        faster = _rate_under_line(batch_pacing, fleet_connections)
        if faster is not None:
            moves.append(
                f"a batch drain rate of at least {rate_text(faster)} closes/s per node (drain_rate_per_s)"
            )
        if len(batch_pacing.batch) > 1 and _one_under_line(batch_pacing, fleet_connections):
            moves.append("a smaller batch")
    return check(
        "force_close_drop_pct",
        drop_pct,
        t.connections_drop_pct,
        fails_to=VerdictLevel.TYPED,
        why=f"a batch's force-closed at its drain's deadline ({drain.describe}), all at once, in % of the "
        "fleet — the critical connections_drop alarm counts them as lost, not held, and fires over this line",
        move=": " + any_of(moves) if moves else "",
    )


def _under_line(
    batch: list[NodeStatus], rate_per_s: float, deadline_s: float, fleet: int, line: float
) -> bool:
    forced = sum(force_closed(node, rate_per_s, deadline_s) for node in batch)
    return force_close_drop_pct(forced, fleet) <= line


def _rate_under_line(batch_pacing: BatchPacing, fleet_connections: int) -> float | None:
    """The least drain rate per node, to a tenth, whose force-close at the batch's deadline is within the
    line — where it is faster than the batch's and its closes still fit the spare admission (the pacing
    check's budget); None otherwise: a rate that trades the alarm for a blocked pacing is no move."""
    batch, drain, load = batch_pacing.batch, batch_pacing.drain, batch_pacing.load
    line, deadline_s = batch_pacing.thresholds.connections_drop_pct, drain.deadline_s
    fullest = max((node.connections for node in batch), default=0)
    if deadline_s <= 0 or fullest == 0:
        return None
    low, high = 0, math.ceil(fullest / deadline_s * 10)  # in tenths: `high` empties every node in time
    while high - low > 1:  # `high` passes, `low` (0/s: nothing closed before the deadline) does not
        mid = (low + high) // 2
        low, high = (
            (low, mid) if _under_line(batch, mid / 10, deadline_s, fleet_connections, line) else (mid, high)
        )
    # (faster than the batch's, which is over the line: fewer are left to the deadline the faster it drains)
    rate = high / 10
    fits = (
        load.drain_rate_per_s + sum(min(rate, node.connections) for node in batch)
        <= load.spare_admission_per_s
    )
    return rate if fits else None


def _one_under_line(batch_pacing: BatchPacing, fleet_connections: int) -> bool:
    """Whether a batch of 1 (the fullest node) at the same drain is within the line."""
    one = batch_drain(
        batch_pacing.ready[:1], batch_pacing.capacity, batch_pacing.thresholds, batch_pacing.rate_per_s
    )
    return (
        force_close_drop_pct(one.force_closed, fleet_connections)
        <= batch_pacing.thresholds.connections_drop_pct
    )
