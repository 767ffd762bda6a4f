"""Guards for drain and undrain, and the drain planner (issue #4, section 1).

A drain closes a node's connections at `rate_per_s`, each client told to come back within `hint_ms`, and
force-closes whatever remains at `deadline_s` (interview). Its reconnects land on the survivors, so every
check is about what the survivors can absorb.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from console.errors import InputError
from console.guards.capacity import FleetCapacity, NodeRoom, planned_cpu_note, snapshot_room
from console.guards.fleet import (
    ROTATION_MOVE,
    FleetLoad,
    find_nodes,
    fleet_load,
    rotation_after_check,
    without_survivor_checks,
)
from console.guards.reconnects import (
    ReconnectLine,
    force_close_burst_per_s,
    peak_reconnects_per_s,
    reconnect_line,
    reconnect_room_rate,
    spread_s,
)
from console.guards.rollout import ACTIVE, UNDRAINABLE, WAIT_FOR_HEADROOM, plan_batches, undrain_first
from console.guards.thresholds import Thresholds
from console.guards.verdict import any_of, check, note, verdict
from console.protocol import (
    Check,
    DrainRequest,
    FleetSnapshot,
    NodeState,
    NodeStatus,
    RolloutMode,
    Verdict,
    VerdictLevel,
    limits,
)

#: The drain's checks of what its survivors absorb, left out of a drain that leaves none (`judge_drain`).
SURVIVOR_CHECKS = frozenset(
    {
        "survivor_cpu_vs_pause_pct",
        "survivor_cpu_vs_abort_pct",
        "drain_pacing_per_s",
        "force_closed_at_safe_rate",
        "force_close_burst_per_s",
        "reconnect_rate_per_s",
    }
)

#: What may set a plan's rate (`DrainPlan.limited_by`): the survivors' spare admission, the busiest survivor's
#: CPU, the fleet's longest reconnect hint, the clients offline at once (`offline_at_once_pct`'s line: on a
#: small fleet a node's clients all closed in a moment are a large share of it), the reconnect alarm's line
#: (`reconnect_rate_per_s`: the drain's reconnects on the fleet's under reconnect_rate_high's line) — or no
#: survivor at all (the last node in rotation: nothing to measure, and "limited by the busiest survivor's
#: CPU" named a survivor that was not there). An open set on the wire: a console names a value it does not
#: know as it is.
LIMITED_BY = (
    "drain_pacing",
    "survivor_cpu",
    "hint_reach",
    "no_survivors",
    "offline_at_once",
    "reconnect_rate",
)

#: The planner's hint window starts here: nobody is told to come back at once (interview: "after a
#: randomized delay rather than being cut off cold").
HINT_START_MS = 1000


@dataclass(frozen=True)
class DrainPlan:
    """The largest safe drain for some nodes, and what it takes."""

    node_ids: tuple[str, ...]
    rate_per_s: float  # closes per second, per node; 0 when no rate is safe
    duration_s: float  # until the fullest node is empty at that rate (inf at rate 0)
    deadline_s: float  # the drain window (interview: 10 min)
    hint_ms: tuple[int, int]
    force_closed: int  # connections still open at the deadline, at that rate
    limited_by: str  # which limit set the rate, one of `LIMITED_BY`
    connections: int  # what the drain moves to the survivors (the drain verdict's projection)
    # CPU points the busiest survivor is kept under the pause line (`drain_plan_cpu_margin_pct`): a real
    # node's CPU moves between the plan and the verdict, and a rate on the line was typed seconds later.
    cpu_margin_pct: float = 0.0
    # Nodes the fleet may still add (`NodeRoom.room`; 0: it cannot add capacity, none at all or at its
    # most); None when its snapshot does not say. With no rate, "add capacity" is a way on only with room.
    room_nodes: int | None = None
    # The admission rate_per_s, under the nodes' handshake ceiling, that sets the survivors' spare
    # admission (`FleetLoad.admission_limit_per_s`); None where only the ceilings do. Where spare admission
    # sets the rate (`drain_pacing`), the form names it as the guards do: the limit to raise.
    admission_limit_per_s: float | None = None

    def request(self) -> DrainRequest:
        """The plan as a request, to pre-fill the console's form: at the planned rate however slow it is
        (a floor above it would pre-fill a drain its own guard refuses — the property test found 0.069/s
        raised to 0.1), and at 0.1/s only when there is no room at all: a request needs a rate above 0,
        and this one's verdict says why it is not safe (the console's form shows no rate then,
        `console.model.actions.drain.drain_prefill_from_plan`)."""
        rate = self.rate_per_s if self.rate_per_s > 0 else 0.1
        return DrainRequest(rate_per_s=rate, deadline_s=self.deadline_s, hint_ms=self.hint_ms)


def hint_window_needed_ms(total_rate_per_s: float, thresholds: Thresholds) -> float:
    """A window wide enough that each second's closes come back spread thinly (a narrow window recreates
    lockstep: the outage seed's 100 ms of jitter did)."""
    return max(thresholds.hint_window_min_ms, total_rate_per_s / thresholds.hint_spread_per_s_max * 1000)


