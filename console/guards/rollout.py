"""Guards for rollouts: start, halt, resume (issue #4, section 1).

A rollout restarts the fleet `batch_size` nodes at a time. In `drain` mode each batch drains first; in
`abrupt` mode its clients all reconnect at once — the outage seed's restart, which is always `typed`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from console.errors import InputError
from console.figures import beside_limit, first_named
from console.guards.capacity import FleetCapacity, NodeRoom, planned_cpu_note, snapshot_room
from console.guards.fleet import (
    SERVING,
    FleetLoad,
    fleet_load,
    max_serving_cpu_pct,
    rotation_after_check,
    without_survivor_checks,
)
from console.guards.thresholds import DEFAULT_THRESHOLDS, Thresholds
from console.guards.verdict import any_of, check, note, verdict
from console.protocol import (
    ActionKind,
    Check,
    FleetSnapshot,
    NodeState,
    NodeStatus,
    RolloutMode,
    RolloutRequest,
    RolloutState,
    RolloutStatus,
    Verdict,
    VerdictLevel,
)

#: A drain-mode start's checks of what its survivors absorb, left out of a start whose first batch takes
#: every node in rotation (`judge_rollout_start`), as the drain guard leaves out its own.
SURVIVOR_CHECKS = frozenset({"drain_pacing_per_s", "survivor_cpu_vs_pause_pct"})


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


T = TypeVar("T")


def plan_batches(nodes: Sequence[T], batch_size: int) -> list[list[T]]:
    """A rollout's plan, one rule for both backends and the guard that projects it: every node of the
    fleet, in the fleet's order, `batch_size` at a time — nodes out of rotation (drained, draining, down)
    included, as their batches come to them. The guard counted only the nodes in rotation: on a 3-node
    fleet with one drained its verdict said 2 batches where the controller ran 3."""
    if batch_size < 1:
        raise InputError("batch_size", batch_size, "an integer ≥ 1")
    return [list(nodes[k : k + batch_size]) for k in range(0, len(nodes), batch_size)]


ACTIVE = frozenset({RolloutState.RUNNING, RolloutState.PAUSED})
RESUMABLE = frozenset({RolloutState.PAUSED, RolloutState.HALTED})


def nodes_down_check(snapshot: FleetSnapshot) -> Check:
    """The nodes `down` against none, failing to `confirm`: asked before a rollout starts and before one
    resumes — a controller's rollout halts on a batch node gone down ("restart it, then resume"), and a
    resume with it still down sends the next batches onto the nodes already holding its clients. Confirm,
    not blocked: restarting may be what fixes the crash."""
    down = [node.id for node in snapshot.nodes if node.state is NodeState.DOWN]
    named_down = first_named(down)
    return check(
        "nodes_down",
        len(down),
        0,
        fails_to=VerdictLevel.CONFIRM,
        # `down` is a loss outside a planned restart (a rollout's own is `restarting`): its clients already
        # sit on the rest, and each batch takes one more node away from them (node_down alarm).
        why=(
            f"{named_down} down (killed, crashed or hung): each batch takes another node from the ones "
            "holding its clients — restart it first"
            if down
            else "no node down outside a planned restart"
        ),
    )


#: States `undrain` takes back into rotation (judge_undrain in console.guards.drain; the one set).
UNDRAINABLE = frozenset({NodeState.DRAINING, NodeState.DRAINED})


def undrain_first(snapshot: FleetSnapshot, resuming: bool = False) -> str:
    """The nodes out of rotation an operator can put back, "undrain gw-004, gw-005 first": capacity a fleet
    that cannot add nodes still has (headroom counts the nodes in rotation, and each takes its share of a
    batch's or a drain's clients) — the rollout and drain guards' move where an add is refused. `resuming`: not those of the batch the paused or halted rollout stopped on — undrained,
    the rollout halts on them and its resume drains them again (docs/actions.md). Empty when there are none."""
    rollout = snapshot.rollout
    ids = [node.id for node in snapshot.nodes]
    stopped_on: set[str] = set()
    if resuming and rollout.batch and rollout.batch_size:
        batches = plan_batches(ids, rollout.batch_size)
        stopped_on = set(batches[rollout.batch - 1]) if rollout.batch <= len(batches) else set()
    out = [n.id for n in snapshot.nodes if n.state in UNDRAINABLE and n.id not in stopped_on]
    return f"undrain {first_named(out)} first" if out else ""


def _cannot_add(room: NodeRoom | None) -> str | None:
    """Why the fleet cannot add capacity ("this fleet adds no nodes"); None when it can or its snapshot does
    not say — then the checks keep the seed's "add capacity"."""
    why_not = None if room is None else room.why_not()
    return None if why_not is None else f"this fleet {why_not}"


