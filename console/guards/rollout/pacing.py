"""A drain-mode batch's drain as the backend applies it, and the check that it fits in the survivors'
spare admission (`drain_pacing_per_s`, the field guide's pacing budget) with the moves that pass it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from console.guards.capacity import FleetCapacity
from console.guards.fleet import FleetLoad, fleet_load
from console.guards.thresholds import Thresholds
from console.guards.verdict import any_of, check
from console.protocol import (
    Check,
    FleetSnapshot,
    NodeStatus,
    VerdictLevel,
)


@dataclass(frozen=True)
class BatchDrain:
    """A drain-mode batch's drain as the backend applies it to each of its nodes."""

    closes_per_s: float  # across the batch: what the survivors must absorb each second
    duration_s: float  # until the fullest node is empty, or force-closed at the deadline
    force_closed: int  # connections still open at the deadline
    describe: str


def batch_drain(batch: list[NodeStatus], capacity: FleetCapacity, thresholds: Thresholds) -> BatchDrain:
    """The batch's drain at the rate and deadline the backend applies (`FleetCapacity.batch_drain_*`). It
    judged a batch drained over the drain window instead — 0.87/s and 610 s projected, where a real fleet
    drained each node at 100/s and finished in seconds (found in review). A backend that does not say is
    taken to drain each node over the drain window."""
    deadline_s = capacity.batch_drain_deadline_s or thresholds.drain_window_s
    rate = capacity.batch_drain_rate_per_s
    if rate <= 0:
        displaced = sum(node.connections for node in batch)
        return BatchDrain(
            displaced / deadline_s, deadline_s if displaced else 0.0, 0, f"over the {deadline_s:g} s window"
        )
    return BatchDrain(
        closes_per_s=sum(min(rate, node.connections) for node in batch),
        duration_s=max((min(node.connections / rate, deadline_s) for node in batch), default=0.0),
        force_closed=sum(max(0, math.ceil(node.connections - rate * deadline_s)) for node in batch),
        describe=f"{rate:g}/s per node, {deadline_s:g} s deadline",
    )


def pacing_check(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    t: Thresholds,
    ready: list[NodeStatus],
    batch: list[NodeStatus],
    load: FleetLoad,
    drain: BatchDrain,
    wait_drains: str,
    cannot_add: str | None,
) -> tuple[Check, float | None]:
    """The drain-mode first batch's `drain_pacing_per_s` check, and — where it fails — the admission
    rate_per_s a node that makes the room (`FleetLoad.admission_to_admit_per_s`; None where it passes, or no
    admission rate makes the room)."""
    # The field guide's pacing budget, for the drain the backend applies to each batch node: the
    # closes per second the survivors must absorb while the batch drains.
    pacing_per_s = load.drain_rate_per_s + drain.closes_per_s
    fits = pacing_per_s <= load.spare_admission_per_s
    pacing = check(
        "drain_pacing_per_s",
        pacing_per_s,
        load.spare_admission_per_s,
        fails_to=VerdictLevel.BLOCKED,
        why=f"a batch's drain ({drain.describe}) must fit in the spare admission"
        f"{load.admission_limit_text()} (field guide)",
        # (worked out on a failure only: it judges a batch of one over the whole fleet again, and
        # `largest_safe_batch_size` bisects through here)
        move=""
        if fits
        else pacing_move(snapshot, capacity, t, ready, batch, load, drain, wait_drains, cannot_add),
    )
    rate = None if pacing.ok else load.admission_to_admit_per_s(drain.closes_per_s)
    return pacing, rate


def pacing_move(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    t: Thresholds,
    ready: list[NodeStatus],
    batch: list[NodeStatus],
    load: FleetLoad,
    drain: BatchDrain,
    wait_drains: str,
    cannot_add: str | None,
) -> str:
    """What passes a batch's drain pacing, said only where it would: the rollout takes no drain rate (each
    batch node drains at the backend's `batch_drain_rate_per_s`), so a 3-node loopback fleet at admission
    30/s a node was blocked at every batch size and told to "wait for the inflow to fall" at an inflow of 0
    (found in review). A smaller batch where a batch of 1 fits; the admission rate that makes the room;
    the drains under way; capacity where the fleet can grow; the inflow where its falling makes the room."""
    one = ready[:1]
    one_load = fleet_load(snapshot, capacity, {node.id for node in one})
    one_closes_per_s = batch_drain(one, capacity, t).closes_per_s
    one_fits = one_load.drain_rate_per_s + one_closes_per_s <= one_load.spare_admission_per_s
    raise_admission = load.raise_admission(drain.closes_per_s)
    if not raise_admission and len(batch) > 1 and not one_fits:
        # No admission rate under the handshake ceiling makes room for this batch; one may for a batch of 1.
        raised = one_load.raise_admission(one_closes_per_s)
        raise_admission = f"a batch of 1 and {raised}" if raised else ""
    moves = [
        "a smaller batch" if len(batch) > 1 and one_fits else "",
        raise_admission,
        wait_drains,
        "add capacity first" if cannot_add is None else "",
        load.wait_for_inflow(drain.closes_per_s),
    ]
    if any(moves):
        return ": " + any_of(moves)
    return (
        f": nothing passes it on this fleet now — each batch node drains at the backend's "
        f"{drain.describe}, more than the survivors can handshake"
    )