def planned_hint_ms(total_rate_per_s: float, thresholds: Thresholds, hint_max_ms: int = 0) -> tuple[int, int]:
    """The hint window the planner offers for a rate: from `HINT_START_MS`, as wide as
    `hint_window_needed_ms` (the `hint_window_ms` check's limit), cut at the fleet's longest hint
    (`FleetCapacity.hint_max_ms`, 0: none). The console re-derives an untouched hint with it as the
    operator changes the rate."""
    high_ms = HINT_START_MS + math.ceil(hint_window_needed_ms(total_rate_per_s, thresholds))
    return HINT_START_MS, min(high_ms, hint_max_ms) if hint_max_ms else high_ms


def offline_at_once_pct(
    total_rate_per_s: float,
    hint_ms: tuple[float, float],
    leaving_connections: int,
    fleet_connections: int,
    thresholds: Thresholds,
) -> float:
    """Clients closed and not yet back at once, as a share of the fleet's (the `offline_at_once_pct` note):
    a drain's rate × the hint's mean — the alarm's window at most —, the draining nodes' connections at
    most. One arithmetic for the guard's note and the planner that keeps under it (`_offline_rate`)."""
    mean_hint_s = (hint_ms[0] + hint_ms[1]) / 2000
    offline = min(
        total_rate_per_s * min(mean_hint_s, thresholds.connections_drop_window_s), leaving_connections
    )
    return offline / max(fleet_connections, 1) * 100


def _offline_rate(
    count: int, leaving: Sequence[NodeStatus], fleet_connections: int, capacity: FleetCapacity, t: Thresholds
) -> float | None:
    """The largest per-node rate (3 significant figures, rounded down) whose clients offline at once, at the
    planner's hint for it (`planned_hint_ms`), stay within `connections_drop_pct` of the fleet's — and never
    slower than empties the fullest node by the drain window: a deadline's forced closes are the surge this
    pace is there to avoid. None when the nodes hold no more than that share: any rate keeps it.

    The planner once offered a small fleet's node at 457/s (a 300-client loopback fleet, review): its 100
    clients closed in a quarter second, a third of the fleet offline together, and its own guard noted it."""
    connections = sum(node.connections for node in leaving)
    if connections / max(fleet_connections, 1) * 100 <= t.connections_drop_pct:
        return None

    def within(total: float) -> bool:
        hint_ms = planned_hint_ms(total, t, capacity.hint_max_ms)
        return (
            offline_at_once_pct(total, hint_ms, connections, fleet_connections, t) <= t.connections_drop_pct
        )

    low, high = 0.0, 1.0
    while within(high):  # (offline at once grows with the rate, up to the nodes' connections: over the line)
        high *= 2
    for _ in range(60):  # bisect to float precision
        low, high = (mid, high) if within(mid := (low + high) / 2) else (low, mid)
    rate = low / count
    in_time = max(node.connections for node in leaving) / t.drain_window_s
    if rate < in_time:
        digits = 2 - math.floor(math.log10(in_time))
        return math.ceil(in_time * 10**digits - 1e-9) / 10**digits
    digits = 2 - math.floor(math.log10(rate))
    candidate = math.floor(rate * 10**digits) / 10**digits
    while candidate > 0 and not within(candidate * count):  # float noise
        candidate = round(candidate - 10.0**-digits, digits)
    return candidate


def _leaving(snapshot: FleetSnapshot, node_ids: str | Sequence[str]) -> list[NodeStatus]:
    ids = [node_ids] if isinstance(node_ids, str) else list(node_ids)
    nodes = find_nodes(snapshot, ids, field="node")
    for node in nodes:
        if node.state is not NodeState.READY:
            raise InputError("node", node.id, f"a node in rotation (state ready); it is {node.state.value}")
    return nodes


@dataclass(frozen=True)
class RateBasis:
    """The drain rate the planner offers, and what set it."""

    rate_per_s: float  # per node; 0 when no rate keeps the margin
    limited_by: str  # one of `LIMITED_BY`
    cpu_margin_pct: float  # the CPU points under the pause line that set the rate; 0 when another limit did


