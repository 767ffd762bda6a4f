"""A start's first batch and the checks its size changes: room on the others, drains at once, what the
survivors absorb — and the batch sizes that pass them (what the console's form starts from).
"""

from __future__ import annotations

from dataclasses import dataclass

from console.guards.capacity import FleetCapacity, planned_cpu_note, snapshot_room
from console.guards.fleet import FleetLoad, fleet_load, rotation_after_check, without_survivor_checks
from console.guards.rollout.fleet_checks import WAIT_FOR_HEADROOM, why_cannot_add
from console.guards.rollout.force_close import force_close_drop_check
from console.guards.rollout.lines import PauseLine
from console.guards.rollout.pacing import BatchDrain, BatchPacing, batch_drain, pacing_check
from console.guards.rollout.plan import undrain_first
from console.guards.thresholds import Thresholds
from console.guards.verdict import any_of, check
from console.protocol import (
    Check,
    FleetSnapshot,
    NodeState,
    NodeStatus,
    RolloutMode,
    RolloutRequest,
    VerdictLevel,
)

#: A drain-mode start's checks of what its survivors absorb, left out of a start whose first batch takes
#: every node in rotation (`judge_rollout_start`), as the drain guard leaves out its own.
#: `force_close_drop_pct` with them, as in the drain guard's: with no node in rotation every client is left
#: without one, deadline or not.
SURVIVOR_CHECKS = frozenset({"drain_pacing_per_s", "survivor_cpu_vs_pause_pct", "force_close_drop_pct"})


@dataclass(frozen=True)
class FirstBatch:
    """A start's checks that its batch size changes — the first batch's room on the others, the drains out
    of rotation at once, and (drain mode) what its survivors absorb — with the figures behind them."""

    room: Check  # batch_connections, or nodes_in_rotation_after when the batch takes every node in rotation
    drains: Check  # concurrent_drains
    # drain_pacing_per_s, survivor_cpu_vs_pause_pct, force_close_drop_pct (drain mode with survivors)
    absorb: list[Check]
    load: FleetLoad
    batch: list[NodeStatus]
    displaced: int
    drain: BatchDrain
    survivor_cpu_pct: float
    # The admission rate_per_s a node that makes room for a batch's drain its pacing check fails on
    # (`FleetLoad.admission_to_admit_per_s`); None where it passes, or no admission rate makes the room.
    pacing_admission_rate_per_s: float | None = None
    # The drain rate per node that fits that pacing (`fitting_drain_rate`); None where it passes, or none fits.
    pacing_drain_rate_per_s: float | None = None

    @property
    def passes(self) -> bool:
        return all(item.ok for item in (self.room, self.drains, *self.absorb))


#: The start's checks a batch size changes (`FirstBatch`): a verdict failing one says what batch passes.
BATCH_CHECKS = frozenset(
    {"batch_connections", "nodes_in_rotation_after", "concurrent_drains", *SURVIVOR_CHECKS}
)


def in_rotation(snapshot: FleetSnapshot) -> list[NodeStatus]:
    """The nodes in rotation, fullest first: the worst first batch is the fullest nodes leaving."""
    ready = [node for node in snapshot.nodes if node.state is NodeState.READY]
    return sorted(ready, key=lambda n: -n.connections)


def first_batch(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    request: RolloutRequest,
    t: Thresholds,
    ready: list[NodeStatus],
    cannot_add: str | None,
) -> FirstBatch:
    batch = ready[: request.batch_size]
    smaller = "a smaller batch" if len(batch) > 1 else ""  # a batch of 1 has none (found in review)
    load = fleet_load(snapshot, capacity, {node.id for node in batch})
    displaced = sum(node.connections for node in batch)
    line = PauseLine(request.pause_cpu_pct, t.cpu_pause_pct)
    wait_drains = load.wait_for_drains()
    drains = check(
        "concurrent_drains",
        load.draining_nodes + request.batch_size,
        t.max_concurrent_drains,
        fails_to=VerdictLevel.TYPED,
        why="nodes out of rotation at once, the first batch included",
        move=": " + any_of([smaller, wait_drains]) if smaller or wait_drains else "",
    )
    drain = batch_drain(batch, capacity, t, request.drain_rate_per_s)
    cpu_pct = load.projected_cpu_pct(drain.closes_per_s, capacity, t)
    absorb: list[Check] = []
    admission_rate: float | None = None
    drain_rate: float | None = None
    if request.mode is RolloutMode.DRAIN:
        batch_pacing = BatchPacing(
            snapshot=snapshot,
            capacity=capacity,
            thresholds=t,
            ready=ready,
            batch=batch,
            load=load,
            drain=drain,
            wait_drains=wait_drains,
            cannot_add=cannot_add,
            rate_per_s=request.drain_rate_per_s,
        )
        pacing = pacing_check(batch_pacing)
        admission_rate, drain_rate = pacing.admission_rate_per_s, pacing.drain_rate_per_s
        absorb = [
            pacing.check,
            check(
                "survivor_cpu_vs_pause_pct",
                cpu_pct,
                line.pct,
                fails_to=VerdictLevel.TYPED,
                why=f"busiest survivor's CPU while absorbing a batch's drain, against {line.words()}"
                f"{planned_cpu_note(capacity)}",
                move="; the rollout pauses above it: "
                + any_of([smaller, line.raise_move(), "wait for CPU to fall", "shed load with admission"]),
            ),
            force_close_drop_check(batch_pacing),
        ]
    # A first batch of every node in rotation leaves no survivor: its CPU ("—") and pacing limit (0) failed
    # beside the one reason, nodes_in_rotation_after (`batch_room_check`). Left out, as in a drain's verdict.
    absorb = without_survivor_checks(absorb, load, SURVIVOR_CHECKS)
    room = batch_room_check(load, batch, displaced, cannot_add, undrain_first(snapshot))
    return FirstBatch(
        room,
        drains,
        absorb,
        load,
        batch,
        displaced,
        drain,
        cpu_pct,
        admission_rate,
        drain_rate,
    )


