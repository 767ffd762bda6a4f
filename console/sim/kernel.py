"""The simulator's compiled inner loop: counts of clients, never one record per client.

Clients that share a population and a policy state are exchangeable, so the engine keeps counts:

* offline clients wait in the timing wheel (`console.sim.wheel`), by population, policy state and tick;
* connected clients are counted per node and population (`conn[p, i]`), with the share not yet stable
  (`fresh[p, i]`) whose retry counters survive a drop; the counters' mix is kept fleet-wide
  (`fresh_by_state[p, s]`) — an approximation: a node's fresh clients are assumed to have the fleet's mix.

Each tick draws the arrivals due, splits them over the nodes in rotation (load balancer), runs each node's
admission (token bucket, ceiling), handshake queue and CPU, and sends the failures back into the wheel.
A handshake queued longer than the client's connect timeout fails on the client's side but still costs the
server part of the work. A node whose CPU is pinned with more handshake work queued than the heartbeat
timeout loses established connections (missed heartbeats, close code 1006): the cascade of the outage
seed. Consistent hashing (the `skewed` balancer) sends a client that failed on a hot node back to the hot
nodes: its wheel state is in the bound half.

Cost per tick is O(occupied wheel cells + the tick's events), at most O(nodes), never O(clients): only
the nodes something happens to are visited (`run_seconds`), and a node with room to spare is not visited
for its arrivals at all — it takes a second's at once (`_calm_nodes`); churn and ageing are drawn once a
second (`_churn_and_age`). Pure: arrays and one numpy Generator in, arrays
out; `nogil` lets a server run it in a worker thread without stalling its event loop.

Why one long file: numba's cache keys a compiled function by its own source file only, and the tick
loop's cached code has every helper it calls inlined, array layout constants included. Split over
modules, an edit to one helper would leave the loop running the old one from cache (numba issue #1833;
see the note in `console.sim.wheel`, the one module already apart). The sections below are the parts a
split would draw: clients as counts, the load balancer, calm nodes, churn thinning, the nodes' steps, the
loop.
"""

# fmt: off
# (argument lists of arrays read better packed than one per line)

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

from console.sim.wheel import (
    BLOCK,
    PF_FRESH_Q,
    PF_FROM_DELAY,
    PF_HONOURS,
    PF_TIMEOUT,
    binom,
    expand_block,
    horizon_of,
    hyper,
    integer_below,
    schedule_backoff,
    schedule_hint,
)

# --- node state codes (mirror console.protocol.NodeState; ABSENT = not yet provisioned into the list) ---
READY, DRAINING, DRAINED, RESTARTING, DOWN, PROVISIONING, ABSENT = 0, 1, 2, 3, 4, 5, 6

# --- per-node parameters and state: node_f[FIELD, i] ---
NF_TOKENS = 0  # token bucket level
NF_RATE = 1  # tokens per tick (0 = no bucket)
NF_BURST = 2
NF_CEILING = 3  # connection ceiling (0 = none)
NF_QUEUE = 4  # handshake work queued, in handshakes (fractional: service is fractional per tick)
NF_DRAIN_RATE = 5  # closes per tick while draining
NF_DRAIN_ACC = 6  # fractional close accumulator
NF_DRAIN_DEADLINE = 7  # tick at which whatever remains is force-closed
NF_HINT_LO = 8  # reconnect hint window, ticks
NF_HINT_HI = 9
NF_WEIGHT = 10  # load balancer weight (0 = out of rotation)
NF_LAG = 11  # ticks of handshake work queued at the current service rate: how far the event loop lags
NF_STATE = 12
NF_HOT = 13  # 1 for the nodes consistent hashing currently piles reconnects onto
NF_FIELDS = 14

# --- per-node per-second outputs: out_node[FIELD, i] ---
ON_ATTEMPTS, ON_ACCEPTS, ON_REJECTS, ON_TIMEOUTS, ON_DROPS, ON_CLOSES, ON_CPU, ON_WAIT_MAX, ON_WASTED = range(9)
ON_FORCED = 9  # closes forced at a drain's deadline (also counted in ON_CLOSES)
ON_FIELDS = 10

# --- fleet per-second outputs: out_fleet[FIELD] ---
OF_RESUMES, OF_RESYNCS, OF_RESYNC_FAIL, OF_DISCONNECTS, OF_ABNORMAL, OF_RESYNC_DONE, OF_REFUSED = range(7)
OF_RESYNC_BACKLOG = 7  # resyncs queued or waiting to retry at the second's end (a level, not a count)
OF_FIELDS = 8

# --- fleet parameters and state: fleet_f[FIELD] ---
FF_TICK = 0
FF_RESYNC_QUEUE = 1
FF_RESYNC_PER_TICK = 2  # backend capacity (0 = resyncs are free)
FF_RESYNC_TIMEOUT = 3  # ticks a queued resync may wait before it fails
FF_RESYNC_RETRY_LO = 4
FF_RESYNC_RETRY_HI = 5
FF_BREAKER_OPEN = 6  # 1 while the cold-path breaker answers Retry-After
FF_BREAKER_RETRY = 7  # ticks
FF_RESUME_WINDOW = 8  # ticks
FF_HOLD_COST = 9  # CPU share per held connection (per tick, of one tick)
FF_HS_COST = 10  # CPU share per handshake
FF_REJ_COST = 11
FF_BACKLOG = 12
FF_OVERLOAD_TICKS = 13
FF_DROP_P = 14  # per-tick drop probability while pinned
FF_CLOSE_P = 15  # per-100 ms churn + lifetime close probability
FF_RA_LO = 16  # admission Retry-After window, ticks
FF_RA_HI = 17
FF_BASE_MS = 18  # handshake latency floor
FF_TICK_MS = 19
FF_TIMEOUT_COST = 20  # share of a handshake's work spent on a client that already gave up
FF_RESYNC_WAITING = 21  # failed resyncs in the resync wheel, waiting to retry (its sum, kept as it changes)
FF_DROP_CLOCK = 22  # 1: a lagging node's quiet ticks are skipped by its drop clock; 0: a binomial each tick
FF_FIELDS = 23

ACCEPTED, REJECTED, TIMED_OUT = 0, 1, 2


# --- borrowed views: arrays without reference counting on the hot paths ---

def _borrow(context, builder, typ, value):
    if isinstance(typ, types.Array):
        source = context.make_array(typ)(context, builder, value)
        view = context.make_array(typ)(context, builder)
        context.populate_array(view, data=source.data, shape=source.shape, strides=source.strides,
                               itemsize=source.itemsize, meminfo=None, parent=None)
        return view._getvalue()
    if isinstance(typ, types.NumPyRandomGeneratorType):
        source = cgutils.create_struct_proxy(typ)(context, builder, value=value)
        view = cgutils.create_struct_proxy(typ)(context, builder)
        view.bit_generator = source.bit_generator
        view.parent = source.parent
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        return view._getvalue()
    if isinstance(typ, types.BaseTuple):
        items = [_borrow(context, builder, t, builder.extract_value(value, j)) for j, t in enumerate(typ.types)]
        return context.make_tuple(builder, typ, items)
    raise TypeError(f"borrowed: arrays, a numpy Generator or tuples of them, not {typ}")


@intrinsic
def borrowed(typingctx, value):
    """The same arrays (or Generator, or tuple of them) without a reference count: a view whose memory
    someone else keeps alive for as long as it is used.

    numba counts references to every array (and to the Generator) a call passes, with atomic operations
    — at entry and exit of every helper call. On the kernel's hot paths that was a quarter of the run
    time at 100 k clients. `run_seconds` holds the real references for the whole call; the body works on
    borrowed views, whose counts are no-ops.
    """
    def codegen(context, builder, signature, args):
        return _borrow(context, builder, signature.args[0], args[0])

    return value(value), codegen


# --- clients as counts: connections taken, released into backoff ---

@njit(cache=True, nogil=True)
def _take(rng, p, i, count, conn, fresh):
    """Remove `count` connections of population p from node i; returns (taken, how many were fresh)."""
    have = conn[p, i]
    if count > have:
        count = have
    if count <= 0:
        return 0, 0
    n_fresh = hyper(rng, fresh[p, i], have, count)
    conn[p, i] -= count
    fresh[p, i] -= n_fresh
    return count, n_fresh


