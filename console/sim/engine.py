"""The fleet simulation: scenario in, one protocol `Frame` per simulated second out.

The per-tick work runs in `kernel.run_seconds` (compiled); this module owns what happens at most once a
second: node state changes, the operator's and the timeline's actions, and the clock that batches quiet
seconds into one kernel call. Beside it: `arrays` builds the kernel's arrays from the scenario,
`controls` decides autoscaling and the resync breaker, `rollout` runs the rollout controller, and
`records` turns a second's counts into protocol records. Pure: no I/O, no clocks; randomness from one
seeded Generator.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import numpy as np

from console.errors import InputError
from console.figures import DrainInflow, HintedCloses, WithinHint
from console.model.admission import settings_words
from console.policies import Policy, make_policy
from console.protocol import (
    AdmissionInForce,
    AdmissionSettings,
    Event,
    FleetSnapshot,
    Frame,
    NodeState,
    NodeStatus,
    RolloutMode,
    RolloutState,
    Source,
    overrides_of,
)
from console.sim import arrays, records
from console.sim import kernel as k
from console.sim import wheel as wh
from console.sim.controls import Autoscaler, ResyncBreaker
from console.sim.records import CODE_STATES, STATE_CODES, DrainUnderWay, NodeHistory, SecondResult
from console.sim.rollout import RolloutController
from console.sim.scenario import Scenario
from console.sim.scenario import node_id as numbered_node_id

__all__ = ["SecondResult", "Simulation"]

#: States a node leaves by itself (`_transitions`): restarting and provisioning on time, draining when empty.
_TRANSIENT = (k.DRAINING, k.RESTARTING, k.PROVISIONING)
#: Seconds one `steps()` call runs at most: its outputs (a second is ~10 kB a node slot) are then reused
#: memory, not fresh pages (a 500 s stretch in one call cost more in page faults than it saved).
_MAX_BATCH_S = 64


class Simulation:
    """A running fleet. `advance()` moves it one second; actions change it between seconds."""

    def __init__(self, scenario: Scenario, seed: int | None = None, keep_history: bool = True) -> None:
        """keep_history=False for batch runs (`sim run`, benchmarks): nobody asks them for a node's last
        ten minutes, and first touching its pages cost up to a fifth of a small run."""
        self.scenario = scenario
        self._keep_history = keep_history
        self.seed = scenario.seed if seed is None else seed
        self.rng = np.random.default_rng(self.seed)
        self.fleet_name = scenario.name
        self.source = Source.SIMULATOR
        self.tick_ms = scenario.tick_ms
        self.ticks_per_s = round(1000.0 / self.tick_ms)
        self.time_s = 0.0
        self.seq = 0
        self._pending_events: list[Event] = []
        #: While the scenario's own script runs (its timeline, its rollout): what, for the disconnects it
        #: makes to say (`data.scripted`) — a report counts only the operator's own against the operator.
        self._scripted_by: str | None = None
        self._pending_fleet = np.zeros(k.OF_FIELDS)  # disconnects made by actions between seconds
        nodes = scenario.nodes
        planned = sum(int(e.params.get("count", 0)) for e in scenario.events if e.action == "add_nodes")
        # Room for an operator or instructor to add nodes (scenario.node_slots); the kernel only visits the
        # nodes that exist. Every id has the digits the last slot needs, so ids sort by number.
        self.capacity_nodes = scenario.node_slots
        self._id_digits = scenario.node_id_digits
        self.n_nodes = nodes.count
        self.node_ids = [self._node_id(i) for i in range(self.n_nodes)]
        self.policies: list[Policy] = [p.policy for p in scenario.clients.populations]
        self._build_arrays()
        self._until_s = np.zeros(self.capacity_nodes)  # restart/provisioning completes at
        self.drains: dict[int, DrainUnderWay] = {}  # the nodes draining now
        self.admission = AdmissionSettings(
            rate_per_s=scenario.admission.rate_per_s or None,
            burst=scenario.admission.burst or None,
            max_connections=scenario.admission.max_connections or None,
            retry_after_s=scenario.admission.retry_after_s,
        )
        #: The nodes running settings other than the fleet's (`PUT /v1/admission` with `nodes`), by index:
        #: what `admission_overrides` shows — a per-node change was applied and shown nowhere (found in review).
        self.admission_by_node: dict[int, AdmissionSettings] = {}
        self._apply_admission(self.admission, list(range(self.n_nodes)))
        self.rollout = RolloutController(self)
        if scenario.rollout is not None:
            r = scenario.rollout
            self.rollout.start(
                batch_size=r.batch_size,
                interval_s=r.interval_s,
                mode=RolloutMode(r.mode),
                pause_cpu_pct=r.pause_cpu_pct,
                start_at_s=r.start_at_s,
                scripted=True,
            )
        self._timeline = list(scenario.events)
        self.autoscaler = Autoscaler(scenario.autoscale)
        self.breaker = ResyncBreaker(scenario.resync)
        self._hot: list[int] = []
        self._in_transition = 0  # nodes restarting, provisioning or draining (kept by _set_state)
        self._cpu_pct = np.zeros(self.capacity_nodes)
        columns = max(nodes.count, scenario.autoscale.max_nodes) + planned if keep_history else 0
        self.history = NodeHistory(columns)
        # Accepts and in-flow over the trailing 10 s, from a fleet as steady as the clients start: churn's
        # closes matched by its returns (k.FF_CLOSE_P: the per-100 ms chance a connection closes).
        churn_per_s = scenario.clients.count * (1.0 - (1.0 - self.fleet_f[k.FF_CLOSE_P]) ** 10)
        self.drain_inflow = DrainInflow(steady_per_s=float(churn_per_s))
        # The drains' paced closes whose clients are still within their hint: connections_drop's allowance.
        self.within_hint = WithinHint()
        self.last: SecondResult | None = None
        self._new_output_buffers()
        self._update_weights()

    # --- construction ---------------------------------------------------------------------------------

    def _new_output_buffers(self) -> None:
        room = _MAX_BATCH_S * self.capacity_nodes
        self._node_outs = arrays.ReusedBuffers(np.float64, room * k.ON_FIELDS)
        self._conn_outs = arrays.ReusedBuffers(np.int64, room)

    def _node_id(self, i: int) -> str:
        return numbered_node_id(i, self._id_digits)

    def _build_arrays(self) -> None:
        sc = self.scenario
        pops = sc.clients.populations
        n_pop = len(pops)
        n_base = max(p.max_state for p in self.policies) + 1
        self.horizon = arrays.wheel_horizon(sc, self.policies, self.tick_ms)
        self.conn = np.zeros((n_pop, self.capacity_nodes), dtype=np.int64)
        self.fresh = np.zeros_like(self.conn)
        self.fresh_by_state = np.zeros((n_pop, n_base), dtype=np.int64)
        # Two halves of policy states: free clients, and clients bound to the hot nodes (see wheel.py).
        slots = self.horizon + self.horizon // wh.BLOCK
        # Slot-major: a tick reads its slot's states from one or two cache lines (state-major, each state's
        # slot was a line of its own: most of a quiet tick went to those misses).
        self.wheel = np.zeros((n_pop, slots, 2 * n_base), dtype=np.int64)
        self.wheel_start = np.zeros((n_pop, slots, 2 * n_base), dtype=np.float64)
        r = sc.resync
        resync_horizon = math.ceil((max(r.retry_s[1], r.breaker_retry_after_s) + 2) * 1000 / self.tick_ms)
        self.resync_wheel = np.zeros(resync_horizon, dtype=np.int64)
        self.pop_f = arrays.population_parameters(sc, self.tick_ms)
        self.policy_tables = arrays.policy_tables(
            self.policies, n_base, self.horizon, self.tick_ms, self.pop_f
        )
        self.node_f = np.zeros((k.NF_FIELDS, self.capacity_nodes))
        self.node_f[k.NF_STATE, :] = k.ABSENT
        self.node_f[k.NF_STATE, : self.n_nodes] = k.READY
        self.fleet_f = arrays.fleet_parameters(sc, self.tick_ms)

        # Clients start connected and stable, spread evenly over the nodes (or filled to a share).
        total = sc.clients.count
        shares = np.array([p.share for p in pops])
        per_pop = self.rng.multinomial(total, shares / shares.sum()) if total else np.zeros(n_pop, np.int64)
        for p in range(n_pop):
            base, extra = divmod(int(per_pop[p]), self.n_nodes)
            self.conn[p, : self.n_nodes] = base
            self.conn[p, :extra] += 1

    @property
    def tables(self) -> tuple[np.ndarray, ...]:
        """The policy tables the kernel reads, in wheel.py's order."""
        return (self.pop_f, *self.policy_tables)

    def _cut_state(self) -> tuple:
        """What the kernel's cuts (`disconnect`, `drop_nodes`) change, in their order: the clients' counts,
        the wheel, the nodes, and the fleet figures the next second reports."""
        return (
            self.conn,
            self.fresh,
            self.fresh_by_state,
            (self.wheel, self.wheel_start),
            self.tables,
            self.node_f,
            self.fleet_f,
            self._pending_fleet,
        )

    def _disconnect(self, p: int, i: int, count: int, abnormal: bool) -> int:
        by_state = np.zeros(self.fresh_by_state.shape[1], dtype=np.int64)
        return int(k.disconnect(self.rng, p, i, count, False, abnormal, *self._cut_state(), by_state))

    # --- the clock ------------------------------------------------------------------------------------

    def advance(self) -> tuple[Frame, list[Event]]:
        """One simulated second: returns its frame and the events it raised."""
        result = self.step()
        return self.frame(result), result.events

    def load_kernel(self) -> None:
        """Compile the kernel's entry points, or load them from numba's cache, now rather than in the
        middle of a run (the first restart would otherwise pay ~7 ms to load `disconnect`). Runs on a
        throwaway fork: this simulation does not move."""
        twin = self.fork(with_history=False)
        twin.step()
        twin._disconnect(0, 0, 0, abnormal=False)
        twin._drop_all([], abnormal=True)

    def step(self) -> SecondResult:
        """One simulated second, as arrays (no protocol records are built)."""
        return self.steps(1)[0]

    def steps(self, limit: int) -> list[SecondResult]:
        """Up to `limit` simulated seconds: as many as nothing once-a-second can happen in, in one kernel
        call — the same results, draw for draw, as that many `step()` calls, without their per-second
        cost (at 100 k clients a second's bookkeeping cost as much as its ticks). Batch runs use it."""
        self._once_a_second()
        n = max(1, min(limit, self._quiet_seconds(), _MAX_BATCH_S))
        # The nodes there are, not the room kept for more: zeroing and summing the room cost more than a
        # quiet second's ticks. (A result is as wide as the fleet was; `frame` pads one read after an add.)
        live = self.n_nodes
        node_outs = self._node_outs.take((n, k.ON_FIELDS, live))
        node_totals = np.zeros((n, k.ON_FIELDS))
        fleet_outs = np.zeros((n, k.OF_FIELDS))
        fleet_outs[0] = self._pending_fleet  # disconnects made by actions before this second
        self._pending_fleet = np.zeros(k.OF_FIELDS)
        bins = np.zeros((n, 10), dtype=np.int64)
        conn_outs = self._conn_outs.take((n, live))
        heeding = self._heeding_share()
        k.run_seconds(
            self.rng,
            self.ticks_per_s,
            self.conn,
            self.fresh,
            self.fresh_by_state,
            (self.wheel, self.wheel_start),
            self.resync_wheel,
            self.tables,
            self.node_f,
            self.fleet_f,
            node_outs,
            node_totals,
            fleet_outs,
            bins,
            conn_outs,
        )
        states = self.node_f[k.NF_STATE].astype(np.int8)  # (no state changes inside a call)
        draining = bool((states[: self.n_nodes] == k.DRAINING).any())
        max_cpu = (node_totals[:, k.ON_CPU] * 100.0).tolist()
        connections_total = conn_outs.sum(axis=1).tolist()
        accepts = node_totals[:, k.ON_ACCEPTS].tolist()
        disconnects = fleet_outs[:, k.OF_DISCONNECTS].tolist()
        results = []
        flow = self.drain_inflow
        events, self._pending_events = self._pending_events, []  # (raised before the batch's first second)
        columns = zip(
            node_outs,
            fleet_outs,
            bins,
            conn_outs,
            node_totals,
            accepts,
            disconnects,
            max_cpu,
            connections_total,
            strict=True,
        )
        for node_out, fleet_out, second_bins, connections, totals, accepted, lost, cpu, held in columns:
            self.time_s += 1.0
            self.seq += 1
            if self._keep_history:
                self.history.record(node_out, connections, self.node_f[k.NF_STATE])
            hinted, paced_within = self._hinted_closes(node_out, heeding) if heeding else ([], [])
            unhinted = lost - math.fsum(h.count for h in hinted) if hinted else lost
            flow.add(accepted, max(0.0, unhinted), hinted)
            self.within_hint.add(paced_within)  # (every second: the clients due back leave it)
            results.append(
                SecondResult(
                    self.time_s,
                    node_out,
                    fleet_out,
                    second_bins,
                    connections,
                    states,
                    events,
                    self.seq,
                    (flow.accepts, flow.inflow),
                    totals,
                    cpu,
                    held,
                    draining,
                    self.within_hint.clients,
                    self.within_hint.returned,
                )
            )
            events = []
        self._cpu_pct = np.zeros(self.capacity_nodes)
        self._cpu_pct[:live] = node_outs[-1, k.ON_CPU] * 100.0
        last = results[-1]  # (a copy: the batch's buffers are then free for the next one)
        self.last = replace(last, node_out=last.node_out.copy(), connections=last.connections.copy())
        return results

    def _heeding_share(self) -> dict[int, float]:
        """Each draining node's share of clients that heed its drain's reconnect hint (their populations
        honour hints), from what it holds as the second starts: that share of its closes comes back over
        the hint window; the rest back off at once, as from any loss (drain ÷ inflow, `DrainInflow`)."""
        honours = self.pop_f[:, wh.PF_HONOURS] > 0.5
        heeding = {}
        for i in self.drains:
            held = self.conn[:, i]
            total = int(held.sum())
            if total:
                heeding[i] = float(held[honours].sum()) / total
        return heeding

    def _hinted_closes(
        self, node_out: np.ndarray, heeding: dict[int, float]
    ) -> tuple[list[HintedCloses], list[HintedCloses]]:
        """The second just run's drain closes whose clients heed the hint: the paced ones all through
        it, those forced at the deadline at the deadline's moment (the second's start, for a whole
        second's deadline). `self.time_s` is the second's end.

        And the paced ones as `WithinHint` counts them: at most the drain's rate a second. A draining
        node's closes count its churn too, whose clients back off at once, told nothing: graceful-drain on
        10 k clients (its churn of 10 k a minute left as it was) counted ~200 of them, 2 % of the fleet,
        as within a hint."""
        hinted, paced_within = [], []
        for i, share in heeding.items():
            drain = self.drains[i]
            forced = float(node_out[k.ON_FORCED, i])
            paced = float(node_out[k.ON_CLOSES, i]) - forced
            if paced > 0:
                hinted.append(HintedCloses(paced * share, drain.hint_ms))
                at_rate = min(paced, math.ceil(drain.rate_per_s))
                paced_within.append(HintedCloses(at_rate * share, drain.hint_ms))
            if forced > 0:
                at_s = min(max(drain.deadline_at_s - (self.time_s - 1.0), 0.0), 1.0)
                hinted.append(HintedCloses(forced * share, drain.hint_ms, at_s, forced=True))
        return hinted, paced_within

    def run(self, seconds: int) -> Iterator[SecondResult]:
        """The next `seconds` simulated seconds, one result each, in as few kernel calls as `steps` can."""
        done = 0
        while done < seconds:
            batch = self.steps(seconds - done)
            done += len(batch)
            yield from batch

    def _once_a_second(self) -> None:
        """Between seconds: the timeline, state changes, the rollout, autoscaling, breaker, balancer."""
        self._run_timeline()
        self._transitions()
        self.rollout.tick()
        self._autoscale()
        self._update_breaker()
        if self._weights_stale or self.scenario.lb.mode == "weighted":
            self._update_weights()

    def _quiet_seconds(self) -> int:
        """How many seconds from now (this one included) `_once_a_second` is certain to leave alone.

        What it does depends on CPU (autoscaler, abort criterion, breaker, a capacity-weighted balancer),
        on a drain emptying its node, or on the clock (the timeline, the next rollout batch, a restart or
        provisioning completing); the kernel changes no node's state, so without the first two only the
        clock decides.
        """
        s = self.scenario
        if s.autoscale.enabled or s.resync.breaker or s.lb.mode == "weighted":
            return 1
        due = math.inf
        if self._in_transition:
            states = self.node_f[k.NF_STATE, : self.n_nodes]
            if (states == k.DRAINING).any():
                return 1  # drained when empty: the connections decide, second by second
            waking = (states == k.RESTARTING) | (states == k.PROVISIONING)
            if waking.any():
                due = float(self._until_s[: self.n_nodes][waking].min())
        if self._timeline:
            due = min(due, self._timeline[0].at_s)
        rollout = self.rollout
        if rollout.state is RolloutState.RUNNING:
            if s.rollout is not None and s.rollout.abort_cpu_pct > 0:
                return 1
            if rollout.batch < len(rollout.batches):
                due = min(due, rollout.next_at_s)
        if due == math.inf:
            return 1 << 30
        # The second starting at time_s + j acts when time_s + j >= due.
        return max(1, math.ceil(due - self.time_s))

    def fork(self, with_history: bool = True) -> Simulation:
        """An independent copy (same state, same random stream position): for forecasts.

        `with_history=False` gives the twin an empty per-node history instead of a copy of it: a forecast
        never reads it, and copying its 20 MB is most of a fork's cost at 480 nodes.
        """
        twin = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray | np.random.Generator | list | dict) or name in (
                "admission",
                "last",
                "autoscaler",
                "breaker",
                "drain_inflow",
                "within_hint",
            ):
                setattr(twin, name, copy.deepcopy(value))
        twin.history = self.history.copy(with_values=with_history)
        twin.rollout = self.rollout.copy_for(twin)
        twin._new_output_buffers()
        return twin

    # --- node state -----------------------------------------------------------------------------------

    def state_of(self, i: int) -> NodeState:
        return CODE_STATES[int(self.node_f[k.NF_STATE, i])]

    def _set_state(self, i: int, state: NodeState, why: str) -> None:
        old = int(self.node_f[k.NF_STATE, i])
        code = STATE_CODES[state]
        if old == code:
            return
        self.node_f[k.NF_STATE, i] = code
        self._in_transition += (code in _TRANSIENT) - (old in _TRANSIENT)
        self._event(
            "node_state",
            f"{self.node_ids[i]} {why}: {CODE_STATES.get(old, 'new')} → {state}",
            node=self.node_ids[i],
            data={"from": str(CODE_STATES.get(old, "")), "to": str(state)},
        )
        self._weights_stale = True  # recomputed once before the next ticks, however many nodes moved

    def announce(self, kind: str, message: str, data: dict | None = None) -> None:
        """An event from outside the engine (an instructor's injection), sent with the next second's."""
        self._event(kind, message, data=data)

    @contextmanager
    def scripted(self, what: str) -> Iterator[None]:
        """What runs inside is the scenario's own doing (`what`: its timeline's action, or `rollout`): the
        disconnects it makes say so (`data.scripted`), as an instructor's injection is told — the operator
        chose neither."""
        outer, self._scripted_by = self._scripted_by, what
        try:
            yield
        finally:
            self._scripted_by = outer

    def _cut_data(self, dropped: int, **more: object) -> dict:
        """A mass disconnect's data: what it dropped, and whether the scenario's script made it."""
        scripted = {} if self._scripted_by is None else {"scripted": self._scripted_by}
        return {"dropped": dropped, "mass": True, **more, **scripted}

    def _event(self, kind: str, message: str, node: str | None = None, data: dict | None = None) -> None:
        self._pending_events.append(
            Event(time_s=self.time_s, kind=kind, node=node, message=message, data=data or {})
        )

    def _update_weights(self) -> None:
        states = self.node_f[k.NF_STATE, : self.n_nodes]
        ready = np.flatnonzero(states == k.READY)
        weights = np.zeros(self.capacity_nodes)
        lb = self.scenario.lb
        self._hot = []
        if ready.size:
            weights[ready] = 1.0
            out = np.flatnonzero((states != k.READY) & (states != k.ABSENT) & (states != k.PROVISIONING))
            if lb.mode == "weighted":
                # Capacity-weighted: by how far each node is below the fullest one, so restarted nodes
                # refill first (a least-connections balancer in the limit).
                held = self.conn[:, ready].sum(axis=0)
                weights[ready] = (held.max() - held) + 1.0
            elif lb.mode == "skewed" and out.size and ready.size > lb.hot_nodes:
                # Consistent hashing hands the displaced clients' keys to a few nodes, "furthest from the
                # restart batch" (outage seed): those few take hot_share of all reconnects.
                n = self.n_nodes
                gap = np.abs(ready[:, None] - out[None, :])
                distance = np.minimum(gap, n - gap).min(axis=1)
                order = np.lexsort((ready, -distance))
                hot = ready[order[: lb.hot_nodes]]
                weights[ready] = (1.0 - lb.hot_share) / ready.size
                weights[hot] += lb.hot_share / hot.size
                self._hot = hot.tolist()
        self.node_f[k.NF_WEIGHT] = weights
        self.node_f[k.NF_HOT] = 0.0
        self.node_f[k.NF_HOT, self._hot] = 1.0
        self._weights_stale = False

    def _transitions(self) -> None:
        if not self._in_transition:  # most seconds: nobody restarting, provisioning or draining
            return
        # Whole-array tests: a Python loop over every node each second cost more than the ticks themselves.
        n = self.n_nodes
        states = self.node_f[k.NF_STATE, :n]
        back = ((states == k.RESTARTING) | (states == k.PROVISIONING)) & (self.time_s >= self._until_s[:n])
        emptied = (states == k.DRAINING) & (self.conn[:, :n].sum(axis=0) == 0)
        for i in np.flatnonzero(back | emptied).tolist():
            if back[i]:
                self._set_state(i, NodeState.READY, "back in rotation")
            else:
                drain = self.drains.pop(i, None)
                self._set_state(i, NodeState.DRAINED, "drained")
                if drain is not None and drain.then_restart:
                    self._restart_all([i], "restart after drain")

    def _drop_all(self, indices: list[int], abnormal: bool) -> list[int]:
        """Every connection of these nodes cut, their queues emptied: what each lost."""
        dropped = np.zeros(len(indices), dtype=np.int64)
        k.drop_nodes(self.rng, np.array(indices, dtype=np.int64), abnormal, *self._cut_state(), dropped)
        return dropped.tolist()

    def _restart_all(self, indices: list[int], why: str) -> None:
        """Abrupt restarts, down now and back after restart_s: one disconnect event for what they cut."""
        cut: dict[str, int] = {}
        for i, dropped in zip(indices, self._drop_all(indices, abnormal=True), strict=True):
            self.drains.pop(i, None)
            self._until_s[i] = self.time_s + self.scenario.nodes.restart_s
            self._set_state(i, NodeState.RESTARTING, why)
            if dropped:
                cut[self.node_ids[i]] = dropped
        self._announce_cut(
            cut,
            "{node} restart dropped {dropped:,} connections",
            "restart of {count} nodes dropped {dropped:,} connections",
        )

    def _announce_cut(self, cut: dict[str, int], alone: str, together: str) -> None:
        """One event per action, not per node: a fleet restart is one disconnect of 200 nodes (its nodes in
        data.nodes), and one message to each console instead of 200."""
        dropped = sum(cut.values())
        if len(cut) == 1:
            (node,) = cut
            message = alone.format(node=node, dropped=dropped)
            self._event("disconnect", message, node=node, data=self._cut_data(dropped))
        elif cut:
            message = together.format(count=len(cut), dropped=dropped)
            self._event("disconnect", message, data=self._cut_data(dropped, nodes=list(cut)))

    # --- actions (the fleet API's write side and the timeline use these) -------------------------------

    def index_of(self, node_id: str) -> int:
        try:
            return self.node_ids.index(node_id)
        except ValueError:
            raise InputError(
                "node", node_id, f"a node id such as {self.node_ids[0]}..{self.node_ids[-1]}"
            ) from None

    def restart_nodes(self, node_ids: list[str], why: str = "restarted") -> None:
        self._restart_all([self.index_of(node_id) for node_id in node_ids], why)

    def kill_nodes(self, node_ids: list[str]) -> None:
        cut: dict[str, int] = {}
        indices = [self.index_of(node_id) for node_id in node_ids]
        for i, dropped in zip(indices, self._drop_all(indices, abnormal=True), strict=True):
            cut[self.node_ids[i]] = dropped
            self._until_s[i] = math.inf
            self._set_state(i, NodeState.DOWN, "killed")
        self._announce_cut(cut, "{node} down, dropped {dropped:,}", "{count} nodes down, dropped {dropped:,}")

    def disconnect_fraction(self, fraction: float) -> None:
        if not 0 < fraction <= 1:
            raise InputError("fraction", fraction, "a share in (0, 1]")
        dropped = 0
        for i in range(self.n_nodes):
            for p in range(self.conn.shape[0]):
                count = int(self.rng.binomial(self.conn[p, i], fraction))
                dropped += self._disconnect(p, i, count, abnormal=True)
        self._event(
            "disconnect",
            f"{dropped:,} connections reset ({fraction:.0%})",
            data=self._cut_data(dropped),
        )

    @property
    def hint_max_ms(self) -> int:
        """The longest reconnect hint a drain may give: half the wheel's reach, the rest left for what the
        clients do after it (their backoff, a connect timeout)."""
        return int(self.horizon * self.tick_ms // 2)

    def room_nodes(self) -> int:
        """Nodes that can still be added now: the preallocated room less what scheduled `add_nodes` events
        will take (an operator's or instructor's add must not leave a timeline event without room)."""
        scheduled = sum(int(e.params.get("count", 0)) for e in self._timeline if e.action == "add_nodes")
        return self.capacity_nodes - self.n_nodes - scheduled

    def add_nodes(self, count: int) -> list[str]:
        if not 1 <= count <= self.capacity_nodes - self.n_nodes:
            raise InputError("count", count, f"an integer in [1, {self.capacity_nodes - self.n_nodes}]")
        added = []
        for _ in range(count):
            i = self.n_nodes
            self.n_nodes += 1
            self.node_ids.append(self._node_id(i))
            self._until_s[i] = self.time_s + self.scenario.nodes.provisioning_s
            self._apply_admission(self.admission, [i])
            self._set_state(i, NodeState.PROVISIONING, "provisioning")
            added.append(self.node_ids[i])
        if self._keep_history:
            self.history.widen(self.capacity_nodes)
        return added

    def drain(
        self,
        node_id: str,
        rate_per_s: float,
        deadline_s: float,
        hint_ms: tuple[int, int],
        then_restart: bool = False,
    ) -> None:
        i = self.index_of(node_id)
        if self.state_of(i) is not NodeState.READY:
            raise InputError("node", node_id, f"a ready node (it is {self.state_of(i)})")
        if rate_per_s <= 0:
            raise InputError("rate_per_s", rate_per_s, "a rate > 0 closes per second")
        if deadline_s < 0:
            raise InputError("deadline_s", deadline_s, "seconds ≥ 0")
        if not 0 <= hint_ms[0] <= hint_ms[1] <= self.hint_max_ms:
            raise InputError("hint_ms", list(hint_ms), f"[min, max] with 0 ≤ min ≤ max ≤ {self.hint_max_ms}")
        tick_s = self.tick_ms / 1000.0
        self.node_f[k.NF_DRAIN_RATE, i] = rate_per_s * tick_s
        self.node_f[k.NF_DRAIN_ACC, i] = 0.0
        self.node_f[k.NF_DRAIN_DEADLINE, i] = (self.time_s + deadline_s) * self.ticks_per_s
        self.node_f[k.NF_HINT_LO, i] = hint_ms[0] / self.tick_ms
        self.node_f[k.NF_HINT_HI, i] = max(hint_ms[1] / self.tick_ms, hint_ms[0] / self.tick_ms + 1)
        self.drains[i] = DrainUnderWay(
            rate_per_s, hint_ms, self.time_s, self.time_s + deadline_s, then_restart
        )
        self._set_state(i, NodeState.DRAINING, f"drain at {rate_per_s:g}/s")

    def undrain(self, node_id: str) -> None:
        i = self.index_of(node_id)
        if self.state_of(i) not in (NodeState.DRAINING, NodeState.DRAINED):
            raise InputError("node", node_id, f"a draining or drained node (it is {self.state_of(i)})")
        self.drains.pop(i, None)
        self._set_state(i, NodeState.READY, "undrained")
        self.rollout.undrained(i)

    def admission_refusal(self, settings: AdmissionSettings) -> InputError | None:
        """What `set_admission` cannot apply: a per-node change whose Retry-After window differs from the
        fleet's — the kernel draws Retry-After from one fleet-wide window (FF_RA_LO/HI), so it would have
        changed every node's (found in review)."""
        if settings.nodes and tuple(settings.retry_after_s) != tuple(self.admission.retry_after_s):
            low, high = self.admission.retry_after_s
            return InputError(
                "retry_after_s",
                list(settings.retry_after_s),
                f"the fleet's window [{low:g}, {high:g}] s for a change with `nodes`: a simulated fleet's "
                "Retry-After window is fleet-wide (change it without `nodes`)",
            )
        return None

    def set_admission(self, settings: AdmissionSettings) -> None:
        """A change without `nodes` is the fleet's: every node takes it (per-node overrides end), nodes
        added later get it, and the fleet API shows it. One with `nodes` changes those nodes only — it was
        stored as the fleet's, shown as such and given to added nodes (found in review) — and shows as
        their override (`admission_overrides`) while it differs from the fleet's."""
        targets = list(range(self.n_nodes))
        if settings.nodes:
            targets = [self.index_of(n) for n in settings.nodes]
        refusal = self.admission_refusal(settings)
        if refusal is not None:
            raise refusal
        self._apply_admission(settings, targets)
        if not settings.nodes:
            self.admission = settings
            self.admission_by_node.clear()
            self.fleet_f[k.FF_RA_LO] = settings.retry_after_s[0] * 1000 / self.tick_ms
            self.fleet_f[k.FF_RA_HI] = (settings.retry_after_s[1] + 1.0) * 1000 / self.tick_ms
        else:
            own = settings.bare()
            for i in targets:
                if own.limits_key() == self.admission.limits_key():
                    self.admission_by_node.pop(i, None)
                else:
                    self.admission_by_node[i] = own
        self._event(
            "admission",
            # The whole setting, Retry-After too: the half of the seeds' fix that spreads the returning
            # clients ("400.0/s per node, ceiling ∞" left it out).
            f"admission set: {settings_words(settings)}"
            + (f" (on {', '.join(settings.nodes)})" if settings.nodes else ""),
            data=settings.model_dump(mode="json"),
        )

    def admission_overrides(self) -> list[AdmissionSettings] | None:
        """The per-node admission to show beside the fleet's (`Frame.admission_overrides`); None while every
        node runs the fleet's."""
        if not self.admission_by_node:
            return None
        by_id = {self.node_ids[i]: settings for i, settings in self.admission_by_node.items()}
        return overrides_of(self.admission, by_id, self.node_ids[: self.n_nodes])

    def admission_in_force(self) -> AdmissionInForce:
        """What each node runs, as the alarms read it without building a frame (`sim run`)."""
        return AdmissionInForce(self.admission, tuple(self.admission_overrides() or ()))

    def _apply_admission(self, settings: AdmissionSettings, targets: list[int]) -> None:
        tick_s = self.tick_ms / 1000.0
        rate = (settings.rate_per_s or 0.0) * tick_s
        burst = float(settings.burst or 0)
        for i in targets:
            self.node_f[k.NF_RATE, i] = rate
            self.node_f[k.NF_BURST, i] = max(burst, rate, 1.0 if rate else 0.0)
            self.node_f[k.NF_TOKENS, i] = min(self.node_f[k.NF_TOKENS, i], self.node_f[k.NF_BURST, i])
            self.node_f[k.NF_CEILING, i] = float(settings.max_connections or 0)

    def set_policy(self, policy_name: str, population: str | None = None, params: dict | None = None) -> None:
        pops = self.scenario.clients.populations
        targets = [p for p, pop in enumerate(pops) if population in (None, pop.name)]
        if not targets:
            raise InputError("population", population, "one of " + ", ".join(p.name for p in pops))
        policy = make_policy(policy_name, params)
        for p in targets:
            self.policies[p] = policy
        need = max(pol.max_state for pol in self.policies) + 1
        n_base = self.fresh_by_state.shape[1]
        if need > n_base:
            grow = need - n_base

            def widen(array: np.ndarray) -> np.ndarray:
                free, bound = array[:, :, :n_base], array[:, :, n_base:]
                pad = ((0, 0), (0, 0), (0, grow))
                return np.concatenate([np.pad(free, pad), np.pad(bound, pad)], axis=2)

            self.wheel = widen(self.wheel)
            self.wheel_start = widen(self.wheel_start)
            self.fresh_by_state = np.pad(self.fresh_by_state, ((0, 0), (0, grow)))
        self.policy_tables = arrays.policy_tables(
            self.policies, self.fresh_by_state.shape[1], self.horizon, self.tick_ms, self.pop_f
        )
        self._event("policy", f"clients switched to {policy_name}", data={"policy": policy_name})

    # --- once a second --------------------------------------------------------------------------------

    def _run_timeline(self) -> None:
        while self._timeline and self._timeline[0].at_s <= self.time_s:
            event = self._timeline.pop(0)
            with self.scripted(event.action):
                self.apply_injection(event.action, dict(event.params), injected=False)

    def apply_injection(self, action: str, params: dict, injected: bool = True) -> None:
        """A timeline event or an instructor's injection, by name (see scenario.EVENT_ACTIONS). An
        injection says so where it shows; the scenario's own timeline is simply what happens."""
        nodes = params.get("nodes")
        if isinstance(nodes, int):
            first = int(params.get("first", 0))
            nodes = [self.node_ids[j] for j in range(first, min(first + nodes, self.n_nodes))]
        if action == "restart_nodes":
            self.restart_nodes(nodes or [], why="restarted (injected)" if injected else "restarted")
        elif action == "kill_nodes":
            self.kill_nodes(nodes or [])
        elif action == "disconnect_fraction":
            self.disconnect_fraction(float(params["fraction"]))
        elif action == "add_nodes":
            self.add_nodes(int(params["count"]))
        elif action == "start_rollout":
            r = self.scenario.rollout
            self.rollout.start(
                batch_size=int(params.get("batch_size", r.batch_size if r else 1)),
                interval_s=float(params.get("interval_s", r.interval_s if r else 90.0)),
                mode=RolloutMode(params.get("mode", r.mode if r else "abrupt")),
                pause_cpu_pct=float(params.get("pause_cpu_pct", r.pause_cpu_pct if r else 0.0)),
                scripted=True,  # the timeline's (no instructor injects a rollout): not the operator's
            )
        elif action == "halt_rollout":
            self.rollout.halt_if_under_way("halted by the scenario's timeline")
        elif action == "set_admission":
            current = self.admission.model_dump()
            current.update({k2: v for k2, v in params.items() if k2 != "nodes"})
            self.set_admission(AdmissionSettings(**current))
        elif action == "drain_nodes":
            for node_id in nodes or []:
                self.drain(
                    node_id,
                    float(params.get("rate_per_s", 833.0)),
                    float(params.get("deadline_s", 600.0)),
                    tuple(params.get("hint_ms", (1000, 30000))),
                )
        elif action == "set_policy":
            self.set_policy(str(params["policy"]), params.get("population"), params.get("params"))
        else:
            raise InputError("action", action, "a known injection")

    def _autoscale(self) -> None:
        if not self.scenario.autoscale.enabled or self.last is None:
            return
        states = self.node_f[k.NF_STATE, : self.n_nodes]
        ready = states == k.READY
        serving = int((ready | (states == k.PROVISIONING)).sum())
        ready_cpu = float(self._cpu_pct[: self.n_nodes][ready].sum())
        scale = self.autoscaler.decide(self.time_s, ready_cpu, serving, self.n_nodes)
        if scale is None:
            return
        self.add_nodes(scale.count)
        self._event(
            "autoscale",
            f"autoscaler adds {scale.count} nodes (mean CPU {scale.mean_cpu_pct:.0f} % over {scale.window_s} s, "
            f"target {self.scenario.autoscale.cpu_target_pct:g} %)",
            data={"count": scale.count, "mean_cpu_pct": round(scale.mean_cpu_pct, 1)},
        )

    def _update_breaker(self) -> None:
        r = self.scenario.resync
        if not r.breaker or self.last is None:
            return
        f = self.last.fleet_out
        share = self.breaker.update(f[k.OF_RESYNC_FAIL], f[k.OF_RESYNC_DONE])
        if share is None:
            return
        self.fleet_f[k.FF_BREAKER_OPEN] = 1.0 if self.breaker.open else 0.0
        self._event(
            "breaker",
            f"cold-path breaker {'open' if self.breaker.open else 'closed'} "
            f"({share:.1%} of resyncs failed over {r.breaker_window_s:g} s)",
        )

    # --- records (made in console.sim.records) ----------------------------------------------------

    def cpu_pct(self) -> np.ndarray:
        return self._cpu_pct[: self.n_nodes].copy()

    def hottest_ready(self) -> tuple[str | None, float]:
        """The node in rotation with the highest CPU and that CPU (None and 0 when none is): the rollout's
        pause and abort lines, whose reasons name the node and the value, not the line alone. (As arrays: a
        loop over the nodes' states cost ~0.2 ms a check at 480 nodes.)"""
        n = self.n_nodes
        ready = np.flatnonzero(self.node_f[k.NF_STATE, :n] == k.READY)
        if ready.size == 0:
            return None, 0.0
        hottest = int(ready[np.argmax(self._cpu_pct[:n][ready])])
        return self.node_ids[hottest], float(self._cpu_pct[hottest])

    def node_history(self, node_id: str) -> list[NodeStatus]:
        """The node's last seconds (up to records.HISTORY_S), oldest first."""
        return records.node_history(self, self.index_of(node_id))

    def frame(self, result: SecondResult | None = None, with_nodes: bool = True) -> Frame:
        return records.frame(self, result or self.last or self.step(), with_nodes)

    def live_snapshot(self) -> FleetSnapshot:
        """The snapshot with node states as they are now: an action between seconds (a drain) changes a
        node's state before the next second's figures exist, and the guards must judge the next action
        against it."""
        if self.last is None:
            return self.snapshot()
        states = self.node_f[k.NF_STATE].astype(np.int8)
        return self.snapshot(self.frame(replace(self.last, states=states)))

    def snapshot(self, frame: Frame | None = None) -> FleetSnapshot:
        return records.snapshot(self, frame or self.frame())
