"""A per-client SimPy model of a rolling restart: the baseline the count engine is compared against.

This is what public reconnect-storm simulators do (one process per client, one event per attempt), written
for the same scenario the engine runs: the same fleet, rollout, timeline (halt, added nodes), churn,
backoff policy (from console.policies), handshake capacity and connect timeout. It leaves out what would
only add events (the skewed balancer, the accept backlog and overload drops each add attempts): a lower
bound on what a per-client model of the scenario costs. It exists only for `stormdeck bench sim`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import simpy

from console.sim.scenario import Scenario


@dataclass
class _Node:
    up: bool
    server: simpy.Resource
    connected: set[int]


def run_simpy(scenario: Scenario, seed: int = 1) -> dict[str, float]:
    """Simulate `scenario` one client at a time; returns a few counts (to check it did the work)."""
    rng = random.Random(seed)
    env = simpy.Environment()
    n = scenario.nodes
    c = scenario.clients
    policy = c.populations[0].policy
    timeout_s = c.populations[0].connect_timeout_s
    nodes = [_Node(True, simpy.Resource(env, capacity=1), set()) for _ in range(n.count)]
    hold_share = n.hold_cpu_pct_at_capacity / 100.0 / n.capacity_connections
    churn_per_s = c.churn_per_min / 60.0 / max(c.count, 1)
    disconnected: dict[int, simpy.Event] = {}
    in_rotation = list(range(n.count))  # rebuilt when a node goes down or comes back, not per attempt
    counts = {"attempts": 0, "accepts": 0, "timeouts": 0}

    def handshake_s(node: _Node) -> float:
        spare = max(1.0 - len(node.connected) * hold_share, 0.05)
        return 1.0 / (n.handshakes_per_s * spare)

    def client(cid: int, home: int):
        state = 0
        node_index = home
        while True:
            node = nodes[node_index]
            node.connected.add(cid)
            disconnected[cid] = env.event()
            lifetime = env.timeout(rng.expovariate(churn_per_s)) if churn_per_s else env.event()
            yield disconnected[cid] | lifetime
            node.connected.discard(cid)
            while True:
                yield env.timeout(policy.next_delay_ms(state, rng) / 1000.0)
                state = policy.state_after(state, 0.0)
                counts["attempts"] += 1
                if not in_rotation:
                    continue
                node_index = rng.choice(in_rotation)
                node = nodes[node_index]
                with node.server.request() as request:
                    outcome = yield request | env.timeout(timeout_s)
                    if request not in outcome:
                        counts["timeouts"] += 1
                        continue
                    yield env.timeout(handshake_s(node))
                counts["accepts"] += 1
                break

    halted = [False]

    def timeline():
        # The scenario's own events: the outage seed halts the restart and adds 200 nodes at 690 s.
        for event in scenario.events:
            yield env.timeout(max(event.at_s - env.now, 0.0))
            if event.action == "halt_rollout":
                halted[0] = True
            elif event.action == "add_nodes":
                env.process(_provision(int(event.params["count"])))

    def _provision(count: int):
        yield env.timeout(n.provisioning_s)
        nodes.extend(_Node(True, simpy.Resource(env, capacity=1), set()) for _ in range(count))
        in_rotation[:] = [i for i, node in enumerate(nodes) if node.up]

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
            in_rotation[:] = [i for i, node in enumerate(nodes) if node.up]
            for i in batch:
                for cid in list(nodes[i].connected):
                    event = disconnected.get(cid)
                    if event is not None and not event.triggered:
                        event.succeed()
            env.process(_restart(batch))
            yield env.timeout(r.interval_s)

    def _restart(batch: range):
        yield env.timeout(n.restart_s)
        for i in batch:
            nodes[i].up = True
        in_rotation[:] = [i for i, node in enumerate(nodes) if node.up]

    for cid in range(c.count):
        env.process(client(cid, cid % n.count))
    env.process(rollout())
    env.process(timeline())
    env.run(until=scenario.duration_s)
    return {key: float(value) for key, value in counts.items()}
