"""The timing wheel of offline clients, counted by cohort (compiled).

`wheel = (counts, starts)`: counts[p, slot, s] clients of population p in policy state s attempt at that
tick slot; starts[p, slot, s] is the sum of their offline-start ticks (a cell's mean time offline decides
resume vs full resync). States come in two halves: [0, S) and [S, 2S) for the same policy states of
clients *bound to the hot nodes* — consistent hashing sends a client that failed on a hot node back to it.

Placing a cohort of `count` clients uniformly over `width` ticks is a multinomial split. It is drawn as
sequential binomials over the slots — or one draw per client when fewer clients than slots — and a wide
spread goes through a coarse level first: blocks of BLOCK ticks, each split over its ticks when its time
comes (shared by everything placed in it). So a placement costs O(min(count, width / BLOCK)).
Hypergeometric splits elsewhere are drawn as binomials (exact in the large-population limit).

Editing this file? numba's cache keys each compiled function by its own source file only, and the
kernel's cached code has these helpers inlined: clear console/sim/__pycache__ too, or the kernel keeps
running the old ones (fresh clones and CI compile everything anew).
"""

# fmt: off
# (argument lists of arrays read better packed than one per line)

from __future__ import annotations

import numpy as np
from numba import njit

# numba's own bounded draw: what `Generator.integers` calls, one scalar at a time (see `integer_below`).
from numba.np.random.random_methods import buffered_bounded_lemire_uint32

#: Ticks per block of the wheel's coarse level. The blocks live in the same arrays after the tick slots:
#: [..., :horizon] are ticks, [..., horizon:] are blocks, and horizon is a multiple of BLOCK.
BLOCK = 10

# Policy tables, one tuple: (pop_f, seg_w, seg_a, seg_b, seg_n, state_next, state_of_delay).
PF_HONOURS, PF_TIMEOUT, PF_FRESH_Q, PF_MAX_STATE, PF_FROM_DELAY = range(5)
PF_FIELDS = 5

#: `binom` draws up to this many trials itself (`_binom_few`), more through numpy's algorithms.
_FEW_TRIALS = 16


@njit(cache=True, nogil=True)
def binom(rng, n, p):
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if n <= _FEW_TRIALS:
        return _binom_few(rng, n, p)
    return rng.binomial(n, p)


@njit(cache=True, nogil=True)
def _binom_few(rng, n, p):
    """rng.binomial(n, p) for small n, step for step as numba draws it (numpy's inversion: the same
    uniforms, the same walk), with q**n multiplied out: the inversion starts with exp(n log q), an exp
    and a log that cost more than the draw itself, and most of the kernel's binomials are this small
    (a few clients' outcomes). The results match to the last bit but for q**n's last ulp."""
    flip = p > 0.5
    pp = 1.0 - p if flip else p
    q = 1.0 - pp
    qn = q
    for _ in range(n - 1):
        qn *= q
    mean = n * pp
    bound = min(n, mean + 10.0 * np.sqrt(mean * q + 1))
    x = 0
    px = qn
    u = rng.random()
    while u > px:
        x += 1
        if x > bound:
            x = 0
            px = qn
            u = rng.random()
        else:
            u -= px
            px = ((n - x + 1) * pp * px) / (x * q)
    return n - x if flip else x


@njit(cache=True, nogil=True)
def integer_below(rng, n):
    """rng.integers(0, n): the same draw from the same stream, without the one-element array numba's
    `integers` allocates (and frees) for every scalar — 30 ns a call, most of a single client's placement
    or pick. numba's `integers` does exactly this for ranges below 2**32 - 1."""
    if n <= 1:
        return 0  # (no draw: numba's integers consumes nothing for a range of one)
    if n - 1 >= 0xFFFFFFFF:
        return rng.integers(0, n)
    return np.int64(buffered_bounded_lemire_uint32(rng.bit_generator, np.int64(n - 1)))


@njit(cache=True, nogil=True)
def hyper(rng, good, total, draws):
    """How many of `draws` taken from `total` are among `good` (binomial approximation, clipped)."""
    if draws <= 0 or good <= 0:
        return 0
    if draws >= total:
        return good
    k = binom(rng, draws, good / total)
    low = draws - (total - good)
    if k < low:
        k = low
    if k > good:
        k = good
    return k


@njit(cache=True, nogil=True)
def horizon_of(counts):
    return counts.shape[1] * BLOCK // (BLOCK + 1)


@njit(cache=True, nogil=True)
def _place_ticks(rng, wheel, p, s, lo, hi, count, start_tick, horizon):
    """`count` clients uniformly over absolute ticks [lo, hi), tick by tick."""
    counts, starts = wheel
    width = hi - lo
    if width <= 1:
        slot = lo % horizon
        counts[p, slot, s] += count
        starts[p, slot, s] += count * start_tick
        return
    if count < width:
        for _ in range(count):
            slot = (lo + integer_below(rng, width)) % horizon
            counts[p, slot, s] += 1
            starts[p, slot, s] += start_tick
        return
    remaining = count
    for j in range(width):
        if remaining <= 0:
            break
        k = remaining if j == width - 1 else binom(rng, remaining, 1.0 / (width - j))
        if k > 0:
            slot = (lo + j) % horizon
            counts[p, slot, s] += k
            starts[p, slot, s] += k * start_tick
            remaining -= k


