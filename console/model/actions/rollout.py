"""The rollout form's model: its starting values — a batch the guards pass where any batch does, found by
the rollout guard itself over the newest frame — and a refused start's batch in the form's terms."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.guards import FleetCapacity, Thresholds
from console.guards.rollout import (
    BATCH_CHECKS,
    admission_for_batch,
    batch_checks_failing,
    configured_line,
    largest_safe_batch_size,
)
from console.model.actions.form import Prefill, form_text
from console.protocol import FleetSnapshot, Frame, RolloutMode, RolloutRequest, RolloutState, Source, Verdict

#: The batch a form starts from when no earlier rollout says one (the outage seed's fleet restarted
#: 30 of 480 at once; two at a time is the cautious start a small fleet can still take).
USUAL_BATCH = 2
#: The outage seed's cadence; the guards judge it against headroom.
USUAL_INTERVAL_S = 90.0


def rollout_prefill(
    frame: Frame | None, fleet: str, capacity: FleetCapacity | None, thresholds: Thresholds
) -> Prefill:
    """The form's starting values: the last rollout's batch (else `USUAL_BATCH`), cut to the largest the
    rollout guard passes over the newest frame (`largest_safe_batch_size`) — a batch of 2 on a 3-node fleet
    at 50 % headroom was blocked at the first Ctrl+D (found in review). Where no batch passes, 1, and the
    note says which checks hold every batch back. With no frame or capacity record, the usual batch."""
    rollout = frame.rollout if frame is not None else None
    usual = rollout.batch_size if rollout is not None and rollout.batch_size else USUAL_BATCH
    line = f"drain mode pauses at {configured_line(thresholds.cpu_pause_pct)}"
    if rollout is not None and rollout.state is RolloutState.HALTED:
        # The verdict's halted_rollout check says it too, but only after the form is filled in.
        where = rollout.position()
        where = f"at {where}" if where.startswith("batch") else where
        line = f"replaces the rollout halted {where} (r resumes it instead); {line}"
    values = {
        "batch_size": str(usual),
        "interval_s": form_text(USUAL_INTERVAL_S),
        "mode": RolloutMode.DRAIN.value,
        "pause_cpu_pct": form_text(float(thresholds.cpu_pause_pct)),
        # The rate each batch node drains at now: the backend's (its capacity record), to type over; blank
        # where it does not say — blank sends none, and the backend drains at its own.
        "drain_rate_per_s": form_text(capacity.batch_drain_rate_per_s)
        if capacity is not None and capacity.batch_drain_rate_per_s > 0
        else "",
    }
    if frame is None or capacity is None:
        return Prefill(values, line)
    snapshot = FleetSnapshot.of_frame(frame, fleet, Source.SIMULATOR)
    request = RolloutRequest(
        batch_size=1,
        interval_s=USUAL_INTERVAL_S,
        mode=RolloutMode.DRAIN,
        pause_cpu_pct=thresholds.cpu_pause_pct,
    )
    largest = largest_safe_batch_size(snapshot, capacity, request, thresholds)
    if largest >= usual:
        return Prefill(values, line)
    if largest >= 1:
        return Prefill(
            values | {"batch_size": str(largest)}, f"batch {largest}: the largest the guards pass now; {line}"
        )
    return Prefill(
        values | {"batch_size": "1"},
        f"no batch passes now ({_held_at_one(snapshot, capacity, request, thresholds)}); {line}",
    )


def _held_at_one(
    snapshot: FleetSnapshot, capacity: FleetCapacity, request: RolloutRequest, thresholds: Thresholds
) -> str:
    """Why no batch passes: the checks a batch size changes that fail even for a batch of 1, named
    ("batch_connections fails at a batch of 1"; the verdict says the rest), or no node in rotation."""
    held = batch_checks_failing(snapshot, capacity, request, thresholds)
    if not held:
        return "no node in rotation"
    said = f"{', '.join(held)} {'fails' if len(held) == 1 else 'fail'} at a batch of 1"
    # Where the batch's drain pacing holds it, the admission that makes the room lets one start at the
    # backend's drain rate (a loopback fleet at 30/s a node; found in review); a slower drain rate is the
    # form's own move, which the verdict's "what would pass" names.
    admission = admission_for_batch(snapshot, capacity, request, thresholds)
    return f"{said}: {admission} first" if admission else said


def pacing_admission_hint(projections: Mapping[str, Any]) -> str | None:
    """What would pass a start whose batch's drain pacing fails, in the admission form's terms: the
    admission rate a node that makes the room (`pacing_admission_rate_per_s`); None where none is said."""
    rate = projections.get("pacing_admission_rate_per_s")
    if not isinstance(rate, int | float):
        return None
    return f"admission rate_per_s ≥ {rate:g}/s a node, set before the start: the batch's drain then fits"


def pacing_drain_rate_hint(projections: Mapping[str, Any]) -> str | None:
    """The other move on a start held by its batch's drain pacing, in the rollout form's terms: the drain
    rate per node that fits (`pacing_drain_rate_per_s`); None where none is said (an older server)."""
    rate = projections.get("pacing_drain_rate_per_s")
    if not isinstance(rate, int | float):
        return None
    return f"drain rate ≤ {rate:g} closes/s per node (drain_rate_per_s): the batch's drain then fits"


#: The checks whose limits a batch size stands in for in "what would pass": a batch of every node in rotation
#: keeps its one reason, "nodes_in_rotation_after ≥ 1 (now 0)", whose why names the batch and the undrain.
SIZED_CHECKS = BATCH_CHECKS - {"nodes_in_rotation_after"}


def batch_size_hints(verdict: Verdict) -> tuple[set[str], str | None]:
    """What would pass a start held back by checks a batch size changes (`SIZED_CHECKS`), in the form's
    terms: "batch size ≤ 1 (now 2)" in place of their limits — "batch_connections ≤ 1,016 (now 2,016)"
    never said the batch to type — or, where no batch passes, that, beside them. Returns the checks the
    hint replaces, and the hint (None where the verdict projects no batch, or no such check holds it)."""
    largest = verdict.projections.get("largest_safe_batch_size")
    held = [
        c.name for c in verdict.checks if not c.ok and c.level is verdict.level and c.name in SIZED_CHECKS
    ]
    if not isinstance(largest, int) or not held:
        return set(), None
    if largest >= 1:
        now = verdict.projections.get("batch_size")
        return set(held), f"batch size ≤ {largest}" + (f" (now {now})" if isinstance(now, int) else "")
    return set(), f"no batch size passes {', '.join(held)} now, a batch of 1 included"
