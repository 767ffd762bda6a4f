"""Guards for admission changes (issue #4, section 1): the token bucket on new connections, the connection
ceiling and the randomized Retry-After window (interview, sync-engine essay)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from console.alarms.tracking import calm_second
from console.errors import InputError
from console.figures import beside_limit
from console.guards.capacity import (
    FleetCapacity,
    handshakes_under_line_per_s,
    node_cpu_demand_pct,
    planned_cpu_note,
)
from console.guards.fleet import SERVING, find_nodes, pause_room_per_s
from console.guards.thresholds import Thresholds
from console.guards.verdict import check, note, verdict
from console.protocol import (
    AdmissionInForce,
    AdmissionRequest,
    AdmissionSettings,
    Check,
    FleetSnapshot,
    NodeState,
    NodeStatus,
    Verdict,
    VerdictLevel,
    limits,
)


def _looser(new: float | None, old: float | None) -> bool:
    """None is unlimited: the loosest of all."""
    return (math.inf if new is None else new) > (math.inf if old is None else old)


def _loosens(request: AdmissionRequest, current: AdmissionSettings) -> bool:
    return (
        _looser(request.rate_per_s, current.rate_per_s)
        or _looser(request.burst, current.burst)
        or _looser(request.max_connections, current.max_connections)
    )


#: A limit admitting under this share of the calm inflow refuses nearly every legitimate client (over 90 %):
#: not a tightening to ask about but the fleet closed to newcomers, typed as a ceiling under every node's
#: connections is (`max_connections_every_node`). Set in review: 0.001/s a node was one more "y".
NEARLY_ALL_REFUSED_SHARE = 0.1


#: Where the steady inflow a limit is judged by comes from, in the order looked for (`_steady_inflow`).
FROM_BACKEND = "the backend's steady_inflow_per_s"
FROM_CONFIGURED = "the configured reconnect_baseline_per_s"
FROM_LEARNED = "the calm baseline the fleet API learned, as the attempts gauge reads it"


def steady_inflow_per_s(
    capacity: FleetCapacity | None, thresholds: Thresholds, calm_baseline_per_s: float | None = None
) -> float | None:
    """Calm new connections per second: the backend's figure, else the configured reconnect baseline, else
    the calm baseline learned over the fleet's calm seconds (`calm_baseline_per_s`: `SteadyAttempts`, the
    attempts gauge's "steady"); None when none of them is known. Never one second's accepts: in a storm
    they are the storm's (the regional-outage drill: 400/s a node, its lesson, read "raise rate_per_s to
    at least 445.2/s"), and in a quiet second they are 0 (a loopback fleet passed 0.001/s a node as ok)."""
    known = _steady_inflow(capacity, thresholds, calm_baseline_per_s)
    return None if known is None else known[0]


def _steady_inflow(
    capacity: FleetCapacity | None, thresholds: Thresholds, calm_baseline_per_s: float | None
) -> tuple[float, str] | None:
    """The calm inflow and where it comes from (None: unknown)."""
    if capacity is not None and capacity.steady_inflow_per_s > 0:
        return capacity.steady_inflow_per_s, FROM_BACKEND
    if thresholds.reconnect_baseline_per_s > 0:
        return thresholds.reconnect_baseline_per_s, FROM_CONFIGURED
    if calm_baseline_per_s is not None:
        return calm_baseline_per_s, FROM_LEARNED
    return None


def drain_closes_per_s(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity | None,
    thresholds: Thresholds,
    calm_baseline_per_s: float | None = None,
) -> float:
    """The closes per second of the drains under way, which come back through admission on top of the calm
    inflow — 0 when the calm inflow is unknown."""
    if _steady_inflow(capacity, thresholds, calm_baseline_per_s) is None:
        return 0.0
    return sum(
        node.drain.rate_per_s if node.drain is not None else node.closes_per_s
        for node in snapshot.nodes
        if node.state is NodeState.DRAINING
    )