WAIT_FOR_HEADROOM = "wait for headroom to come back"


def rotation_check(snapshot: FleetSnapshot, fails_to: VerdictLevel, when_none: str) -> Check:
    """The nodes in rotation (`ready`) against one: asked before a rollout starts (blocked with none: a
    restart has nowhere to move its batches' clients, and a start said so as bad input, "batch_size:
    expected 1 … 0", of a field the operator had not got wrong) and before one resumes (typed: the batch it
    halted on may be what holds every node out of rotation, and finishing it the way back)."""
    ready = sum(1 for node in snapshot.nodes if node.state is NodeState.READY)
    return check(
        "nodes_in_rotation",
        ready,
        1,
        bound="min",
        fails_to=fails_to,
        why=(
            "nodes in rotation (ready): they take each batch's clients"
            if ready
            else f"no node in rotation — every one drained, draining, down or restarting: {when_none}"
        ),
    )


def start_rotation_check(snapshot: FleetSnapshot) -> Check:
    return rotation_check(
        snapshot,
        VerdictLevel.BLOCKED,
        "none would take a batch's clients; undrain a node, or restart one that is down, first",
    )


def headroom_check(
    snapshot: FleetSnapshot, thresholds: Thresholds, fails_to: VerdictLevel, why: str, move: str
) -> Check:
    """The fleet's headroom now against `headroom_min_pct` (outage seed: no safe restart below it): blocked
    before a rollout starts, asked before one resumes — the same figure and budget on both."""
    return check(
        "headroom_pct",
        snapshot.totals.headroom_pct,
        thresholds.headroom_min_pct,
        bound="min",
        fails_to=fails_to,
        why=why,
        move=move,
    )


@dataclass(frozen=True)
class PauseLine:
    """The CPU line a start is judged against: the one its request asks for (`pause_cpu_pct`), where its
    rollout pauses — judged at the seed's 75 % whatever it asked, a start passed "cpu_now_pct 18.2 ≤ 75"
    and sat "paused: b CPU 18 % > 15 %" a second later (real fleet, found in review) — but never above the
    configured line (`cpu_pause_pct`): a fleet over it is unhealthy whatever a rollout asks for."""

    asked_pct: float
    configured_pct: float

    @property
    def pct(self) -> float:
        return min(self.asked_pct, self.configured_pct)

    @property
    def is_asked(self) -> bool:
        """The line judged is the request's own (at or under the configured one)."""
        return self.asked_pct <= self.configured_pct

    def words(self) -> str:
        if self.is_asked:
            return f"the rollout's pause line, {self.asked_pct:g} % (pause_cpu_pct)"
        return f"{configured_line(self.configured_pct)}, under the {self.asked_pct:g} % asked for"

    def raise_move(self) -> str:
        """A higher line the operator may ask for without typing the fleet's name; "" when there is none."""
        if self.asked_pct >= self.configured_pct:
            return ""
        return f"a higher pause_cpu_pct (up to {self.configured_pct:g} %)"


def configured_line(pct: float) -> str:
    """The configured pause line, "the configured 10 % pause line (cpu_pause_pct)" — the seed's only where
    it is the seed's: "a pause line above the seed's 75 %" was said beside a limit of 10."""
    whose = "the outage seed's" if pct == DEFAULT_THRESHOLDS.cpu_pause_pct else "the configured"
    return f"{whose} {pct:g} % pause line (cpu_pause_pct)"


@dataclass(frozen=True)
class FirstBatch:
    """A start's checks that its batch size changes — the first batch's room on the others, the drains out
    of rotation at once, and (drain mode) what its survivors absorb — with the figures behind them."""

    room: Check  # batch_connections, or nodes_in_rotation_after when the batch takes every node in rotation
    drains: Check  # concurrent_drains
    absorb: list[Check]  # drain_pacing_per_s, survivor_cpu_vs_pause_pct (drain mode with survivors)
    load: FleetLoad
    batch: list[NodeStatus]
    displaced: int
    drain: BatchDrain
    survivor_cpu_pct: float
    # The admission rate_per_s a node that makes room for a batch's drain its pacing check fails on
    # (`FleetLoad.admission_to_admit_per_s`); None where it passes, or no admission rate makes the room.
    pacing_admission_rate_per_s: float | None = None

    @property
    def passes(self) -> bool:
        return all(item.ok for item in (self.room, self.drains, *self.absorb))


