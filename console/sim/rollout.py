"""The rollout controller: restart the fleet in batches, pause when survivors run hot, abort when told.

Outage seed: 30 nodes every 90 s, no pause (the runbook said continue); the fix is a pause when any surviving
node's CPU exceeds 75 % and an abort criterion, CPU > 80 % for 30 s. Interview seed: drain-mode batches of 2,
each drained over 10 minutes before the next starts.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING

from console.errors import InputError
from console.guards.rollout import HALTABLE, NothingTo, plan_batches
from console.protocol import (
    ActionKind,
    NodeState,
    RolloutMode,
    RolloutState,
    RolloutStatus,
    RolloutWait,
    limits,
)

if TYPE_CHECKING:
    from console.sim.engine import Simulation
    from console.sim.scenario import Scenario

#: A drain-mode batch's drain when the scenario has no [rollout] section: 833 closes/s per node, force-close
#: at 600 s, hints 1–30 s (the interview seed's 500 k over 10 minutes).
DEFAULT_BATCH_DRAIN: tuple[float, float, tuple[int, int]] = (833.0, 600.0, (1000, 30000))


def batch_drain(scenario: Scenario) -> tuple[float, float, tuple[int, int]]:
    """The drain each node of a drain-mode batch gets — rate per second, deadline, hint window: what
    `_start_batch` applies and what the guards are told (`console.server.simulator.capacity_of`)."""
    r = scenario.rollout
    if r is None:
        return DEFAULT_BATCH_DRAIN
    return r.drain_rate_per_s, r.drain_deadline_s, r.drain_hint_ms


#: The states a scheduled rollout not begun is in: waiting for its start, or halted before it.
_MAY_START = (RolloutState.RUNNING, RolloutState.HALTED)


class RolloutController:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.state = RolloutState.IDLE
        self.mode: RolloutMode | None = None
        self.batch_size = 0
        self.interval_s = 0.0
        self.pause_cpu_pct = 0.0
        #: The rate each drain-mode batch node drains at, when the operator asked for one (the request's
        #: `drain_rate_per_s`); None: the scenario's (`batch_drain`).
        self.drain_rate_per_s: float | None = None
        self.batches: list[list[int]] = []
        self.batch = 0  # batches started
        self.batch_started_s = 0.0
        self.next_at_s = 0.0
        #: When the rollout is to start: the scenario's `start_at_s`, else when it was started.
        self.start_at_s: float | None = None
        #: When its first batch started (None before): a rollout halted before its scheduled start and
        #: resumed later said it started at the schedule, when nothing had.
        self.started_at_s: float | None = None
        self.completed_at_s: float | None = None
        self.pause_reason: str | None = None
        self.paused_at_s: float | None = None  # while auto-paused: a sped-up frame shows its last second only
        self.halted_at_s: float | None = None  # while halted: since when, for the operator who comes to it
        self._hot_since_s: float | None = None
        self._undrained: set[int] = set()  # batch nodes put back in rotation before they drained
        #: "rollout started: …", held until the fleet second it starts: a scenario's rollout is scheduled
        #: at 0 for its start_at_s, and its event was stamped 0.0, seconds before its first batch.
        self._start_event: str | None = None
        #: The scenario's own rollout (its `[rollout]` or timeline), not started or resumed by the operator:
        #: its batches' disconnects say so (`Simulation.scripted`).
        self.scripted = False

    def copy_for(self, sim: Simulation) -> RolloutController:
        twin = RolloutController(sim)
        twin.__dict__.update({k: v for k, v in self.__dict__.items() if k != "sim"})
        twin.batches = [list(b) for b in self.batches]
        twin._undrained = set(self._undrained)
        return twin

    # --- operator intents -----------------------------------------------------------------------------

    def start(
        self,
        batch_size: int,
        interval_s: float,
        mode: RolloutMode,
        pause_cpu_pct: float,
        start_at_s: float | None = None,
        scripted: bool = False,
        drain_rate_per_s: float | None = None,
    ) -> None:
        if self.state in (RolloutState.RUNNING, RolloutState.PAUSED):
            raise InputError("rollout", str(self.state), "no rollout running (halt it first)")
        n = self.sim.n_nodes
        if not 1 <= batch_size <= n:
            raise InputError("batch_size", batch_size, f"an integer in [1, {n}]")
        if interval_s <= 0:
            raise InputError("interval_s", interval_s, "seconds > 0")
        low, high = limits.DRAIN_RATE_PER_S
        if drain_rate_per_s is not None and not low < drain_rate_per_s <= high:
            raise InputError(
                "drain_rate_per_s",
                drain_rate_per_s,
                f"closes per second per node, > {low:g} and ≤ {high:.0f}",
            )
        self.mode = mode
        self.batch_size = batch_size
        self.interval_s = interval_s
        self.pause_cpu_pct = pause_cpu_pct
        self.drain_rate_per_s = drain_rate_per_s
        self.batches = plan_batches(range(n), batch_size)
        self._undrained.clear()
        self.batch = 0
        self.start_at_s = self.sim.time_s if start_at_s is None else start_at_s
        self.started_at_s = None
        self.next_at_s = self.start_at_s
        self.completed_at_s = None
        self.pause_reason = None
        self.paused_at_s = None
        self.halted_at_s = None
        self.state = RolloutState.RUNNING
        self.scripted = scripted
        asked = "" if drain_rate_per_s is None else f", draining at {drain_rate_per_s:g}/s per node"
        self._start_event = f"rollout started: {len(self.batches)} batches of {batch_size}, {mode}{asked}, every {interval_s:g} s"
        self._say_started()

    def _say_started(self) -> None:
        """The start's event, once the fleet clock has reached the start (`start_at_s`)."""
        if self._start_event is None or self.sim.time_s < (self.start_at_s or 0.0):
            return
        self.sim._event("rollout", self._start_event, data={"batches": len(self.batches)})
        self._start_event = None

    def halt(self, why: str = "halted by operator") -> None:
        """The operator's halt: refused with nothing running or paused, in the guard's words (`NothingTo`),
        as the server's guard refuses it — applied anyway, it was answered `applied` and changed nothing."""
        if self.state not in HALTABLE:
            raise NothingTo(ActionKind.ROLLOUT_HALT, self.status())
        self.halt_if_under_way(why)

    def halt_if_under_way(self, why: str) -> None:
        """Halt a running or paused rollout; nothing otherwise: the scenario's timeline, an instructor's
        injection and the rollout's own halts, which may find it halted or done already."""
        if self.state not in HALTABLE:
            return
        self.state = RolloutState.HALTED
        self.paused_at_s = None
        self.halted_at_s = self.sim.time_s
        if self._not_begun():
            # Halted before its start, it never starts by itself: said, so a halted scheduled rollout does
            # not read as one halted midway (the event said "after batch 0/16").
            self._start_event = None  # (its resume says what happens next)
            self.pause_reason = f"{why} before its start: it does not start; resume starts it"
            self.sim._event("rollout", f"rollout {self.pause_reason}")
            return
        self.pause_reason = why
        self.sim._event("rollout", f"rollout {why} after batch {self.batch}/{len(self.batches)}")

    def _not_begun(self) -> bool:
        """A scheduled rollout whose start is still ahead (`start_at_s`): no batch yet, and its first due later."""
        return self.batch == 0 and self.start_at_s is not None and self.sim.time_s < self.start_at_s

    def undrained(self, i: int) -> None:
        """A node of the drain-mode batch under way put back in rotation before it drained: halt, as the
        controller does (`LeftTheDrain`). Taken as done, the batch went on, and the rollout completed with
        the node never restarted."""
        live = self.state in (RolloutState.RUNNING, RolloutState.PAUSED, RolloutState.HALTED)
        if not live or self.mode is not RolloutMode.DRAIN or self.batch == 0:
            return
        if i not in self.batches[self.batch - 1]:
            return
        self._undrained.add(i)  # halted already: the resume drains it again all the same
        self.halt_if_under_way(
            f"{self.sim.node_ids[i]} is back in rotation before it drained (undrained): resume drains it again"
        )

    def resume(self) -> None:
        if self.state not in (RolloutState.PAUSED, RolloutState.HALTED):
            raise NothingTo(ActionKind.ROLLOUT_RESUME, self.status())
        # Resumed, the batch goes on as the controller's does: a node undrained from it is drained again,
        # to be restarted; nodes still draining or drained are not drained again.
        rate_per_s, deadline_s, hint_ms = self._batch_drain()
        for i in sorted(self._undrained):
            if self.sim.state_of(i) is NodeState.READY:
                self.sim.drain(self.sim.node_ids[i], rate_per_s, deadline_s, hint_ms, then_restart=True)
        self._undrained.clear()
        self.state = RolloutState.RUNNING
        self.scripted = False  # resumed by the operator: what its batches cut from here is their choice
        self.pause_reason = None
        self.paused_at_s = None
        self.halted_at_s = None
        self.next_at_s = max(self.next_at_s, self.sim.time_s)
        if self._not_begun():
            self.sim._event("rollout", f"rollout resumed before its start: it starts at {self.next_at_s:g} s")
            return
        self.sim._event("rollout", f"rollout resumed at batch {self.batch + 1}/{len(self.batches)}")

    # --- once a second --------------------------------------------------------------------------------

    def tick(self) -> None:
        if self.state is not RolloutState.RUNNING:
            return
        sim = self.sim
        self._say_started()
        if self._abort_criterion_met():
            return
        if self._halted_on_a_node_down():
            return
        if self.batch >= len(self.batches):
            if self._batch_done(self.batches[-1]):
                self.state = RolloutState.COMPLETED
                self.completed_at_s = sim.time_s
                sim._event("rollout", f"rollout completed in {sim.time_s - (self.started_at_s or 0):.0f} s")
            return
        if sim.time_s < self.next_at_s:
            return
        if (
            self.batch > 0
            and self.mode is RolloutMode.DRAIN
            and not self._batch_done(self.batches[self.batch - 1])
        ):
            return
        if self.pause_cpu_pct > 0:
            node_id, hottest = sim.hottest_ready()
            if hottest > self.pause_cpu_pct:
                self.state = RolloutState.PAUSED
                self.pause_reason = f"surviving node {node_id} CPU {hottest:.0f} % > {self.pause_cpu_pct:g} %"
                self.paused_at_s = sim.time_s  # between seconds: the next one is the first paused
                sim._event("rollout", f"rollout auto-paused: {self.pause_reason}")
                return
        self._start_batch()

    def _abort_criterion_met(self) -> bool:
        r = self.sim.scenario.rollout
        if r is None or r.abort_cpu_pct <= 0:
            return False
        sim = self.sim
        node_id, hottest = sim.hottest_ready()
        if hottest <= r.abort_cpu_pct:
            self._hot_since_s = None
            return False
        if self._hot_since_s is None:
            self._hot_since_s = sim.time_s
        if sim.time_s - self._hot_since_s < r.abort_after_s:
            return False
        self.state = RolloutState.ABORTED
        # Named as the controller names it (console/gateway/rollout.py), with the value that tripped it.
        self.pause_reason = f"abort criterion: {node_id} CPU {hottest:.0f} % > {r.abort_cpu_pct:g} % for {r.abort_after_s:g} s"
        sim._event("rollout", f"rollout aborted — {self.pause_reason}")
        return True

    def _halted_on_a_node_down(self) -> bool:
        """A node of the batch the rollout waits for (the last one; in drain mode each one) down — killed,
        not restarted by the rollout — never comes back by itself: halt, as the controller does, instead of
        waiting for it for good ("running" ever after). Resumed once it is restarted, the rollout goes on."""
        if self.batch == 0 or (self.batch < len(self.batches) and self.mode is not RolloutMode.DRAIN):
            return False
        down = [i for i in self.batches[self.batch - 1] if self.sim.state_of(i) is NodeState.DOWN]
        if not down:
            return False
        self.halt_if_under_way(
            f"{self.sim.node_ids[down[0]]} is down (killed or hung): restart it, then resume"
        )
        return True

    def _batch_done(self, batch: list[int]) -> bool:
        return all(self.sim.state_of(i) is NodeState.READY for i in batch)

    def _start_batch(self) -> None:
        with self.sim.scripted("rollout") if self.scripted else nullcontext():
            self._restart_batch()

    def _restart_batch(self) -> None:
        sim = self.sim
        nodes = self.batches[self.batch]
        if self.batch == 0:
            self.started_at_s = sim.time_s
        self.batch += 1
        self.batch_started_s = sim.time_s
        self.next_at_s = sim.time_s + self.interval_s
        sim._event(
            "rollout",
            f"batch {self.batch}/{len(self.batches)}: {len(nodes)} nodes ({self.mode})",
            data={"batch": self.batch, "nodes": [sim.node_ids[i] for i in nodes], "mode": str(self.mode)},
        )
        # A node out of rotation is restarted too, as its batch comes to it — as the controller does: a
        # drained one at once (nothing left to drain), a draining one once drained; abrupt, every node but
        # one restarting or provisioning (the controller runs each one's restart command, a down one's
        # too). Left alone, the rollout waited for it to be ready and never went on. Drain mode leaves a
        # node down as it is: the rollout halts on it (`_halted_on_a_node_down`), as the controller's does.
        states = {i: sim.state_of(i) for i in nodes}
        now = [i for i in nodes if states[i] is NodeState.DRAINED]
        if self.mode is RolloutMode.ABRUPT:
            now += [i for i in nodes if states[i] in (NodeState.READY, NodeState.DRAINING, NodeState.DOWN)]
            sim._restart_all(sorted(now), f"rollout batch {self.batch}")
            return
        if now:
            sim._restart_all(now, f"rollout batch {self.batch}")
        for i in nodes:
            drain = sim.drains.get(i)
            if states[i] is NodeState.DRAINING and drain is not None:
                sim.drains[i] = replace(drain, then_restart=True)
        rate_per_s, deadline_s, hint_ms = self._batch_drain()
        for i in nodes:
            if states[i] is NodeState.READY:
                sim.drain(sim.node_ids[i], rate_per_s, deadline_s, hint_ms, then_restart=True)

    def _batch_drain(self) -> tuple[float, float, tuple[int, int]]:
        """A batch node's drain, at start and at a resume alike: the operator's rate when the rollout asked
        for one, with the scenario's deadline and hints."""
        rate_per_s, deadline_s, hint_ms = batch_drain(self.sim.scenario)
        if self.drain_rate_per_s is not None:
            rate_per_s = self.drain_rate_per_s
        return rate_per_s, deadline_s, hint_ms

    def status(self) -> RolloutStatus:
        return RolloutStatus(
            state=self.state,
            mode=self.mode,
            batch_size=self.batch_size or None,
            interval_s=self.interval_s or None,
            pause_cpu_pct=self.pause_cpu_pct or None,
            batch=self.batch,
            batches=len(self.batches),
            pause_reason=self.pause_reason,
            started_at_s=self.started_at_s,
            starts_at_s=self.start_at_s if self._not_begun() and self.state in _MAY_START else None,
            completed_at_s=self.completed_at_s,
            paused_at_s=self.paused_at_s,
            halted_at_s=self.halted_at_s,
            waiting_for=self.waiting_for(),
            drain_rate_per_s=self.drain_rate_per_s,
            next_batch_at_s=self._next_batch_at_s(),
        )

    def _next_batch_at_s(self) -> float | None:
        """When the next batch is due (`next_at_s`: batch start + interval), said once the batch `tick` waits
        for is done (in drain mode each batch; abrupt, none but the last) and another is left, while the
        rollout may go on — also halted: a resume keeps it (`resume`), and the guard says so."""
        live = (RolloutState.RUNNING, RolloutState.PAUSED, RolloutState.HALTED)
        if self.state not in live or not 0 < self.batch < len(self.batches):
            return None
        if self.mode is RolloutMode.DRAIN and not self._batch_done(self.batches[self.batch - 1]):
            return None
        return self.next_at_s

    def waiting_for(self) -> RolloutWait | None:
        """What `tick` waits for before it goes on, as the controller says it (`waiting_for`): the batch it
        must see back (in drain mode each batch, abrupt the last), else the interval from batch start to
        batch start. No limit on a batch here: the simulator halts on a node down, never on a timeout."""
        if self.state is not RolloutState.RUNNING or self.batch == 0:
            return None
        sim = self.sim
        waited_s = round(sim.time_s - self.batch_started_s, 1)
        last = self.batch >= len(self.batches)
        if self.mode is RolloutMode.DRAIN or last:
            batch = self.batches[self.batch - 1]
            states = {sim.node_ids[i]: sim.state_of(i) for i in batch}
            out = (NodeState.DRAINING, NodeState.DRAINED)
            draining = [n for n, state in states.items() if state in out]
            if draining and self.mode is RolloutMode.DRAIN:
                return RolloutWait(what="drain", nodes=draining, waited_s=waited_s)
            coming_back = [n for n, state in states.items() if state is not NodeState.READY]
            if coming_back:
                return RolloutWait(what="restart", nodes=coming_back, waited_s=waited_s)
        if last or sim.time_s >= self.next_at_s:
            return None
        return RolloutWait(what="interval", waited_s=waited_s, limit_s=self.interval_s)
