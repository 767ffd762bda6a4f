"""The verdict on a rollout's start: the fleet's checks, the first batch's, the pause line's, and what the
rollout is projected to take.
"""

from __future__ import annotations

from console.errors import InputError
from console.guards.capacity import FleetCapacity, snapshot_room
from console.guards.fleet import max_serving_cpu_pct
from console.guards.rollout.batch import first_batch, in_rotation, largest_safe_batch_size
from console.guards.rollout.fleet_checks import (
    WAIT_FOR_HEADROOM,
    headroom_check,
    nodes_down_check,
    start_rotation_check,
    why_cannot_add,
)
from console.guards.rollout.lines import PauseLine, configured_line, cpu_now_check
from console.guards.rollout.plan import ACTIVE, plan_batches, undrain_first
from console.guards.thresholds import Thresholds
from console.guards.verdict import any_of, check, note, verdict
from console.protocol import (
    Check,
    FleetSnapshot,
    RolloutMode,
    RolloutRequest,
    RolloutState,
    Verdict,
    VerdictLevel,
)


def judge_rollout_start(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    request: RolloutRequest,
    thresholds: Thresholds | None = None,
) -> Verdict:
    t = thresholds or Thresholds()
    if snapshot.rollout.state in ACTIVE:
        raise InputError(
            "rollout", snapshot.rollout.state.value, "no rollout running or paused (halt it first)"
        )
    ready = in_rotation(snapshot)
    if not ready:  # a verdict, not bad input: the request is fine, the fleet is not
        checks = [start_rotation_check(snapshot), nodes_down_check(snapshot), *halted_rollout_check(snapshot)]
        projections = {"batches": len(plan_batches(snapshot.nodes, request.batch_size))}
        return verdict("rollout_start", checks, projections, typed_expected=snapshot.fleet)
    if request.batch_size > len(ready):
        raise InputError("batch_size", request.batch_size, f"1 … {len(ready)} (the nodes in rotation)")
    # "add capacity" only where the fleet can grow (the add guard's rule, `NodeRoom`): where its snapshot
    # says it cannot, an add `c` is refused — each check says why, and what that fleet can do instead.
    cannot_add = why_cannot_add(snapshot_room(snapshot))
    undrain = undrain_first(snapshot)
    # Judge the worst first batch: the fullest nodes leave.
    first = first_batch(snapshot, capacity, request, t, ready, cannot_add)
    load, displaced, drain = first.load, first.displaced, first.drain
    line = PauseLine(request.pause_cpu_pct, t.cpu_pause_pct)
    checks = [
        start_rotation_check(snapshot),
        headroom_check(
            snapshot,
            t,
            VerdictLevel.BLOCKED,
            "no safe restart below this headroom (outage seed)",
            ": add capacity instead of restarting"
            if cannot_add is None
            else f", and {cannot_add}: " + any_of([undrain, WAIT_FOR_HEADROOM]),
        ),
        cpu_now_check(max_serving_cpu_pct(snapshot.nodes), line),
        first.room,
        nodes_down_check(snapshot),
        check(
            "pause_cpu_pct",
            request.pause_cpu_pct,
            t.cpu_pause_pct,
            fails_to=VerdictLevel.TYPED,
            why=f"the pause line asked for, against {configured_line(t.cpu_pause_pct)}",
            move=": above it the rollout runs hotter than the fleet's line allows (outage seed) — a pause_cpu_pct "
            f"of {t.cpu_pause_pct:g} % or less, or type the fleet's name",
        ),
        first.drains,
        *first.absorb,
        *halted_rollout_check(snapshot),
    ]
    # The backend's plan (every node, out of rotation too), not the nodes in rotation: the verdict said 2
    # batches on a 3-node fleet with one drained, and the controller ran 3.
    batches = len(plan_batches(snapshot.nodes, request.batch_size))
    # A batch starts `interval_s` after the one before it (docs/actions.md, "Rollout pacing"); a drain-mode
    # batch not before the one before it is drained, restarted and back in rotation. Each batch is taken
    # as long as the first (the fullest nodes). Abrupt mode waits for no drain: the restart time only.
    if request.mode is RolloutMode.DRAIN:
        batch_s = drain.duration_s + capacity.restart_s
        duration_s = (batches - 1) * max(request.interval_s, batch_s) + batch_s
    else:
        duration_s = (batches - 1) * request.interval_s + capacity.restart_s
    projections: dict[str, float | int | str] = {
        "batches": batches,
        "duration_s": duration_s,
        "batch_connections": displaced,
        "spare_admission_per_s": load.spare_admission_per_s,
        "restart_s": capacity.restart_s if capacity.restart_s > 0 else "unknown (not in duration_s)",
        "batch_size": request.batch_size,
        # The batch to type back when a check a batch size changes fails (`what_would_pass`): the form's
        # terms, where "batch_connections ≤ 1,016 (now 2,016)" never said "batch size 1".
        # (at least the request's own where it passes: the bisection may stop under it, `largest_safe_batch_size`)
        "largest_safe_batch_size": max(
            largest_safe_batch_size(snapshot, capacity, request, t), request.batch_size if first.passes else 0
        ),
    }
    floor = VerdictLevel.OK
    if request.mode is RolloutMode.DRAIN:
        projections |= {
            "survivor_cpu_max_pct": first.survivor_cpu_pct,
            "batch_drain_s": drain.duration_s,
            "batch_force_closed": drain.force_closed,
        }
        # What would pass, in the admission and rollout forms' terms (`what_would_pass`): "drain_pacing_per_s
        # ≤ 60 (now 100)" said nothing the operator could type.
        if first.pacing_admission_rate_per_s is not None:
            projections["pacing_admission_rate_per_s"] = first.pacing_admission_rate_per_s
        if first.pacing_drain_rate_per_s is not None:
            projections["pacing_drain_rate_per_s"] = first.pacing_drain_rate_per_s
    else:
        # Abrupt: every client of the batch reconnects at once — the storm the outage seed lived through.
        floor = VerdictLevel.TYPED
        readmit_s = displaced / load.spare_admission_per_s if load.spare_admission_per_s > 0 else float("inf")
        projections |= {"storm_connections": displaced, "storm_readmit_s": readmit_s}
        checks.append(
            note(
                "abrupt_mode",
                "abrupt",
                "drain",
                ok=False,
                why=f"{displaced} clients reconnect at once per batch; drain mode paces them (outage seed)",
            )
        )
    return verdict("rollout_start", checks, projections, floor=floor, typed_expected=snapshot.fleet)