def batch_room_check(
    load: FleetLoad, batch: list[NodeStatus], displaced: int, cannot_add: str | None, undrain: str
) -> Check:
    """The first batch's connections against the room left on the other nodes — or, when the batch takes
    every node in rotation, the rotation itself: there is no other node, and "batch_connections ≤ 0" (below
    0 with a drain under way) passed an idle fleet's batch, 0 ≤ 0, that left none to take a newcomer.
    `cannot_add`: why the fleet cannot add capacity (None: it can, or does not say); then the moves it has —
    a smaller batch (if there is one), the nodes to undrain (`undrain`), or waiting for headroom."""
    if load.survivors == 0:
        # A smaller batch is the move when there is one (it is bad input above the nodes in rotation).
        move = (
            f"a batch of {len(batch) - 1} or fewer, or undrain another node first"
            if len(batch) > 1
            else "undrain another node, or restart one that is down, first"
        )
        return rotation_after_check(
            load,
            "nodes left in rotation (ready) while the first batch restarts: none would take its clients or "
            f"a newcomer; {move}",
        )
    spare_connections = load.survivor_capacity_connections - (load.serving_connections - displaced)
    smaller = "a smaller batch" if len(batch) > 1 else ""
    return check(
        "batch_connections",
        displaced,
        spare_connections,
        fails_to=VerdictLevel.BLOCKED,
        why="the first batch's connections against the room left on the other nodes",
        move=": " + any_of([smaller, "add capacity first"])
        if cannot_add is None
        else f", and {cannot_add}: " + any_of([smaller, undrain, WAIT_FOR_HEADROOM]),
    )


def largest_safe_batch_size(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    request: RolloutRequest,
    thresholds: Thresholds | None = None,
) -> int:
    """The largest batch size whose checks a batch size changes (`BATCH_CHECKS`) all pass, for `request`
    at any other size; 0 when not even a batch of 1 does. What a start blocked on them is typed back at,
    and what the console's form starts from — it pre-filled 2 on a 3-node fleet that took 1 (found in
    review). Found by bisection: each check grows with the batch (the fullest nodes leave first), but for
    the busiest survivor's CPU, which a batch taking the busiest node lowers — so the answer passes, and is
    the largest that does wherever the checks grow with the batch."""
    t = thresholds or Thresholds()
    ready = in_rotation(snapshot)
    cannot_add = why_cannot_add(snapshot_room(snapshot))

    def passes(size: int) -> bool:
        sized = request.model_copy(update={"batch_size": size})
        return first_batch(snapshot, capacity, sized, t, ready, cannot_add).passes

    if not ready or not passes(1):
        return 0
    low, high = 1, len(ready)  # `low` passes; a batch of every node in rotation never does
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if passes(mid) else (low, mid)
    return low


def batch_checks_failing(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    request: RolloutRequest,
    thresholds: Thresholds | None = None,
) -> list[str]:
    """The checks a batch size changes (`BATCH_CHECKS`) that `request`'s first batch fails, in the verdict's
    order: what holds back every batch when a batch of 1 fails them (the console's rollout form says so)."""
    t = thresholds or Thresholds()
    ready = in_rotation(snapshot)
    if not ready:
        return []
    first = first_batch(snapshot, capacity, request, t, ready, why_cannot_add(snapshot_room(snapshot)))
    return [item.name for item in (first.room, first.drains, *first.absorb) if not item.ok]


def admission_for_batch(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    request: RolloutRequest,
    thresholds: Thresholds | None = None,
) -> str:
    """The admission move that lets `request`'s first batch drain within the pacing budget, "raise admission
    rate_per_s to at least 50/s a node (now 30/s)"; "" where its pacing passes, or no admission rate under
    the handshake ceiling gets it there. What the console's rollout form says when no batch passes."""
    t = thresholds or Thresholds()
    ready = in_rotation(snapshot)
    if not ready or request.mode is not RolloutMode.DRAIN:
        return ""
    first = first_batch(snapshot, capacity, request, t, ready, why_cannot_add(snapshot_room(snapshot)))
    if first.pacing_admission_rate_per_s is None:
        return ""
    return first.load.raise_admission(first.drain.closes_per_s)