#: The start's checks a batch size changes (`FirstBatch`): a verdict failing one says what batch passes.
BATCH_CHECKS = frozenset(
    {"batch_connections", "nodes_in_rotation_after", "concurrent_drains", *SURVIVOR_CHECKS}
)


def _in_rotation(snapshot: FleetSnapshot) -> list[NodeStatus]:
    """The nodes in rotation, fullest first: the worst first batch is the fullest nodes leaving."""
    ready = [node for node in snapshot.nodes if node.state is NodeState.READY]
    return sorted(ready, key=lambda n: -n.connections)


def _first_batch(
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
    drain = batch_drain(batch, capacity, t)
    cpu_pct = load.projected_cpu_pct(drain.closes_per_s, capacity, t)
    absorb: list[Check] = []
    pacing_rate: float | None = None
    if request.mode is RolloutMode.DRAIN:
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
            else _pacing_move(snapshot, capacity, t, ready, batch, load, drain, wait_drains, cannot_add),
        )
        if not pacing.ok:
            pacing_rate = load.admission_to_admit_per_s(drain.closes_per_s)
        absorb = [
            pacing,
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
        ]
    # A first batch of every node in rotation leaves no survivor: its CPU ("—") and pacing limit (0) failed
    # beside the one reason, nodes_in_rotation_after (`_batch_room_check`). Left out, as in a drain's verdict.
    absorb = without_survivor_checks(absorb, load, SURVIVOR_CHECKS)
    room = _batch_room_check(load, batch, displaced, cannot_add, undrain_first(snapshot))
    return FirstBatch(room, drains, absorb, load, batch, displaced, drain, cpu_pct, pacing_rate)