def halted_rollout_check(snapshot: FleetSnapshot) -> list[Check]:
    """A halted rollout, which a start replaces on both backends (the simulator's `RolloutController.start`,
    the controller's `start_rollout`): its batches not yet started are dropped, and the new rollout restarts
    every node from its first batch. Judged as if there were none, a start said nothing of what it threw
    away (reviewer): asked first (confirm), said. None where no rollout is halted — a completed or aborted
    one leaves nothing to drop, and a running or paused one is refused (halt it first)."""
    rollout = snapshot.rollout
    if rollout.state is not RolloutState.HALTED:
        return []
    k, n = rollout.batch, rollout.batches
    why_halted = f" ({rollout.pause_reason})" if rollout.pause_reason else ""
    if k == 0:
        value = "before its start"
        dropped = (
            "replaces the rollout halted before its start, and drops "
            + (f"its {n} batches, none started" if n > 1 else "it, not started")
            + " — resuming starts it instead"
        )
    else:
        value = f"batch {k} of {n}"
        if k >= n:
            left = "leaves its last batch unfinished"
        elif n - k == 1:
            left = f"drops batch {n}, not yet started"
        else:
            left = f"drops its {n - k} batches not yet started"
        dropped = (
            f"replaces the rollout halted at batch {k} of {n}{why_halted}, and {left} — the new one restarts "
            "every node from its first batch, those already restarted too; resuming goes on with the halted one "
            "instead"
        )
    return [
        Check(
            name="halted_rollout",
            value=value,
            limit="no halted rollout",
            ok=False,
            level=VerdictLevel.CONFIRM,
            why=dropped,
        )
    ]
