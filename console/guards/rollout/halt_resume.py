"""The verdicts on halting a rollout (always ok, when there is one to halt) and resuming one (which says
when its next batch starts: `next_batch`)."""

from __future__ import annotations

from console.figures import beside_limit, first_named, headroom_pct
from console.guards.capacity import snapshot_room
from console.guards.fleet import SERVING, max_serving_cpu_pct
from console.guards.rollout.fleet_checks import (
    WAIT_FOR_HEADROOM,
    headroom_check,
    nodes_down_check,
    rotation_check,
    why_cannot_add,
)
from console.guards.rollout.next_batch import next_batch
from console.guards.rollout.nothing_to import NothingTo
from console.guards.rollout.plan import HALTABLE, RESUMABLE, stopped_on_batch, undrain_first
from console.guards.thresholds import Thresholds
from console.guards.verdict import any_of, check, note, verdict
from console.protocol import (
    ActionKind,
    Check,
    FleetSnapshot,
    NodeState,
    NodeStatus,
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
        _resume_headroom_check(snapshot, t, cannot_add),
    ]
    projections: dict[str, float] = {"nodes_over_pause": hot}
    first = next_batch(
        snapshot
    )  # what the resume does first, and when: it keeps what is left of the interval
    if first is not None:
        checks.append(first.check())
        projections |= first.projections()
    return verdict("rollout_resume", checks, projections, typed_expected=snapshot.fleet)


#: What a resume brings back into rotation as it finishes the batch it stopped on: that batch's nodes the
#: rollout took out (a node `down` is not one: `nodes_down` asks about it, and a drain-mode resume waits).
_FINISHING = frozenset({NodeState.DRAINING, NodeState.DRAINED, NodeState.RESTARTING})


def _resume_headroom_check(snapshot: FleetSnapshot, t: Thresholds, cannot_add: str | None) -> Check:
    """The start's check and budget (`headroom_check`), failing as the start's — blocked: each batch resumed
    restarts more nodes, as a start's do (a resume asked only, and `--yes` resumed at 31 % where a start was
    blocked; reviewer). The one exception, asked (confirm) and said: headroom under the budget only while
    the batch it stopped on is out of rotation — the resume finishes that batch first, and with its nodes
    back the fleet is within the budget, the figure a start judges before its first batch (the reviewer's
    graceful-drain run: 30.7 % during batch 1, 37.5 % with it back)."""
    headroom = snapshot.totals.headroom_pct
    now = f"headroom {beside_limit(headroom, t.headroom_min_pct)} %"
    budget = f"the {t.headroom_min_pct:g} % budget (outage seed)"
    if headroom >= t.headroom_min_pct:
        why = f"{now} within {budget}: each batch resumed restarts more nodes"
        return headroom_check(snapshot, t, VerdictLevel.BLOCKED, why, "")
    batch = [n for n in snapshot.nodes if n.id in set(stopped_on_batch(snapshot)) and n.state in _FINISHING]
    back_pct = _headroom_with(snapshot, batch) if batch else None
    named = first_named([n.id for n in batch])
    if back_pct is not None and back_pct >= t.headroom_min_pct:
        why = (
            f"{now} under {budget} only while batch {snapshot.rollout.batch}'s {named} "
            f"{'is' if len(batch) == 1 else 'are'} out of rotation, {beside_limit(back_pct, t.headroom_min_pct)} "
            f"% with {'it' if len(batch) == 1 else 'them'} back: resuming finishes that batch first, so it is "
            "asked, not blocked as a start is"
        )
        return headroom_check(snapshot, t, VerdictLevel.CONFIRM, why, "")
    with_back = (
        f", {beside_limit(back_pct, t.headroom_min_pct)} % with batch {snapshot.rollout.batch}'s {named} back "
        "in rotation"
        if back_pct is not None
        else ""
    )
    why = f"{now} under {budget}{with_back}: no safe restart below it, and each batch resumed restarts nodes as a start does"
    move = (
        " — add capacity first, or wait for headroom to come back"
        if cannot_add is None
        else f", and {cannot_add} — " + any_of([undrain_first(snapshot, resuming=True), WAIT_FOR_HEADROOM])
    )
    return headroom_check(snapshot, t, VerdictLevel.BLOCKED, why, move)


def _headroom_with(snapshot: FleetSnapshot, back: list[NodeStatus]) -> float | None:
    """The fleet's headroom with `back` in rotation too (`figures.headroom_pct`, as the frames count it:
    the capacity of the nodes in rotation against every connection held); None where a node counted does
    not say its capacity (an older source, a node not yet heard from): nothing is credited then."""
    counted = [n for n in snapshot.nodes if n.state is NodeState.READY] + back
    if any(n.capacity_connections <= 0 for n in counted):
        return None
    held = sum(n.connections for n in snapshot.nodes)
    return headroom_pct(held, sum(n.capacity_connections for n in counted), places=None)
