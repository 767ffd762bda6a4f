"""A drain-mode batch's drain as the backend applies it, and the check that it fits in the survivors'
spare admission (`drain_pacing_per_s`, the field guide's pacing budget) with the moves that pass it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from console.guards.capacity import FleetCapacity
from console.guards.deadline import force_closed
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
    deadline_s: float = 0.0  # the backend's, whatever rate the rollout asks for


def batch_drain(
    batch: list[NodeStatus], capacity: FleetCapacity, thresholds: Thresholds, rate_per_s: float | None = None
) -> BatchDrain:
    """The batch's drain at the rate and deadline the backend applies (`FleetCapacity.batch_drain_*`), or
    at the rate the rollout asks for (`rate_per_s`, its `drain_rate_per_s`) with the backend's deadline. It
    judged a batch drained over the drain window instead — 0.87/s and 610 s projected, where a real fleet
    drained each node at 100/s and finished in seconds (found in review). A backend that does not say is
    taken to drain each node over the drain window."""
    deadline_s = capacity.batch_drain_deadline_s or thresholds.drain_window_s
    rate = capacity.batch_drain_rate_per_s if rate_per_s is None else rate_per_s
    if rate <= 0:
        displaced = sum(node.connections for node in batch)
        return BatchDrain(
            displaced / deadline_s,
            deadline_s if displaced else 0.0,
            0,
            f"over the {deadline_s:g} s window",
            deadline_s,
        )
    return BatchDrain(
        closes_per_s=sum(min(rate, node.connections) for node in batch),
        duration_s=max((min(node.connections / rate, deadline_s) for node in batch), default=0.0),
        force_closed=_force_closed(batch, rate, deadline_s),
        # The rate asked for named by its field: the operator reads which one the verdict judged.
        describe=f"{'' if rate_per_s is None else 'drain_rate_per_s '}{rate:g}/s per node, {deadline_s:g} s deadline",
        deadline_s=deadline_s,
    )


def _force_closed(batch: list[NodeStatus], rate_per_s: float, deadline_s: float) -> int:
    """The drain guard's rule (`force_closed`), over the batch: one arithmetic for both guards' figures."""
    return sum(force_closed(node, rate_per_s, deadline_s) for node in batch)


def fitting_drain_rate(batch: list[NodeStatus], room_per_s: float) -> float | None:
    """The largest drain rate per node, to a tenth, at which `batch` closes at most `room_per_s` a second
    (a node holding fewer connections than the rate closes them all in its first second: `batch_drain`);
    None where no rate of a tenth or more fits (the drains under way fill the room already). Judged as the
    pacing check judges it, so the rate named passes."""
    held = sorted(node.connections for node in batch if node.connections > 0)
    if room_per_s <= 0 or not held:
        return None
    closed_whole = 0.0  # nodes emptied in their first second at the rate found so far
    rate = 0.0
    for k, connections in enumerate(held):
        rate = (room_per_s - closed_whole) / (len(held) - k)
        if rate <= connections:
            break
        closed_whole += connections
    rate = math.floor(rate * 10) / 10
    while rate > 0 and sum(min(rate, c) for c in held) > room_per_s:  # a float's width over
        rate = round(rate - 0.1, 1)
    return rate if rate > 0 else None


def rate_text(rate_per_s: float) -> str:
    """A rate to a tenth as typed back: 45, 66.7 — `:g` wrote 123457 for 123456.7, over the rate that fits."""
    return f"{rate_per_s:.1f}".removesuffix(".0")


@dataclass(frozen=True)
class Pacing:
    """The drain-mode first batch's `drain_pacing_per_s` check, and — where it fails — the moves that pass
    it in the forms' terms: the admission rate_per_s a node that makes the room
    (`FleetLoad.admission_to_admit_per_s`) and the drain rate per node that fits (`fitting_drain_rate`);
    each None where it passes, or no such rate does."""

    check: Check
    admission_rate_per_s: float | None = None
    drain_rate_per_s: float | None = None


@dataclass(frozen=True)
class BatchPacing:
    """A drain-mode first batch as its pacing is judged (`pacing_check`) and the moves that pass it are
    found (`pacing_move`): the fleet, the batch leaving it and the load its survivors carry, and the
    batch's drain. Built once by the start's first batch (`first_batch`)."""

    snapshot: FleetSnapshot
    capacity: FleetCapacity
    thresholds: Thresholds
    ready: list[NodeStatus]  # the nodes in rotation, fullest first (`in_rotation`): a batch of 1 is the first
    batch: list[NodeStatus]
    load: FleetLoad  # the fleet's load with `batch` out of rotation
    drain: BatchDrain  # `batch`'s drain, at `rate_per_s`
    # "wait for the drains under way to finish", "" where none is under way (`FleetLoad.wait_for_drains`)
    wait_drains: str
    cannot_add: str | None  # why the fleet cannot add capacity; None: it can, or does not say
    # The drain rate per node the rollout asks for (its `drain_rate_per_s`); None: the backend's.
    rate_per_s: float | None = None


def pacing_check(batch_pacing: BatchPacing) -> Pacing:
    """The batch's drain against the spare admission, and where it fails the moves that pass it."""
    batch, load, drain = batch_pacing.batch, batch_pacing.load, batch_pacing.drain
    # The field guide's pacing budget, for the drain each batch node gets: the closes per second the
    # survivors must absorb while the batch drains.
    pacing_per_s = load.drain_rate_per_s + drain.closes_per_s
    fits = pacing_per_s <= load.spare_admission_per_s
    # (the moves worked out on a failure only: they judge a batch of one over the whole fleet again, and
    # `largest_safe_batch_size` bisects through here)
    fitting = None if fits else fitting_drain_rate(batch, load.spare_admission_per_s - load.drain_rate_per_s)
    held = check(
        "drain_pacing_per_s",
        pacing_per_s,
        load.spare_admission_per_s,
        fails_to=VerdictLevel.BLOCKED,
        why=f"a batch's drain ({drain.describe}) must fit in the spare admission"
        f"{load.admission_limit_text()} (field guide)",
        move="" if fits else pacing_move(batch_pacing, fitting),
    )
    if fits:
        return Pacing(held)
    return Pacing(held, load.admission_to_admit_per_s(drain.closes_per_s), fitting)


