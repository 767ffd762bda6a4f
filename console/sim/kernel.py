"""The simulator's compiled inner loop: counts of clients, never one record per client.

Clients that share a population and a policy state are exchangeable, so the engine keeps counts:

* offline clients sit in a timing wheel `wheel[p, s, slot]` — population p, policy state s (the state they
  will retry from if this attempt fails), tick slot of their next attempt — with `wheel_start` holding the
  sum of their offline-start ticks (so a cell knows its mean time offline: resume or full resync);
* connected clients are counted per node and population (`conn[p, i]`), with the share not yet stable
  (`fresh[p, i]`) whose retry counters survive; the counters' distribution is kept fleet-wide
  (`fresh_by_state[p, s]`), an approximation: a node's fresh clients are assumed to have the fleet's mix.

Each tick draws arrivals from the wheel, splits them over nodes (load balancer), runs every node's
admission, handshake queue and CPU, and schedules the failures back into the wheel by splitting each
cohort over its policy's delay segments (multinomial, then uniform within a segment — one binomial per
tick slot, or one draw per client when that is cheaper). Cost per tick is O(nodes + occupied cells), not
O(clients). Hypergeometric splits are drawn as sequential binomials (exact in the large-population limit).

Everything here is pure: arrays and one numpy Generator in, arrays out. `nogil` lets the server run the
simulation in a worker thread without stalling its event loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# --- node state codes (mirror console.protocol.NodeState; ABSENT = not yet provisioned into the list) ---
READY, DRAINING, DRAINED, RESTARTING, DOWN, PROVISIONING, ABSENT = 0, 1, 2, 3, 4, 5, 6

# --- per-node float parameters/state: node_f[FIELD, i] ---
NF_TOKENS = 0  # token bucket level
NF_RATE = 1  # tokens per tick (0 = no bucket)
NF_BURST = 2
NF_CEILING = 3  # connection ceiling (0 = none)
NF_QUEUE = 4  # handshakes queued (float: service is fractional per tick)
NF_DRAIN_RATE = 5  # closes per tick while draining
NF_DRAIN_ACC = 6  # fractional close accumulator
NF_DRAIN_DEADLINE = 7  # tick at which whatever remains is force-closed
NF_HINT_LO = 8  # reconnect hint window, ticks
NF_HINT_HI = 9
NF_WEIGHT = 10  # load balancer weight (0 = out of rotation)
NF_PINNED = 11  # consecutive ticks at 100 % CPU
NF_STATE = 12
NF_FIELDS = 13

# --- per-node per-second outputs: out_node[FIELD, i] ---
ON_ATTEMPTS, ON_ACCEPTS, ON_REJECTS, ON_TIMEOUTS, ON_DROPS, ON_CLOSES, ON_CPU, ON_WAIT_MAX, ON_WASTED = range(
    9
)
ON_FORCED = 9  # closes forced at a drain's deadline (also counted in ON_CLOSES)
ON_FIELDS = 10

# --- fleet per-second outputs: out_fleet[FIELD] ---
OF_RESUMES, OF_RESYNCS, OF_RESYNC_FAIL, OF_DISCONNECTS, OF_ABNORMAL, OF_RESYNC_DONE, OF_REFUSED = range(7)
OF_FIELDS = 7

# --- fleet parameters/state: fleet_f[FIELD] ---
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
FF_CLOSE_P = 15  # per-100 ms churn + lifetime close probability (stable connections)
FF_RA_LO = 16  # admission Retry-After window, ticks
FF_RA_HI = 17
FF_BASE_MS = 18  # handshake latency floor
FF_TICK_MS = 19
FF_TIMEOUT_COST = 20  # share of a handshake's work spent on a client that already gave up
FF_FIELDS = 21

# --- population constants: pop_f[p, FIELD] ---
PF_HONOURS, PF_TIMEOUT, PF_FRESH_Q, PF_MAX_STATE, PF_FROM_DELAY = range(5)
PF_FIELDS = 5

#: The hot path's split: below this many clients, draw one delay each; above, one binomial per slot.
_PER_CLIENT_BELOW = 1


@njit(cache=True, nogil=True)
def _binom(rng, n, p):
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    return rng.binomial(n, p)


@njit(cache=True, nogil=True)
def _hyper(rng, good, total, draws):
    """How many of `draws` taken from `total` are among `good` (binomial approximation, clipped)."""
    if draws <= 0 or good <= 0:
        return 0
    if draws >= total:
        return good
    k = _binom(rng, draws, good / total)
    bad = total - good
    low = draws - bad if draws > bad else 0
    if k < low:
        k = low
    if k > good:
        k = good
    return k


#: Ticks per block of the wheel's coarse level. A wide uniform spread is split over blocks first (one binomial
#: per block) and each block is split over its ticks when its time comes (shared by everything placed in it),
#: so placing a cohort costs O(width / BLOCK), not O(width). The blocks live in the same array, after the
#: tick slots: wheel[..., :horizon] are ticks, wheel[..., horizon:] are blocks (horizon is a multiple of BLOCK).
BLOCK = 10


@njit(cache=True, nogil=True)
def wheel_horizon(wheel):
    return wheel.shape[2] * BLOCK // (BLOCK + 1)


@njit(cache=True, nogil=True)
def _place_ticks(rng, wheel, wheel_start, p, s, lo, hi, count, start_tick, horizon):
    """`count` clients uniformly over absolute ticks [lo, hi), tick by tick."""
    width = hi - lo
    if width <= 1:
        slot = lo % horizon
        wheel[p, s, slot] += count
        wheel_start[p, s, slot] += count * start_tick
        return
    if count < width:
        for _ in range(count):
            slot = (lo + rng.integers(0, width)) % horizon
            wheel[p, s, slot] += 1
            wheel_start[p, s, slot] += start_tick
        return
    remaining = count
    for j in range(width):
        if remaining <= 0:
            break
        k = remaining if j == width - 1 else _binom(rng, remaining, 1.0 / (width - j))
        if k > 0:
            slot = (lo + j) % horizon
            wheel[p, s, slot] += k
            wheel_start[p, s, slot] += k * start_tick
            remaining -= k


@njit(cache=True, nogil=True)
def _place_fixed(rng, wheel, wheel_start, p, s, lo, hi, count, start_tick, base_tick):
    """`count` clients of state s uniformly over absolute ticks [lo, hi), via blocks when that is cheaper."""
    if count <= 0:
        return
    horizon = wheel_horizon(wheel)
    n_blocks = horizon // BLOCK
    width = hi - lo
    first = (lo + BLOCK - 1) // BLOCK
    if first * BLOCK <= base_tick:  # never into a block whose time has come (it would not be split)
        first = base_tick // BLOCK + 1
    last = hi // BLOCK
    full = last - first
    if full < 2 or count <= full + 2 * BLOCK:
        _place_ticks(rng, wheel, wheel_start, p, s, lo, hi, count, start_tick, horizon)
        return
    head = first * BLOCK - lo
    mid = full * BLOCK
    k_head = _binom(rng, count, head / width)
    k_mid = _binom(rng, count - k_head, mid / (width - head)) if width > head else 0
    k_tail = count - k_head - k_mid
    if k_head > 0:
        _place_ticks(rng, wheel, wheel_start, p, s, lo, first * BLOCK, k_head, start_tick, horizon)
    if k_tail > 0:
        _place_ticks(rng, wheel, wheel_start, p, s, last * BLOCK, hi, k_tail, start_tick, horizon)
    remaining = k_mid
    for j in range(full):
        if remaining <= 0:
            break
        k = remaining if j == full - 1 else _binom(rng, remaining, 1.0 / (full - j))
        if k > 0:
            slot = horizon + (first + j) % n_blocks
            wheel[p, s, slot] += k
            wheel_start[p, s, slot] += k * start_tick
            remaining -= k


@njit(cache=True, nogil=True)
def _expand_block(rng, wheel, wheel_start, tick):
    """At a block's first tick: split each cohort parked in it over the block's ticks."""
    horizon = wheel_horizon(wheel)
    slot = horizon + (tick // BLOCK) % (horizon // BLOCK)
    for p in range(wheel.shape[0]):
        for s in range(wheel.shape[1]):
            count = wheel[p, s, slot]
            if count <= 0:
                continue
            start_sum = wheel_start[p, s, slot]
            wheel[p, s, slot] = 0
            wheel_start[p, s, slot] = 0.0
            mean_start = start_sum / count
            _place_ticks(rng, wheel, wheel_start, p, s, tick, tick + BLOCK, count, mean_start, horizon)


@njit(cache=True, nogil=True)
def _place(
    rng, wheel, wheel_start, p, entry_state, from_delay, state_of_delay, a, b, count, base_tick, start_tick
):
    """Put `count` clients uniformly over tick offsets [a, b) from base_tick into the wheel.

    When the state a client retries from depends on the delay it slept (decorrelated), the range is cut
    into runs of equal next state, and each run gets its binomial share.
    """
    if count <= 0:
        return
    if b <= a + 1:
        s = state_of_delay[p, a] if from_delay else entry_state
        _place_fixed(
            rng, wheel, wheel_start, p, s, base_tick + a, base_tick + a + 1, count, start_tick, base_tick
        )
        return
    if not from_delay:
        _place_fixed(
            rng,
            wheel,
            wheel_start,
            p,
            entry_state,
            base_tick + a,
            base_tick + b,
            count,
            start_tick,
            base_tick,
        )
        return
    remaining = count
    run_start = a
    while run_start < b and remaining > 0:
        s = state_of_delay[p, run_start]
        run_end = run_start + 1
        while run_end < b and state_of_delay[p, run_end] == s:
            run_end += 1
        k = remaining if run_end >= b else _binom(rng, remaining, (run_end - run_start) / (b - run_start))
        _place_fixed(
            rng,
            wheel,
            wheel_start,
            p,
            s,
            base_tick + run_start,
            base_tick + run_end,
            k,
            start_tick,
            base_tick,
        )
        remaining -= k
        run_start = run_end


@njit(cache=True, nogil=True)
def _schedule_backoff(
    rng,
    wheel,
    wheel_start,
    pop_f,
    seg_w,
    seg_a,
    seg_b,
    seg_n,
    state_next,
    state_of_delay,
    p,
    state,
    count,
    base_tick,
    start_tick,
):
    """Clients of population p that failed (or were dropped) in `state`: sleep one policy delay."""
    if count <= 0:
        return
    from_delay = pop_f[p, PF_FROM_DELAY] > 0.5
    n_seg = seg_n[p, state]
    entry = state_next[p, state]
    remaining = count
    weight_left = 1.0
    for k in range(n_seg):
        w = seg_w[p, state, k]
        c = remaining if k == n_seg - 1 else _binom(rng, remaining, w / weight_left) if weight_left > 0 else 0
        weight_left -= w
        remaining -= c
        _place(
            rng,
            wheel,
            wheel_start,
            p,
            entry,
            from_delay,
            state_of_delay,
            seg_a[p, state, k],
            seg_b[p, state, k],
            c,
            base_tick,
            start_tick,
        )


@njit(cache=True, nogil=True)
def _schedule_hint(rng, wheel, wheel_start, state_of_delay, p, state, count, lo, hi, base_tick, start_tick):
    """Clients told when to come back (a reconnect hint or Retry-After): uniform over [lo, hi) ticks."""
    _place(
        rng,
        wheel,
        wheel_start,
        p,
        state,
        False,
        state_of_delay,
        lo,
        max(hi, lo + 1),
        count,
        base_tick,
        start_tick,
    )


@njit(cache=True, nogil=True)
def _take(rng, p, i, count, conn, fresh):
    """Remove `count` connections of population p from node i; returns how many of them were fresh."""
    have = conn[p, i]
    if count > have:
        count = have
    if count <= 0:
        return 0, 0
    n_fresh = _hyper(rng, fresh[p, i], have, count)
    conn[p, i] -= count
    fresh[p, i] -= n_fresh
    return count, n_fresh


@njit(cache=True, nogil=True)
def _release(
    rng,
    p,
    n_fresh,
    n_stable,
    honour,
    lo,
    hi,
    tick,
    fresh_by_state,
    wheel,
    wheel_start,
    pop_f,
    seg_w,
    seg_a,
    seg_b,
    seg_n,
    state_next,
    state_of_delay,
):
    """Send disconnected clients into backoff: the fresh keep their retry counters (drawn fleet-wide)."""
    n_states = fresh_by_state.shape[1]
    total_fresh = 0
    for s in range(n_states):
        total_fresh += fresh_by_state[p, s]
    left = n_fresh
    for s in range(n_states):
        if left <= 0:
            break
        k = _hyper(rng, fresh_by_state[p, s], total_fresh, left)
        total_fresh -= fresh_by_state[p, s]
        fresh_by_state[p, s] -= k
        left -= k
        if honour:
            _schedule_hint(rng, wheel, wheel_start, state_of_delay, p, s, k, lo, hi, tick, tick)
        else:
            _schedule_backoff(
                rng,
                wheel,
                wheel_start,
                pop_f,
                seg_w,
                seg_a,
                seg_b,
                seg_n,
                state_next,
                state_of_delay,
                p,
                s,
                k,
                tick,
                tick,
            )
    stable = n_stable + left
    if honour:
        _schedule_hint(rng, wheel, wheel_start, state_of_delay, p, 0, stable, lo, hi, tick, tick)
    else:
        _schedule_backoff(
            rng,
            wheel,
            wheel_start,
            pop_f,
            seg_w,
            seg_a,
            seg_b,
            seg_n,
            state_next,
            state_of_delay,
            p,
            0,
            stable,
            tick,
            tick,
        )


@njit(cache=True, nogil=True)
def disconnect(
    rng,
    p,
    i,
    count,
    hinted,
    abnormal,
    conn,
    fresh,
    fresh_by_state,
    wheel,
    wheel_start,
    pop_f,
    seg_w,
    seg_a,
    seg_b,
    seg_n,
    state_next,
    state_of_delay,
    node_f,
    fleet_f,
    out_fleet,
):
    """Take `count` connections of population p off node i and send their clients into backoff."""
    taken, n_fresh = _take(rng, p, i, count, conn, fresh)
    if taken <= 0:
        return 0
    out_fleet[OF_DISCONNECTS] += taken
    if abnormal:
        out_fleet[OF_ABNORMAL] += taken
    honour = hinted and pop_f[p, PF_HONOURS] > 0.5
    _release(
        rng,
        p,
        n_fresh,
        taken - n_fresh,
        honour,
        np.int64(node_f[NF_HINT_LO, i]),
        np.int64(node_f[NF_HINT_HI, i]),
        np.int64(fleet_f[FF_TICK]),
        fresh_by_state,
        wheel,
        wheel_start,
        pop_f,
        seg_w,
        seg_a,
        seg_b,
        seg_n,
        state_next,
        state_of_delay,
    )
    return taken


@njit(cache=True, nogil=True)
def run_ticks(
    rng,
    n_ticks,
    conn,
    fresh,
    fresh_by_state,
    wheel,
    wheel_start,
    resync_wheel,
    pop_f,
    seg_w,
    seg_a,
    seg_b,
    seg_n,
    state_next,
    state_of_delay,
    node_f,
    fleet_f,
    out_node,
    out_fleet,
    out_bins,
):
    """Advance `n_ticks` ticks. Outputs accumulate into out_* (the caller zeroes them per frame)."""
    n_pop = conn.shape[0]
    n_nodes = conn.shape[1]
    n_states = wheel.shape[1]
    horizon = wheel_horizon(wheel)
    tick_ms = fleet_f[FF_TICK_MS]
    ticks_per_bin = max(1, np.int64(round(100.0 / tick_ms)))
    arrivals_ps = np.zeros((n_pop, n_states), dtype=np.int64)
    start_ps = np.zeros((n_pop, n_states), dtype=np.float64)
    node_arrivals = np.zeros(n_nodes, dtype=np.int64)
    pop_node = np.zeros((n_pop, n_nodes), dtype=np.int64)
    cum_weight = np.zeros(n_nodes, dtype=np.float64)
    outcome = np.zeros((n_pop, 3), dtype=np.int64)  # accepted, rejected, timed out (with work or not)
    doomed_pn = np.zeros((n_pop, n_nodes), dtype=np.int64)
    accepted_pn = np.zeros((n_pop, n_nodes), dtype=np.int64)
    rejected_pn = np.zeros((n_pop, n_nodes), dtype=np.int64)
    lost = np.zeros((n_pop, 2), dtype=np.int64)  # this tick's unhinted losses: fresh, stable
    hold_cost = fleet_f[FF_HOLD_COST]
    hs_cost = fleet_f[FF_HS_COST]
    rej_cost = fleet_f[FF_REJ_COST] * hs_cost
    backlog = fleet_f[FF_BACKLOG]
    resume_window = fleet_f[FF_RESUME_WINDOW]

    for _ in range(n_ticks):
        tick = np.int64(fleet_f[FF_TICK])
        slot = tick % horizon
        bin_index = (tick // ticks_per_bin) % out_bins.shape[0]

        if tick % BLOCK == 0:
            _expand_block(rng, wheel, wheel_start, tick)

        # 1. Arrivals due this tick.
        total = 0
        for p in range(n_pop):
            for s in range(n_states):
                a = wheel[p, s, slot]
                arrivals_ps[p, s] = a
                start_ps[p, s] = wheel_start[p, s, slot]
                if a:
                    wheel[p, s, slot] = 0
                    wheel_start[p, s, slot] = 0.0
                    total += a
        out_bins[bin_index] += total

        # 2. Load balancer: split arrivals over the nodes in rotation.
        weight_sum = 0.0
        for i in range(n_nodes):
            weight_sum += node_f[NF_WEIGHT, i]
            cum_weight[i] = weight_sum
            node_arrivals[i] = 0
        if total > 0 and weight_sum <= 0.0:
            # Nobody in rotation: every attempt is refused at once (connection refused, no server work).
            for p in range(n_pop):
                for s in range(n_states):
                    _schedule_backoff(
                        rng,
                        wheel,
                        wheel_start,
                        pop_f,
                        seg_w,
                        seg_a,
                        seg_b,
                        seg_n,
                        state_next,
                        state_of_delay,
                        p,
                        s,
                        arrivals_ps[p, s],
                        tick,
                        start_ps[p, s] / max(arrivals_ps[p, s], 1),
                    )
                    arrivals_ps[p, s] = 0
            out_fleet[OF_REFUSED] += total
            total = 0
        elif total > 0:
            if total < n_nodes:
                for _k in range(total):
                    u = rng.random() * weight_sum
                    lo, hi = 0, n_nodes - 1
                    while lo < hi:
                        mid = (lo + hi) // 2
                        if cum_weight[mid] > u:
                            hi = mid
                        else:
                            lo = mid + 1
                    node_arrivals[lo] += 1
            else:
                remaining = total
                weight_left = weight_sum
                for i in range(n_nodes):
                    w = node_f[NF_WEIGHT, i]
                    if w <= 0.0 or remaining <= 0:
                        continue
                    k = _binom(rng, remaining, w / weight_left) if weight_left > w else remaining
                    node_arrivals[i] = k
                    remaining -= k
                    weight_left -= w
        # Split each node's arrivals by population (populations differ in timeouts and hints).
        pop_total = np.zeros(n_pop, dtype=np.int64)
        for p in range(n_pop):
            for s in range(n_states):
                pop_total[p] += arrivals_ps[p, s]
        for i in range(n_nodes):
            left = node_arrivals[i]
            pool = total
            for p in range(n_pop):
                k = left if p == n_pop - 1 else _hyper(rng, pop_total[p], pool, left)
                pop_node[p, i] = k
                left -= k
                pool -= pop_total[p]

        # 3. Every node: admission, handshake queue, CPU, overload drops, drain closes.
        for p in range(n_pop):
            outcome[p, 0] = 0
            outcome[p, 1] = 0
            outcome[p, 2] = 0
        for i in range(n_nodes):
            state = np.int64(node_f[NF_STATE, i])
            if state == ABSENT:
                continue
            held = 0
            for p in range(n_pop):
                held += conn[p, i]
            arrivals = node_arrivals[i]
            cpu = held * hold_cost
            if node_f[NF_RATE, i] > 0.0:
                node_f[NF_TOKENS, i] = min(node_f[NF_BURST, i], node_f[NF_TOKENS, i] + node_f[NF_RATE, i])
            wait_ticks = 0.0
            if arrivals > 0:
                out_node[ON_ATTEMPTS, i] += arrivals
                rejected = 0
                ceiling = node_f[NF_CEILING, i]
                if ceiling > 0.0:
                    room = ceiling - held - node_f[NF_QUEUE, i]
                    if room < 0.0:
                        room = 0.0
                    if arrivals > room:
                        rejected = arrivals - np.int64(room)
                admitted = arrivals - rejected
                if node_f[NF_RATE, i] > 0.0:
                    tokens = np.int64(node_f[NF_TOKENS, i])
                    if admitted > tokens:
                        rejected += admitted - tokens
                        admitted = tokens
                    node_f[NF_TOKENS, i] -= admitted
                overflow = 0
                space = backlog - node_f[NF_QUEUE, i]
                if space < 0.0:
                    space = 0.0
                if admitted > space:
                    overflow = admitted - np.int64(space)  # SYN dropped: the client times out, no work
                    admitted -= overflow
                service_per_tick = (1.0 - cpu) / hs_cost if cpu < 1.0 else 0.0
                if service_per_tick > 0.0:
                    wait_ticks = node_f[NF_QUEUE, i] / service_per_tick
                else:
                    wait_ticks = 1e12
                # The queue holds work, in handshakes: a client that will have given up by the time the
                # server reaches it costs only the part of the handshake done before the server notices.
                doomed_any = False
                for p in range(n_pop):
                    if wait_ticks > pop_f[p, PF_TIMEOUT]:
                        doomed_any = True
                node_f[NF_QUEUE, i] += admitted * (fleet_f[FF_TIMEOUT_COST] if doomed_any else 1.0)
                cpu += rejected * rej_cost
                out_node[ON_REJECTS, i] += rejected
                # Attribute outcomes to populations (exchangeable within a node and tick).
                pool = arrivals
                rej_left = rejected
                adm_left = admitted
                for p in range(n_pop):
                    a_p = pop_node[p, i]
                    r_p = rej_left if p == n_pop - 1 else _hyper(rng, a_p, pool, rej_left)
                    rest = a_p - r_p
                    m_p = adm_left if p == n_pop - 1 else _hyper(rng, rest, pool - rej_left, adm_left)
                    pool -= a_p
                    rej_left -= r_p
                    adm_left -= m_p
                    o_p = rest - m_p  # overflowed the backlog
                    if wait_ticks > pop_f[p, PF_TIMEOUT]:
                        doomed_pn[p, i] = m_p
                        accepted_pn[p, i] = 0
                        out_node[ON_WASTED, i] += m_p
                        out_node[ON_TIMEOUTS, i] += m_p + o_p
                    else:
                        doomed_pn[p, i] = 0
                        accepted_pn[p, i] = m_p
                        out_node[ON_ACCEPTS, i] += m_p
                        out_node[ON_TIMEOUTS, i] += o_p
                    rejected_pn[p, i] = r_p
                    doomed_pn[p, i] += o_p
                    outcome[p, 0] += accepted_pn[p, i]
                    outcome[p, 1] += r_p
                    outcome[p, 2] += doomed_pn[p, i]
                wait_ms = wait_ticks * tick_ms + fleet_f[FF_BASE_MS]
                if wait_ms > out_node[ON_WAIT_MAX, i]:
                    out_node[ON_WAIT_MAX, i] = min(wait_ms, 1e9)
            else:
                for p in range(n_pop):
                    accepted_pn[p, i] = 0
                    rejected_pn[p, i] = 0
                    doomed_pn[p, i] = 0
            # Serve the handshake queue with whatever CPU is left.
            queue = node_f[NF_QUEUE, i]
            if queue > 0.0:
                capacity = (1.0 - cpu) / hs_cost if cpu < 1.0 else 0.0
                served = queue if queue < capacity else capacity
                node_f[NF_QUEUE, i] = queue - served
                cpu += served * hs_cost
                if node_f[NF_QUEUE, i] > 1e-9:
                    cpu = 1.0
            if cpu > 1.0:
                cpu = 1.0
            out_node[ON_CPU, i] += cpu
            if cpu >= 0.999:
                node_f[NF_PINNED, i] += 1.0
            else:
                node_f[NF_PINNED, i] = 0.0

        # 4. Outcomes back to clients: split each (population, state) cohort over accepted/rejected/timeout.
        for p in range(n_pop):
            acc_left = outcome[p, 0]
            rej_left = outcome[p, 1]
            pool = pop_total[p]
            timeout_ticks = np.int64(pop_f[p, PF_TIMEOUT])
            for s in range(n_states):
                a = arrivals_ps[p, s]
                if a <= 0:
                    continue
                mean_start = start_ps[p, s] / a
                acc = _hyper(rng, acc_left, pool, a)
                rej = _hyper(rng, rej_left, pool - acc_left, a - acc)
                to = a - acc - rej
                pool -= a
                acc_left -= acc
                rej_left -= rej
                if acc > 0:
                    fresh_by_state[p, s] += acc
                    if tick - mean_start > resume_window:
                        out_fleet[OF_RESYNCS] += acc
                        fleet_f[FF_RESYNC_QUEUE] += acc
                    else:
                        out_fleet[OF_RESUMES] += acc
                if rej > 0:
                    if pop_f[p, PF_HONOURS] > 0.5:
                        nxt = state_next[p, s] if pop_f[p, PF_FROM_DELAY] < 0.5 else s
                        _schedule_hint(
                            rng,
                            wheel,
                            wheel_start,
                            state_of_delay,
                            p,
                            nxt,
                            rej,
                            np.int64(fleet_f[FF_RA_LO]),
                            np.int64(fleet_f[FF_RA_HI]),
                            tick,
                            mean_start,
                        )
                    else:
                        _schedule_backoff(
                            rng,
                            wheel,
                            wheel_start,
                            pop_f,
                            seg_w,
                            seg_a,
                            seg_b,
                            seg_n,
                            state_next,
                            state_of_delay,
                            p,
                            s,
                            rej,
                            tick,
                            mean_start,
                        )
                if to > 0:
                    _schedule_backoff(
                        rng,
                        wheel,
                        wheel_start,
                        pop_f,
                        seg_w,
                        seg_a,
                        seg_b,
                        seg_n,
                        state_next,
                        state_of_delay,
                        p,
                        s,
                        to,
                        tick + timeout_ticks,
                        mean_start,
                    )
            for i in range(n_nodes):
                m = accepted_pn[p, i]
                if m > 0:
                    conn[p, i] += m
                    fresh[p, i] += m

        # 5. Planned closes and losses: drains, overload drops, churn, ageing into stable.
        on_bin_edge = (tick % ticks_per_bin) == 0
        for i in range(n_nodes):
            state = np.int64(node_f[NF_STATE, i])
            if state == ABSENT:
                continue
            if state == DRAINING:
                node_f[NF_DRAIN_ACC, i] += node_f[NF_DRAIN_RATE, i]
                closes = np.int64(node_f[NF_DRAIN_ACC, i])
                force = tick >= node_f[NF_DRAIN_DEADLINE, i]
                held = 0
                for p in range(n_pop):
                    held += conn[p, i]
                if force:
                    closes = held
                    out_node[ON_FORCED, i] += held
                if closes > 0 and held > 0:
                    if closes > held:
                        closes = held
                    node_f[NF_DRAIN_ACC, i] -= closes
                    left = closes
                    pool = held
                    for p in range(n_pop):
                        k = left if p == n_pop - 1 else _hyper(rng, conn[p, i], pool, left)
                        pool -= conn[p, i]
                        left -= k
                        out_node[ON_CLOSES, i] += disconnect(
                            rng,
                            p,
                            i,
                            k,
                            True,
                            False,
                            conn,
                            fresh,
                            fresh_by_state,
                            wheel,
                            wheel_start,
                            pop_f,
                            seg_w,
                            seg_a,
                            seg_b,
                            seg_n,
                            state_next,
                            state_of_delay,
                            node_f,
                            fleet_f,
                            out_fleet,
                        )
                elif held == 0:
                    node_f[NF_DRAIN_ACC, i] = 0.0
            if node_f[NF_PINNED, i] > fleet_f[FF_OVERLOAD_TICKS]:
                # Missed heartbeats: established connections die without a close frame (1006).
                for p in range(n_pop):
                    taken, n_fresh = _take(
                        rng, p, i, _binom(rng, conn[p, i], fleet_f[FF_DROP_P]), conn, fresh
                    )
                    out_node[ON_DROPS, i] += taken
                    out_fleet[OF_ABNORMAL] += taken
                    lost[p, 0] += n_fresh
                    lost[p, 1] += taken - n_fresh
            if on_bin_edge:
                for p in range(n_pop):
                    if fleet_f[FF_CLOSE_P] > 0.0 and conn[p, i] > 0:
                        taken, n_fresh = _take(
                            rng, p, i, _binom(rng, conn[p, i], fleet_f[FF_CLOSE_P]), conn, fresh
                        )
                        out_node[ON_CLOSES, i] += taken
                        lost[p, 0] += n_fresh
                        lost[p, 1] += taken - n_fresh
                    if fresh[p, i] > 0:
                        aged = _binom(rng, fresh[p, i], pop_f[p, PF_FRESH_Q])
                        fresh[p, i] -= aged
                        total_fresh = 0
                        for s in range(n_states):
                            total_fresh += fresh_by_state[p, s]
                        for s in range(n_states):
                            if aged <= 0:
                                break
                            k = _hyper(rng, fresh_by_state[p, s], total_fresh, aged)
                            total_fresh -= fresh_by_state[p, s]
                            fresh_by_state[p, s] -= k
                            aged -= k

        # Everyone who lost a connection this tick without a hint backs off, one draw per cohort.
        for p in range(n_pop):
            if lost[p, 0] + lost[p, 1] > 0:
                out_fleet[OF_DISCONNECTS] += lost[p, 0] + lost[p, 1]
                _release(
                    rng,
                    p,
                    lost[p, 0],
                    lost[p, 1],
                    False,
                    0,
                    1,
                    tick,
                    fresh_by_state,
                    wheel,
                    wheel_start,
                    pop_f,
                    seg_w,
                    seg_a,
                    seg_b,
                    seg_n,
                    state_next,
                    state_of_delay,
                )
                lost[p, 0] = 0
                lost[p, 1] = 0

        # 6. The resync backend: clients past the resume window rebuild state, at a finite rate.
        r_slot = tick % resync_wheel.shape[0]
        retrying = resync_wheel[r_slot]
        if retrying > 0:
            resync_wheel[r_slot] = 0
            fleet_f[FF_RESYNC_QUEUE] += retrying
        per_tick = fleet_f[FF_RESYNC_PER_TICK]
        queue = fleet_f[FF_RESYNC_QUEUE]
        if queue > 0.0:
            if per_tick <= 0.0:
                out_fleet[OF_RESYNC_DONE] += queue
                fleet_f[FF_RESYNC_QUEUE] = 0.0
            else:
                served = min(queue, per_tick)
                out_fleet[OF_RESYNC_DONE] += served
                queue -= served
                # What cannot be served within the timeout fails now; the clients retry later.
                keep = per_tick * fleet_f[FF_RESYNC_TIMEOUT]
                failing = np.int64(queue - keep) if queue > keep else 0
                if fleet_f[FF_BREAKER_OPEN] > 0.5:
                    failing = np.int64(queue)  # the breaker answers everyone Retry-After at once
                if failing > 0:
                    queue -= failing
                    out_fleet[OF_RESYNC_FAIL] += failing
                    if fleet_f[FF_BREAKER_OPEN] > 0.5:
                        lo = np.int64(fleet_f[FF_BREAKER_RETRY])
                        hi = lo + np.int64(1000.0 / tick_ms)
                    else:
                        lo = np.int64(fleet_f[FF_RESYNC_RETRY_LO])
                        hi = max(lo + 1, np.int64(fleet_f[FF_RESYNC_RETRY_HI]))
                    width = hi - lo
                    rem = failing
                    for j in range(width):
                        if rem <= 0:
                            break
                        k = rem if j == width - 1 else _binom(rng, rem, 1.0 / (width - j))
                        resync_wheel[(tick + lo + j) % resync_wheel.shape[0]] += k
                        rem -= k
                fleet_f[FF_RESYNC_QUEUE] = queue

        fleet_f[FF_TICK] += 1.0