def margin_kept_pct(limited_by: str, cpu_margin_pct: float) -> float:
    """The CPU margin a planned rate gave up, said only where it set the rate (the survivors' CPU): where
    spare admission or the fleet's hint reach set it, the margin took nothing off it. One rule for the
    verdict's suggestion and a plan read back from the server
    (`console.model.actions.drain.plan_cpu_margin_pct`)."""
    return cpu_margin_pct if limited_by == "survivor_cpu" else 0.0


def rate_basis(
    load: FleetLoad, count: int, capacity: FleetCapacity, thresholds: Thresholds, line: ReconnectLine
) -> RateBasis:
    """The largest safe per-node rate less `drain_plan_cpu_margin_pct` under the pause line: what the
    planner offers (`plan_drain`) and a refused drain's verdict suggests (`judge_drain`), one arithmetic for
    both. A plan is made on one second's CPU readings and judged on a later one's, and a real node's CPU
    moves between them (`fleet up`: a rate on the line itself was typed at 75.1 % seconds later)."""
    margin = thresholds.drain_plan_cpu_margin_pct
    rate, limited_by = _safe_rate(load, count, capacity, thresholds, line, margin)
    return RateBasis(rate, limited_by, margin_kept_pct(limited_by, margin))


def _safe_rate(
    load: FleetLoad,
    count: int,
    capacity: FleetCapacity,
    thresholds: Thresholds,
    line: ReconnectLine,
    cpu_margin_pct: float = 0.0,
) -> tuple[float, str]:
    """The largest per-node rate within spare admission and `cpu_margin_pct` under the pause line, with
    a hint window the fleet can give (`_hint_reach_rate`), and whose reconnects keep the fleet under the
    reconnect alarm's line (`reconnect_room_rate`). A verdict judges at it with no margin
    (`largest_safe_rate_per_s`); the planner and a verdict's suggestion keep the margin (`rate_basis`)."""
    rate, limited_by = _admitted_rate(
        load, count, capacity, thresholds, thresholds.cpu_pause_pct - cpu_margin_pct
    )
    for reach, name in (
        (_hint_reach_rate(count, capacity, thresholds), "hint_reach"),
        (reconnect_room_rate(line, count), "reconnect_rate"),
    ):
        if reach is not None and reach < rate:
            rate, limited_by = reach, name
    return rate, limited_by


def _admitted_rate(
    load: FleetLoad, count: int, capacity: FleetCapacity, thresholds: Thresholds, cpu_line_pct: float
) -> tuple[float, str]:
    """The largest per-node rate, to three significant figures, that keeps the drains within spare
    admission and the busiest survivor at or under `cpu_line_pct` — the two checks `judge_drain` makes of
    it, at the pause line or a margin under it."""
    if load.survivors == 0:
        return 0.0, "no_survivors"
    pacing = (load.spare_admission_per_s - load.drain_rate_per_s) / count
    cpu = (load.pause_room_per_s(capacity, thresholds, cpu_line_pct) - load.moving_accepts_per_s) / count
    rate, limited_by = (pacing, "drain_pacing") if pacing <= cpu else (cpu, "survivor_cpu")

    def passes(candidate: float) -> bool:
        new_rate = candidate * count
        return (
            load.drain_rate_per_s + new_rate <= load.spare_admission_per_s
            and load.projected_cpu_pct(new_rate, capacity, thresholds) <= cpu_line_pct
        )

    if rate <= 0:
        return 0.0, limited_by
    digits = 2 - math.floor(math.log10(rate))
    candidate = round(rate, digits)
    while candidate > 0 and not passes(candidate):  # rounding went up, or float noise: one step down
        candidate = round(candidate - 10.0**-digits, digits)
    return max(candidate, 0.0), limited_by


def planned_basis(
    snapshot: FleetSnapshot,
    load: FleetLoad,
    leaving: Sequence[NodeStatus],
    capacity: FleetCapacity,
    t: Thresholds,
    line: ReconnectLine,
) -> RateBasis:
    """The rate the planner offers and a refused drain is told to type: `rate_basis`, slowed where it would
    take more than `connections_drop_pct` of the fleet offline at once (`_offline_rate`) — so the plan
    passes its own guard without the `offline_at_once_pct` note."""
    basis = rate_basis(load, len(leaving), capacity, t, line)
    fleet_connections = sum(node.connections for node in snapshot.nodes)
    cap = _offline_rate(len(leaving), leaving, fleet_connections, capacity, t)
    if cap is None or cap >= basis.rate_per_s:
        return basis
    return RateBasis(cap, "offline_at_once", 0.0)