def pacing_move(batch_pacing: BatchPacing, fitting_rate_per_s: float | None = None) -> str:
    """What passes a batch's drain pacing, said only where it would: a 3-node loopback fleet at admission
    30/s a node was blocked at every batch size and told to "wait for the inflow to fall" at an inflow of 0
    (found in review). A smaller batch where a batch of 1 fits; the admission rate that makes the room;
    the drains under way; capacity where the fleet can grow; the inflow where its falling makes the room;
    and the drain rate per node that fits (`fitting_rate_per_s`), with what the backend's deadline then
    force-closes — a rate the operator picks, as the seeds' graceful drain did (833/s over 10 minutes)."""
    batch, load, drain = batch_pacing.batch, batch_pacing.load, batch_pacing.drain
    one = batch_pacing.ready[:1]
    one_load = fleet_load(batch_pacing.snapshot, batch_pacing.capacity, {node.id for node in one})
    one_closes_per_s = batch_drain(
        one, batch_pacing.capacity, batch_pacing.thresholds, batch_pacing.rate_per_s
    ).closes_per_s
    one_fits = one_load.drain_rate_per_s + one_closes_per_s <= one_load.spare_admission_per_s
    raise_admission = load.raise_admission(drain.closes_per_s)
    if not raise_admission and len(batch) > 1 and not one_fits:
        # No admission rate under the handshake ceiling makes room for this batch; one may for a batch of 1.
        raised = one_load.raise_admission(one_closes_per_s)
        raise_admission = f"a batch of 1 and {raised}" if raised else ""
    moves = [
        "a smaller batch" if len(batch) > 1 and one_fits else "",
        raise_admission,
        batch_pacing.wait_drains,
        "add capacity first" if batch_pacing.cannot_add is None else "",
        load.wait_for_inflow(drain.closes_per_s),
        _slower_drain(batch, fitting_rate_per_s, drain.deadline_s),
    ]
    if any(moves):
        return ": " + any_of(moves)
    return (
        ": nothing passes it on this fleet now — the survivors have no spare admission left for a batch's "
        "drain at any rate"
    )


def _slower_drain(batch: list[NodeStatus], rate_per_s: float | None, deadline_s: float) -> str:
    """ "a drain rate of at most 60 closes/s per node (drain_rate_per_s)", and what the backend's deadline
    cuts short at that rate: a slower drain force-closes at once what it has not closed by then."""
    if rate_per_s is None:
        return ""
    forced = _force_closed(batch, rate_per_s, deadline_s) if deadline_s > 0 else 0
    cut = f"; the {deadline_s:g} s deadline then force-closes {forced:,}" if forced else ""
    return f"a drain rate of at most {rate_text(rate_per_s)} closes/s per node (drain_rate_per_s{cut})"
