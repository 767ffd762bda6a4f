"""The verdicts on halting a rollout (always ok, when there is one to halt) and resuming one."""

from __future__ import annotations

from console.figures import beside_limit
from console.guards.capacity import snapshot_room
from console.guards.fleet import SERVING, max_serving_cpu_pct
from console.guards.rollout.fleet_checks import (
    WAIT_FOR_HEADROOM,
    headroom_check,
    nodes_down_check,
    rotation_check,
    why_cannot_add,
)
from console.guards.rollout.nothing_to import NothingTo
from console.guards.rollout.plan import HALTABLE, RESUMABLE, undrain_first
from console.guards.thresholds import Thresholds
from console.guards.verdict import any_of, check, note, verdict
from console.protocol import (
    ActionKind,
    FleetSnapshot,
    Verdict,
    VerdictLevel,
)


def judge_rollout_halt(snapshot: FleetSnapshot) -> Verdict:
    """Halting is the safe direction: always `ok` — when there is something to halt (halting an idle or
    finished rollout answered "applied" and changed nothing)."""
    if snapshot.rollout.state not in HALTABLE:
        raise NothingTo(ActionKind.ROLLOUT_HALT, snapshot.rollout)
    return verdict(
        "rollout_halt",
        [note("halt", snapshot.rollout.state.value, None, ok=True, why="halting never adds load")],
        {"batch": snapshot.rollout.batch, "batches": snapshot.rollout.batches},
    )


def judge_rollout_resume(snapshot: FleetSnapshot, thresholds: Thresholds | None = None) -> Verdict:
    t = thresholds or Thresholds()
    if snapshot.rollout.state not in RESUMABLE:
        raise NothingTo(ActionKind.ROLLOUT_RESUME, snapshot.rollout)
    pause_pct = snapshot.rollout.pause_cpu_pct or t.cpu_pause_pct
    cpu_now = max_serving_cpu_pct(snapshot.nodes)
    hot = sum(1 for node in snapshot.nodes if node.state in SERVING and node.cpu_pct > pause_pct)
    headroom = snapshot.totals.headroom_pct
    side = "under" if headroom < t.headroom_min_pct else "within"
    cannot_add = why_cannot_add(snapshot_room(snapshot))  # "add capacity first" only where the fleet can grow
    checks = [
        rotation_check(
            snapshot,
            VerdictLevel.TYPED,
            "the batch it halted on comes back as it finishes, but later batches restart nodes with none to "
            "take their clients; undrain a node first, or type the fleet's name to resume anyway",
        ),
        check(
            "cpu_now_pct",
            cpu_now,
            pause_pct,
            fails_to=VerdictLevel.BLOCKED,
            why="resume only once every serving node is back under the pause line (outage seed)",
        ),
        nodes_down_check(snapshot),
        # Resuming restarts more nodes, as a start does: a start under the budget is blocked, a resume
        # passed unasked at 31 % (maintenance-window pass). Asked, not blocked: the rollout is already
        # under way — the batch it halted on may hold nodes out of rotation, and finishing it may be the
        # way back — but the operator decides knowing the figure.
        headroom_check(
            snapshot,
            t,
            VerdictLevel.CONFIRM,
            f"headroom {beside_limit(headroom, t.headroom_min_pct)} % {side} the {t.headroom_min_pct:g} % "
            "budget (outage seed): each batch resumed restarts more nodes",
            " — add capacity first, or wait for headroom to come back"
            if cannot_add is None
            else f", and {cannot_add} — "
            + any_of([undrain_first(snapshot, resuming=True), WAIT_FOR_HEADROOM]),
        ),
    ]
    return verdict("rollout_resume", checks, {"nodes_over_pause": hot}, typed_expected=snapshot.fleet)