def plan_drain(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    node_ids: str | Sequence[str],
    thresholds: Thresholds | None = None,
    calm_baseline_per_s: float | None = None,
) -> DrainPlan:
    """The largest safe drain rate for a node or a batch, from the spare handshake capacity, with the
    busiest survivor `drain_plan_cpu_margin_pct` under the pause line (`rate_basis`): it still passes when
    every node's CPU has risen by less than the margin. Its deadline is the drain window, or longer where
    what that would force-close comes back over a line (`_plan_deadline_s`). `calm_baseline_per_s`: the
    steady attempts the fleet API learned while calm, the reconnect alarm's baseline (`reconnect_line`)."""
    t = thresholds or Thresholds()
    nodes = _leaving(snapshot, node_ids)
    load = fleet_load(snapshot, capacity, {n.id for n in nodes})
    line = reconnect_line(snapshot, capacity, load, t, calm_baseline_per_s)
    basis = planned_basis(snapshot, load, nodes, capacity, t, line)
    rate = basis.rate_per_s
    hint_ms = planned_hint_ms(rate * len(nodes), t, capacity.hint_max_ms)
    deadline_s = _plan_deadline_s(nodes, rate, hint_ms, load, capacity, t, line)
    if deadline_s is None:  # not even the longest deadline empties the nodes at this rate
        rate, deadline_s = 0.0, t.drain_window_s
        hint_ms = planned_hint_ms(0.0, t, capacity.hint_max_ms)
    fullest = max(node.connections for node in nodes)
    duration_s = fullest / rate if rate > 0 else math.inf
    return DrainPlan(
        node_ids=tuple(node.id for node in nodes),
        rate_per_s=rate,
        duration_s=duration_s,
        deadline_s=deadline_s,
        hint_ms=hint_ms,
        force_closed=sum(_force_closed(node, rate, deadline_s) for node in nodes),
        limited_by=basis.limited_by,
        connections=sum(node.connections for node in nodes),
        cpu_margin_pct=t.drain_plan_cpu_margin_pct,
        room_nodes=_room_nodes(snapshot_room(snapshot)),
        admission_limit_per_s=load.admission_limit_per_s,
    )


def _plan_deadline_s(
    nodes: Sequence[NodeStatus],
    rate_per_s: float,
    hint_ms: tuple[int, int],
    load: FleetLoad,
    capacity: FleetCapacity,
    t: Thresholds,
    line: ReconnectLine,
) -> float | None:
    """The drain window (interview: 10 min) — or, where what it leaves to force-close comes back over the
    busiest survivor's CPU line (the planner's margin under the pause line), the spare admission or the
    reconnect alarm's line, the whole seconds the fullest node takes to empty at the rate: a slow safe rate
    left most of a node to its deadline, a burst its own verdict judges. None where not even the API's
    longest deadline empties them (the rate is then no plan)."""
    window_s = t.drain_window_s
    forced = sum(_force_closed(node, rate_per_s, window_s) for node in nodes)
    if rate_per_s <= 0 or forced == 0:
        return window_s
    total = rate_per_s * len(nodes)
    peak = peak_reconnects_per_s(total, forced, window_s, hint_ms)
    room = line.room_per_s()
    if (
        load.projected_cpu_pct(peak, capacity, t) <= t.cpu_pause_pct - t.drain_plan_cpu_margin_pct
        and force_close_burst_per_s(forced, hint_ms) <= load.spare_admission_per_s
        and (room is None or peak <= room)
    ):
        return window_s
    deadline_s = float(math.ceil(max(node.connections for node in nodes) / rate_per_s))
    while sum(_force_closed(node, rate_per_s, deadline_s) for node in nodes):  # float noise: a second more
        deadline_s += 1
    return deadline_s if deadline_s <= limits.DRAIN_DEADLINE_S[1] else None


def _room_nodes(room: NodeRoom | None) -> int | None:
    return None if room is None else room.room


def _hint_reach_rate(count: int, capacity: FleetCapacity, thresholds: Thresholds) -> float | None:
    """The largest per-node rate (3 significant figures, rounded down) whose hint window the fleet can
    give: a faster drain needs a wider window (`hint_window_needed_ms`) than a simulated fleet's hints
    reach (`FleetCapacity.hint_max_ms`). None when the fleet sets no such bound."""
    if not capacity.hint_max_ms:
        return None
    width_ms = capacity.hint_max_ms - HINT_START_MS
    if width_ms < thresholds.hint_window_min_ms:
        return 0.0
    rate = width_ms / 1000 * thresholds.hint_spread_per_s_max / count
    digits = 2 - math.floor(math.log10(rate))
    candidate = math.floor(rate * 10**digits) / 10**digits
    # Float noise, as `judge_drain` computes it: 65.7 × 3 closes/s needed 1971.0000000000002 ms of a 1971.
    while candidate > 0 and hint_window_needed_ms(candidate * count, thresholds) > width_ms:
        candidate = round(candidate - 10.0**-digits, digits)
    return max(candidate, 0.0)