def _pacing_move(
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
    ready = _in_rotation(snapshot)
    cannot_add = _cannot_add(snapshot_room(snapshot))

    def passes(size: int) -> bool:
        sized = request.model_copy(update={"batch_size": size})
        return _first_batch(snapshot, capacity, sized, t, ready, cannot_add).passes

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
    ready = _in_rotation(snapshot)
    if not ready:
        return []
    first = _first_batch(snapshot, capacity, request, t, ready, _cannot_add(snapshot_room(snapshot)))
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
    ready = _in_rotation(snapshot)
    if not ready or request.mode is not RolloutMode.DRAIN:
        return ""
    first = _first_batch(snapshot, capacity, request, t, ready, _cannot_add(snapshot_room(snapshot)))
    if first.pacing_admission_rate_per_s is None:
        return ""
    return first.load.raise_admission(first.drain.closes_per_s)


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
    ready = _in_rotation(snapshot)
    if not ready:  # a verdict, not bad input: the request is fine, the fleet is not
        checks = [start_rotation_check(snapshot), nodes_down_check(snapshot)]
        projections = {"batches": len(plan_batches(snapshot.nodes, request.batch_size))}
        return verdict("rollout_start", checks, projections, typed_expected=snapshot.fleet)
    if request.batch_size > len(ready):
        raise InputError("batch_size", request.batch_size, f"1 … {len(ready)} (the nodes in rotation)")
    # "add capacity" only where the fleet can grow (the add guard's rule, `NodeRoom`): where its snapshot
    # says it cannot, an add `c` is refused — each check says why, and what that fleet can do instead.
    cannot_add = _cannot_add(snapshot_room(snapshot))
    undrain = undrain_first(snapshot)
    # Judge the worst first batch: the fullest nodes leave.
    first = _first_batch(snapshot, capacity, request, t, ready, cannot_add)
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
        _cpu_now_check(max_serving_cpu_pct(snapshot.nodes), line),
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
        if first.pacing_admission_rate_per_s is not None:
            # What would pass, in the admission form's terms (`what_would_pass`): the rollout takes no
            # drain rate, and "drain_pacing_per_s ≤ 60 (now 100)" said nothing the operator could type.
            projections["pacing_admission_rate_per_s"] = first.pacing_admission_rate_per_s
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


def _cpu_now_check(cpu_now: float, line: PauseLine) -> Check:
    """The busiest serving node now against the pause line judged (`PauseLine`): over the request's own,
    the rollout pauses before its first batch; over the configured one, under a looser line asked for, the
    fleet is too hot for any restart (outage seed)."""
    if line.is_asked:
        move = ": the rollout would pause at once, before its first batch — " + any_of(
            ["wait for CPU to fall", "shed load with admission", line.raise_move()]
        )
    else:
        move = (
            ": no restart completes while the fleet is over it (outage seed) — shed load with admission and "
        )
        move += "wait for CPU to fall"
    return check(
        "cpu_now_pct",
        cpu_now,
        line.pct,
        fails_to=VerdictLevel.BLOCKED,
        why=f"busiest serving node's CPU now, against {line.words()}",
        move=move,
    )


def _batch_room_check(
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


HALTABLE = (RolloutState.RUNNING, RolloutState.PAUSED)

#: How the fleet API's refusal of a halt or resume names the next step: as `stormdeck act` types it (the
#: CLI is who reads the API's words; the console says its keys instead, `console.model.actions.refusals`).
ACT_STEPS: Mapping[ActionKind, str] = {
    ActionKind.ROLLOUT_START: " with `stormdeck act URL rollout start`",
    ActionKind.ROLLOUT_RESUME: " with `stormdeck act URL rollout resume`",
}


def nothing_to(
    kind: ActionKind,
    rollout: RolloutStatus,
    clock: Callable[[float], str] | None = None,
    steps: Mapping[ActionKind, str] = ACT_STEPS,
) -> str | None:
    """Why a halt or resume of `rollout` has nothing to act on, in what the rollout did and what to do
    instead — "nothing to halt — the rollout completed at 0:12:30 (batch 8 of 8); start a new one" — or
    None when it has. One sentence for the server's refusal and the console's at the key: both said the
    state's name, "'completed' is not allowed; expected a running or paused rollout". `clock` writes a
    fleet time (the fleet clock, H:MM:SS; the console passes its own face); `steps` how this edge says
    each next step (after "start a new one")."""
    verb = "halt" if kind is ActionKind.ROLLOUT_HALT else "resume"
    if rollout.state in (HALTABLE if kind is ActionKind.ROLLOUT_HALT else RESUMABLE):
        return None
    if clock is None:
        from console.model.units import fleet_clock  # (the model imports the guards: not at the top)

        clock = fleet_clock
    start = steps.get(ActionKind.ROLLOUT_START, "")
    where = f"batch {rollout.batch} of {rollout.batches}"
    match rollout.state:
        case RolloutState.IDLE:
            said = f"no rollout has started on this fleet; start one{start}"
        case RolloutState.COMPLETED:
            at = "" if rollout.completed_at_s is None else f" at {clock(rollout.completed_at_s)}"
            said = f"the rollout completed{at} ({where}); start a new one{start}"
        case RolloutState.ABORTED:
            why = f" ({rollout.pause_reason})" if rollout.pause_reason else ""
            said = f"the rollout aborted at {where}{why}, and an aborted one is not resumed; start a new one{start}"
        case RolloutState.HALTED:  # (a halt: a resume takes it)
            said = f"the rollout is halted already, at {where}; resume it{steps.get(ActionKind.ROLLOUT_RESUME, '')}"
        case _ if rollout.scheduled:  # (a resume): it starts by itself
            said = f"the rollout is scheduled: it {rollout.schedule_said(clock)}"
        case _:  # running (a resume): it goes on by itself
            said = f"the rollout is {rollout.state.value}, at {where}"
    return f"nothing to {verb} — {said}"


class NothingTo(InputError):
    """A halt or resume with no rollout to act on: bad input naming `rollout` (422, exit 2), said as
    `nothing_to` says it, after what was asked ("rollout halt: nothing to halt — …")."""

    def __init__(self, kind: ActionKind, rollout: RolloutStatus) -> None:
        self.words = nothing_to(kind, rollout) or ""
        self.asked = "rollout halt" if kind is ActionKind.ROLLOUT_HALT else "rollout resume"
        super().__init__("rollout", rollout.state.value, self.words)

    def _message(self) -> str:
        return f"{self.asked}: {self.words}"


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
    cannot_add = _cannot_add(snapshot_room(snapshot))  # "add capacity first" only where the fleet can grow
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


__all__ = [
    "NothingTo",
    "judge_rollout_halt",
    "judge_rollout_resume",
    "judge_rollout_start",
    "nothing_to",
    "plan_batches",
]
