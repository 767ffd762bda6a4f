"""Rollouts over real nodes: drain a batch (or not), restart it through the configured command, wait until
it is back in rotation, and start the next batch `interval_s` after this one started (or at once, when the
batch took longer) — as the simulator paces them and the guard projects them. A halt does not shorten that:
resumed in the interval, the rollout waits out what is left of it.

The seeds' lessons are the stops: pause when any surviving node's CPU passes `pause_cpu_pct` (outage seed:
75 %; the runbook that said "continue" is what turned a restart into an outage) and wait for the operator
to resume; abort when a surviving node stays above `cpu_abort_pct` for `cpu_abort_for_s` (outage seed:
80 % for 30 s — the same `Thresholds` the guards and alarms read); halt when a restart command fails or a
node does not come back.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from collections.abc import Callable, Sequence

from console.errors import InputError
from console.figures import first_named
from console.gateway.rollout_state import RolloutRecord
from console.guards.rollout import NothingTo, plan_batches
from console.guards.thresholds import Thresholds
from console.protocol import (
    ActionKind,
    DrainRequest,
    NodeState,
    NodeStatus,
    RolloutMode,
    RolloutRequest,
    RolloutState,
    RolloutStatus,
    RolloutWait,
)

#: The drain a drain-mode batch gets when the rollout does not say: the interview seed's 10-minute window.
DEFAULT_BATCH_DRAIN = DrainRequest(rate_per_s=100.0, deadline_s=600.0, hint_ms=(1000, 30_000))


class NoRestartCommand(InputError):
    """A rollout refused because nodes have no restart command, said as what is missing and where to add
    it. The field-error shape said "restart: 'a' is not allowed; expected a restart = … command", which read
    as if node a had been refused by something. `field` stays `restart` (the key to add, and the field the
    problem+json names); `value` lists the nodes without one."""

    def __init__(self, missing: Sequence[str], said: str) -> None:
        self._said = said
        super().__init__("restart", list(missing), 'restart = "…{node}…" for every node')

    @classmethod
    def in_nodes_file(cls, missing: Sequence[str], path: str | None) -> NoRestartCommand:
        """Nodes of a nodes file (`path`; None: not known here) without `restart =`: "node a has no restart
        command: add restart = "…{node}…" to its [[nodes]] table in nodes.toml"."""
        where = path or "the --nodes file"
        one = len(missing) == 1
        who = f"node {missing[0]} has" if one else f"nodes {first_named(missing)} have"
        tables = "its [[nodes]] table" if one else "their [[nodes]] tables"
        return cls(missing, f'{who} no restart command: add restart = "…{{node}}…" to {tables} in {where}')

    def _message(self) -> str:
        return self._said


class AbortWatch:
    """The abort criterion over time — pure: give it the fleet and the time, it says when to abort."""

    def __init__(self, cpu_abort_pct: float, cpu_abort_for_s: float) -> None:
        self.cpu_abort_pct, self.cpu_abort_for_s = cpu_abort_pct, cpu_abort_for_s
        self._hot_since_s: float | None = None

    def observe(self, nodes: list[NodeStatus], now_s: float) -> str | None:
        """The abort reason once the criterion has held long enough, else None."""
        hot = hot_survivor(nodes, [], self.cpu_abort_pct)
        if hot is None:
            self._hot_since_s = None
            return None
        if self._hot_since_s is None:
            self._hot_since_s = now_s
        if now_s - self._hot_since_s < self.cpu_abort_for_s:
            return None
        return f"abort criterion: {hot.id} CPU > {self.cpu_abort_pct:g} % for {self.cpu_abort_for_s:g} s"


def hot_survivor(nodes: list[NodeStatus], batch: list[str], pause_cpu_pct: float) -> NodeStatus | None:
    """The hottest node outside the batch still serving, if it runs above the pause line."""
    serving = [n for n in nodes if n.id not in batch and n.state.in_rotation]
    hottest = max(serving, key=lambda n: n.cpu_pct, default=None)
    return hottest if hottest is not None and hottest.cpu_pct > pause_cpu_pct else None


#: A batch node seen in rotation, or down, this long while its drain is awaited has left the drain (an
#: operator's undrain, a restart by something other than the rollout, a kill or a hang). Not at once: a node
#: frame sent just before the drain arrived can still say `ready` once (frames come every second), and a
#: supervisor may bring a killed node back.
LEFT_DRAIN_AFTER_S = 3.0