def _force_closed(node: NodeStatus, rate_per_s: float, deadline_s: float) -> int:
    return max(0, math.ceil(node.connections - rate_per_s * deadline_s))


def judge_drain(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    node_ids: str | Sequence[str],
    request: DrainRequest,
    thresholds: Thresholds | None = None,
    calm_baseline_per_s: float | None = None,
) -> Verdict:
    """`calm_baseline_per_s`: as `plan_drain`'s."""
    t = thresholds or Thresholds()
    low_ms, high_ms = request.hint_ms
    if not limits.in_window(request.hint_ms, limits.HINT_MS):
        raise InputError("hint_ms", list(request.hint_ms), limits.window_text(limits.HINT_MS))
    if capacity.hint_max_ms and high_ms > capacity.hint_max_ms:
        # Judged here, not when applied: a dry run and the first answer say it, before any typed name.
        raise InputError(
            "hint_ms",
            list(request.hint_ms),
            f"[min, max] with max ≤ {capacity.hint_max_ms} ms, the longest hint this fleet can give",
        )
    nodes = _leaving(snapshot, node_ids)
    load = fleet_load(snapshot, capacity, {n.id for n in nodes})
    line = reconnect_line(snapshot, capacity, load, t, calm_baseline_per_s)
    room = snapshot_room(snapshot)
    count = len(nodes)
    rate = request.rate_per_s
    new_rate = rate * count
    safe_rate, safe_limited_by = _safe_rate(load, count, capacity, t, line)
    # What a refused drain is told to type: the planner's rate, not `safe_rate` on the pause line — typed
    # back seconds later on a live fleet, whose CPU moves a few points a second, that was refused again.
    suggested = planned_basis(snapshot, load, nodes, capacity, t, line)
    # Every check judges the request as sent (review: the burst read 0 beside 5,448 force-closed, judged at
    # the safe rate). The deadline's force-closed come back over the hint window on top of the paced
    # closes still coming back: the survivors' CPU and the fleet's reconnects are judged at that peak, so a
    # deadline of 0 on 500 k connections (30.6 % "pass" beside a forecast of 100 %) is no longer a note.
    # `force_closed_at_safe_rate` still asks of the deadline whether any safe rate empties the nodes in it.
    forced_at_safe = sum(_force_closed(node, safe_rate, request.deadline_s) for node in nodes)
    forced = sum(_force_closed(node, rate, request.deadline_s) for node in nodes)
    burst_per_s = force_close_burst_per_s(forced, request.hint_ms)
    peak_per_s = peak_reconnects_per_s(new_rate, forced, request.deadline_s, request.hint_ms)
    burst_sets_peak = peak_per_s > new_rate
    cpu_pct = load.projected_cpu_pct(peak_per_s, capacity, t)
    # Closed clients are offline until their hint ends: at `rate` that is rate × the hint's mean at once (the
    # alarm's window at most, the nodes' connections at most) — on a small fleet, a guard-approved drain set
    # off the critical connections_drop alarm with nothing said here (found in review). The alarm now counts
    # them as held while their hint runs (`Totals.within_hint_clients`); the note says what users wait.
    offline_pct = offline_at_once_pct(
        new_rate,
        request.hint_ms,
        sum(n.connections for n in nodes),
        sum(n.connections for n in snapshot.nodes),
        t,
    )
    # A drain's reasons name what they stand on: CPU from a planning figure (a controller with no measured
    # ceiling), and spare admission set by the operator's admission limit — at 2/s a real fleet's drain was
    # projected at 225 % CPU when that limit was taken for the ceiling, and nothing named the limit.
    planned = planned_cpu_note(capacity)
    admission_limit = load.admission_limit_text()
    safe_rate_set_by = load.admission_limit_text("set by") if safe_limited_by == "drain_pacing" else ""
    # Each check's move is said only when it fails, and only the moves this fleet and this drain have: a
    # single node is not told to drain fewer nodes, a drain with no safe rate to slow to is not told to slow
    # down or to lengthen its deadline, a fleet that cannot grow is not told to add capacity.
    can_add = room is None or room.can_add
    fewer = "drain fewer nodes at once" if count > 1 else ""
    raise_admission = load.raise_admission(new_rate)  # (the rate that makes room for this drain)
    needed_ms = hint_window_needed_ms(new_rate, t)
    widest_ms = _widest_hint_ms(capacity)
    widen_burst = "widen the hint" if widest_ms / 1000 * load.spare_admission_per_s >= forced else ""
    lengthen = "lengthen the deadline" if safe_rate > 0 else ""
    # A burst is spread by a longer deadline or a wider hint, never by a slower drain (it leaves more).
    widen = "widen the hint" if widest_ms / 1000 > spread_s(request.hint_ms) else ""
    burst_moves = ": " + any_of(["lengthen the deadline", widen])
    checks = [
        check(
            "survivor_cpu_vs_pause_pct",
            cpu_pct,
            t.cpu_pause_pct,
            fails_to=VerdictLevel.TYPED,
            why=_cpu_why(cpu_pct, "above it a rollout pauses (outage seed)", burst_sets_peak) + planned,
            move=_cpu_move(load, capacity, t, t.cpu_pause_pct, burst_moves if burst_sets_peak else ""),
        ),
        check(
            "survivor_cpu_vs_abort_pct",
            cpu_pct,
            t.cpu_abort_pct,
            fails_to=VerdictLevel.BLOCKED,
            why=_cpu_why(
                cpu_pct,
                "the abort criterion, a survivor above it for 30 s, means halt (outage seed)",
                burst_sets_peak,
            )
            + planned,
            move=_cpu_move(load, capacity, t, t.cpu_abort_pct, burst_moves if burst_sets_peak else ""),
        ),
        _reconnect_check(line, peak_per_s, new_rate, load, t, fewer, widen),
        check(
            "drain_pacing_per_s",
            load.drain_rate_per_s + new_rate,
            load.spare_admission_per_s,
            fails_to=VerdictLevel.BLOCKED,
            why=f"every drain's closes per second must fit in the survivors' spare admission{admission_limit} "
            "(field guide)",
            move=_moves(
                ["slow the drain", fewer, raise_admission]
                if load.spare_admission_per_s > load.drain_rate_per_s
                # The drains under way fill the spare admission already: no rate fits, however slow.
                else [
                    raise_admission,
                    load.wait_for_drains(),
                    "add capacity first" if can_add else "",
                    load.wait_for_inflow(new_rate),  # (at an inflow of 0 there is none to fall)
                ]
            ),
        ),
        _after_check(load, t, room, fewer, undrain_first(snapshot)),
        check(
            "concurrent_drains",
            load.draining_nodes + count,
            t.max_concurrent_drains,
            fails_to=VerdictLevel.TYPED,
            why="nodes draining at once, this one included",
            move=_moves([fewer, load.wait_for_drains()]),
        ),
        check(
            "force_closed_at_safe_rate",
            forced_at_safe,
            0,
            fails_to=VerdictLevel.CONFIRM,
            why=f"connections still open at the deadline even at the largest safe rate{safe_rate_set_by}",
            # With no safe rate no deadline empties the node: the rate's own checks say what to do.
            move=_moves([lengthen]) if lengthen else ": no drain rate is safe now",
        ),
        check(
            "force_close_burst_per_s",
            burst_per_s,
            load.spare_admission_per_s,
            fails_to=VerdictLevel.TYPED,
            why="the requested rate's force-closed, back within the hint window: their rate against spare "
            f"admission{admission_limit}",
            move=_moves(
                [
                    "a faster drain" if suggested.rate_per_s > rate else "",
                    "lengthen the deadline",
                    widen_burst,
                ],
                lead="; ",
            ),
        ),
        check(
            "hint_window_ms",
            high_ms - low_ms,
            needed_ms,
            bound="min",
            fails_to=VerdictLevel.CONFIRM,
            why="a window too narrow for the rate sends clients back in lockstep (outage seed: 100 ms)",
            move=_moves(
                [
                    "widen the hint" if widest_ms >= needed_ms else "",
                    # Under the narrowest window any rate is judged at, no slower rate passes.
                    "slow the drain" if high_ms - low_ms >= t.hint_window_min_ms else "",
                ]
            ),
        ),
        note(
            "offline_at_once_pct",
            offline_pct,
            t.connections_drop_pct,
            ok=offline_pct <= t.connections_drop_pct,
            why="clients closed and not yet back (rate × the hint's mean): this share of the fleet waits "
            "offline at once — by design, so the connections_drop alarm counts them as held, not lost",
            move="; a slower rate keeps it under",
        ),
        note(
            "force_closed_at_deadline",
            forced,
            0,
            ok=forced == 0,
            why="connections still open at the deadline at the requested rate",
            move="; they are closed at once — "
            + any_of(["a faster drain" if suggested.rate_per_s > rate else "", "lengthen the deadline"]),
        ),
    ]
    # Nothing in rotation after: the checks of what survivors absorb have none to measure (a CPU of "—", a
    # pacing limit and a safe rate of 0) and failed beside the one reason, nodes_in_rotation_after. Left
    # out, as a rollout start whose first batch takes every node in rotation leaves out its own.
    checks = without_survivor_checks(checks, load, SURVIVOR_CHECKS)
    projections: dict[str, object] = {
        # What moves to the survivors: a confirmation says it in numbers, beside how long and the headroom after.
        "connections": sum(n.connections for n in nodes),
        "survivors": load.survivors,
        "survivor_cpu_max_pct": cpu_pct,
        "drain_rate_per_s": new_rate,
        "spare_admission_per_s": load.spare_admission_per_s,
        "headroom_after_pct": load.headroom_after_pct,
        "duration_s": min(max(n.connections for n in nodes) / rate, request.deadline_s),
        "force_closed": forced,
        "largest_safe_rate_per_s": safe_rate,
        "suggested_rate_per_s": suggested.rate_per_s,
        "suggested_cpu_margin_pct": suggested.cpu_margin_pct,
    }
    if room is not None:  # (said only where the snapshot says it: "add capacity" is advised by it)
        projections["room_nodes"] = room.room
    expected = nodes[0].id if count == 1 else snapshot.fleet
    return verdict("drain", checks, projections, typed_expected=expected)


