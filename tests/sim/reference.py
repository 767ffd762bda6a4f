"""A per-client reference of the simulator's model: the specification the count engine is checked against.

One record per client (struct-of-arrays: population, policy state, next attempt tick, offline-since tick,
node, fresh), one record per node, one tick at a time, in the order `console/sim/kernel.py` runs them:

1. attempts due this tick arrive (and are counted in their 100 ms bin);
2. the balancer sends each to a node in rotation with probability weight / Σ weights (nobody in
   rotation: refused at once, no server work, the client backs off);
3. every node: the token bucket refills; arrivals beyond the connection ceiling (held + queued) are
   rejected, then those beyond the bucket's whole tokens, then those beyond the accept backlog overflow
   (SYN dropped: the client times out, no work). The rest join the handshake queue, whose wait is
   queue ÷ (handshakes a tick the CPU left over from holding can serve). A client whose wait exceeds its
   connect timeout is doomed: it times out and the server spends only `timeout_cost` of a handshake on it.
   Then the queue is served with the CPU that is left; CPU = holding + handshakes + rejections (a
   rejection costs `reject_cost` of a handshake), and a node with work left over is pinned at 100 %;
4. outcomes: an admitted client is connected at once (counted at admission), fresh, and remembers its
   policy state; it resumes if it was offline less than the resume window, else it queues a full resync.
   A rejected client waits the Retry-After (if its population honours hints; the attempt counts as a
   failure) or backs off; a timed-out client backs off after its connect timeout;
5. planned closes and losses: a draining node closes `rate` a tick (fractions carried over) with a
   reconnect hint, and force-closes what is left at its deadline; a node whose queued handshake work
   exceeds `overload_after_s` at its spare CPU (the event loop lags past the heartbeat timeout) drops each connection with the per-tick drop probability (missed heartbeats); every
   100 ms each connection closes with the churn + lifetime hazard, and each fresh connection becomes stable
   with probability 1 − exp(−0.1 s / stable_period_s) (stable clients back off from state 0);
6. the resync backend serves its queue at a finite rate; what cannot be served within its timeout fails
   and retries later (counts: resyncs never move a client off its node).

Once a second, before the ticks, the timeline runs (disconnect_fraction, restart_nodes, kill_nodes,
drain_nodes) and restarting nodes whose restart time has passed come back into rotation.

Delays come from `console.policies` (the same definitions the engine tabulates) and are whole ticks,
rounded down. An attempt scheduled for a tick that has already run happens on the next tick. Only what the
cross-check scenarios need is here: a uniform balancer, no rollout controller, no autoscaler, no breaker.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from console.policies import Segment, sample_segments
from console.sim.scenario import Scenario

READY, DRAINING, DRAINED, RESTARTING, DOWN = "ready", "draining", "drained", "restarting", "down"
#: `node_of` of a client lost this tick and not yet released (released together at the end of step 5).
OFF_NODE = -2


@dataclass
class Node:
    state: str = READY
    tokens: float = 0.0
    queue: float = 0.0  # handshakes of work waiting (fractional: doomed clients cost a fraction)
    lag_ticks: float = 0.0
    back_at_s: float = math.inf  # a restart completes
    drain_per_tick: float = 0.0
    drain_carry: float = 0.0
    drain_deadline_tick: float = math.inf
    hint_ticks: tuple[int, int] = (0, 1)


@dataclass
class Outcome:
    """One tick's answers to its arrivals, applied once every node has admitted (kernel step 4)."""

    accepted: list[tuple[int, int]] = field(default_factory=list)  # (client, node)
    rejected: list[int] = field(default_factory=list)
    timed_out: list[int] = field(default_factory=list)


@dataclass
class Second:
    """What one simulated second produced (the fields the cross-check compares)."""

    time_s: float
    bins: np.ndarray  # attempts per 100 ms
    connections: np.ndarray  # per node, at the end of the second
    attempts: np.ndarray  # per node
    accepts: np.ndarray
    rejects: np.ndarray
    timeouts: np.ndarray
    drops: np.ndarray
    closes: np.ndarray
    cpu: np.ndarray  # mean share over the second
    disconnects: int = 0
    resyncs: int = 0
    events: list[str] = field(default_factory=list)