class LeftTheDrain:
    """Whether a batch node left its drain — pure: give it the fleet and the time, it says why, or None.

    Without it the rollout waited for `drained` until the drain's deadline (10 minutes by default) while
    the node served again, and showed `running` all along — and so it did for a batch node that died or
    hung mid-drain (`down`, never `drained`: found in the fault review)."""

    def __init__(self, batch: list[str], after_s: float) -> None:
        self.batch, self.after_s = batch, after_s
        self._since_s: dict[str, tuple[NodeState, float]] = {}

    def observe(self, nodes: list[NodeStatus], now_s: float) -> str | None:
        states = {n.id: n.state for n in nodes if n.id in self.batch}
        for node_id in self.batch:
            state = states.get(node_id)
            if state not in (NodeState.READY, NodeState.DOWN):
                self._since_s.pop(node_id, None)
                continue
            seen, since = self._since_s.get(node_id, (state, now_s))
            if seen is not state:
                since = now_s
            self._since_s[node_id] = (state, since)
            if now_s - since < self.after_s:
                continue
            if state is NodeState.DOWN:
                return f"{node_id} went down before it drained (killed or hung): restart it, then resume"
            return (
                f"{node_id} is back in rotation before it drained (undrained, or restarted by "
                "something other than this rollout): halted"
            )
        return None


def wait_before_next(interval_s: float, batch_took_s: float) -> float:
    """The pause before the next batch: `interval_s` runs from batch start to batch start, as the simulator
    paces batches (and the guard projects them); a batch that took longer is followed at once."""
    return max(0.0, interval_s - batch_took_s)