def _moves(moves: list[str], lead: str = ": ") -> str:
    """A check's `move`: `lead` and the moves this drain has ("" when it has none)."""
    said = any_of(moves)
    return lead + said if said else ""


def _cpu_why(cpu_pct: float, consequence: str, at_burst: bool) -> str:
    """What the survivor CPU checks compare: the busiest survivor's CPU demand in % of its capacity — a
    projection, which can pass 100 (verdicts read "428 ≤ 80" and nothing said what a CPU over 100 is):
    past 100 the clause says it is over capacity. `at_burst`: the peak is the deadline's force-close."""
    when = " at the deadline's force-close (its clients back over the hint window)" if at_burst else ""
    over = f"; {cpu_pct:,.0f} % is over capacity (handshakes queue and time out)" if cpu_pct > 100 else ""
    return (
        f"busiest survivor's CPU demand while absorbing the drain{when}, in % of its capacity; {consequence}"
        f"{over}"
    )


def _reconnect_check(
    line: ReconnectLine,
    peak_per_s: float,
    new_rate: float,
    load: FleetLoad,
    t: Thresholds,
    fewer: str,
    widen: str,
) -> Check:
    """The fleet's reconnects once the drain's clients come back (`peak_per_s`, the deadline's burst
    included) against the reconnect_rate_high alarm's line (`reconnect_line`): typed, as a drain over the
    survivors' pause line is — the planner's 7,910 closes/s paged 17 s after it was applied (review). With
    no steady rate to draw the line from, a note that says so."""
    value = line.before_per_s + peak_per_s
    room = line.room_per_s()
    if line.line_per_s is None or line.steady_per_s is None or room is None:
        return note(
            "reconnect_rate_per_s",
            value,
            None,
            ok=False,
            why="no calm reconnect rate to draw the reconnect_rate_high alarm's line from (this second's "
            "attempts are a storm's: timing out or refused, or a node over the pause CPU line); the backend's "
            "[capacity] steady_inflow_per_s or a configured reconnect_baseline_per_s has it judged",
        )
    if room <= 0:  # over the line before a single close of this drain: no rate fits
        moves = [load.wait_for_drains() or "wait for the reconnects to fall"]
    else:
        moves = ["slow the drain", fewer] if new_rate > room else []
        if peak_per_s > max(new_rate, room):
            moves += ["lengthen the deadline", widen]
    return check(
        "reconnect_rate_per_s",
        value,
        line.line_per_s,
        fails_to=VerdictLevel.TYPED,
        why=f"reconnects/s once this drain's clients are back ({line.before_per_s:,.0f}/s before it) against "
        f"reconnect_rate_high's line, {t.reconnect_rate_multiple:g}× the steady "
        f"{line.steady_per_s:,.0f}/s ({line.source})",
        move=_moves(moves),
    )