class ReferenceFleet:
    def __init__(self, scenario: Scenario, seed: int) -> None:
        if (
            scenario.lb.mode != "uniform"
            or scenario.rollout
            or scenario.autoscale.enabled
            or scenario.resync.breaker
        ):
            raise ValueError("the reference models a uniform balancer; no rollout, autoscaler or breaker")
        self.scenario = scenario
        self.rng = np.random.default_rng(seed)
        self.tick_ms = scenario.tick_ms
        self.ticks_per_s = round(1000.0 / self.tick_ms)
        self.ticks_per_bin = max(1, round(100.0 / self.tick_ms))
        self.tick = 0
        self.time_s = 0.0
        self._parameters()
        pops = scenario.clients.populations
        self.policies = [p.policy for p in pops]
        self._max_state = [p.max_state for p in self.policies]
        self._segments: dict[tuple[int, int], list[Segment]] = {}

        n_nodes = scenario.nodes.count
        self.nodes = [Node() for _ in range(n_nodes)]
        count = scenario.clients.count
        shares = np.array([p.share for p in pops])
        per_pop = self.rng.multinomial(count, shares / shares.sum())
        # One record per client. Clients start connected and stable, spread evenly over the nodes.
        self.pop = np.repeat(np.arange(len(pops)), per_pop)
        self.node_of = np.empty(count, dtype=np.int64)
        start = 0
        for p in range(len(pops)):
            base, extra = divmod(int(per_pop[p]), n_nodes)
            placement = np.repeat(
                np.arange(n_nodes), [base + (1 if i < extra else 0) for i in range(n_nodes)]
            )
            self.node_of[start : start + per_pop[p]] = placement
            start += per_pop[p]
        self.state = np.zeros(count, dtype=np.int64)  # offline: retry-from state; fresh: remembered state
        self.fresh = np.zeros(count, dtype=bool)
        self.offline_since = np.zeros(count, dtype=np.int64)
        self.wheel: dict[int, list[int]] = {}  # tick -> clients attempting then
        self.resync_queue = 0.0
        self.resync_retry: dict[int, int] = {}
        self._timeline = list(scenario.events)
        self._tick_started = False
        self._pending_disconnects = 0  # made by the timeline, between seconds

    def _parameters(self) -> None:
        sc, tick_s = self.scenario, self.tick_ms / 1000.0
        n = sc.nodes
        self.hold_cost = n.hold_cpu_pct_at_capacity / 100.0 / n.capacity_connections
        self.handshake_cost = 1.0 / (n.handshakes_per_s * tick_s)
        self.reject_cost = n.reject_cost * self.handshake_cost
        self.overload_ticks = n.overload_after_s / tick_s
        self.drop_p = 1.0 - (1.0 - n.overload_drop_per_s) ** tick_s
        c = sc.clients
        per_s = c.churn_per_min / 60.0 / max(c.count, 1)
        if c.max_lifetime_s > 0:
            per_s += 1.0 / max(c.max_lifetime_s - c.lifetime_dither_s / 2.0, 1.0)
        self.close_p = 1.0 - math.exp(-per_s * 0.1)
        self.stable_p = [1.0 - math.exp(-0.1 / p.stable_period_s) for p in c.populations]
        self.timeout_ticks = [p.connect_timeout_s / tick_s for p in c.populations]
        self.honours = [p.honours_hints for p in c.populations]
        self.resume_ticks = c.resume_window_s / tick_s
        a = sc.admission
        self.rate_per_tick = a.rate_per_s * tick_s
        self.burst = max(float(a.burst), self.rate_per_tick, 1.0 if self.rate_per_tick else 0.0)
        self.ceiling = float(a.max_connections)
        self.retry_after_ticks = (int(a.retry_after_s[0] / tick_s), int((a.retry_after_s[1] + 1.0) / tick_s))
        r = sc.resync
        self.resync_per_tick = r.capacity_per_s * tick_s
        self.resync_timeout_ticks = r.timeout_s / tick_s
        self.resync_retry_ticks = (int(r.retry_s[0] / tick_s), max(1, int(r.retry_s[1] / tick_s)))

    # --- scheduling -------------------------------------------------------------------------------------

    def _at(self, client: int, due_tick: int) -> None:
        # A tick that has already run cannot take attempts: they happen on the next one.
        earliest = self.tick + 1 if self._tick_started else self.tick
        self.wheel.setdefault(max(due_tick, earliest), []).append(client)

    def _back_off(self, client: int, from_tick: int) -> None:
        """Sleep one policy delay drawn from the client's state; the state moves on (n + 1, or the bin)."""
        p, s = int(self.pop[client]), int(self.state[client])
        policy = self.policies[p]
        s = min(s, self._max_state[p])
        key = (p, s)
        if key not in self._segments:
            self._segments[key] = policy.segments(s)
        delay_ms = sample_segments(self._segments[key], self.rng)
        self.state[client] = policy.state_after(s, delay_ms)
        self._at(client, from_tick + int(delay_ms // self.tick_ms))

    def _wait(self, client: int, window_ticks: tuple[int, int]) -> None:
        """Come back when told (reconnect hint, Retry-After): uniform over the window, in whole ticks."""
        low, high = window_ticks
        self._at(client, self.tick + int(self.rng.integers(low, max(high, low + 1))))

    def _release(self, client: int, hint: tuple[int, int] | None) -> None:
        """A connection ends: the client goes offline from now, keeping its state only if still fresh."""
        self.node_of[client] = -1
        if not self.fresh[client]:
            self.state[client] = 0
        self.fresh[client] = False
        self.offline_since[client] = self.tick
        if hint is not None and self.honours[self.pop[client]]:
            self._wait(client, hint)
        else:
            self._back_off(client, self.tick)

    # --- the clock ---------------------------------------------------------------------------------------

    def step(self) -> Second:
        """One simulated second."""
        events = self._run_timeline()
        for node in self.nodes:
            if node.state == RESTARTING and self.time_s >= node.back_at_s:
                node.state = READY
        for i, node in enumerate(self.nodes):
            if node.state == DRAINING and not (self.node_of == i).any():
                node.state = DRAINED
        n = len(self.nodes)
        out = {
            name: np.zeros(n) for name in ("attempts", "accepts", "rejects", "timeouts", "drops", "closes")
        }
        cpu = np.zeros(n)
        bins = np.zeros(10, dtype=np.int64)
        self._counts = {"disconnects": self._pending_disconnects, "resyncs": 0}
        self._pending_disconnects = 0
        for _ in range(self.ticks_per_s):
            self._run_tick(out, cpu, bins)
        self.time_s += 1.0
        connections = np.bincount(self.node_of[self.node_of >= 0], minlength=n).astype(np.float64)
        return Second(
            time_s=self.time_s,
            bins=bins,
            connections=connections,
            cpu=cpu / self.ticks_per_s,
            disconnects=self._counts["disconnects"],
            resyncs=self._counts["resyncs"],
            events=events,
            **out,
        )

    def _run_tick(self, out: dict[str, np.ndarray], cpu_out: np.ndarray, bins: np.ndarray) -> None:
        self._tick_started = True
        due = self.wheel.pop(self.tick, [])
        bins[(self.tick // self.ticks_per_bin) % 10] += len(due)
        at_node = self._balance(due)
        outcome = Outcome()
        held = np.bincount(self.node_of[self.node_of >= 0], minlength=len(self.nodes)).tolist()
        for i, node in enumerate(self.nodes):
            cpu_out[i] += self._admit(i, node, at_node[i], held[i], outcome, out)
        # Timeouts per node are what arrived and was neither rejected nor accepted.
        out["timeouts"][:] = out["attempts"] - out["rejects"] - out["accepts"]
        self._answer(outcome)
        self._close_and_lose(out)
        self._serve_resyncs()
        self.tick += 1
        self._tick_started = False

    def _balance(self, due: list[int]) -> list[list[int]]:
        """Step 2: each arrival to a node in rotation, uniformly; nobody in rotation refuses at once."""
        in_rotation = [i for i, node in enumerate(self.nodes) if node.state == READY]
        at_node: list[list[int]] = [[] for _ in self.nodes]
        if due and not in_rotation:
            for client in due:
                self._back_off(client, self.tick)  # connection refused: no server work
        elif due:
            for client, i in zip(due, self.rng.choice(in_rotation, size=len(due)), strict=True):
                at_node[i].append(client)
        return at_node

    def _admit(
        self, i: int, node: Node, arrivals: list[int], held: int, outcome: Outcome, out: dict[str, np.ndarray]
    ) -> float:
        """Step 3 for one node: admission, the handshake queue, CPU. Returns the node's CPU share."""
        cpu = held * self.hold_cost
        if self.rate_per_tick > 0:
            node.tokens = min(self.burst, node.tokens + self.rate_per_tick)
        if arrivals:
            out["attempts"][i] += len(arrivals)
            n_rejected = 0
            if self.ceiling > 0:
                room = max(0.0, self.ceiling - held - node.queue)
                n_rejected = max(0, len(arrivals) - int(room))
            n_admitted = len(arrivals) - n_rejected
            if self.rate_per_tick > 0:
                tokens = int(node.tokens)
                if n_admitted > tokens:
                    n_rejected += n_admitted - tokens
                    n_admitted = tokens
                node.tokens -= n_admitted
            space = max(0.0, self.scenario.nodes.accept_backlog - node.queue)
            if n_admitted > space:
                n_admitted = int(space)  # the rest overflow the backlog
            service = (1.0 - cpu) / self.handshake_cost if cpu < 1.0 else 0.0
            wait_ticks = node.queue / service if service > 0 else math.inf
            # Which arrivals are rejected, admitted or overflow is random: they are exchangeable.
            shuffled = [arrivals[j] for j in self.rng.permutation(len(arrivals))]
            outcome.rejected += shuffled[:n_rejected]
            for client in shuffled[n_rejected : n_rejected + n_admitted]:
                if wait_ticks > self.timeout_ticks[self.pop[client]]:
                    # Doomed: it gives up before the server reaches it, wasting part of a handshake.
                    node.queue += self.scenario.nodes.timeout_cost
                    outcome.timed_out.append(client)
                else:
                    node.queue += 1.0
                    outcome.accepted.append((client, i))
                    out["accepts"][i] += 1
            outcome.timed_out += shuffled[n_rejected + n_admitted :]  # SYN dropped: no work
            out["rejects"][i] += n_rejected
            cpu += n_rejected * self.reject_cost
        if node.queue > 0:
            capacity = (1.0 - cpu) / self.handshake_cost if cpu < 1.0 else 0.0
            served = min(node.queue, capacity)
            node.queue -= served
            cpu += served * self.handshake_cost
            if node.queue > 1e-9:
                cpu = 1.0  # work left over: pinned
        cpu = min(cpu, 1.0)
        # How far the event loop lags: queued handshake work at the CPU left over after holding.
        spare = 1.0 - held * self.hold_cost
        node.lag_ticks = node.queue * self.handshake_cost / spare if spare > 0 else float("inf")
        return cpu

    def _answer(self, outcome: Outcome) -> None:
        """Step 4: accepted clients connect (fresh); rejected ones wait or back off; timed-out ones back off."""
        for client, i in outcome.accepted:
            self.node_of[client] = i
            self.fresh[client] = True  # the retry state survives until the connection is stable
            if self.tick - self.offline_since[client] > self.resume_ticks:
                self._counts["resyncs"] += 1
                self.resync_queue += 1
        for client in outcome.rejected:
            if self.honours[self.pop[client]]:
                policy = self.policies[self.pop[client]]
                if not policy.state_from_delay:
                    self.state[client] = policy.state_after(int(self.state[client]), 0.0)
                self._wait(client, self.retry_after_ticks)
            else:
                self._back_off(client, self.tick)
        for client in outcome.timed_out:
            self._back_off(client, self.tick + int(self.timeout_ticks[self.pop[client]]))

    def _close_and_lose(self, out: dict[str, np.ndarray]) -> None:
        """Step 5: drains close with hints; pinned nodes drop; churn, lifetimes and ageing every 100 ms."""
        lost: list[int] = []
        for i, node in enumerate(self.nodes):
            if node.state == DRAINING:
                members = np.flatnonzero(self.node_of == i)
                node.drain_carry += node.drain_per_tick
                closes = int(node.drain_carry)
                if self.tick >= node.drain_deadline_tick:
                    closes = len(members)
                if closes > 0 and len(members) > 0:
                    closes = min(closes, len(members))
                    node.drain_carry -= closes
                    for client in self.rng.choice(members, size=closes, replace=False):
                        self._release(int(client), node.hint_ticks)
                    out["closes"][i] += closes
                    self._counts["disconnects"] += closes
                elif len(members) == 0:
                    node.drain_carry = 0.0
            if node.lag_ticks > self.overload_ticks:
                members = np.flatnonzero(self.node_of == i)
                dropped = members[self.rng.random(len(members)) < self.drop_p]
                out["drops"][i] += len(dropped)
                self.node_of[dropped] = OFF_NODE
                lost.extend(dropped.tolist())
        if self.tick % self.ticks_per_bin == 0:
            connected = np.flatnonzero(self.node_of >= 0)
            closing = connected[self.rng.random(len(connected)) < self.close_p]
            np.add.at(out["closes"], self.node_of[closing], 1)
            self.node_of[closing] = OFF_NODE
            lost.extend(closing.tolist())
            fresh = np.flatnonzero(self.fresh & (self.node_of >= 0))
            stable_p = np.array(self.stable_p)[self.pop[fresh]]
            self.fresh[fresh[self.rng.random(len(fresh)) < stable_p]] = False
        for client in lost:
            self._release(client, None)
        self._counts["disconnects"] += len(lost)

    def _serve_resyncs(self) -> None:
        """Step 6: the resync backend (a count: resyncs never take a client off its node)."""
        tick = self.tick
        self.resync_queue += self.resync_retry.pop(tick, 0)
        if self.resync_queue > 0:
            if self.resync_per_tick <= 0:
                self.resync_queue = 0.0
            else:
                self.resync_queue -= min(self.resync_queue, self.resync_per_tick)
                keep = self.resync_per_tick * self.resync_timeout_ticks
                failing = int(self.resync_queue - keep) if self.resync_queue > keep else 0
                self.resync_queue -= failing
                low, high = self.resync_retry_ticks
                for later in self.rng.integers(low, max(high, low + 1), size=failing):
                    self.resync_retry[tick + int(later)] = self.resync_retry.get(tick + int(later), 0) + 1

    # --- the timeline --------------------------------------------------------------------------------------

    def _run_timeline(self) -> list[str]:
        done = []
        while self._timeline and self._timeline[0].at_s <= self.time_s:
            event = self._timeline.pop(0)
            params = event.params
            nodes = params.get("nodes", [])
            if isinstance(nodes, int):
                first = int(params.get("first", 0))
                nodes = list(range(first, min(first + nodes, len(self.nodes))))
            else:
                nodes = [int(str(n).removeprefix("gw-")) for n in nodes]
            if event.action == "disconnect_fraction":
                connected = np.flatnonzero(self.node_of >= 0)
                hit = connected[self.rng.random(len(connected)) < float(params["fraction"])]
                self._drop(hit)
            elif event.action in ("restart_nodes", "kill_nodes"):
                for i in nodes:
                    self._drop(np.flatnonzero(self.node_of == i))
                    node = self.nodes[i]
                    node.queue = 0.0
                    restart = event.action == "restart_nodes"
                    node.state = RESTARTING if restart else DOWN
                    node.back_at_s = self.time_s + self.scenario.nodes.restart_s if restart else math.inf
            elif event.action == "drain_nodes":
                hint_ms = params.get("hint_ms", (1000, 30000))
                for i in nodes:
                    node = self.nodes[i]
                    node.state = DRAINING
                    node.drain_per_tick = float(params.get("rate_per_s", 833.0)) * self.tick_ms / 1000.0
                    node.drain_carry = 0.0
                    node.drain_deadline_tick = (self.time_s + float(params.get("deadline_s", 600.0))) * (
                        self.ticks_per_s
                    )
                    low = int(hint_ms[0] / self.tick_ms)
                    node.hint_ticks = (
                        low,
                        int(max(hint_ms[1] / self.tick_ms, hint_ms[0] / self.tick_ms + 1)),
                    )
            else:
                raise ValueError(f"the reference does not model {event.action}")
            done.append(event.action)
        return done

    def _drop(self, clients: np.ndarray) -> None:
        for client in clients:
            self._release(int(client), None)
        self._pending_disconnects += len(clients)


def recovery_s(
    times: np.ndarray, connections: np.ndarray, first_s: float, share: float = 0.95
) -> float | None:
    """Seconds from the first disconnecting event until connections are back to ≥ share of before, for good."""
    before = connections[times <= first_s]
    target = share * (before[-1] if before.size else connections[0])
    below = np.flatnonzero((times > first_s) & (connections < target))
    if below.size == 0:
        return 0.0
    if below[-1] == connections.size - 1:
        return None
    return float(times[below[-1] + 1]) - first_s