@njit(cache=True, nogil=True)
def _close_picked(rng, p, nodes, count, picks, conn, fresh, out_node, lost, tally, held_cpu):
    """Close picks[i] connections of population p on each of nodes[:count] (churn): their clients back
    off without a hint. held_cpu: the CPU each would still have cost until its close (they are taken a
    second at a time, at the second's start). `_take` written out for a list (numba counts references
    per call)."""
    for j in range(count):
        i = nodes[j]
        closes = min(picks[i], conn[p, i])
        picks[i] = 0
        n_fresh = hyper(rng, fresh[p, i], conn[p, i], closes)
        conn[p, i] -= closes
        fresh[p, i] -= n_fresh
        _note(tally, TALLY_CONN, p, i, conn[p, i], -closes)
        _note(tally, TALLY_FRESH, p, i, fresh[p, i], -n_fresh)
        out_node[ON_CLOSES, i] += closes
        out_node[ON_CPU, i] += closes * held_cpu
        lost[p, 0, 0] += n_fresh
        lost[p, 1, 0] += closes - n_fresh


@njit(cache=True, nogil=True)
def _leave_fresh(rng, p, count, fresh_by_state, taken):
    """`count` fresh clients of population p leave the fleet-wide mix of retry states: how many from each
    state (drawn without replacement) into taken[s]. Returns how many the mix did not hold."""
    n_base = fresh_by_state.shape[1]
    total = 0
    for s in range(n_base):
        total += fresh_by_state[p, s]
        taken[s] = 0
    left = count
    for s in range(n_base):
        if left <= 0:
            break
        k = hyper(rng, fresh_by_state[p, s], total, left)
        total -= fresh_by_state[p, s]
        fresh_by_state[p, s] -= k
        taken[s] = k
        left -= k
    return left


@njit(cache=True, nogil=True)
def _release(rng, p, n_fresh, n_stable, honour, lo, hi, bound, now, fresh_by_state, wheel, tables, taken):
    """Send disconnected clients into backoff: the fresh keep their retry counters (drawn fleet-wide).
    taken: room for a count per policy state (the caller's, so no allocation per release)."""
    n_base = fresh_by_state.shape[1]
    offset = n_base if bound else 0
    stable = n_stable + _leave_fresh(rng, p, n_fresh, fresh_by_state, taken)
    taken[0] += stable  # a stable client backs off from the first state
    for s in range(n_base):
        if taken[s] <= 0:
            continue
        if honour:
            schedule_hint(rng, wheel, tables, p, s + offset, taken[s], lo, hi, now, now)
        else:
            schedule_backoff(rng, wheel, tables, p, s + offset, taken[s], now, now)


@njit(cache=True, nogil=True)
def disconnect(rng, p, i, count, hinted, abnormal, conn, fresh, fresh_by_state, wheel, tables, node_f, fleet_f,
               out_fleet, by_state):
    """Take `count` connections of population p off node i and send their clients into backoff.
    by_state: room for a count per policy state."""
    taken, n_fresh = _take(rng, p, i, count, conn, fresh)
    if taken <= 0:
        return 0
    out_fleet[OF_DISCONNECTS] += taken
    if abnormal:
        out_fleet[OF_ABNORMAL] += taken
    honour = hinted and tables[0][p, PF_HONOURS] > 0.5
    _release(rng, p, n_fresh, taken - n_fresh, honour, np.int64(node_f[NF_HINT_LO, i]),
             np.int64(node_f[NF_HINT_HI, i]), False, np.int64(fleet_f[FF_TICK]), fresh_by_state, wheel, tables,
             by_state)
    return taken


@njit(cache=True, nogil=True)
def drop_nodes(rng, nodes, abnormal, conn, fresh, fresh_by_state, wheel, tables, node_f, fleet_f, out_fleet,
               dropped):
    """Every connection of each of `nodes` cut without a hint (a restart, a kill), their handshake queues
    emptied; what each lost into dropped[j]. One call for a batch: numba's dispatch of `disconnect`'s
    arguments, once per node and population, cost more than the cuts themselves."""
    by_state = np.zeros(fresh_by_state.shape[1], dtype=np.int64)
    for j in range(nodes.shape[0]):
        i = nodes[j]
        lost = 0
        for p in range(conn.shape[0]):
            lost += disconnect(rng, p, i, conn[p, i], False, abnormal, conn, fresh, fresh_by_state, wheel, tables,
                               node_f, fleet_f, out_fleet, by_state)
        node_f[NF_QUEUE, i] = 0.0
        dropped[j] = lost


# --- the load balancer: arrivals split over the nodes in rotation ---

@njit(cache=True, nogil=True)
def _cumulate(values, cum, guide):
    """cum[i] = values[0] + … + values[i], and the guide table of that search; returns the total.

    guide[j] is the first node whose running sum exceeds j/n of the total, so a pick starts its scan
    there: O(1) steps on average instead of a binary search (Chen & Asau's indexed search; the same
    node for the same random number, so the same runs).
    """
    n = values.shape[0]
    acc = 0.0
    for i in range(n):
        acc += values[i]
        cum[i] = acc
    i = 0
    step = acc / n  # (the guide only says where to start looking: its rounding cannot change a pick)
    for j in range(n):
        threshold = j * step
        while i < n - 1 and cum[i] <= threshold:
            i += 1
        guide[j] = i
    return acc


@njit(cache=True, nogil=True)
def _spread(rng, total, weights, weight_sum, cum, guide, out, active, n_active, seen, stamp):
    """Multinomial split of `total` arrivals over nodes by weight (one pick each when fewer than nodes).

    `cum` holds the weights' running sums, `guide` where to start looking (`_cumulate`). Nodes that get
    arrivals join the tick's active list (once:
    seen[i] == stamp); returns its new length. Written out, not in helpers: numba counts references to the
    arrays of every call, and this runs once per arrival.
    """
    n = weights.shape[0]
    if total <= 0 or weight_sum <= 0.0:
        return n_active
    if total < n:
        for _ in range(total):
            u = rng.random() * weight_sum
            lo = guide[min(np.int64(u * n / weight_sum), n - 1)]
            while lo > 0 and cum[lo - 1] > u:  # (only if rounding put u at a bucket's edge)
                lo -= 1
            while cum[lo] <= u and lo < n - 1:  # the first node whose running sum exceeds u
                lo += 1
            out[lo] += 1
            if seen[lo] != stamp:
                seen[lo] = stamp
                active[n_active] = lo
                n_active += 1
        return n_active
    remaining = total
    weight_left = weight_sum
    for i in range(n):
        w = weights[i]
        if w <= 0.0 or remaining <= 0:
            continue
        k = binom(rng, remaining, w / weight_left) if weight_left > w else remaining
        if k > 0:
            out[i] += k
            if seen[i] != stamp:
                seen[i] = stamp
                active[n_active] = i
                n_active += 1
        remaining -= k
        weight_left -= w
    return n_active


# --- calm nodes: a second's arrivals taken at once ---

#: How far inside its room a calm node's share of the arrivals stays — of a tick (its spare handshakes)
#: and of a second (the connections it may gain): this many standard deviations of that share, plus one.
#: A tick or second whose arrivals would break that for any calm node ends the calm for the rest of it.
CALM_SIGMAS = 6.0
#: The share of a calm node's spare handshakes kept back for the connections it gains during the second
#: (each held connection costs CPU too, and those gains are counted only when the second is settled).
CALM_HOLD_MARGIN = 0.25


@njit(cache=True, nogil=True)
def _calm_root(room):
    """For `_calm_limit`: x² (what depends on the room alone), or -1 when not even one arrival fits."""
    if room <= 1.0:
        return -1.0
    x = (-CALM_SIGMAS + np.sqrt(CALM_SIGMAS * CALM_SIGMAS + 4.0 * (room - 1.0))) / 2.0
    return x * x


@njit(cache=True, nogil=True)
def _calm_limit(root, share):
    """The most arrivals k for which a node getting `share` of them stays within its room at CALM_SIGMAS:
    it gets k s ± sqrt(k s), so k s + σ sqrt(k s) + 1 ≤ room, k = x² / s with x the positive root of
    x² + σ x + 1 − room (root: x², `_calm_root`). 0 when not even one fits."""
    if root < 0.0 or share <= 0.0:
        return 0.0
    return root / share


@njit(cache=True, nogil=True)
def _calm_spare(i, conn, fleet_f):
    """Node i's spare handshakes a tick, and what it holds."""
    held = 0
    for p in range(conn.shape[0]):
        held += conn[p, i]
    return (1.0 - held * fleet_f[FF_HOLD_COST]) / fleet_f[FF_HS_COST], held


@njit(cache=True, nogil=True)
def _second_room(i, spare, held, node_f, fleet_f):
    """Node i's room for calm arrivals in a second: the connections it may gain before the margin of its
    spare handshakes is eaten by holding them, or its ceiling reached. (In a tick: its spare handshakes,
    the margin kept back.)"""
    hold_cost = fleet_f[FF_HOLD_COST]
    second = CALM_HOLD_MARGIN * spare * fleet_f[FF_HS_COST] / hold_cost if hold_cost > 0.0 else 1e18
    if node_f[NF_CEILING, i] > 0.0:
        second = min(second, node_f[NF_CEILING, i] - held)
    return second