def _admission_rate_check(
    snapshot: FleetSnapshot,
    request_rate_per_s: float,
    nodes: int,
    share: float,
    capacity: FleetCapacity | None,
    thresholds: Thresholds,
    calm_baseline_per_s: float | None,
) -> Check:
    """The limit a node against the covered nodes' share of the calm inflow and the drains under way, a
    node (the field's own unit: a fleet total beside a per-node field read 0.048 for 0.001). Under it
    legitimate clients are refused (confirm); under a tenth of it nearly all are (typed). With no calm
    inflow known, the lines the fleet's own figures still draw (typed), else a note that says so."""
    known = _steady_inflow(capacity, thresholds, calm_baseline_per_s)
    if known is None:
        return _with_no_calm_inflow(snapshot, request_rate_per_s, nodes, share, thresholds)
    calm_per_s, source = known
    closes_per_s = drain_closes_per_s(snapshot, capacity, thresholds, calm_baseline_per_s)
    inflow = (calm_per_s + closes_per_s) * share
    limit = inflow / nodes if nodes else 0.0
    nearly_all = request_rate_per_s < limit * NEARLY_ALL_REFUSED_SHARE
    refused_pct = (1 - request_rate_per_s / limit) * 100 if limit > 0 else 0.0
    return check(
        "admission_rate_per_s",
        request_rate_per_s,
        limit,
        bound="min",
        fails_to=VerdictLevel.TYPED if nearly_all else VerdictLevel.CONFIRM,
        why=f"a covered node's limit against its share of the steady inflow ({source}) and of the drains "
        "under way; below it, legitimate clients are refused",
        move=(
            f" — at {request_rate_per_s:g}/s a node it refuses {beside_limit(refused_pct, 100.0, 1)} % of "
            "them, the fleet all but closed to newcomers"
            if nearly_all
            else ""
        )
        + f": raise rate_per_s to at least {_per_node(inflow, nodes):g}/s a node",
    )


def _with_no_calm_inflow(
    snapshot: FleetSnapshot, request_rate_per_s: float, nodes: int, share: float, thresholds: Thresholds
) -> Check:
    """No calm inflow known: typed under what the clients offline now need (`_closed_to_the_offline`) or
    under a tenth of a trickle (`_under_a_trickle`); otherwise a note saying why it is not judged — a
    storm's accepts, or one second's, are no measure of the clients a limit refuses in calm times."""
    why_unknown = _no_calm_inflow(snapshot, thresholds)
    closed = _closed_to_the_offline(snapshot, request_rate_per_s, nodes, share, thresholds)
    if closed is None:
        closed = _under_a_trickle(request_rate_per_s, nodes, share, thresholds, why_unknown)
    if closed is not None:
        return closed
    return note(
        "admission_rate_per_s",
        request_rate_per_s,
        None,
        ok=False,
        why=f"no calm inflow to judge it by: {why_unknown}; the backend's [capacity] steady_inflow_per_s or a "
        "configured reconnect_baseline_per_s has it judged",
    )


def _no_calm_inflow(snapshot: FleetSnapshot, thresholds: Thresholds) -> str:
    """Why no calm inflow is known: a storm now (its accepts are the storm's), or a fleet API that has not
    learned a calm baseline yet (one second's accepts are no measure: a quiet one is 0)."""
    hottest = max((node.cpu_pct for node in snapshot.nodes if node.state in SERVING), default=0.0)
    accepts = snapshot.totals.accepts_per_s
    if calm_second(snapshot.totals, thresholds.cpu_pause_pct, hottest):
        return (
            "no calm baseline is learned yet (the fleet API learns the steady attempts from calm seconds, over "
            f"the first {thresholds.baseline_learn_s:g} s, as the attempts gauge does), and this second's "
            f"{accepts:,.0f} accepts/s are one second, no steady rate"
        )
    return (
        f"today's {accepts:,.0f} accepts/s are a storm's (attempts timing out or refused, or a node over the "
        "pause CPU line), not the clients a limit refuses in calm times"
    )


def _under_a_trickle(
    request_rate_per_s: float, nodes: int, share: float, thresholds: Thresholds, why_unknown: str
) -> Check | None:
    """With no calm inflow known, the line the fleet's own convention draws: steady attempts never count as
    fewer than the reconnect floor (`reconnect_floor_per_s`, 10/s: a trickle, as the attempts gauge and the
    reconnect_rate_high alarm count them), so a limit under a tenth of the covered nodes' share of it
    refuses nearly every client, whatever the calm inflow is (`NEARLY_ALL_REFUSED_SHARE`): typed. A rate
    that refuses nearly everyone is never ok for want of a figure (found in review: 0.001/s a node, ok on a
    fleet API with no calm figure and a quiet second). None above the line (or with a floor of 0)."""
    if nodes <= 0:
        return None
    floor_per_s = thresholds.reconnect_floor_per_s
    least = floor_per_s * share / nodes * NEARLY_ALL_REFUSED_SHARE  # a node
    if request_rate_per_s >= least:
        return None
    return _closed_to_newcomers(
        request_rate_per_s,
        least,
        why=f"no calm inflow is known — {why_unknown} — but steady attempts never count as fewer than the "
        f"reconnect floor's {floor_per_s:g}/s (reconnect_floor_per_s, as the attempts gauge counts them), and a "
        "limit under a tenth of the covered nodes' share of it refuses nearly every client",
        move=f" — at {request_rate_per_s:g}/s a node the fleet is all but closed to newcomers: raise "
        f"rate_per_s to at least {_per_node(floor_per_s * share * NEARLY_ALL_REFUSED_SHARE, nodes):g}/s a node",
    )