@njit(cache=True, nogil=True)
def _place_fixed(rng, wheel, p, s, lo, hi, count, start_tick, now):
    """`count` clients of state s uniformly over absolute ticks [lo, hi), via blocks when cheaper."""
    if count <= 0:
        return
    counts, starts = wheel
    horizon = horizon_of(counts)
    n_blocks = horizon // BLOCK
    width = hi - lo
    first = (lo + BLOCK - 1) // BLOCK
    if first * BLOCK <= now:  # never into a block whose time has come: it would not be split again
        first = now // BLOCK + 1
    last = hi // BLOCK
    full = last - first
    if full < 2 or count <= full + 2 * BLOCK:
        _place_ticks(rng, wheel, p, s, lo, hi, count, start_tick, horizon)
        return
    head = first * BLOCK - lo
    k_head = binom(rng, count, head / width)
    k_mid = binom(rng, count - k_head, full * BLOCK / (width - head))
    k_tail = count - k_head - k_mid
    if k_head > 0:
        _place_ticks(rng, wheel, p, s, lo, first * BLOCK, k_head, start_tick, horizon)
    if k_tail > 0:
        _place_ticks(rng, wheel, p, s, last * BLOCK, hi, k_tail, start_tick, horizon)
    remaining = k_mid
    for j in range(full):
        if remaining <= 0:
            break
        k = remaining if j == full - 1 else binom(rng, remaining, 1.0 / (full - j))
        if k > 0:
            slot = horizon + (first + j) % n_blocks
            counts[p, slot, s] += k
            starts[p, slot, s] += k * start_tick
            remaining -= k


@njit(cache=True, nogil=True)
def expand_block(rng, wheel, tick):
    """At a block's first tick: split each cohort parked in it over the block's ticks."""
    counts, starts = wheel
    horizon = horizon_of(counts)
    slot = horizon + (tick // BLOCK) % (horizon // BLOCK)
    for p in range(counts.shape[0]):
        for s in range(counts.shape[2]):
            count = counts[p, slot, s]
            if count <= 0:
                continue
            mean_start = starts[p, slot, s] / count
            counts[p, slot, s] = 0
            starts[p, slot, s] = 0.0
            _place_ticks(rng, wheel, p, s, tick, tick + BLOCK, count, mean_start, horizon)


@njit(cache=True, nogil=True)
def place(rng, wheel, tables, p, entry, from_delay, a, b, count, now, start_tick):
    """`count` clients uniformly over tick offsets [a, b) from `now`, retrying from state `entry`.

    When the state depends on the delay slept (decorrelated), the range is cut into runs of equal next
    state and each run gets its binomial share; `entry` then only says which half (bound or not).
    """
    if count <= 0:
        return
    state_of_delay = tables[6]
    base_states = wheel[0].shape[2] // 2
    offset = base_states if entry >= base_states else 0
    if not from_delay:
        _place_fixed(rng, wheel, p, entry, now + a, now + max(b, a + 1), count, start_tick, now)
        return
    if b <= a + 1:
        _place_fixed(rng, wheel, p, state_of_delay[p, a] + offset, now + a, now + a + 1, count, start_tick, now)
        return
    remaining = count
    run_start = a
    while run_start < b and remaining > 0:
        s = state_of_delay[p, run_start]
        run_end = run_start + 1
        while run_end < b and state_of_delay[p, run_end] == s:
            run_end += 1
        k = remaining if run_end >= b else binom(rng, remaining, (run_end - run_start) / (b - run_start))
        _place_fixed(rng, wheel, p, s + offset, now + run_start, now + run_end, k, start_tick, now)
        remaining -= k
        run_start = run_end


@njit(cache=True, nogil=True)
def schedule_backoff(rng, wheel, tables, p, state, count, now, start_tick):
    """Clients of population p that failed (or were dropped) in `state`: each sleeps one policy delay."""
    if count <= 0:
        return
    # Each table is read where it is used: unpacking the tuple would count a reference to each of its
    # arrays on every call (atomic operations that cost more than the rest of a small placement).
    from_delay = tables[0][p, PF_FROM_DELAY] > 0.5
    n_seg = tables[4][p, state]
    entry = tables[5][p, state]
    remaining = count
    weight_left = 1.0
    for k in range(n_seg):
        w = tables[1][p, state, k]
        c = remaining if k == n_seg - 1 else (binom(rng, remaining, w / weight_left) if weight_left > 0 else 0)
        weight_left -= w
        remaining -= c
        a = tables[2][p, state, k]
        b = tables[3][p, state, k]
        place(rng, wheel, tables, p, entry, from_delay, a, b, c, now, start_tick)


@njit(cache=True, nogil=True)
def schedule_hint(rng, wheel, tables, p, state, count, lo, hi, now, start_tick):
    """Clients told when to come back (a reconnect hint or Retry-After): uniform over [lo, hi) ticks."""
    place(rng, wheel, tables, p, state, False, lo, max(hi, lo + 1), count, now, start_tick)