@njit(cache=True, nogil=True)
def _due_soon(counts, tick, n_ticks):
    """Free clients the wheel holds for ticks [tick, tick + n_ticks): (in all, the most in one tick slot).
    Clients still parked in a block count in all, not in one slot."""
    horizon = horizon_of(counts)
    n_blocks = horizon // BLOCK
    n_base = counts.shape[2] // 2
    total = 0
    most = 0
    for t in range(tick, tick + n_ticks):
        in_slot = 0
        for p in range(counts.shape[0]):
            for s in range(n_base):
                in_slot += counts[p, t % horizon, s]
        total += in_slot
        most = max(most, in_slot)
    for b in range((tick + BLOCK - 1) // BLOCK, (tick + n_ticks - 1) // BLOCK + 1):
        for p in range(counts.shape[0]):
            for s in range(n_base):
                total += counts[p, horizon + b % n_blocks, s]
    return total, most


@njit(cache=True, nogil=True)
def _calm_nodes(n_nodes, conn, node_f, fleet_f, weights, calm_weights, rest_weights, tick_roots, second_roots,
                expected_tick, expected_second):
    """The nodes in rotation that can take this second's arrivals without a visit a tick, and the limits
    that keep that exact. Returns (their weight sum, the rest's, most arrivals a tick, most a second).

    Calm: ready, not one of the nodes consistent hashing piles onto, no token bucket, nothing queued, and
    spare CPU for a few handshakes a tick. Arrivals such a node gets are admitted and served within their
    tick — no refusal, no queue, no wait past the floor — so which tick they came in changes nothing but
    when their connections start to be held, and the second's total split over these nodes by weight at
    its end is the same draw as tick by tick. The limits make it so: a tick whose arrivals would bring any
    calm node within CALM_SIGMAS of its room that tick, or a second whose arrivals would do so for the
    connections it gains (the CPU margin kept back, a ceiling), is not calm (`_calm_limit`).

    A node too loaded for its share of what the wheel says is due this second (expected_tick: the most in
    one tick, expected_second: in all) stays out, so that one hot spot does not end every second's calm.
    tick_roots, second_roots: room for each candidate's `_calm_root`s (what its rooms allow, whatever its
    share), taken once: every second, for every node.
    """
    calm_sum = 0.0
    rest_sum = 0.0
    if (1.0 / fleet_f[FF_HS_COST]) * (1.0 - CALM_HOLD_MARGIN) <= 1.0:
        # Not even an idle node serves more than one handshake a tick beside the margin: none is calm, and
        # the pass below would find that out node by node, every second (small fleets' runs, scaled down).
        for i in range(n_nodes):
            calm_weights[i] = 0.0
            rest_weights[i] = weights[i]
            rest_sum += weights[i]
        return 0.0, rest_sum, 0, 0
    for i in range(n_nodes):
        w = weights[i]
        calm_weights[i] = 0.0
        rest_weights[i] = w
        if w > 0.0 and np.int64(node_f[NF_STATE, i]) == READY and node_f[NF_HOT, i] <= 0.5 \
                and node_f[NF_RATE, i] <= 0.0 and node_f[NF_QUEUE, i] <= 0.0:
            calm_weights[i] = w
            rest_weights[i] = 0.0
            calm_sum += w
        else:
            rest_sum += w
    candidates = calm_sum
    for i in range(n_nodes):
        w = calm_weights[i]
        if w <= 0.0:
            continue
        spare, held = _calm_spare(i, conn, fleet_f)
        tick_roots[i] = _calm_root(spare * (1.0 - CALM_HOLD_MARGIN))
        share = w / candidates
        calm = _calm_limit(tick_roots[i], share) >= max(expected_tick, 1.0)
        if calm:  # (the second's room only when its tick's is enough: most nodes of a busy fleet stop here)
            second_roots[i] = _calm_root(_second_room(i, spare, held, node_f, fleet_f))
            calm = _calm_limit(second_roots[i], share) >= max(expected_second, 1.0)
        if not calm:
            calm_weights[i] = 0.0
            rest_weights[i] = w
            calm_sum -= w
            rest_sum += w
    if calm_sum <= 1e-12 * candidates:
        return 0.0, rest_sum, 0, 0
    per_tick = 1e18
    per_second = 1e18
    for i in range(n_nodes):
        w = calm_weights[i]
        if w <= 0.0:
            continue
        per_tick = min(per_tick, _calm_limit(tick_roots[i], w / calm_sum))
        per_second = min(per_second, _calm_limit(second_roots[i], w / calm_sum))
    return calm_sum, rest_sum, np.int64(per_tick), np.int64(per_second)


@njit(cache=True, nogil=True)
def _settle_calm(rng, upto, stamp, deferred, first_held_sum, calm_weights, calm_sum, cum_calm, guide_calm, got, got_nodes,
                 got_seen, unassigned, last, conn, fresh, tally, node_f, fleet_f, out_node):
    """The calm nodes take the clients that arrived for them since the second began (`deferred[p]` of each
    population): split over them by weight, all admitted and served (what made them calm). They hold
    their connections from tick `upto`; the ticks before that they would have held them since their
    handshakes are charged to CPU at the mean (first_held_sum: the sum of their first held ticks). stamp:
    marks the nodes listed in got_nodes, different for every settlement."""
    n_pop = conn.shape[0]
    total = 0
    for p in range(n_pop):
        total += deferred[p]
        unassigned[p] = deferred[p]
        deferred[p] = 0
    if total <= 0:
        return
    n_got = _spread(rng, total, calm_weights, calm_sum, cum_calm, guide_calm, got, got_nodes, 0, got_seen, stamp)
    _catch_up(got_nodes, n_got, upto, last, conn, node_f, fleet_f, out_node)
    held_ticks = upto - first_held_sum / total
    cpu_each = fleet_f[FF_HS_COST] + fleet_f[FF_HOLD_COST] * held_ticks
    for j in range(n_got):
        i = got_nodes[j]
        g = got[i]
        got[i] = 0
        left = g
        rest = unassigned.sum()
        for p in range(n_pop):
            k = left if p == n_pop - 1 else hyper(rng, unassigned[p], rest, left)
            left -= k
            rest -= unassigned[p]
            unassigned[p] -= k
            if k > 0:
                conn[p, i] += k
                fresh[p, i] += k
                _note(tally, TALLY_CONN, p, i, conn[p, i], k)
                _note(tally, TALLY_FRESH, p, i, fresh[p, i], k)
        out_node[ON_ATTEMPTS, i] += g
        out_node[ON_ACCEPTS, i] += g
        out_node[ON_CPU, i] += g * cpu_each
        if fleet_f[FF_BASE_MS] > out_node[ON_WAIT_MAX, i]:
            out_node[ON_WAIT_MAX, i] = fleet_f[FF_BASE_MS]


# --- churn and ageing: thinning the connected, fleet-wide ---

#: tally[which, p, :] for which = TALLY_CONN (conn) or TALLY_FRESH (fresh): the fleet's total, the largest
#: node's count and that node (-1 when it has shrunk since: the largest is looked for again when needed).
TALLY_CONN, TALLY_FRESH = 0, 1
T_TOTAL, T_LARGEST, T_NODE = 0, 1, 2


@njit(cache=True, nogil=True)
def _tally(values, which, n, tally):
    """Count values[p, :n] (conn or fresh) into tally[which]: what `_thin` needs each 100 ms, kept up to
    date by `_note` instead of a pass over every node."""
    for p in range(values.shape[0]):
        total = 0
        largest = 0
        node = 0
        for i in range(n):
            v = values[p, i]
            total += v
            if v > largest:
                largest = v
                node = i
        tally[which, p, T_TOTAL] = total
        tally[which, p, T_LARGEST] = largest
        tally[which, p, T_NODE] = node


@njit(cache=True, nogil=True)
def _note(tally, which, p, i, value, delta):
    """Node i's count (conn or fresh) of population p changed by delta, to value."""
    if delta == 0:
        return
    tally[which, p, T_TOTAL] += delta
    if delta > 0:
        if value > tally[which, p, T_LARGEST]:
            tally[which, p, T_LARGEST] = value
            tally[which, p, T_NODE] = i
    elif i == tally[which, p, T_NODE]:
        tally[which, p, T_NODE] = -1  # the largest shrank: another node may be the largest now


@njit(cache=True, nogil=True)
def _pick_units(rng, k, values, row, n, largest, picks, touched, n_touched):
    """k distinct units, uniformly, out of those laid out as values[row, i] for nodes i < n; adds to
    picks[i].

    Rejection does both: a node is drawn uniformly and kept with probability (what it has left) ÷ largest,
    so each unit not yet taken is equally likely — no running sums to build. Nodes picked from are
    appended to touched; returns its new length.
    """
    for _ in range(k):
        while True:
            i = integer_below(rng, n)
            left = values[row, i] - picks[i]
            if left > 0 and rng.random() * largest < left:
                if picks[i] == 0:
                    touched[n_touched] = i
                    n_touched += 1
                picks[i] += 1
                break
    return n_touched


@njit(cache=True, nogil=True)
def _thin(rng, values, row, n, q, picks, touched, tally, which):
    """Each of the units in values[row, i] (nodes i < n) is chosen with probability q: the chosen per node into picks, and
    the nodes with any into touched; returns how many nodes that is.

    Exact either way: one fleet-wide binomial and that many distinct units drawn uniformly (a binomial
    thinning conditioned on its total is a uniform subset), or one binomial a node. The first costs about
    n × q × largest draws (its rejections), the second n binomials: the first while q × largest < 1, which
    is what keeps the quiet ticks of a calm fleet from visiting every node. The total and the largest
    come from `tally` (kept by `_note`): only a shrunk largest sends it over the nodes again.
    """
    if q <= 0.0:
        return 0
    total = tally[which, row, T_TOTAL]
    if total <= 0:
        return 0
    if tally[which, row, T_NODE] < 0:
        largest = 0
        node = 0
        for i in range(n):
            if values[row, i] > largest:
                largest = values[row, i]
                node = i
        tally[which, row, T_LARGEST] = largest
        tally[which, row, T_NODE] = node
    largest = tally[which, row, T_LARGEST]
    if q * largest < 1.0:
        return _pick_units(rng, binom(rng, total, q), values, row, n, largest, picks, touched, 0)
    n_touched = 0
    for i in range(n):
        c = binom(rng, values[row, i], q)
        if c > 0:
            picks[i] += c
            touched[n_touched] = i
            n_touched += 1
    return n_touched


@njit(cache=True, nogil=True)
def _churn_and_age(rng, first, n_ticks, ticks_per_bin, ahead, n_nodes, conn, fresh, fresh_by_state, wheel, tables,
                   node_f, fleet_f, out_node, out_fleet, lost, picks, touched, last, tally, aged_by_state, released):
    """Churn and ageing for the 100 ms bins that begin in ticks [first, first + n_ticks), drawn at once:
    each connection closes with their hazard, each fresh one becomes stable (its retry counters reset)
    with their chance. The closed clients back off from their bin's first tick, spread over the bins
    uniformly.

    ahead: drawn at a second's start for the whole second, before its ticks run (every node's ticks
    accounted up to `first`): the closed connections leave at once, and what they would have cost the CPU
    until their bin is charged at the mean. At 100 M clients every node has closes every bin, and a
    binomial a node a bin was most of a run. Otherwise one bin, at its first tick after its admissions: the
    touched nodes' ticks are caught up with what they held before the closes, as tick by tick.
    """
    pop_f = tables[0]
    n_pop = conn.shape[0]
    first_bin = (first + ticks_per_bin - 1) // ticks_per_bin * ticks_per_bin
    bins = 0
    if first_bin < first + n_ticks:
        bins = (first + n_ticks - 1 - first_bin) // ticks_per_bin + 1
    if bins == 0:
        return
    close_q = 1.0 - (1.0 - fleet_f[FF_CLOSE_P]) ** bins
    # A connection closed in bin b would have been held until that bin's first tick, included.
    held_cpu = 0.0
    if ahead:
        held_cpu = fleet_f[FF_HOLD_COST] * (first_bin - first + ticks_per_bin * (bins - 1) / 2.0 + 1.0)
    for p in range(n_pop):
        n_touched = _thin(rng, conn, p, n_nodes, close_q, picks, touched, tally, TALLY_CONN)
        if n_touched > 0:
            if not ahead:
                _catch_up(touched, n_touched, first_bin + 1, last, conn, node_f, fleet_f, out_node)
            _close_picked(rng, p, touched, n_touched, picks, conn, fresh, out_node, lost, tally, held_cpu)
        aged = 0
        fresh_q = 1.0 - (1.0 - pop_f[p, PF_FRESH_Q]) ** bins
        for j in range(_thin(rng, fresh, p, n_nodes, fresh_q, picks, touched, tally, TALLY_FRESH)):
            i = touched[j]
            fresh[p, i] -= picks[i]
            _note(tally, TALLY_FRESH, p, i, fresh[p, i], -picks[i])
            aged += picks[i]
            picks[i] = 0
        if aged > 0:
            _leave_fresh(rng, p, aged, fresh_by_state, aged_by_state)
        n_fresh = lost[p, 0, 0]
        n_stable = lost[p, 1, 0]
        lost[p, 0, 0] = 0
        lost[p, 1, 0] = 0
        out_fleet[OF_DISCONNECTS] += n_fresh + n_stable
        for b in range(bins):
            share = 1.0 / (bins - b)
            k_fresh = binom(rng, n_fresh, share)
            k_stable = binom(rng, n_stable, share)
            n_fresh -= k_fresh
            n_stable -= k_stable
            if k_fresh + k_stable > 0:
                _release(rng, p, k_fresh, k_stable, False, 0, 1, False, first_bin + b * ticks_per_bin,
                         fresh_by_state, wheel, tables, released)


# --- the nodes' steps: quiet ticks, admission and handshakes, drains ---

@njit(cache=True, nogil=True)
def _catch_up(nodes, count, upto, last, conn, node_f, fleet_f, out_node):
    """nodes[:count]: their quiet ticks [last[i], upto) at once.

    Quiet: no arrivals, and either no queue or one the spare CPU works off without the lag reaching the
    heartbeat timeout (no drops to draw). CPU is then pinned while handshakes remain, what the node holds
    after; the bucket refills — the arithmetic `_admit_and_serve` does tick by tick, in closed form.
    A list, not one node a call: numba counts references (atomically) to every array a call passes.
    """
    hs_cost = fleet_f[FF_HS_COST]
    for j in range(count):
        i = nodes[j]
        gap = upto - last[i]
        if gap <= 0:
            continue
        last[i] = upto
        if np.int64(node_f[NF_STATE, i]) == ABSENT:
            continue
        held = 0
        for p in range(conn.shape[0]):
            held += conn[p, i]
        hold = min(held * fleet_f[FF_HOLD_COST], 1.0)
        if node_f[NF_RATE, i] > 0.0:
            node_f[NF_TOKENS, i] = min(node_f[NF_BURST, i], node_f[NF_TOKENS, i] + gap * node_f[NF_RATE, i])
        queue = node_f[NF_QUEUE, i]
        cpu_ticks = gap * hold
        if queue > 0.0 and hold < 1.0:
            per_tick = (1.0 - hold) / hs_cost
            # Ticks that end with work still queued (at 100 %), then the one that empties the queue.
            pinned = min(gap, max(np.int64(np.ceil((queue - 1e-9) / per_tick)) - 1, 0))
            queue -= pinned * per_tick
            cpu_ticks = pinned + (gap - pinned) * hold
            if gap > pinned:
                cpu_ticks += min(queue * hs_cost, 1.0 - hold)
                queue = 0.0
            node_f[NF_QUEUE, i] = queue
        out_node[ON_CPU, i] += cpu_ticks
        spare = 1.0 - held * fleet_f[FF_HOLD_COST]
        node_f[NF_LAG, i] = queue * hs_cost / spare if spare > 0.0 else 1e12


@njit(cache=True, nogil=True)
def _admit_and_serve(rng, nodes, count, group, conn, accepted_pn, outcome, pop_f, node_f, fleet_f, out_node):
    """Step 3 for nodes[:count]: admission (ceiling, token bucket, backlog), the handshake queue and CPU.

    One call for all of them, the body written out in the loop: numba counts references (atomically) to
    every array a call passes, and a call per node per tick made that most of a quiet tick's cost.
    """
    n_pop = conn.shape[0]
    hold_cost = fleet_f[FF_HOLD_COST]
    hs_cost = fleet_f[FF_HS_COST]
    rej_cost = fleet_f[FF_REJ_COST] * hs_cost
    for j in range(count):
        i = nodes[j]
        hot = 1 if node_f[NF_HOT, i] > 0.5 else 0
        held = 0
        arriving = 0
        for p in range(n_pop):
            held += conn[p, i]
            accepted_pn[p, i] = 0
            arriving += group[p, 0, i] + group[p, 1, i]
        cpu = held * hold_cost
        if node_f[NF_RATE, i] > 0.0:
            node_f[NF_TOKENS, i] = min(node_f[NF_BURST, i], node_f[NF_TOKENS, i] + node_f[NF_RATE, i])
        if arriving > 0:
            out_node[ON_ATTEMPTS, i] += arriving
            rejected = 0
            ceiling = node_f[NF_CEILING, i]
            if ceiling > 0.0:
                room = max(ceiling - held - node_f[NF_QUEUE, i], 0.0)
                if arriving > room:
                    rejected = arriving - np.int64(room)
            admitted = arriving - rejected
            if node_f[NF_RATE, i] > 0.0:
                tokens = np.int64(node_f[NF_TOKENS, i])
                if admitted > tokens:
                    rejected += admitted - tokens
                    admitted = tokens
                node_f[NF_TOKENS, i] -= admitted
            space = max(fleet_f[FF_BACKLOG] - node_f[NF_QUEUE, i], 0.0)
            overflow = admitted - np.int64(space) if admitted > space else 0  # SYN dropped: no work
            admitted -= overflow
            service_per_tick = (1.0 - cpu) / hs_cost if cpu < 1.0 else 0.0
            wait_ticks = node_f[NF_QUEUE, i] / service_per_tick if service_per_tick > 0.0 else 1e12
            cpu += rejected * rej_cost
            out_node[ON_REJECTS, i] += rejected
            # Split the node's outcomes over its (population, class) groups: exchangeable here.
            pool = arriving
            rej_left = rejected
            adm_left = admitted
            work = 0.0
            everyone_admitted = rejected == 0 and overflow == 0
            for p in range(n_pop):
                doomed = wait_ticks > pop_f[p, PF_TIMEOUT]
                for c in range(2):
                    a_g = group[p, c, i]
                    last = p == n_pop - 1 and c == 1
                    if everyone_admitted:  # the common case: no split to draw
                        r_g = 0
                        m_g = a_g
                    else:
                        r_g = rej_left if last else hyper(rng, rej_left, pool, a_g)
                        m_g = adm_left if last else hyper(rng, adm_left, pool - rej_left, a_g - r_g)
                    pool -= a_g
                    rej_left -= r_g
                    adm_left -= m_g
                    o_g = a_g - r_g - m_g  # overflowed the backlog
                    outcome[p, c, hot, REJECTED] += r_g
                    if doomed:
                        # The client gives up; the server still does part of the handshake later.
                        work += m_g * fleet_f[FF_TIMEOUT_COST]
                        out_node[ON_WASTED, i] += m_g
                        out_node[ON_TIMEOUTS, i] += m_g + o_g
                        outcome[p, c, hot, TIMED_OUT] += m_g + o_g
                    else:
                        work += m_g
                        accepted_pn[p, i] += m_g
                        out_node[ON_ACCEPTS, i] += m_g
                        out_node[ON_TIMEOUTS, i] += o_g
                        outcome[p, c, hot, ACCEPTED] += m_g
                        outcome[p, c, hot, TIMED_OUT] += o_g
            node_f[NF_QUEUE, i] += work
            wait_ms = wait_ticks * fleet_f[FF_TICK_MS] + fleet_f[FF_BASE_MS]
            if wait_ms > out_node[ON_WAIT_MAX, i]:
                out_node[ON_WAIT_MAX, i] = min(wait_ms, 1e9)
        # Serve the handshake queue with whatever CPU is left.
        queue = node_f[NF_QUEUE, i]
        if queue > 0.0:
            capacity = (1.0 - cpu) / hs_cost if cpu < 1.0 else 0.0
            served = queue if queue < capacity else capacity
            node_f[NF_QUEUE, i] = queue - served
            cpu += served * hs_cost
            if node_f[NF_QUEUE, i] > 1e-9:
                cpu = 1.0
        cpu = min(cpu, 1.0)
        out_node[ON_CPU, i] += cpu
        spare = 1.0 - held * hold_cost
        node_f[NF_LAG, i] = node_f[NF_QUEUE, i] * hs_cost / spare if spare > 0.0 else 1e12


@njit(cache=True, nogil=True)
def _drain_step(rng, i, tick, conn, fresh, fresh_by_state, wheel, tables, node_f, fleet_f, out_node, out_fleet,
                by_state):
    """A draining node closes its rate this tick with a reconnect hint; at its deadline, everything left."""
    n_pop = conn.shape[0]
    node_f[NF_DRAIN_ACC, i] += node_f[NF_DRAIN_RATE, i]
    closes = np.int64(node_f[NF_DRAIN_ACC, i])
    held = 0
    for p in range(n_pop):
        held += conn[p, i]
    if tick >= node_f[NF_DRAIN_DEADLINE, i]:
        closes = held
        out_node[ON_FORCED, i] += held
    if closes > 0 and held > 0:
        closes = min(closes, held)
        node_f[NF_DRAIN_ACC, i] -= closes
        left = closes
        pool = held
        for p in range(n_pop):
            k = left if p == n_pop - 1 else hyper(rng, conn[p, i], pool, left)
            pool -= conn[p, i]
            left -= k
            out_node[ON_CLOSES, i] += disconnect(rng, p, i, k, True, False, conn, fresh, fresh_by_state, wheel,
                                                 tables, node_f, fleet_f, out_fleet, by_state)
    elif held == 0:
        node_f[NF_DRAIN_ACC, i] = 0.0


#: A tick no drop clock reaches (a lagging node that holds nothing has nothing to drop).
NEVER = np.int64(1) << 62


@njit(cache=True, nogil=True)
def _ticks_to_next_drop(rng, held, log_keep):
    """Ticks from now to the next in which at least one of `held` connections drops, each dropping with
    probability 1 − e^log_keep a tick (independently): geometric, 1 − e^(held·log_keep) a tick. NEVER
    when nothing can drop."""
    if held <= 0 or log_keep >= 0.0:
        return NEVER
    ticks = 1.0 + np.floor(np.log1p(-rng.random()) / (held * log_keep))
    return np.int64(ticks) if ticks < 1e15 else NEVER


@njit(cache=True, nogil=True)
def _drops_given_some(rng, held, p_drop, log_keep):
    """How many of `held` connections drop in a tick, each with probability p_drop, given that at least
    one does: the first that drops is at a truncated geometric position j among them, and of the
    held − j after it each drops with p_drop."""
    if held <= 0:
        return 0
    some = -np.expm1(held * log_keep)
    first = 1 + np.int64(np.floor(np.log1p(-rng.random() * some) / log_keep))
    first = min(max(first, 1), held)
    return 1 + binom(rng, held - first, p_drop)


@njit(cache=True, nogil=True)
def _lagging_and_draining(n_nodes, conn, node_f, fleet_f, busy, draining, held_out):
    """The nodes every tick visits: those lagging past the heartbeat timeout (busy) and those draining, in
    node order; each node's connections into held_out. Returns (how many busy, how many draining)."""
    n_pop = conn.shape[0]
    hold_cost = fleet_f[FF_HOLD_COST]
    n_busy = 0
    n_draining = 0
    for i in range(n_nodes):
        held = 0
        for p in range(n_pop):
            held += conn[p, i]
        held_out[i] = held
        state = np.int64(node_f[NF_STATE, i])
        if state == ABSENT:
            continue
        if state == DRAINING:
            draining[n_draining] = i
            n_draining += 1
        spare = 1.0 - held * hold_cost
        if spare <= 0.0 or node_f[NF_QUEUE, i] * fleet_f[FF_HS_COST] / spare > fleet_f[FF_OVERLOAD_TICKS]:
            busy[n_busy] = i
            n_busy += 1
    return n_busy, n_draining


# --- the loop: seconds of ticks ---

@njit(cache=True, nogil=True)
def run_seconds(rng, ticks_per_s, conn, fresh, fresh_by_state, wheel, resync_wheel, tables, node_f, fleet_f,
                node_outs, total_outs, fleet_outs, bin_outs, conn_outs):
    """Advance one second of `ticks_per_s` ticks for each row of the outputs: second j accumulates into
    fleet_outs[j] and bin_outs[j] (the caller zeroes them), writes node_outs[j] whole (zeroed at the
    second's start: the caller's memory may hold an earlier batch) and leaves each node's connections in
    conn_outs[j]; total_outs[j] is the second over the nodes (`_over_the_nodes`). Several seconds in one
    call equal as many calls of one second, draw for draw: the caller batches the seconds in which nothing
    once-a-second happens (`Simulation.steps`).

    A tick touches only its *active* nodes — those with arrivals (calm nodes' aside: they are settled at
    the second's end, `_settle_calm`), a lag past the heartbeat timeout on the ticks their drop clock says
    one of their connections drops (`_ticks_to_next_drop`), or a drain under way. A quiet node's ticks, a
    handshake queue being worked off included, are caught up
    in closed form when it next becomes active, loses a connection to churn, or the call ends
    (`_catch_up`); churn and ageing are drawn fleet-wide (`_thin`), a second ahead (`_churn_and_age`). So a
    tick with nothing happening costs O(wheel cells), not O(nodes), and a busy one O(its events).
    """
    n_pop = conn.shape[0]
    n_nodes = conn.shape[1]
    while n_nodes > 0 and np.int64(node_f[NF_STATE, n_nodes - 1]) == ABSENT:
        n_nodes -= 1  # room kept for nodes not yet added: nothing there to visit (nodes are added in order)
    if node_outs.shape[2] < n_nodes or conn_outs.shape[1] < n_nodes:
        raise ValueError("run_seconds: the outputs have fewer columns than there are nodes")
    n_states = wheel[0].shape[2]
    n_base = n_states // 2
    first_tick = np.int64(fleet_f[FF_TICK])
    # The tick's working arrays; this function owns them, `_run_seconds` borrows them (see `borrowed`).
    counted = (
        np.zeros((n_pop, n_states), dtype=np.int64),  # arrivals
        np.zeros((n_pop, 2), dtype=np.int64),  # by_class
        np.zeros((2, n_nodes), dtype=np.int64),  # node_class
        np.zeros((n_pop, 2, n_nodes), dtype=np.int64),  # group: arrivals at node i by population and class
        np.zeros((n_pop, 2, 2, 3), dtype=np.int64),  # outcome: [p, class, node hot?, kind]
        np.zeros((n_pop, n_nodes), dtype=np.int64),  # accepted_pn
        np.zeros((n_pop, 2, 2), dtype=np.int64),  # lost: [p, fresh/stable, from a hot node?]
        np.zeros(6, dtype=np.int64),  # split
        np.zeros(n_pop, dtype=np.int64),  # unassigned
        np.zeros(n_nodes, dtype=np.int64),  # picks
        np.zeros(n_nodes, dtype=np.int64),  # touched
        np.zeros(n_base, dtype=np.int64),  # aged_by_state
        np.full(n_nodes, first_tick, dtype=np.int64),  # last: each node's ticks before this are accounted
        np.full(n_nodes, -1, dtype=np.int64),  # seen
        np.zeros(n_nodes, dtype=np.int64),  # active
        np.zeros(n_nodes, dtype=np.int64),  # busy
        np.zeros(n_nodes, dtype=np.int64),  # draining
        np.zeros(n_nodes, dtype=np.int64),  # guide_free
        np.zeros(n_nodes, dtype=np.int64),  # guide_hot
        np.arange(n_nodes),  # every node
        np.zeros((2, n_pop, 3), dtype=np.int64),  # tally (of conn and fresh, see `_tally`)
        np.zeros(n_pop, dtype=np.int64),  # held_before
        np.zeros(n_pop, dtype=np.int64),  # fresh_before
        np.zeros(n_base, dtype=np.int64),  # released: by policy state
        np.zeros(n_pop, dtype=np.int64),  # deferred: arrivals at calm nodes not yet settled, by population
        np.zeros(n_pop, dtype=np.int64),  # calm_now: this tick's, by population
        np.zeros(n_nodes, dtype=np.int64),  # got: a settlement's clients by node
        np.zeros(n_nodes, dtype=np.int64),  # got_nodes
        np.full(n_nodes, -1, dtype=np.int64),  # got_seen
        np.zeros(n_nodes, dtype=np.int64),  # guide_calm
        np.zeros(n_nodes, dtype=np.int64),  # guide_rest
        np.zeros(n_nodes, dtype=np.int64),  # drop_due: the tick a lagging node's drop clock says
        np.zeros(n_nodes, dtype=np.int64),  # drop_held: the connections it was drawn for (-1: a plain tick)
    )
    measured = (
        np.zeros((n_pop, n_states), dtype=np.float64),  # start_sum
        node_f[NF_WEIGHT, :n_nodes] * node_f[NF_HOT, :n_nodes],  # hot_weights
        np.zeros(n_nodes),  # cum_free
        np.zeros(n_nodes),  # cum_hot
        np.zeros(n_nodes),  # calm_weights
        np.zeros(n_nodes),  # rest_weights
        np.zeros(n_nodes),  # cum_calm
        np.zeros(n_nodes),  # cum_rest
        np.zeros(n_nodes),  # tick_roots
        np.zeros(n_nodes),  # second_roots
    )
    _run_seconds(borrowed(rng), ticks_per_s, n_nodes, borrowed(conn), borrowed(fresh), borrowed(fresh_by_state),
                 borrowed(wheel), borrowed(resync_wheel), borrowed(tables), borrowed(node_f), borrowed(fleet_f),
                 borrowed(node_outs), borrowed(total_outs), borrowed(fleet_outs), borrowed(bin_outs),
                 borrowed(conn_outs),
                 borrowed(counted), borrowed(measured))


@njit(cache=True, nogil=True)
def _run_seconds(rng, ticks_per_s, n_nodes, conn, fresh, fresh_by_state, wheel, resync_wheel, tables, node_f,
                 fleet_f, node_outs, total_outs, fleet_outs, bin_outs, conn_outs, counted, measured):
    """`run_seconds` on borrowed arrays: every helper call below passes them without counting references."""
    (arrivals, by_class, node_class, group, outcome, accepted_pn, lost, split, unassigned, picks, touched,
     aged_by_state, last, seen, active, busy, draining, guide_free, guide_hot, every_node, tally, held_before,
     fresh_before, released, deferred, calm_now, got, got_nodes, got_seen, guide_calm, guide_rest, drop_due,
     drop_held) = counted
    (start_sum, hot_weights, cum_free, cum_hot, calm_weights, rest_weights, cum_calm, cum_rest, tick_roots,
     second_roots) = measured
    counts, starts = wheel
    pop_f = tables[0]
    n_pop = conn.shape[0]
    n_states = counts.shape[2]
    n_base = n_states // 2
    horizon = horizon_of(counts)
    tick_ms = fleet_f[FF_TICK_MS]
    ticks_per_bin = max(1, np.int64(round(100.0 / tick_ms)))
    n_seconds = node_outs.shape[0]
    log_keep = np.log1p(-fleet_f[FF_DROP_P])  # a connection's log chance of not dropping in a lagging tick

    # The balancer's weights and the node states only change between calls (the engine sets them).
    weights = node_f[NF_WEIGHT, :n_nodes]
    weight_sum = _cumulate(weights, cum_free, guide_free)
    hot_sum = _cumulate(hot_weights, cum_hot, guide_hot)
    _tally(conn, TALLY_CONN, n_nodes, tally)  # (actions between calls change connections)
    _tally(fresh, TALLY_FRESH, n_nodes, tally)
    # Each second starts as a call of its own would: the same lists in the same order, the same draws.
    n_busy, n_draining = _lagging_and_draining(n_nodes, conn, node_f, fleet_f, busy, draining, conn_outs[0])
    for sec in range(n_seconds):
        out_node = node_outs[sec]
        out_node[:, :] = 0.0  # (here, not by the caller: the second's outputs stay in cache while it runs)
        conn_outs[sec, :] = 0
        out_fleet = fleet_outs[sec]
        out_bins = bin_outs[sec]
        # A second's churn at once, unless a node has a connection ceiling: its admissions depend on when
        # in the second its connections close, so then bin by bin (below).
        by_bin = False
        for i in range(n_nodes):
            if node_f[NF_CEILING, i] > 0.0:
                by_bin = True
        if not by_bin:
            _churn_and_age(rng, np.int64(fleet_f[FF_TICK]), ticks_per_s, ticks_per_bin, True, n_nodes, conn, fresh,
                           fresh_by_state, wheel, tables, node_f, fleet_f, out_node, out_fleet, lost, picks, touched,
                           last, tally, aged_by_state, released)
        # A lagging node without arrivals is visited only on the ticks its drop clock says
        # (`_ticks_to_next_drop`), its ticks between caught up in closed form — not when connections close
        # within the second (bin by bin churn): a clock would count connections gone. Each second starts
        # with a plain visit (churn and actions between seconds changed what the nodes hold).
        drop_clock = not by_bin and fleet_f[FF_DROP_CLOCK] > 0.5
        drop_held[:n_nodes] = -1
        for j in range(n_busy):
            drop_due[busy[j]] = np.int64(fleet_f[FF_TICK])
        due_second, due_tick = _due_soon(counts, np.int64(fleet_f[FF_TICK]), ticks_per_s)
        calm_sum, rest_sum, calm_tick_max, calm_second_max = _calm_nodes(
            n_nodes, conn, node_f, fleet_f, weights, calm_weights, rest_weights, tick_roots, second_roots,
            max(due_tick, 2.0 * due_second / ticks_per_s), due_second)
        if calm_sum > 0.0:
            _cumulate(calm_weights, cum_calm, guide_calm)
            _cumulate(rest_weights, cum_rest, guide_rest)
        calm_total = 0  # arrivals deferred to the calm nodes this second …
        first_held_sum = 0.0  # … and the sum of the ticks from which they hold their connections
        for _ in range(ticks_per_s):
            tick = np.int64(fleet_f[FF_TICK])
            if tick % BLOCK == 0:
                b_slot = horizon + (tick // BLOCK) % (horizon // BLOCK)
                parked = 0
                for p in range(n_pop):
                    for s in range(n_states):
                        parked += counts[p, b_slot, s]
                if parked > 0:  # (a call passes the wheel: references counted even when the block is empty)
                    expand_block(rng, wheel, tick)
            slot = tick % horizon
            n_active = 0
            for j in range(n_draining + n_busy):
                i = draining[j] if j < n_draining else busy[j - n_draining]
                if j >= n_draining and drop_clock and drop_due[i] > tick:
                    continue  # lagging, and no drop due: visited if arrivals come
                if seen[i] != tick:  # (a draining node may also be lagging)
                    seen[i] = tick
                    active[n_active] = i
                    n_active += 1

            # 1. Arrivals due this tick, by population and class (free, or bound to the hot nodes).
            total = 0
            now_free = 0
            now_bound = 0
            for p in range(n_pop):
                by_class[p, 0] = 0
                by_class[p, 1] = 0
                for s in range(n_states):
                    a = counts[p, slot, s]
                    arrivals[p, s] = a
                    start_sum[p, s] = starts[p, slot, s]
                    if a:
                        counts[p, slot, s] = 0
                        starts[p, slot, s] = 0.0
                        if s >= n_base:
                            by_class[p, 1] += a
                            now_bound += a
                        else:
                            by_class[p, 0] += a
                            now_free += a
                        total += a
            out_bins[(tick // ticks_per_bin) % out_bins.shape[0]] += total

            # 2. The load balancer: free clients by the weights, bound ones to the hot nodes in rotation.
            if total > 0 and weight_sum <= 0.0:
                # Nobody in rotation: every attempt is refused at once (connection refused, no server work).
                for p in range(n_pop):
                    for s in range(n_states):
                        if arrivals[p, s]:
                            schedule_backoff(rng, wheel, tables, p, s, arrivals[p, s], tick,
                                             start_sum[p, s] / arrivals[p, s])
                            arrivals[p, s] = 0
                out_fleet[OF_REFUSED] += total
                for p in range(n_pop):
                    by_class[p, 0] = 0
                    by_class[p, 1] = 0
                now_free = 0
                now_bound = 0
            # The calm nodes' share of the free arrivals waits for the second's end (`_calm_nodes`), unless
            # this tick is too much for them: then what waits is settled now, and the second goes on without.
            n_calm = 0
            if calm_sum > 0.0 and now_free > 0:
                n_calm = now_free if rest_sum <= 0.0 else binom(rng, now_free, calm_sum / weight_sum)
            if calm_sum > 0.0 and (n_calm > calm_tick_max or calm_total + n_calm > calm_second_max
                                   or (now_bound > 0 and hot_sum <= 0.0)):
                _settle_calm(rng, tick, tick, deferred, first_held_sum, calm_weights, calm_sum, cum_calm, guide_calm, got,
                             got_nodes, got_seen, unassigned, last, conn, fresh, tally, node_f, fleet_f, out_node)
                calm_sum = 0.0
                calm_total = 0
                first_held_sum = 0.0
                n_calm = 0
            if n_calm > 0:
                left = n_calm
                rest = now_free
                for p in range(n_pop):
                    k = left if p == n_pop - 1 else hyper(rng, by_class[p, 0], rest, left)
                    calm_now[p] = k
                    deferred[p] += k
                    left -= k
                    rest -= by_class[p, 0]
                calm_total += n_calm
                first_held_sum += n_calm * (tick + 1.0)
            if calm_sum > 0.0:
                if now_free > n_calm:
                    n_active = _spread(rng, now_free - n_calm, rest_weights, rest_sum, cum_rest, guide_rest,
                                       node_class[0], active, n_active, seen, tick)
            elif now_free > 0:  # (calls are tested for first: numba counts references to each array passed)
                n_active = _spread(rng, now_free, weights, weight_sum, cum_free, guide_free, node_class[0], active,
                                   n_active, seen, tick)
            if now_bound > 0 and hot_sum > 0.0:
                n_active = _spread(rng, now_bound, hot_weights, hot_sum, cum_hot, guide_hot, node_class[1], active,
                                   n_active, seen, tick)
            elif now_bound > 0:
                n_active = _spread(rng, now_bound, weights, weight_sum, cum_free, guide_free, node_class[1], active,
                                   n_active, seen, tick)
            # Each node's arrivals by population: draws without replacement from what the earlier nodes left.
            for c in range(2):
                if n_pop == 1:
                    for j in range(n_active):
                        group[0, c, active[j]] = node_class[c, active[j]]
                    continue
                for p in range(n_pop):
                    unassigned[p] = by_class[p, c] - (calm_now[p] if c == 0 and n_calm > 0 else 0)
                for j in range(n_active):
                    i = active[j]
                    left = node_class[c, i]
                    rest = unassigned.sum()
                    for p in range(n_pop):
                        k = left if p == n_pop - 1 else hyper(rng, unassigned[p], rest, left)
                        group[p, c, i] = k
                        left -= k
                        rest -= unassigned[p]
                        unassigned[p] -= k

            # 3. Every active node: admission, handshake queue, CPU (its quiet ticks first).
            if n_active > 0 or n_calm > 0:
                outcome[:] = 0
            if n_active > 0:
                _catch_up(active, n_active, tick, last, conn, node_f, fleet_f, out_node)
                _admit_and_serve(rng, active, n_active, group, conn, accepted_pn, outcome, pop_f, node_f, fleet_f,
                                 out_node)
                for j in range(n_active):
                    last[active[j]] = tick + 1
            if n_calm > 0:  # admitted, all of them; their connections are counted when the second is settled
                for p in range(n_pop):
                    outcome[p, 0, 0, ACCEPTED] += calm_now[p]

            # 4. Outcomes back to the clients: split each cohort over (node hot?, kind); failures on a hot node
            #    come back bound to the hot nodes, failures elsewhere come back free.
            for p in range(n_pop):
                timeout_ticks = np.int64(pop_f[p, PF_TIMEOUT])
                honours = pop_f[p, PF_HONOURS] > 0.5
                from_delay = pop_f[p, PF_FROM_DELAY] > 0.5
                for c in range(2):
                    pool = by_class[p, c]
                    for s in range(c * n_base, (c + 1) * n_base):
                        a = arrivals[p, s]
                        if a <= 0:
                            continue
                        mean_start = start_sum[p, s] / a
                        left = a
                        rest = pool
                        for j in range(6):
                            h, kind = j // 3, j % 3
                            good = outcome[p, c, h, kind]
                            k = hyper(rng, good, rest, left) if j < 5 else left
                            split[j] = k
                            outcome[p, c, h, kind] -= k
                            rest -= good
                            left -= k
                        pool -= a
                        base = s - c * n_base
                        accepted = split[0] + split[3]
                        if accepted > 0:
                            fresh_by_state[p, base] += accepted
                            if tick - mean_start > fleet_f[FF_RESUME_WINDOW]:
                                out_fleet[OF_RESYNCS] += accepted
                                fleet_f[FF_RESYNC_QUEUE] += accepted
                            else:
                                out_fleet[OF_RESUMES] += accepted
                        for h in range(2):
                            target = base + h * n_base
                            rej = split[h * 3 + REJECTED]
                            if rej > 0:
                                if honours:
                                    nxt = target if from_delay else tables[5][p, target]
                                    schedule_hint(rng, wheel, tables, p, nxt, rej, np.int64(fleet_f[FF_RA_LO]),
                                                  np.int64(fleet_f[FF_RA_HI]), tick, mean_start)
                                else:
                                    schedule_backoff(rng, wheel, tables, p, target, rej, tick, mean_start)
                            timed_out = split[h * 3 + TIMED_OUT]
                            if timed_out > 0:
                                schedule_backoff(rng, wheel, tables, p, target, timed_out, tick + timeout_ticks,
                                                 mean_start)
                for j in range(n_active):
                    i = active[j]
                    if accepted_pn[p, i] > 0:
                        conn[p, i] += accepted_pn[p, i]
                        fresh[p, i] += accepted_pn[p, i]
                        _note(tally, TALLY_CONN, p, i, conn[p, i], accepted_pn[p, i])
                        _note(tally, TALLY_FRESH, p, i, fresh[p, i], accepted_pn[p, i])

            # 5. Planned closes and losses: drains, overload drops, churn, ageing into stable.
            for j in range(n_active):
                i = active[j]
                if np.int64(node_f[NF_STATE, i]) == DRAINING:
                    for p in range(n_pop):
                        held_before[p] = conn[p, i]
                        fresh_before[p] = fresh[p, i]
                    _drain_step(rng, i, tick, conn, fresh, fresh_by_state, wheel, tables, node_f, fleet_f, out_node,
                                out_fleet, released)
                    for p in range(n_pop):
                        _note(tally, TALLY_CONN, p, i, conn[p, i], conn[p, i] - held_before[p])
                        _note(tally, TALLY_FRESH, p, i, fresh[p, i], fresh[p, i] - fresh_before[p])
                if node_f[NF_LAG, i] > fleet_f[FF_OVERLOAD_TICKS]:
                    # CPU pinned with more work queued than the heartbeat timeout: heartbeats are missed and
                    # established connections die without a close frame (1006).
                    hot = 1 if node_f[NF_HOT, i] > 0.5 else 0
                    held = 0
                    for p in range(n_pop):
                        held += conn[p, i]
                    if drop_held[i] < 0 or drop_due[i] < tick or np.int64(node_f[NF_STATE, i]) == DRAINING:
                        left = binom(rng, held, fleet_f[FF_DROP_P])  # a plain tick: each may drop
                    else:
                        # Its drop clock (`_ticks_to_next_drop`): of those it held when drawn, none drop
                        # before drop_due and one at least then; those it accepted since may drop now.
                        left = binom(rng, max(held - drop_held[i], 0), fleet_f[FF_DROP_P])
                        if drop_due[i] == tick:
                            left += _drops_given_some(rng, drop_held[i], fleet_f[FF_DROP_P], log_keep)
                    left = min(left, held)
                    for p in range(n_pop if left > 0 else 0):
                        k = left if p == n_pop - 1 else hyper(rng, conn[p, i], held, left)
                        held -= conn[p, i]
                        left -= k
                        taken, n_fresh = _take(rng, p, i, k, conn, fresh)
                        _note(tally, TALLY_CONN, p, i, conn[p, i], -taken)
                        _note(tally, TALLY_FRESH, p, i, fresh[p, i], -n_fresh)
                        out_node[ON_DROPS, i] += taken
                        out_fleet[OF_ABNORMAL] += taken
                        lost[p, 0, hot] += n_fresh
                        lost[p, 1, hot] += taken - n_fresh
            if by_bin and tick % ticks_per_bin == 0:
                _churn_and_age(rng, tick, 1, ticks_per_bin, False, n_nodes, conn, fresh, fresh_by_state, wheel,
                               tables, node_f, fleet_f, out_node, out_fleet, lost, picks, touched, last, tally,
                               aged_by_state, released)
            # Everyone who lost a connection this tick without a hint backs off, one draw per cohort.
            for p in range(n_pop):
                for h in range(2):
                    if lost[p, 0, h] + lost[p, 1, h] > 0:
                        out_fleet[OF_DISCONNECTS] += lost[p, 0, h] + lost[p, 1, h]
                        _release(rng, p, lost[p, 0, h], lost[p, 1, h], False, 0, 1, h == 1, tick, fresh_by_state,
                                 wheel, tables, released)
                        lost[p, 0, h] = 0
                        lost[p, 1, h] = 0

            # 6. The resync backend: clients past the resume window rebuild state, at a finite rate.
            if fleet_f[FF_RESYNC_QUEUE] > 0.0 or resync_wheel[tick % resync_wheel.shape[0]] > 0:
                _serve_resyncs(rng, tick, resync_wheel, fleet_f, out_fleet)

            # A zero delay drawn during this tick landed in its slot, already emptied: it means the next tick.
            following = (tick + 1) % horizon
            for p in range(n_pop):
                for s in range(n_states):
                    late = counts[p, slot, s]
                    if late:
                        counts[p, following, s] += late
                        starts[p, following, s] += starts[p, slot, s]
                        counts[p, slot, s] = 0
                        starts[p, slot, s] = 0.0
            # Who stays on the list: a node lagging past the heartbeat timeout (it drops connections) — those
            # not visited this tick (their clocks run on), and those visited that still lag, with a new clock.
            # An extra active tick is harmless: one with nothing to do equals a caught-up one. Arrivals are
            # cleared.
            still = 0
            for j in range(n_busy):
                i = busy[j]
                if seen[i] != tick:
                    busy[still] = i
                    still += 1
            n_busy = still
            for j in range(n_active):
                i = active[j]
                node_class[0, i] = 0
                node_class[1, i] = 0
                for p in range(n_pop):
                    group[p, 0, i] = 0
                    group[p, 1, i] = 0
                if node_f[NF_LAG, i] > fleet_f[FF_OVERLOAD_TICKS]:
                    busy[n_busy] = i
                    n_busy += 1
                    if drop_clock:
                        held = 0
                        for p in range(n_pop):
                            held += conn[p, i]
                        drop_due[i] = tick + _ticks_to_next_drop(rng, held, log_keep)
                        drop_held[i] = held
                else:
                    drop_held[i] = -1  # (lagging again later, it starts with a plain tick)
            fleet_f[FF_TICK] += 1.0
        end_tick = np.int64(fleet_f[FF_TICK])
        _catch_up(every_node, n_nodes, end_tick, last, conn, node_f, fleet_f, out_node)
        if calm_total > 0:
            _settle_calm(rng, end_tick, -2 - end_tick, deferred, first_held_sum, calm_weights, calm_sum, cum_calm, guide_calm, got,
                         got_nodes, got_seen, unassigned, last, conn, fresh, tally, node_f, fleet_f, out_node)
        n_busy, n_draining = _lagging_and_draining(n_nodes, conn, node_f, fleet_f, busy, draining, conn_outs[sec])
        out_fleet[OF_RESYNC_BACKLOG] = fleet_f[FF_RESYNC_QUEUE] + fleet_f[FF_RESYNC_WAITING]
        _over_the_nodes(out_node, ticks_per_s, total_outs[sec])


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _over_the_nodes(out_node, ticks_per_s, total_out):
    """The second's end: each node's CPU as a share of the second (it was summed over the ticks), and the
    second over the nodes — counts summed, CPU and handshake wait their largest (the hottest node's).
    Here, while the second's outputs are in cache: summed afterwards over a batch's megabytes, they cost
    as much as a quiet second's ticks. (Sums in any order: the counts are whole numbers, so exact.)"""
    n = out_node.shape[1]
    for i in range(n):
        out_node[ON_CPU, i] /= ticks_per_s
    for f in range(ON_FIELDS):
        acc = 0.0
        if f in (ON_CPU, ON_WAIT_MAX):
            for i in range(n):
                acc = max(acc, out_node[f, i])
        else:
            for i in range(n):
                acc += out_node[f, i]
        total_out[f] = acc


# --- the resync backend ---

@njit(cache=True, nogil=True)
def _serve_resyncs(rng, tick, resync_wheel, fleet_f, out_fleet):
    horizon = resync_wheel.shape[0]
    r_slot = tick % horizon
    if resync_wheel[r_slot] > 0:
        fleet_f[FF_RESYNC_QUEUE] += resync_wheel[r_slot]
        fleet_f[FF_RESYNC_WAITING] -= resync_wheel[r_slot]
        resync_wheel[r_slot] = 0
    queue = fleet_f[FF_RESYNC_QUEUE]
    if queue <= 0.0:
        return
    per_tick = fleet_f[FF_RESYNC_PER_TICK]
    if per_tick <= 0.0:
        out_fleet[OF_RESYNC_DONE] += queue
        fleet_f[FF_RESYNC_QUEUE] = 0.0
        return
    served = min(queue, per_tick)
    out_fleet[OF_RESYNC_DONE] += served
    queue -= served
    breaker_open = fleet_f[FF_BREAKER_OPEN] > 0.5
    # What cannot be served within the timeout fails now; an open breaker answers everyone Retry-After.
    keep = per_tick * fleet_f[FF_RESYNC_TIMEOUT]
    failing = np.int64(queue) if breaker_open else (np.int64(queue - keep) if queue > keep else 0)
    if failing > 0:
        queue -= failing
        out_fleet[OF_RESYNC_FAIL] += failing
        if breaker_open:
            lo = np.int64(fleet_f[FF_BREAKER_RETRY])
            hi = lo + np.int64(1000.0 / fleet_f[FF_TICK_MS])
        else:
            lo = np.int64(fleet_f[FF_RESYNC_RETRY_LO])
            hi = max(lo + 1, np.int64(fleet_f[FF_RESYNC_RETRY_HI]))
        width = hi - lo
        remaining = failing
        for j in range(width):
            if remaining <= 0:
                break
            k = remaining if j == width - 1 else binom(rng, remaining, 1.0 / (width - j))
            resync_wheel[(tick + lo + j) % horizon] += k
            fleet_f[FF_RESYNC_WAITING] += k
            remaining -= k
    fleet_f[FF_RESYNC_QUEUE] = queue