def refused_backlog_per_s(snapshot: FleetSnapshot) -> float:
    """The refused clients coming back per second: each one answered 503 waits out its Retry-After and tries
    again, so the backlog waiting (rejects × the mean Retry-After, Little's law) returns at the rate it was
    refused — through the load balancer, to any node in rotation."""
    return snapshot.totals.rejects_per_s


def _refused_backlog_check(
    snapshot: FleetSnapshot,
    request: AdmissionRequest,
    covered_ready: list[NodeStatus],
    share: float,
    capacity: FleetCapacity,
    thresholds: Thresholds,
) -> Check:
    """What of the refused backlog the new limit lets in per second beyond today's accepts, against the
    handshakes the covered nodes can take under the pause line."""
    if request.rate_per_s is None:
        room = math.inf
    else:
        admitted = sum(node.accepts_per_s for node in covered_ready)
        room = max(request.rate_per_s * len(covered_ready) - admitted, 0.0)
    cpu_max = max((node.cpu_pct for node in covered_ready), default=0.0)
    return check(
        "refused_backlog_admitted_per_s",
        min(refused_backlog_per_s(snapshot) * share, room),
        max(pause_room_per_s(cpu_max, len(covered_ready), capacity, thresholds), 0.0),
        fails_to=VerdictLevel.CONFIRM,
        why="clients refused with a 503 come back as their Retry-After ends, and a looser limit lets them in "
        "on top of today's accepts: the covered nodes must handshake them under the pause line, the busiest "
        "taking more than its even share (outage seed; interview: admit at a rate the fleet can handshake)"
        f"{planned_cpu_note(capacity)}",
        move=" — raise the limit in smaller steps",
    )


def _closed_to_the_offline(
    snapshot: FleetSnapshot, request_rate_per_s: float, nodes: int, share: float, thresholds: Thresholds
) -> Check | None:
    """In a storm with no calm inflow known, the one line a storm's own figures do draw: the clients offline
    now (`offline_clients`) must come back at some pace. A limit under a tenth of the rate that brings them
    back within the drain window (the interview seed's pace for moving clients, 500 k in 10 minutes) keeps
    them out for ten windows or more — the fleet all but closed to them, as `NEARLY_ALL_REFUSED_SHARE` says
    of a calm inflow — typed. None otherwise (and where the source does not count them: 0)."""
    offline = snapshot.totals.offline_clients
    if offline <= 0 or nodes <= 0:
        return None
    needed = offline * share / thresholds.drain_window_s / nodes  # a node
    least = needed * NEARLY_ALL_REFUSED_SHARE
    if request_rate_per_s >= least:
        return None
    hours = offline * share / (request_rate_per_s * nodes) / 3600
    return _closed_to_newcomers(
        request_rate_per_s,
        least,
        why=f"no calm inflow is known, but the {offline:,} clients offline now need {needed:,.1f}/s a node to "
        f"come back within the {thresholds.drain_window_s:g} s drain window (interview seed); a tenth of "
        "that keeps them out ten windows",
        move=f": at {request_rate_per_s:g}/s a node they would take {hours:,.0f} h — raise rate_per_s to at "
        f"least {math.ceil(least * 10) / 10:g}/s a node",
    )


def _closed_to_newcomers(request_rate_per_s: float, least_per_s: float, why: str, move: str) -> Check:
    """`admission_rate_per_s` under `least_per_s` a node, a limit that all but closes the fleet: typed."""
    return check(
        "admission_rate_per_s",
        request_rate_per_s,
        least_per_s,
        bound="min",
        fails_to=VerdictLevel.TYPED,
        why=why,
        move=move,
    )


def _moments(snapshot: FleetSnapshot, nodes: Sequence[NodeStatus]) -> Iterator[tuple[float, float]]:
    """(connections held, attempts/s) of each node in rotation among `nodes` at the two moments a rate must
    fit: now, refusing what of its attempts it does not admit; and once its share of the clients offline
    is back and held, with none left to refuse. Between them the clients move from refused to held, and a
    node's demand with them, so its highest is at one end (regional-outage at 550/s a node: 93 % at the
    first refusals, 80 % at the last handshakes)."""
    ready = sum(1 for node in snapshot.nodes if node.state is NodeState.READY)
    coming_back = snapshot.totals.offline_clients / ready if ready else 0.0
    for node in nodes:
        if node.state is NodeState.READY:
            yield node.connections, node.attempts_per_s
            yield node.connections + coming_back, 0.0