class Rollout:
    """One rollout's run. `nodes()` reads the fleet; `drain` and `restart` act on one node."""

    def __init__(
        self,
        request: RolloutRequest,
        node_ids: list[str],
        nodes: Callable[[], list[NodeStatus]],
        epochs: Callable[[str], str | None],
        drain: Callable[[str, DrainRequest], object],
        restart_commands: dict[str, str],
        batch_drain: DrainRequest = DEFAULT_BATCH_DRAIN,
        ready_timeout_s: float = 60.0,
        thresholds: Thresholds | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        missing = [node for node in node_ids if not restart_commands.get(node)]
        if missing:
            raise NoRestartCommand.in_nodes_file(missing, None)
        self.request = request
        self.batches = plan_batches(node_ids, request.batch_size)
        self._nodes, self._epochs, self._drain = nodes, epochs, drain
        self._commands = restart_commands
        # The rate the rollout asks for, with the backend's deadline and hints (a restored rollout's record
        # holds the rate it started with, its request none).
        if request.drain_rate_per_s is not None:
            batch_drain = batch_drain.model_copy(update={"rate_per_s": request.drain_rate_per_s})
        self._batch_drain = batch_drain
        self._clock = clock  # the fleet clock, for started_at_s (its first batch's start) and completed_at_s
        self._ready_timeout_s = ready_timeout_s
        self._resumed = asyncio.Event()
        self._batches_done = 0  # where a resumed (halted) rollout goes on
        # The batch under way, node by node (what a restarted controller says it knew): drains sent and not
        # yet seen drained, restart commands started and not yet finished, restart commands that succeeded.
        self._draining: set[str] = set()
        self._restarting: set[str] = set()
        self._restarted: set[str] = set()
        # Each batch node's stream epoch before its restart: another one later is a new process.
        self._epochs_before: dict[str, str | None] = {}
        # The wait under way: its kind, its nodes, when it began and its limit, and the clock that began
        # on (monotonic for a drain or a restart; the fleet clock for the interval, which runs from the
        # batch's start, across halts and restarts of the controller) — said in the status (`waiting_for`)
        # so a 60 s wait for a restart reads as one, not as "running" and nothing.
        self._wait: tuple[str, list[str], float, float | None, Callable[[], float]] | None = None
        # When the latest batch started, on the fleet clock: the next one is due `interval_s` after it.
        self._batch_started_s: float | None = None
        #: Called after every change worth keeping (the controller writes the rollout state file).
        self.on_change: Callable[[], None] = lambda: None
        limits = thresholds or Thresholds()
        self._abort = AbortWatch(limits.cpu_abort_pct, limits.cpu_abort_for_s)
        self.status = RolloutStatus(
            state=RolloutState.RUNNING,
            mode=request.mode,
            batch_size=request.batch_size,
            interval_s=request.interval_s,
            pause_cpu_pct=request.pause_cpu_pct,
            batches=len(self.batches),
            drain_rate_per_s=request.drain_rate_per_s,
        )

    def record(self, fleet: str, clock_zero_unix_s: float, saved_unix_s: float) -> RolloutRecord:
        """What a restarted controller needs of this rollout (`rollout_state.py`), times in Unix seconds."""
        status = self.status
        return RolloutRecord(
            fleet=fleet,
            saved_unix_s=saved_unix_s,
            state=status.state,
            mode=self.request.mode,
            batch_size=self.request.batch_size,
            interval_s=self.request.interval_s,
            pause_cpu_pct=self.request.pause_cpu_pct,
            batch_drain=self._batch_drain,
            batches=self.batches,
            batch=status.batch,
            batches_done=self._batches_done,
            pause_reason=status.pause_reason,
            started_at_unix_s=_unix_s(status.started_at_s, clock_zero_unix_s),
            completed_at_unix_s=_unix_s(status.completed_at_s, clock_zero_unix_s),
            halted_at_unix_s=_unix_s(status.halted_at_s, clock_zero_unix_s),
            batch_started_at_unix_s=_unix_s(self._batch_started_s, clock_zero_unix_s),
            draining=sorted(self._draining),
            restarting=sorted(self._restarting),
            restarted=sorted(self._restarted),
            epochs_before=dict(self._epochs_before),
        )

    @classmethod
    def restored(
        cls,
        record: RolloutRecord,
        clock_zero_unix_s: float,
        reason: str,
        nodes: Callable[[], list[NodeStatus]],
        epochs: Callable[[str], str | None],
        drain: Callable[[str, DrainRequest], object],
        restart_commands: dict[str, str],
        **options: object,
    ) -> Rollout:
        """The rollout `record` describes, as a controller restarted under it: one that was running or
        paused is halted (`reason`) — never resumed by itself: the operator resumes it, which goes on with
        the batch it was in, as after any halt; between batches it waits out what is left of the interval,
        counted on the fleet clock from the batch's start, so the time no controller ran counts too (the
        fleet's clients went on settling meanwhile)."""
        # The record keeps the drain its batches get, not whether the rate was asked for: one other than this
        # controller's own was (`start_rollout` gives no other), and the status says it again.
        rate_per_s = record.batch_drain.rate_per_s
        request = RolloutRequest(
            batch_size=record.batch_size,
            interval_s=record.interval_s,
            mode=record.mode,
            pause_cpu_pct=record.pause_cpu_pct,
            drain_rate_per_s=None if rate_per_s == DEFAULT_BATCH_DRAIN.rate_per_s else rate_per_s,
        )
        node_ids = [node for batch in record.batches for node in batch]
        rollout = cls(
            request,
            node_ids,
            nodes,
            epochs,
            drain,
            restart_commands,
            batch_drain=record.batch_drain,
            **options,  # type: ignore[arg-type]
        )
        rollout.batches = [list(batch) for batch in record.batches]  # as planned then
        rollout._batches_done = record.batches_done
        rollout._draining = set(record.draining)
        rollout._restarting = set(record.restarting)
        rollout._restarted = set(record.restarted)
        rollout._epochs_before = dict(record.epochs_before)
        rollout._batch_started_s = _fleet_s(record.batch_started_at_unix_s, clock_zero_unix_s)
        status = rollout.status
        status.batch, status.pause_reason = record.batch, record.pause_reason
        status.started_at_s = _fleet_s(record.started_at_unix_s, clock_zero_unix_s)
        status.completed_at_s = _fleet_s(record.completed_at_unix_s, clock_zero_unix_s)
        status.state = record.state
        if record.state is RolloutState.HALTED:
            status.halted_at_s = _fleet_s(record.halted_at_unix_s, clock_zero_unix_s)
        if record.unfinished:
            status.state, status.pause_reason = RolloutState.HALTED, reason
            status.halted_at_s = rollout._clock()
        rollout._say_next_batch()
        return rollout

    @property
    def restarting(self) -> frozenset[str]:
        """The nodes whose restart command runs or ran and that this rollout waits for: their silence is the
        planned restart, not an outage. Empty once it stops waiting (halted, aborted): a node still gone
        then is down."""
        if self.status.state is not RolloutState.RUNNING:
            return frozenset()
        return frozenset(self._restarting | self._restarted)

    def waiting_for(self) -> RolloutWait | None:
        """What the running rollout waits for right now, with the seconds waited so far; None when it
        waits for nothing or is not running (a halt ends every wait)."""
        if self._wait is None or self.status.state is not RolloutState.RUNNING:
            return None
        what, nodes, since, limit_s, clock = self._wait
        return RolloutWait(what=what, nodes=nodes, waited_s=round(clock() - since, 1), limit_s=limit_s)

    def unfinished_batch(self) -> list[str]:
        """The nodes of the batch under way not yet seen restarted: those a resume may restart, unless their
        stream epoch says they already were (`_roll`). Empty between batches."""
        if self.status.batch <= self._batches_done:
            return []
        return [node for node in self.batches[self.status.batch - 1] if node not in self._restarted]

    def resume(self) -> bool:
        """Resume a paused rollout, or a halted one — as the guard and the simulator do: this refused a
        halted rollout the dry run had passed (found in review). True when `run()` must be started again
        (a halt ended it): it goes on with the batch the halt interrupted, whose nodes already restarted
        are not restarted again and whose nodes still draining or drained are not drained again."""
        if self.status.state is RolloutState.PAUSED:
            self._resumed.set()
            return False
        if self.status.state is RolloutState.HALTED:
            self.status.state, self.status.pause_reason = RolloutState.RUNNING, None
            self.status.halted_at_s = None
            self.on_change()
            return True
        raise NothingTo(ActionKind.ROLLOUT_RESUME, self.status)

    async def run(self) -> RolloutStatus:
        batches = asyncio.create_task(self._run_batches())
        try:
            while not batches.done():
                reason = self._abort.observe(self._nodes(), time.monotonic())
                if reason is not None:
                    batches.cancel()
                    await asyncio.gather(batches, return_exceptions=True)
                    self.status.state, self.status.pause_reason = RolloutState.ABORTED, reason
                    self._say_next_batch()
                    self.on_change()
                    return self.status
                await asyncio.wait({batches}, timeout=0.5)
        except asyncio.CancelledError:  # halted: stop the batch work too
            batches.cancel()
            await asyncio.gather(batches, return_exceptions=True)
            raise
        return await batches

    async def _run_batches(self) -> RolloutStatus:
        try:
            if self.status.batch == self._batches_done > 0 and self._batch_started_s is None:
                # Taken up between batches from an older controller's state file, which does not say when
                # the batch started: a whole interval from this resume — the next batch late rather than early.
                self._batch_started_s = self._clock()
                self._say_next_batch()
            for k in range(self._batches_done, len(self.batches)):
                batch = self.batches[k]
                if k and self.status.batch == k:  # batch k is done, k + 1 not begun (a resume may come here)
                    await self._interval()
                await self._unless_hot(batch)
                if self.status.started_at_s is None:  # its first batch, not one a resume goes on with
                    self.status.started_at_s = self._clock()
                # A new batch, or the one a resume goes on with: its interval runs from now either way. A
                # resumed batch may move its clients only now (a node undrained meanwhile is drained again),
                # and the next batch must not follow before they are back: late rather than early, as before.
                self.status.batch, self._batch_started_s = k + 1, self._clock()
                self._say_next_batch()
                self.on_change()
                await self._roll(batch)
                self._batches_done = k + 1
                self._say_next_batch()
                self.on_change()
            self.status.state, self.status.completed_at_s = RolloutState.COMPLETED, self._clock()
        except RolloutHalted as halted:
            self.status.state, self.status.pause_reason = RolloutState.HALTED, str(halted)
            self.status.halted_at_s = self._clock()
        except asyncio.CancelledError:
            self.status.state, self.status.pause_reason = RolloutState.HALTED, "halted by operator"
            self.status.halted_at_s = self._clock()
            self.on_change()
            raise
        self.on_change()
        return self.status

    async def _interval(self) -> None:
        """The operator's pacing, from batch start to batch start: what is left of `interval_s` since the
        latest batch started. Waited after the batch was back, a real fleet's rollout ran a batch's drain and
        restart longer than projected; begun anew at a resume, it ran none — the next batch began at once,
        47 s early, while the last one's clients were still coming back on their hints (reviewer). On the
        fleet clock, which the status says it in; slept on the monotonic one. (A batch a resume went on with
        counts from that resume: `_run_batches`.)"""
        assert self._batch_started_s is not None  # set when its batch began, or by `_run_batches`
        started_s = self._batch_started_s
        pause_s = wait_before_next(self.request.interval_s, self._clock() - started_s)
        if pause_s <= 0:
            return
        self._wait = ("interval", [], started_s, self.request.interval_s, self._clock)
        try:
            await asyncio.sleep(pause_s)
        finally:
            self._wait = None

    def _say_next_batch(self) -> None:
        """`next_batch_at_s` in the status: the latest batch's start + `interval_s` once that batch is done
        and another is left, while the rollout may go on (running, paused, halted); null otherwise."""
        status = self.status
        between = 0 < status.batch == self._batches_done < len(self.batches)
        going_on = status.state in (RolloutState.RUNNING, RolloutState.PAUSED, RolloutState.HALTED)
        due = None
        if between and going_on and self._batch_started_s is not None:
            due = round(self._batch_started_s + self.request.interval_s, 1)
        status.next_batch_at_s = due

    async def _unless_hot(self, batch: list[str]) -> None:
        while (hot := hot_survivor(self._nodes(), batch, self.request.pause_cpu_pct)) is not None:
            self.status.state = RolloutState.PAUSED
            self.status.pause_reason = (
                f"{hot.id} CPU {hot.cpu_pct:.0f} % > {self.request.pause_cpu_pct:.0f} %"
            )
            self._resumed.clear()
            self.on_change()
            await self._resumed.wait()
            self.status.state, self.status.pause_reason = RolloutState.RUNNING, None
            self.on_change()

    async def _roll(self, batch: list[str]) -> None:
        for node in batch:
            before = self._epochs_before.setdefault(node, self._epochs(node))
            if before is not None and self._epochs(node) not in (None, before):
                # A new process since this batch began (its restart ran while a controller that died
                # watched it, or something else restarted it): not restarted again.
                self._restarted.add(node)
        # Every node of the batch is waited for below, those restarted before a halt too: a resume that waited
        # only for the rest had nothing to wait for when the halt came after the last restart, and went on to
        # the next batch with this one still out of rotation.
        before = {node: self._epochs_before[node] for node in batch}
        batch = [node for node in batch if node not in self._restarted]  # a resumed batch: the rest
        if self.request.mode is RolloutMode.DRAIN:
            for node in batch:
                if self._state(node) is not NodeState.READY:
                    continue  # still draining, or drained, from before a halt: its drain goes on
                result = self._drain(node, self._batch_drain)
                if asyncio.iscoroutine(result):
                    await result
                self._draining.add(node)
                self.on_change()
            left = LeftTheDrain(batch, LEFT_DRAIN_AFTER_S)
            await self._until(
                lambda: all(self._state(n) is NodeState.DRAINED for n in batch),
                self._batch_drain.deadline_s + 10,
                ("drain", batch),
                f"{', '.join(batch)} to drain",
                lambda: left.observe(self._nodes(), time.monotonic()),
            )
        for node in batch:
            command = self._commands[node].replace("{node}", shlex.quote(node))
            self._draining.discard(node)
            self._restarting.add(node)
            self.on_change()
            process = await asyncio.create_subprocess_shell(command)
            code = await process.wait()
            self._restarting.discard(node)
            if code != 0:
                self.on_change()
                raise RolloutHalted(f"restart of {node} failed (exit {code}): {command}")
            self._restarted.add(node)
            self.on_change()
        # Back means a new process (its stream's epoch changed) that is in rotation again.
        await self._until(
            lambda: all(
                self._epochs(n) not in (None, before[n]) and self._state(n) is NodeState.READY for n in before
            ),
            self._ready_timeout_s,
            ("restart", list(before)),
            f"{', '.join(before)} back in rotation",
            # What to do, said where the operator reads the halt: the command exited 0 and nothing came back.
            then="; the restart command ran, but no new process is in rotation: restart the node, then resume "
            "(r) — or undrain (u) to keep the process it has",
        )
        self._restarted.clear()
        self._epochs_before.clear()

    def _state(self, node_id: str) -> NodeState | None:
        return next((n.state for n in self._nodes() if n.id == node_id), None)

    async def _until(
        self,
        condition: Callable[[], bool],
        timeout_s: float,
        waiting: tuple[str, list[str]],
        what: str,
        abandon: Callable[[], str | None] = lambda: None,
        then: str = "",
    ) -> None:
        """Until `condition`; a halt when `timeout_s` passes first (said with `then`: what to do next).
        `waiting` (its kind and nodes) is what the status says the rollout waits for meanwhile."""
        started = time.monotonic()
        deadline = started + timeout_s
        self._wait = (*waiting, started, timeout_s, time.monotonic)
        try:
            while not condition():
                if time.monotonic() > deadline:
                    raise RolloutHalted(f"timed out after {timeout_s:g} s waiting for {what}{then}")
                reason = abandon()
                if reason is not None:
                    raise RolloutHalted(reason)
                await asyncio.sleep(0.1)
        finally:
            self._wait = None


def _unix_s(fleet_s: float | None, clock_zero_unix_s: float) -> float | None:
    return None if fleet_s is None else fleet_s + clock_zero_unix_s


def _fleet_s(unix_s: float | None, clock_zero_unix_s: float) -> float | None:
    return None if unix_s is None else round(unix_s - clock_zero_unix_s, 1)


class RolloutHalted(Exception):
    """A rollout stopped itself: the reason is what the operator reads in `pause_reason`."""