def _cpu_move(
    load: FleetLoad, capacity: FleetCapacity, thresholds: Thresholds, line_pct: float, burst_moves: str = ""
) -> str:
    """The move for the busiest survivor projected over `line_pct`: a slower drain where some rate keeps it
    under the line — or `burst_moves` where the deadline's force-close sets the peak (a slower drain leaves
    more to it); where the survivors are over it before a single close (or the leaving nodes' own inflow
    takes them over), no rate does — "slow the drain" sent the operator to a rate that does not exist."""
    if load.pause_room_per_s(capacity, thresholds, line_pct) > load.moving_accepts_per_s:
        return burst_moves or ": slow the drain"
    return ": " + any_of(["wait for CPU to fall", "shed load with admission"])


def _widest_hint_ms(capacity: FleetCapacity) -> float:
    """The widest hint window a drain may ask for here: the API's bounds, cut at the fleet's longest hint."""
    low_ms, high_ms = limits.HINT_MS
    return (capacity.hint_max_ms or high_ms) - low_ms


def _after_check(
    load: FleetLoad, thresholds: Thresholds, room: NodeRoom | None, fewer: str, undrain: str
) -> Check:
    """The survivors' headroom against the budget — or, with no survivor, the rotation itself: the last
    node's drain leaves no node to take a client, and "headroom 0 %: add capacity first" said nothing of
    that (the projection `headroom_after_pct` stays, 0 then, as the frames say it). "add capacity first"
    only where the fleet can grow (or its snapshot does not say): elsewhere the nodes to undrain
    (`undrain`, the rollout guard's "undrain gw-004 first") or wait for headroom. `fewer`: "drain fewer
    nodes at once" for a batch, "" for one node. Said only when it fails."""
    if load.survivors == 0:
        return rotation_after_check(
            load,
            f"nodes left in rotation (ready) once these leave: none would take their clients; {ROTATION_MOVE}",
        )
    return check(
        "headroom_after_pct",
        load.headroom_after_pct,
        thresholds.headroom_min_pct,
        bound="min",
        fails_to=VerdictLevel.TYPED,
        # Typed, not blocked as a rollout's start: a drain restarts no node (and is how a sick one is taken
        # out), but under the budget the next restart or lost node is the seed's storm — the operator names it.
        why="headroom once the node leaves rotation; no safe restart below it (outage seed; the drain "
        "restarts none itself: typed, not blocked)",
        move=_moves([fewer, "add capacity first"])
        if room is None or room.can_add
        else _moves([fewer, undrain, WAIT_FOR_HEADROOM], lead=f", and this fleet {room.why_not()}: "),
    )