def rate_under_cpu_line_per_s(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    thresholds: Thresholds | None = None,
    nodes: Sequence[NodeStatus] | None = None,
) -> float | None:
    """The largest admission `rate_per_s` a node (to a tenth, rounded down: the rate a move names must pass)
    at which every node in rotation among `nodes` (default: the fleet's) keeps its CPU demand at or under
    the abort line (`cpu_abort_pct`, 80 %) at both `_moments`; None with no such node. What a node can take
    is its CPU's, not its `handshakes_per_s`: holding its clients costs CPU too (regional-outage: 25 % to
    hold 50,000, so 550/s of 1000 — the rate its briefing names)."""
    t = thresholds or Thresholds()
    rates = [
        handshakes_under_line_per_s(capacity, t.cpu_abort_pct, connections, attempts_per_s)
        for connections, attempts_per_s in _moments(snapshot, snapshot.nodes if nodes is None else nodes)
    ]
    # (rounded first: 55 ÷ 0.1 comes out a float's width under 550)
    return math.floor(round(min(rates) * 10, 6)) / 10 if rates else None


def _cpu_line_check(
    snapshot: FleetSnapshot,
    request_rate_per_s: float,
    limit: float,
    covered_ready: list[NodeStatus],
    in_force: AdmissionInForce,
    capacity: FleetCapacity,
    thresholds: Thresholds,
) -> Check:
    """`rate_per_s` against `rate_under_cpu_line_per_s`: blocked where the nodes' CPU demand at it is over
    100 % (they are pinned: handshakes queue and time out — regional-outage at 850/s a node, score 27),
    typed where it is over the abort line only. Only a warning where every covered node runs a looser
    limit now (shedding is the move: never held back), and where no rate keeps CPU under the line
    (holding and refusing alone cross it: every rate would fail). `limit`: `rate_under_cpu_line_per_s`."""
    line = thresholds.cpu_abort_pct
    demand_pct = max(
        node_cpu_demand_pct(
            capacity, connections, request_rate_per_s, max(attempts - request_rate_per_s, 0.0)
        )
        for connections, attempts in _moments(snapshot, covered_ready)
    )
    why = (
        "a node admitting rate_per_s handshakes a second, holding its connections (its share of the clients "
        "offline too, once they are back) and refusing the rest, must keep its CPU demand under the abort "
        f"line, cpu_abort_pct (outage seed){planned_cpu_note(capacity)}"
    )
    if limit <= 0:
        return note(
            "rate_under_cpu_line_per_s",
            request_rate_per_s,
            0.0,
            ok=False,
            why=why,
            move=f": no rate_per_s keeps CPU under {line:g} % — holding and refusing alone put a node over "
            "it; shed load with admission and add capacity",
        )
    over = " (over capacity: handshakes queue and time out)" if demand_pct > 100 else ""
    tightening = all(
        (running := in_force.for_node(node.id).rate_per_s) is not None and running >= request_rate_per_s
        for node in covered_ready
    )
    if tightening:
        level = VerdictLevel.OK
    else:
        level = VerdictLevel.BLOCKED if demand_pct > 100 else VerdictLevel.TYPED
    return check(
        "rate_under_cpu_line_per_s",
        request_rate_per_s,
        limit,
        fails_to=level,
        why=why,
        move=f": at rate_per_s {request_rate_per_s:g}/s a node its CPU reaches {demand_pct:,.0f} %{over}; "
        f"lower rate_per_s — ≤ {limit:g}/s a node keeps CPU under {line:g} %",
    )


def _per_node(total_per_s: float, nodes: int) -> float:
    """`total_per_s` shared by `nodes`, rounded up to a tenth: the rate a move names must pass, not fall
    a rounding short of the check's limit."""
    return math.ceil(total_per_s / max(nodes, 1) * 10) / 10


