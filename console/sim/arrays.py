"""The kernel's arrays made from a scenario: the timing wheel's size, the fleet's and the populations'
parameters in ticks, and the policies' delay tables. Pure: scenario and policies in, arrays out."""

from __future__ import annotations

import math
import sys
from typing import NamedTuple

import numpy as np

from console.policies import Policy
from console.sim import kernel as k
from console.sim import wheel as wh
from console.sim.scenario import Clients, Scenario

#: Delay segments a policy state may have (a stepped schedule's steps, a decile table's bands).
MAX_SEGMENTS = 12


class PolicyTables(NamedTuple):
    """Each (population, policy state)'s delay distribution as weighted uniform tick ranges, in
    wheel.py's order after pop_f: seg_w, seg_a, seg_b, seg_n, state_next, state_of_delay."""

    seg_w: np.ndarray  # [pop, state, segment] weight
    seg_a: np.ndarray  # … first tick
    seg_b: np.ndarray  # … one past the last tick
    seg_n: np.ndarray  # [pop, state] segments in use
    state_next: np.ndarray  # [pop, state] the state after a failed attempt
    state_of_delay: np.ndarray  # [pop, delay tick] the state a delay implies (decorrelated: state is delay)


def wheel_horizon(scenario: Scenario, policies: list[Policy], tick_ms: float) -> int:
    """Ticks the wheel must reach ahead: the longest backoff, connect timeout and hint, in whole blocks."""
    max_delay_ms = max(
        max(seg.high_ms for s in range(p.max_state + 1) for seg in p.segments(s)) for p in policies
    )
    longest_hint_ms = max(
        scenario.admission.retry_after_s[1] * 1000 + 1000,
        scenario.rollout.drain_hint_ms[1] if scenario.rollout else 0,
        120_000,
    )
    max_timeout_ms = max(p.connect_timeout_s for p in scenario.clients.populations) * 1000
    ticks = math.ceil((max_delay_ms + max_timeout_ms + longest_hint_ms) / tick_ms) + 2 * wh.BLOCK
    return -(-ticks // wh.BLOCK) * wh.BLOCK  # a whole number of blocks (see wheel.BLOCK)


def population_parameters(scenario: Scenario, tick_ms: float) -> np.ndarray:
    """pop_f: per population, hints honoured, connect timeout in ticks, the 100 ms chance of turning stable
    (the policy columns are filled by `policy_tables`)."""
    pops = scenario.clients.populations
    pop_f = np.zeros((len(pops), wh.PF_FIELDS))
    for p, pop in enumerate(pops):
        pop_f[p, wh.PF_HONOURS] = 1.0 if pop.honours_hints else 0.0
        pop_f[p, wh.PF_TIMEOUT] = pop.connect_timeout_s * 1000 / tick_ms
        # Stable after an exponential time with mean stable_period_s, checked every 100 ms.
        pop_f[p, wh.PF_FRESH_Q] = 1.0 - math.exp(-0.1 / pop.stable_period_s)
    return pop_f


def fleet_parameters(scenario: Scenario, tick_ms: float) -> np.ndarray:
    """fleet_f: the nodes' costs and limits, the resync backend, admission's Retry-After, in ticks."""
    tick_s = tick_ms / 1000.0
    n = scenario.nodes
    r = scenario.resync
    f = np.zeros(k.FF_FIELDS)
    f[k.FF_RESYNC_PER_TICK] = r.capacity_per_s * tick_s
    f[k.FF_RESYNC_TIMEOUT] = r.timeout_s * 1000 / tick_ms
    f[k.FF_RESYNC_RETRY_LO] = r.retry_s[0] * 1000 / tick_ms
    f[k.FF_RESYNC_RETRY_HI] = r.retry_s[1] * 1000 / tick_ms
    f[k.FF_BREAKER_RETRY] = r.breaker_retry_after_s * 1000 / tick_ms
    f[k.FF_RESUME_WINDOW] = scenario.clients.resume_window_s * 1000 / tick_ms
    # CPU per held connection per tick such that a node at capacity spends hold_cpu_pct on holding.
    f[k.FF_HOLD_COST] = n.hold_cpu_pct_at_capacity / 100.0 / n.capacity_connections
    f[k.FF_HS_COST] = 1.0 / (n.handshakes_per_s * tick_s)
    f[k.FF_REJ_COST] = n.reject_cost
    f[k.FF_BACKLOG] = n.accept_backlog
    f[k.FF_OVERLOAD_TICKS] = n.overload_after_s * 1000 / tick_ms
    f[k.FF_DROP_P] = 1.0 - (1.0 - n.overload_drop_per_s) ** tick_s
    f[k.FF_DROP_CLOCK] = 1.0
    f[k.FF_RA_LO] = scenario.admission.retry_after_s[0] * 1000 / tick_ms
    # HTTP Retry-After is whole seconds; clients add up to a second of their own jitter.
    f[k.FF_RA_HI] = (scenario.admission.retry_after_s[1] + 1.0) * 1000 / tick_ms
    f[k.FF_BASE_MS] = n.handshake_base_ms
    f[k.FF_TICK_MS] = tick_ms
    f[k.FF_TIMEOUT_COST] = n.timeout_cost
    f[k.FF_CLOSE_P] = close_probability(scenario.clients)
    return f


def close_probability(clients: Clients) -> float:
    """A connection's chance of closing in 100 ms: natural churn (per client per minute) plus scheduled
    lifetimes, as one constant hazard — the lifetime dither is there precisely so that connection ages
    stay spread (Zuul, field guide)."""
    per_s = clients.churn_per_min / 60.0 / max(clients.count, 1)
    if clients.max_lifetime_s > 0:
        per_s += 1.0 / max(clients.max_lifetime_s - clients.lifetime_dither_s / 2.0, 1.0)
    return 1.0 - math.exp(-per_s * 0.1)


def policy_tables(
    policies: list[Policy], n_base: int, horizon: int, tick_ms: float, pop_f: np.ndarray
) -> PolicyTables:
    """The policies' tables for `n_base` states a half (free, then bound to the hot nodes); fills pop_f's
    policy columns."""
    n_pop = len(policies)
    n_states = 2 * n_base
    t = PolicyTables(
        seg_w=np.zeros((n_pop, n_states, MAX_SEGMENTS)),
        seg_a=np.zeros((n_pop, n_states, MAX_SEGMENTS), dtype=np.int64),
        seg_b=np.zeros((n_pop, n_states, MAX_SEGMENTS), dtype=np.int64),
        seg_n=np.zeros((n_pop, n_states), dtype=np.int64),
        state_next=np.zeros((n_pop, n_states), dtype=np.int64),
        state_of_delay=np.zeros((n_pop, horizon), dtype=np.int64),
    )
    for p, policy in enumerate(policies):
        pop_f[p, wh.PF_MAX_STATE] = policy.max_state
        pop_f[p, wh.PF_FROM_DELAY] = 1.0 if policy.state_from_delay else 0.0
        for s in range(n_base):
            segments = policy.segments(min(s, policy.max_state))
            for half in (0, n_base):
                t.seg_n[p, s + half] = len(segments)
                t.state_next[p, s + half] = policy.state_after(min(s, policy.max_state), 0.0) + half
            for j, seg in enumerate(segments):
                a = round(seg.low_ms / tick_ms)
                b = max(a + 1, round(seg.high_ms / tick_ms)) if not seg.is_point else a + 1
                for half in (0, n_base):
                    t.seg_w[p, s + half, j] = seg.weight
                    t.seg_a[p, s + half, j] = a
                    t.seg_b[p, s + half, j] = b
        if policy.state_from_delay:
            delays = (np.arange(horizon) + 0.5) * tick_ms
            t.state_of_delay[p] = [policy.state_after(0, d) for d in delays]
    return t


class ReusedBuffers:
    """Arrays for a batch of seconds' outputs, made in memory used before when nothing still looks at it.
    Their contents are whatever was there: the kernel writes each second's whole.

    A batch's outputs are megabytes (a second is ~10 kB a node slot); fresh from the allocator each
    time, their pages were first touched inside the kernel — 10,000 page faults, a tenth of a 100 k
    client run. A buffer is handed out again only when no view of it is alive (its reference count says
    so): a caller that keeps a batch's results keeps their memory to itself, and the next batch gets a
    buffer of its own. Per `Simulation`: a fork gets its own (a forecast may run in another thread)."""

    #: Buffers kept for reuse: a caller that holds one batch's results while the next runs still reuses.
    KEPT = 2

    def __init__(self, dtype: type, room: int) -> None:
        """room: the most elements a batch needs (the longest batch at the most node slots), so that a
        buffer never has to grow — a grown one is fresh pages again."""
        self.dtype = dtype
        self.room = room
        self._buffers: list[np.ndarray] = []

    def take(self, shape: tuple[int, ...]) -> np.ndarray:
        size = math.prod(shape)
        for buffer in self._buffers:
            # References: the list's, this loop's, getrefcount's argument; one more per live view.
            if buffer.size >= size and sys.getrefcount(buffer) == 3:
                return buffer[:size].reshape(shape)
        buffer = np.empty(max(size, self.room), dtype=self.dtype)
        if len(self._buffers) < self.KEPT:
            self._buffers.append(buffer)
        return buffer[:size].reshape(shape)
