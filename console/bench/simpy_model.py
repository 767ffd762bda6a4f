"""A per-client SimPy model of a rolling restart: the baseline the count engine is compared against.

This is what public reconnect-storm simulators do (one process per client, one event per attempt), written
for the same scenario the engine runs: the same fleet, rollout, timeline (halt, added nodes), churn,
backoff policy (from console.policies) with its reset after a stable period, handshake capacity shared
with held connections, accept backlog, connect timeout, and the skewed balancer (consistent hashing: a
client that failed on a hot node tries the hot nodes again). It leaves out overload drops (at 100 k
clients the scaled backlog keeps every node's lag far below the heartbeat timeout), Retry-After and
resyncs (the scenario has neither). It exists only for `stormdeck bench sim`, which also prints its
totals next to the engine's so the two can be seen to simulate the same storm.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import simpy

from console.sim.scenario import Scenario


@dataclass
class _Node:
    up: bool
    server: simpy.Resource
    connected: set[int] = field(default_factory=set)
    hot: bool = False


def run_simpy(scenario: Scenario, seed: int = 1) -> dict[str, float]:
    """Simulate `scenario` one client at a time; returns its totals and minimum connections."""
    rng = random.Random(seed)
    env = simpy.Environment()
    n = scenario.nodes
    c = scenario.clients
    lb = scenario.lb
    population = c.populations[0]
    policy = population.policy
    nodes = [_Node(True, simpy.Resource(env, capacity=1)) for _ in range(n.count)]
    hold_share = n.hold_cpu_pct_at_capacity / 100.0 / n.capacity_connections
    churn_per_s = c.churn_per_min / 60.0 / max(c.count, 1)
    disconnected: dict[int, simpy.Event] = {}
    rotation: list[int] = list(range(n.count))  # rebuilt when a node goes down or comes back
    hot: list[int] = []
    halted = [False]
    counts = {"attempts": 0, "accepts": 0, "timeouts": 0, "min_connections": float(c.count)}

    def rebalance() -> None:
        # The engine's skewed balancer: consistent hashing hands the displaced keys to the ready nodes
        # furthest (on the ring) from the nodes out of rotation (outage seed).
        rotation[:] = [i for i, node in enumerate(nodes) if node.up]
        out = [i for i, node in enumerate(nodes) if not node.up]
        hot.clear()
        for node in nodes:
            node.hot = False
        if lb.mode != "skewed" or not out or len(rotation) <= lb.hot_nodes:
            return
        size = len(nodes)

        def distance(i: int) -> int:
            return min(min(abs(i - j), size - abs(i - j)) for j in out)

        hot.extend(sorted(rotation, key=lambda i: (-distance(i), i))[: lb.hot_nodes])
        for i in hot:
            nodes[i].hot = True

    def pick(bound: bool) -> int:
        if hot and (bound or rng.random() < lb.hot_share):
            return rng.choice(hot)
        return rng.choice(rotation)

    def handshake_s(node: _Node) -> float:
        spare = max(1.0 - len(node.connected) * hold_share, 0.05)
        return 1.0 / (n.handshakes_per_s * spare)

    def client(cid: int, home: int):
        state = 0
        node_index = home
        while True:
            node = nodes[node_index]
            node.connected.add(cid)
            connected_at = env.now
            disconnected[cid] = env.event()
            lifetime = env.timeout(rng.expovariate(churn_per_s)) if churn_per_s else env.event()
            yield disconnected[cid] | lifetime
            node.connected.discard(cid)
            if env.now - connected_at >= population.stable_period_s:
                state = 0
            bound = False
            while True:
                yield env.timeout(policy.next_delay_ms(state, rng) / 1000.0)
                state = policy.state_after(state, 0.0)
                counts["attempts"] += 1
                if not rotation:
                    continue
                node_index = pick(bound)
                node = nodes[node_index]
                if len(node.server.queue) >= n.accept_backlog:  # SYN dropped: the client times out
                    yield env.timeout(population.connect_timeout_s)
                    counts["timeouts"] += 1
                    bound = node.hot
                    continue
                with node.server.request() as request:
                    outcome = yield request | env.timeout(population.connect_timeout_s)
                    if request not in outcome:
                        counts["timeouts"] += 1
                        bound = node.hot
                        continue
                    yield env.timeout(handshake_s(node))
                counts["accepts"] += 1
                break

    def rollout():
        r = scenario.rollout
        if r is None:
            return
        yield env.timeout(r.start_at_s)
        for first in range(0, n.count, r.batch_size):
            if halted[0]:
                return
            batch = range(first, min(first + r.batch_size, n.count))
            for i in batch:
                nodes[i].up = False
            rebalance()
            for i in batch:
                for cid in list(nodes[i].connected):
                    event = disconnected.get(cid)
                    if event is not None and not event.triggered:
                        event.succeed()
            env.process(restart(batch))
            yield env.timeout(r.interval_s)

    def restart(batch: range):
        yield env.timeout(n.restart_s)
        for i in batch:
            nodes[i].up = True
        rebalance()

    def timeline():
        # The scenario's own events: the outage seed halts the restart and adds 200 nodes at 690 s.
        for event in scenario.events:
            yield env.timeout(max(event.at_s - env.now, 0.0))
            if event.action == "halt_rollout":
                halted[0] = True
            elif event.action == "add_nodes":
                env.process(provision(int(event.params["count"])))

    def provision(count: int):
        yield env.timeout(n.provisioning_s)
        nodes.extend(_Node(True, simpy.Resource(env, capacity=1)) for _ in range(count))
        rebalance()

    def watch():
        while True:
            yield env.timeout(1.0)
            held = sum(len(node.connected) for node in nodes)
            counts["min_connections"] = min(counts["min_connections"], held)

    for cid in range(c.count):
        env.process(client(cid, cid % n.count))
    for process in (rollout(), timeline(), watch()):
        env.process(process)
    env.run(until=scenario.duration_s)
    return {key: float(value) for key, value in counts.items()}