def judge_admission(
    snapshot: FleetSnapshot,
    request: AdmissionRequest,
    capacity: FleetCapacity | None = None,
    thresholds: Thresholds | None = None,
    calm_baseline_per_s: float | None = None,
) -> Verdict:
    """`calm_baseline_per_s`: the fleet's steady attempts as learned over its calm seconds
    (`console.alarms.tracking.SteadyAttempts`, kept by the fleet API's feed), None when none is learned —
    what a limit is judged by when neither the capacity record nor the thresholds say the calm inflow."""
    t = thresholds or Thresholds()
    low_s, high_s = request.retry_after_s
    if not limits.in_window(request.retry_after_s, limits.RETRY_AFTER_S):
        raise InputError(
            "retry_after_s", list(request.retry_after_s), limits.window_text(limits.RETRY_AFTER_S)
        )
    covered = find_nodes(snapshot, request.nodes) if request.nodes is not None else list(snapshot.nodes)
    ready = [node for node in snapshot.nodes if node.state is NodeState.READY]
    covered_ready = [node for node in covered if node.state is NodeState.READY]
    share = len(covered_ready) / len(ready) if ready else 0.0
    # Against what each covered node runs: a fleet-wide 900/s read as no change against the fleet's 900/s
    # while it lifted two nodes' own 5/s (found in review).
    in_force = AdmissionInForce.of(snapshot) or AdmissionInForce(snapshot.admission)
    cpu_line_per_s = (
        rate_under_cpu_line_per_s(snapshot, capacity, t, covered_ready) if capacity is not None else None
    )
    checks = []
    if request.rate_per_s is not None:
        # A drain's clients come back through admission too: graceful-drain's rollout draining 2 nodes at
        # 833/s passed a 900/s limit against the calm 167/s, and 97 % of attempts were refused at once.
        checks.append(
            _admission_rate_check(
                snapshot, request.rate_per_s, len(covered_ready), share, capacity, t, calm_baseline_per_s
            )
        )
        if capacity is not None and cpu_line_per_s is not None:
            checks.append(
                _cpu_line_check(
                    snapshot, request.rate_per_s, cpu_line_per_s, covered_ready, in_force, capacity, t
                )
            )
    if request.max_connections is not None:
        held = [node.connections for node in covered_ready]
        checks.append(
            check(
                "max_connections",
                request.max_connections,
                max(held, default=0),
                bound="min",
                fails_to=VerdictLevel.CONFIRM,
                why="a ceiling under what a node already holds refuses every newcomer there",
                move=f": raise max_connections to at least {max(held, default=0):,}",
            )
        )
        if covered_ready and len(covered_ready) == len(ready):
            checks.append(
                check(
                    "max_connections_every_node",
                    request.max_connections,
                    min(held),
                    bound="min",
                    fails_to=VerdictLevel.TYPED,
                    why="a ceiling under what every node holds refuses every newcomer fleet-wide: the fleet "
                    "stops admitting",
                    move=" — name the fleet to mean it",
                )
            )
    checks.append(
        check(
            "retry_after_window_s",
            high_s - low_s,
            t.retry_after_window_min_s,
            bound="min",
            fails_to=VerdictLevel.CONFIRM,
            why="a narrow Retry-After window sends refused clients back together, in lockstep (outage seed)",
            move=f": widen retry_after_s to at least {t.retry_after_window_min_s:g} s between its ends",
        )
    )
    loosening = any(_loosens(request, in_force.for_node(node.id)) for node in covered) or (
        not covered and _loosens(request, snapshot.admission)
    )
    cpu_max = max((node.cpu_pct for node in covered if node.state in SERVING), default=0.0)
    if loosening:
        checks.append(
            check(
                "loosening_cpu_pct",
                cpu_max,
                t.admission_loosen_cpu_pct,
                fails_to=VerdictLevel.TYPED,
                why="loosening admission while a node is hot lets the herd in faster than it can handshake",
                move=": wait for CPU to fall under it first",
            )
        )
        if capacity is not None:
            checks.append(_refused_backlog_check(snapshot, request, covered_ready, share, capacity, t))
    projections = {
        "nodes": len(covered_ready),
        "loosening": loosening,
        "cpu_max_pct": cpu_max,
        "steady_inflow_per_s": steady_inflow_per_s(capacity, t, calm_baseline_per_s),
        "drain_closes_per_s": drain_closes_per_s(snapshot, capacity, t, calm_baseline_per_s),
        "refused_backlog_per_s": refused_backlog_per_s(snapshot),
    }
    if capacity is not None:
        projections["rate_under_cpu_line_per_s"] = cpu_line_per_s
    ended = sum(1 for node in snapshot.nodes if in_force.overridden(node.id))
    if request.nodes is None and ended:
        projections["overrides_ended"] = ended  # the nodes a fleet-wide change takes off their own settings
    return verdict("admission", checks, projections, typed_expected=snapshot.fleet)