#: An undrain's move for a node that looks unhealthy: it is `ok` all the same (back into rotation is the
#: safe direction), so what is left to do comes after.
WATCH_IT = "watch it once it is back in rotation"


def judge_undrain(snapshot: FleetSnapshot, node_id: str, thresholds: Thresholds | None = None) -> Verdict:
    """Back into rotation: always `ok`; the checks only warn when the node looks unhealthy."""
    t = thresholds or Thresholds()
    (node,) = find_nodes(snapshot, [node_id], field="node")
    if node.state not in UNDRAINABLE:
        raise InputError("node", node_id, f"a draining or drained node; it is {node.state.value}")
    checks = [
        note(
            "node_cpu_pct",
            node.cpu_pct,
            t.cpu_pause_pct,
            ok=node.cpu_pct <= t.cpu_pause_pct,
            why="the node's CPU against the pause line",
            move=f": a hot node taking new connections again gets hotter — {WATCH_IT}",
        ),
        note(
            "node_timeouts_per_s",
            node.timeouts_per_s,
            0.0,
            ok=node.timeouts_per_s <= 0,
            # A passing 0 said "handshakes timing out on this node: it may not be healthy" of a healthy node.
            why="handshakes that time out on this node, per second",
            move=f": it may not be healthy — {WATCH_IT}",
        ),
    ]
    checks += _rollout_batch_check(snapshot, node.id)
    return verdict("undrain", checks, {"connections": node.connections})


def _rollout_batch_check(snapshot: FleetSnapshot, node_id: str) -> list[Check]:
    """A node draining in the batch under way of a running (or paused) drain-mode rollout: undrained, the
    rollout halts on it and its resume drains it again, on both backends — asked first, not found in the
    rollout panel afterwards (the simulator's rollout used to go on without restarting it)."""
    rollout = snapshot.rollout
    if rollout is None or rollout.state not in ACTIVE or rollout.mode is not RolloutMode.DRAIN:
        return []
    if not rollout.batch or not rollout.batch_size:
        return []
    batches = plan_batches([n.id for n in snapshot.nodes], rollout.batch_size)
    if rollout.batch > len(batches) or node_id not in batches[rollout.batch - 1]:
        return []
    return [
        Check(
            name="rollout_batch",
            value=f"batch {rollout.batch} of {rollout.batches}",
            limit="not in the batch under way",
            ok=False,
            level=VerdictLevel.CONFIRM,
            why=f"{node_id} drains in the rollout's batch {rollout.batch}: undrained, the rollout halts, and "
            f"its resume drains {node_id} again to restart it; left alone, the rollout restarts it with its "
            "batch and brings it back",
        )
    ]
