"""Guards for rollouts: start, halt, resume (issue #4, section 1).

A rollout restarts the fleet `batch_size` nodes at a time. In `drain` mode each batch drains first; in
`abrupt` mode its clients all reconnect at once — the outage seed's restart, which is always `typed`.
"""

from __future__ import annotations

from console.errors import InputError
from console.guards.capacity import FleetCapacity
from console.guards.fleet import SERVING, fleet_load, max_serving_cpu_pct
from console.guards.thresholds import Thresholds
from console.guards.verdict import check, note, verdict
from console.protocol import (
    FleetSnapshot,
    NodeState,
    RolloutMode,
    RolloutRequest,
    RolloutState,
    Verdict,
    VerdictLevel,
)

ACTIVE = frozenset({RolloutState.RUNNING, RolloutState.PAUSED})
RESUMABLE = frozenset({RolloutState.PAUSED, RolloutState.HALTED})


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
    ready = sorted(
        (node for node in snapshot.nodes if node.state is NodeState.READY), key=lambda n: -n.connections
    )
    if request.batch_size > len(ready):
        raise InputError("batch_size", request.batch_size, f"1 … {len(ready)} (the nodes in rotation)")
    # Judge the worst first batch: the fullest nodes leave.
    batch = ready[: request.batch_size]
    load = fleet_load(snapshot, capacity, {node.id for node in batch})
    displaced = sum(node.connections for node in batch)
    spare_connections = load.survivor_capacity_connections - (load.serving_connections - displaced)
    cpu_now = max_serving_cpu_pct(snapshot.nodes)
    checks = [
        check(
            "headroom_pct",
            snapshot.totals.headroom_pct,
            t.headroom_min_pct,
            bound="min",
            fails_to=VerdictLevel.BLOCKED,
            why="no safe restart below this headroom: add capacity instead of restarting (outage seed)",
        ),
        check(
            "cpu_now_pct",
            cpu_now,
            t.cpu_pause_pct,
            fails_to=VerdictLevel.BLOCKED,
            why="no restart completes while the fleet is unhealthy; it would pause at once (outage seed)",
        ),
        check(
            "batch_connections",
            displaced,
            spare_connections,
            fails_to=VerdictLevel.BLOCKED,
            why="the first batch's connections against the room left on the other nodes",
        ),
        check(
            "pause_cpu_pct",
            request.pause_cpu_pct,
            t.cpu_pause_pct,
            fails_to=VerdictLevel.TYPED,
            why="a pause line above the seed's 75 % lets the rollout run hotter than the outage allowed",
        ),
        check(
            "concurrent_drains",
            load.draining_nodes + request.batch_size,
            t.max_concurrent_drains,
            fails_to=VerdictLevel.TYPED,
            why="nodes out of rotation at once, the first batch included",
        ),
    ]
    batches = -(-len(ready) // request.batch_size)
    projections: dict[str, float | int | str] = {
        "batches": batches,
        "duration_s": (batches - 1) * request.interval_s + t.drain_window_s,
        "batch_connections": displaced,
        "spare_admission_per_s": load.spare_admission_per_s,
    }
    floor = VerdictLevel.OK
    if request.mode is RolloutMode.DRAIN:
        # The field guide's pacing budget: nodes per step × connections per node ÷ drain window.
        rate = displaced / t.drain_window_s
        cpu_pct = load.projected_cpu_pct(rate, capacity, t)
        checks += [
            check(
                "drain_pacing_per_s",
                load.drain_rate_per_s + rate,
                load.spare_admission_per_s,
                fails_to=VerdictLevel.BLOCKED,
                why="a batch drained over the drain window must fit in the spare admission (field guide)",
            ),
            check(
                "survivor_cpu_vs_pause_pct",
                cpu_pct,
                t.cpu_pause_pct,
                fails_to=VerdictLevel.TYPED,
                why="busiest survivor's CPU while absorbing a batch's drain; the rollout pauses above it",
            ),
        ]
        projections["survivor_cpu_max_pct"] = cpu_pct
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


HALTABLE = (RolloutState.RUNNING, RolloutState.PAUSED)


def judge_rollout_halt(snapshot: FleetSnapshot) -> Verdict:
    """Halting is the safe direction: always `ok` — when there is something to halt (halting an idle or
    finished rollout answered "applied" and changed nothing)."""
    if snapshot.rollout.state not in HALTABLE:
        raise InputError(
            "rollout", snapshot.rollout.state.value, "a running or paused rollout: nothing to halt"
        )
    return verdict(
        "rollout_halt",
        [note("halt", snapshot.rollout.state.value, None, ok=True, why="halting never adds load")],
        {"batch": snapshot.rollout.batch, "batches": snapshot.rollout.batches},
    )


def judge_rollout_resume(snapshot: FleetSnapshot, thresholds: Thresholds | None = None) -> Verdict:
    t = thresholds or Thresholds()
    if snapshot.rollout.state not in RESUMABLE:
        raise InputError("rollout", snapshot.rollout.state.value, "a paused or halted rollout")
    pause_pct = snapshot.rollout.pause_cpu_pct or t.cpu_pause_pct
    cpu_now = max_serving_cpu_pct(snapshot.nodes)
    hot = sum(1 for node in snapshot.nodes if node.state in SERVING and node.cpu_pct > pause_pct)
    checks = [
        check(
            "cpu_now_pct",
            cpu_now,
            pause_pct,
            fails_to=VerdictLevel.BLOCKED,
            why="resume only once every serving node is back under the pause line (outage seed)",
        )
    ]
    return verdict("rollout_resume", checks, {"nodes_over_pause": hot}, typed_expected=snapshot.fleet)


__all__ = ["judge_rollout_halt", "judge_rollout_resume", "judge_rollout_start"]
