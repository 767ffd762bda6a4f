"""The controller's core: a fleet made of real gateway nodes, read through their admin APIs.

It follows each node's admin stream (with the same resume as any stream client), marks a node that
stops answering `down` — never drops it — and folds the nodes into the fleet API's frame. Actions are
forwarded to the nodes with the controller's token; the guards stay with the fleet API server.

Each node is followed by a `node_link.NodeLink`; `fold.py` folds their frames into the fleet's; the
nodes come from the nodes file (`nodes_file.py`).

`Controller` is a `console.server.backend.FleetBackend`: the fleet API v1 is served by the same server
as the simulator's (`console.server.app.create_app`), which owns seq, epoch, pacing and resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import time
from typing import Any

import httpx
from pydantic import ValidationError

from console.errors import InputError
from console.figures import first_named
from console.gateway.acting import (
    CapacityConfig,
    NodesNotAnswering,
    NodeUnreachable,
    capacity_of,
    refusal,
    unreachable,
)
from console.gateway.admission_state import AdmissionRecord, AdmissionStateFile, restored_note, restored_words
from console.gateway.fleet_clock import FleetClockFile, keep_clock_zero, kept_clock_zero
from console.gateway.fold import ClientFlow, WaveSum, fold_totals
from console.gateway.node_link import NodeLink, down_status
from console.gateway.nodes_file import NodeEntry
from console.gateway.provision import NodeProvisioner, NoProvisioner, Provisioning
from console.gateway.rollout import DEFAULT_BATCH_DRAIN, NoRestartCommand, Rollout
from console.gateway.rollout_state import RolloutStateFile, RolloutStateUnreadable, restart_note
from console.guards import FleetCapacity
from console.guards.rollout import HALTABLE, NothingTo
from console.guards.thresholds import Thresholds
from console.model.admission import settings_words
from console.protocol import (
    ActionKind,
    AdmissionRequest,
    AdmissionSettings,
    CapacityRequest,
    DrainRequest,
    Event,
    FleetSnapshot,
    Frame,
    NodeState,
    NodeStatus,
    RolloutRequest,
    RolloutState,
    RolloutStatus,
    Source,
    UnavailableReason,
    overrides_of,
)
from console.server.actions import FleetAction
from console.server.backend import Tick


class Controller:
    """A fleet of real gateway nodes, in the fleet API's shapes.

    Its fleet clock (`time_s` everywhere: frames, events, drains, the rollout) counts seconds since the
    fleet was first served, as a simulated fleet's counts from its start: the console, the alarms,
    recordings and reports all read `time_s` as time into the session. Kept in a `fleet_clock` file, it goes
    on across restarts of the controller (`fleet_clock.py`); without one it starts with the controller.
    Frames carry the wall clock too (`published_unix_s`).
    """

    source = Source.LIVE
    clock_control = False

    def __init__(
        self,
        nodes: list[NodeEntry],
        token: str,
        fleet_name: str = "loopback",
        seed: int = 0,
        capacity_config: CapacityConfig | None = None,
        provisioner: NodeProvisioner | None = None,
        thresholds: Thresholds | None = None,
        rollout_state: RolloutStateFile | None = None,
        fleet_clock: FleetClockFile | None = None,
        admission_state: AdmissionStateFile | None = None,
    ) -> None:
        """`rollout_state`: where the rollout is kept across restarts of the controller; one saved there is
        taken up now, halted (`RolloutStateUnreadable` when the file cannot be read as one). `fleet_clock`:
        where the fleet clock's origin is kept, taken up now (`FleetClockUnreadable`). `admission_state`:
        where the admission the operator set is kept, taken up now (`AdmissionStateUnreadable`)."""
        self.fleet_name = fleet_name
        # The rollout's abort criterion is the guards' and the alarms' (stormdeck.toml, STORMDECK_*).
        self.thresholds = thresholds or Thresholds()
        self.token = token
        self._events: list[Event] = []
        kept_zero = kept_clock_zero(fleet_clock) if fleet_clock is not None else None
        self.clock_zero_unix_s = kept_zero if kept_zero is not None else time.time()
        self._waves = WaveSum()
        self.flow = ClientFlow()  # drain ÷ inflow: a second per frame
        rng = random.Random(seed)
        self.links = {e.id: self._link_to(e, random.Random(rng.getrandbits(64))) for e in nodes}
        self._tasks: list[asyncio.Task[None]] = []
        self._states: dict[str, NodeState] = {}
        self._history_away: set[str] = set()  # nodes whose frames say their history (Redis) does not answer
        self._http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=5.0)
        self.rollout: Rollout | None = None
        self._rollout_task: asyncio.Task[RolloutStatus] | None = None
        self.capacity_config = capacity_config or CapacityConfig()
        self.provisioning = Provisioning(provisioner) if provisioner is not None else None
        self._rng = rng
        # The fleet-wide admission (what a node without an override runs, and what an added node gets),
        # once an operator has set one; the settings a later per-node change gave some nodes. Reading the
        # first node's settings instead showed a per-node override as the fleet's and gave it to added
        # nodes (found in review). Both are what a node's new process is given again (`_new_process`).
        self._fleet_admission: AdmissionSettings | None = None
        self._overrides: dict[str, AdmissionSettings] = {}
        # One admission change at a time, the operator's or a restarted node's: a node back while the
        # operator changes it is given the newest settings, never the ones before.
        self._admission_lock = asyncio.Lock()
        self._admission_file = admission_state
        self._admission_unsaved = False  # said once, not at every change
        #: What was taken up from the admission state file, in words (None: nothing was kept there).
        self.admission_restored: str | None = None
        # Nodes not heard from since settings were taken up: one found on others is said as such, not as
        # "started" (it may have run them for hours: restarted while no controller ran, or set by hand).
        self._unseen_since_restore: set[str] = set()
        if admission_state is not None:
            self._restore_admission(admission_state)
        self._rollout_file = rollout_state
        self._rollout_unsaved = False  # said once, not at every change
        if rollout_state is not None:
            self._restore_rollout(rollout_state)
        # A new clock's origin is kept only now: a rollout state that refused the start leaves none.
        if fleet_clock is not None and kept_zero is None:
            unkept = keep_clock_zero(fleet_clock, fleet_name, self.clock_zero_unix_s)
            if unkept is not None:
                self._events.append(Event(time_s=self.fleet_time(), kind="clock", message=unkept))

    def fleet_time(self) -> float:
        """Seconds since the fleet was first served (class docstring): the fleet clock, to a tenth — the
        server ticks a second apart a millisecond early (44.999), and whole-second clocks then read 0:44
        where it meant 0:45."""
        return round(time.time() - self.clock_zero_unix_s, 1)

    def _link_to(self, entry: NodeEntry, rng: random.Random) -> NodeLink:
        link = NodeLink(entry, self._waves, rng, self.clock_zero_unix_s)
        link.on_new_process = self._new_process
        return link

    async def start(self, wait_s: float = 3.0) -> FleetSnapshot:
        self._tasks = [asyncio.create_task(link.run()) for link in self.links.values()]
        deadline = time.monotonic() + wait_s
        while any(link.latest is None for link in self.links.values()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return self.snapshot()

    async def close(self) -> None:
        if self.provisioning is not None:
            await self.provisioning.close()
        if self.rollout is not None:
            # Stopping the controller is not the operator halting the rollout: the state file keeps it as
            # it was, and the next controller says it restarted during it.
            self.rollout.on_change = lambda: None
        pending = [*self._tasks, *filter(None, [self._rollout_task])]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await self._http.aclose()

    def nodes(self) -> list[NodeStatus]:
        now = time.monotonic()
        statuses = [self._status(node_id, now) for node_id in [*self.links, *self._provisioning_only()]]
        for status in statuses:
            before = self._states.get(status.id)
            if before is not None and before != status.state:
                self._events.append(
                    Event(
                        time_s=self.fleet_time(),
                        kind="node_state",
                        node=status.id,
                        message=f"{status.id}: {before.value} → {status.state.value}",
                        data={"from": before.value, "to": status.state.value},
                    )
                )
                if before is NodeState.DRAINING and status.state is NodeState.DOWN:
                    self._events.append(self._drain_ended(status.id))
            self._states[status.id] = status.state
            self._note_history(status)
        return statuses

    def _drain_ended(self, node_id: str) -> Event:
        """A draining node went down: its drain ends here, said with what it left undone. Without it the
        drain vanished (the down status carries none) and the console's drain box read "not draining".
        A node whose admin port refuses is gone, its drain with it; one that only went silent (hung) may
        still be draining, and says so in its own frames if it answers again."""
        link = self.links[node_id]
        last = link.latest
        drain = last.drain if last is not None else None
        left = drain.remaining if drain is not None else (last.connections if last is not None else 0)
        how = "went down" if link.refused else "stopped answering"
        message = f"drain of {node_id} ended: node {how} with {left:,} connections left"
        if not link.refused:
            message += " (if it answers again, its own frames say whether it still drains)"
        return Event(
            time_s=self.fleet_time(),
            kind="drain",
            node=node_id,
            message=message,
            data={
                "ended": "down" if link.refused else "silent",
                "remaining": left,
                "closed": drain.closed if drain is not None else None,
                "rate_per_s": drain.rate_per_s if drain is not None else None,
            },
        )

    def _note_history(self, status: NodeStatus) -> None:
        """An event when a node's frames say its history (Redis) stopped answering, and when it answers
        again: the node's recent events and a recording then say when. A silent node says nothing either
        way (its status is not its own), so a node going down is not "answers again"."""
        if status.state in (NodeState.DOWN, NodeState.RESTARTING, NodeState.PROVISIONING):
            return
        away = status.history_unreachable is not None
        if away == (status.id in self._history_away):
            return
        if away:
            self._history_away.add(status.id)
            message = f"{status.id}: history unreachable: {status.history_unreachable}"
        else:
            self._history_away.discard(status.id)
            message = f"{status.id}: history answers again"
        self._events.append(
            Event(
                time_s=self.fleet_time(),
                kind="history",
                node=status.id,
                message=message,
                data={"unreachable": status.history_unreachable},
            )
        )

    def _status(self, node_id: str, now: float) -> NodeStatus:
        """A node being provisioned shows `provisioning` until its first frame, then what its frames say; one
        the rollout is restarting shows `restarting` while it does not answer."""
        link = self.links.get(node_id)
        pending = self.provisioning.pending if self.provisioning is not None else set()
        if link is not None and link.latest is not None:
            pending.discard(node_id)
        if node_id in pending:
            return down_status(node_id, None).model_copy(update={"state": NodeState.PROVISIONING})
        assert link is not None
        status = link.status(now)
        if status.state is NodeState.DOWN and self.rollout is not None and node_id in self.rollout.restarting:
            # The rollout stopped this process and waits for the new one: a planned restart, shown as the
            # simulator shows one. As `down` it raised node_down on every rollout.
            return status.model_copy(update={"state": NodeState.RESTARTING})
        return status

    def _provisioning_only(self) -> list[str]:
        pending = self.provisioning.pending if self.provisioning is not None else set()
        return [node_id for node_id in pending if node_id not in self.links]

    def admission(self) -> AdmissionSettings:
        """The fleet-wide setting: the last one set for every node, else what a node without a per-node
        override reports (the nodes' own, as started), else unlimited."""
        if self._fleet_admission is not None:
            return self._fleet_admission
        for node_id, link in self.links.items():
            if link.admission is not None and node_id not in self._overrides:
                return link.admission
        return AdmissionSettings.unlimited()

    def admission_overrides(self) -> list[AdmissionSettings] | None:
        """The nodes running other settings than the fleet's, as their own frames (or their answer to the
        last change) report them: a per-node change, a node started with other flags before any was set for
        the fleet, a restarted node that refused what it was given again. None while every node runs the
        fleet's. (A restarted node given its settings again is never shown on its start-up ones: its link
        shows the new process only once it runs them.)"""
        now = time.monotonic()
        by_node: dict[str, AdmissionSettings] = {}
        for node_id, link in self.links.items():
            settings = link.admission
            if link.status(now).state is NodeState.DOWN:
                # No process runs any: say what its next one is given (its last process's settings read
                # as an override once the operator changed the fleet's while it restarted).
                settings = self._overrides.get(node_id) or self._fleet_admission or settings
            if settings is not None:
                by_node[node_id] = settings
        return overrides_of(self.admission(), by_node, list(self.links))

    def frame(self, seq: int = 0, epoch: str = "", next_second: bool = False) -> Frame:
        """The fleet now. `seq`/`epoch` belong to whoever serves the stream (the fleet API server).
        `next_second`: this frame is the stream's next second (`tick`), so it moves drain ÷ inflow's window;
        a frame asked for in between reads the window as it stands."""
        nodes = self.nodes()
        totals, at_s = fold_totals(nodes), self._take_due_back()
        totals = (
            self.flow.observe(nodes, totals, at_s) if next_second else self.flow.as_it_stands(totals, at_s)
        )
        return Frame(
            seq=seq,
            epoch=epoch,
            time_s=self.fleet_time(),
            nodes=nodes,
            totals=totals,
            waves=self._waves.take(time.time()),
            rollout=self.rollout_status(),
            admission=self.admission(),
            admission_overrides=self.admission_overrides(),
            max_nodes=self.max_nodes(),
        )

    def _take_due_back(self) -> float:
        """Each answering node process's drained clients due back (`DrainedAway`); returns the instant to
        count them at: the newest frame's, so a client counted on the node it came back to is not counted
        away too (the fleet clock now when no node answers)."""
        now = time.monotonic()
        newest: float | None = None
        for node_id, link in self.links.items():
            if link.latest is None or link.epoch is None or link.status(now) is not link.latest:
                continue  # silent: what it said last stays kept
            self.flow.away.take((node_id, link.epoch), link.latest.due_back)
            newest = link.frame_time_s if newest is None else max(newest, link.frame_time_s)
        return newest if newest is not None else self.fleet_time()

    def snapshot(self) -> FleetSnapshot:
        nodes = self.nodes()
        return FleetSnapshot(
            fleet=self.fleet_name,
            source=self.source,
            time_s=self.fleet_time(),
            nodes=nodes,
            totals=self.flow.as_it_stands(fold_totals(nodes), self._take_due_back()),
            rollout=self.rollout_status(),
            admission=self.admission(),
            admission_overrides=self.admission_overrides(),
            max_nodes=self.max_nodes(),
        )

    def drain_events(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    async def tick(self, fleet_seconds: int, budget_s: float) -> Tick:
        """One frame of the fleet as it is now: a real fleet's clock is the wall's (`clock_control` off)."""
        started = time.perf_counter()
        frame = self.frame(next_second=True)
        snapshot = FleetSnapshot.of_frame(frame, self.fleet_name, self.source)
        return Tick(frame, self.drain_events(), snapshot, 1, time.perf_counter() - started)

    # --- the write side: an ActingBackend (the fleet API's desk has judged and audited first) --------

    def capacity(self) -> FleetCapacity:
        statuses = [link.latest for link in self.links.values() if link.latest is not None]
        capacity = dataclasses.replace(
            capacity_of(self.capacity_config, statuses),
            # The drain `start_rollout` gives each batch node, so the rollout guard judges that drain (it
            # judged one over a 10-minute window: 0.87/s and 610 s, found in review). A node's restart
            # time is not known here: restart_s stays 0 (unknown).
            batch_drain_rate_per_s=DEFAULT_BATCH_DRAIN.rate_per_s,
            batch_drain_deadline_s=DEFAULT_BATCH_DRAIN.deadline_s,
        )
        if self.provisioning is None:
            return capacity  # max_nodes 0: this fleet cannot add capacity
        provisioner = self.provisioning.provisioner
        return dataclasses.replace(
            capacity, max_nodes=self.max_nodes(), provisioning_s=provisioner.provisioning_s
        )

    def max_nodes(self) -> int:
        """The most nodes this fleet may hold: its provisioner's limit (`fleet up`'s), or 0 over a nodes file
        — nothing here starts a node process. Said in every frame (`Frame.max_nodes`), so node_down's advice
        names the way on this fleet has: add capacity, or start the node again where it runs."""
        return self.provisioning.provisioner.max_nodes if self.provisioning is not None else 0

    async def current_snapshot(self) -> FleetSnapshot:
        """The latest folded snapshot; an action applied since shows in it at once (see `_shown`)."""
        return self.snapshot()

    async def forecast(self, action: FleetAction) -> dict[str, Any] | None:
        """None: a real fleet has no twin to run ahead (docs/gateway.md says how one could be seeded)."""
        return None

    def refuses(self, action: FleetAction) -> InputError | None:
        """What this controller can tell it would refuse, so a dry run refuses it too: a rollout while one
        runs or without a restart command for every node; a resume before every node of the batch under way
        has reported; admission for a node shown `down` (it does not answer its admin API — the dry run said
        ok and the real call was a 422, found in review); adding capacity without a provisioner, said with
        what to do instead (`NoProvisioner`)."""
        if action.kind is ActionKind.ROLLOUT_START:
            return self._rollout_refusal()
        if action.kind is ActionKind.ROLLOUT_RESUME:
            return self._resume_refusal()
        if action.kind is ActionKind.ADMISSION:
            assert isinstance(action.request, AdmissionRequest)
            return self._down_refusal(action.request.nodes)
        if action.kind is ActionKind.ADD_CAPACITY and self.provisioning is None:
            assert isinstance(action.request, CapacityRequest)
            return self._no_provisioner(action.request.count)
        return None

    def _no_provisioner(self, count: int) -> InputError:
        first = next(iter(self.links.values()), None)
        return NoProvisioner(self.fleet_name, count, first.entry.source if first is not None else None)

    def _down_refusal(self, node_ids: list[str] | None) -> InputError | None:
        """Nodes down are refused, all named with the nodes that answer; one the rollout restarts (shown
        `restarting`) is not: its new process is given the settings when it is back (`deferred`)."""
        now = time.monotonic()
        targets = node_ids if node_ids is not None else list(self.links)
        down = {
            node_id: "down"
            for node_id in targets
            if node_id in self.links and self._status(node_id, now).state is NodeState.DOWN
        }
        if not down:
            return None  # an unknown node is the guard's to name
        answering = [node_id for node_id in targets if node_id not in down]
        return NodesNotAnswering(down, answering, fleet_wide=node_ids is None)

    def deferred(self, action: FleetAction) -> str | None:
        """What of `action` reaches some nodes only later, said in its answer and audit record: admission
        for nodes the rollout is restarting (no process to ask now; the new one is given it when back)."""
        if action.kind is not ActionKind.ADMISSION:
            return None
        assert isinstance(action.request, AdmissionRequest)
        targets = action.request.nodes if action.request.nodes is not None else list(self.links)
        later = [node_id for node_id in targets if self._awaited_back(node_id)]
        return _given_when_back(later) if later else None

    def _awaited_back(self, node_id: str) -> bool:
        """A node the running rollout has restarted and waits for, silent now: there is no process to ask."""
        if self.rollout is None or node_id not in self.rollout.restarting or node_id not in self.links:
            return False
        return self.links[node_id].status(time.monotonic()).state is NodeState.DOWN

    async def apply(self, action: FleetAction) -> None:
        """Forward `action` to the nodes, entirely or not at all (`InputError` naming the field)."""
        request = action.request
        match action.kind:
            case ActionKind.DRAIN:
                assert isinstance(request, DrainRequest) and action.node_id is not None
                await self.drain(action.node_id, request)
            case ActionKind.UNDRAIN:
                assert action.node_id is not None
                await self.undrain(action.node_id)
            case ActionKind.ADMISSION:
                assert isinstance(request, AdmissionRequest)
                await self.set_admission(request)
            case ActionKind.ROLLOUT_START:
                assert isinstance(request, RolloutRequest)
                self.start_rollout(request)
            case ActionKind.ROLLOUT_HALT:
                self.halt_rollout()
            case ActionKind.ROLLOUT_RESUME:
                self.resume_rollout()
            case ActionKind.ADD_CAPACITY:
                assert isinstance(request, CapacityRequest)
                self.add_nodes(request.count)

    def _link(self, node_id: str) -> NodeLink:
        if node_id not in self.links:
            raise InputError("node", node_id, "one of " + ", ".join(sorted(self.links)))
        return self.links[node_id]

    async def _send(self, link: NodeLink, method: str, path: str, body: dict | None, field: str) -> dict:
        try:
            response = await self._http.request(method, f"{link.entry.admin_url}{path}", json=body)
        except httpx.HTTPError as error:
            raise unreachable(link.entry.id, error) from error
        if response.is_error:
            raise refusal(link.entry.id, response, field)
        return response.json()

    def _shown(self, link: NodeLink, state: NodeState) -> None:
        """Show a node's new state before its next frame says so, so the next action is judged on it."""
        if link.latest is not None:
            link.latest = link.latest.model_copy(update={"state": state})

    async def drain(self, node_id: str, request: DrainRequest) -> dict:
        link = self._link(node_id)
        body = request.model_dump(mode="json", exclude={"confirm", "override_reason"})
        answer = await self._send(link, "POST", "/v1/node/drain", body, "rate_per_s")
        self._shown(link, NodeState.DRAINING)
        return answer

    async def undrain(self, node_id: str) -> dict:
        link = self._link(node_id)
        answer = await self._send(link, "POST", "/v1/node/undrain", None, "node")
        self._shown(link, NodeState.READY)
        return answer

    async def set_admission(self, request: AdmissionRequest) -> dict[str, dict]:
        """Every target node checks the settings (a dry run) before any takes them; a node failing after
        others took them gets those others put back as they were. A node the rollout is restarting is not
        asked — it has no process, or one on its way out: its new one is given them when back."""
        async with self._admission_lock:
            targets = request.nodes if request.nodes is not None else list(self.links)
            links = [self._link(node_id) for node_id in targets]
            later = {node_id for node_id in targets if self._awaited_back(node_id)}
            body = request.model_dump(mode="json", exclude={"confirm", "override_reason", "nodes"})
            before = {link.entry.id: link.admission for link in links}
            silent: dict[str, str] = {}
            for link in links:
                if link.entry.id not in later:
                    try:
                        await self._ask(link, {**body, "dry_run": True}, later)
                    except NodeUnreachable as error:  # hung (SIGSTOPped) before it is shown down
                        silent[link.entry.id] = error.reason
            if silent:
                answering = [node_id for node_id in targets if node_id not in silent]
                raise NodesNotAnswering(silent, answering, fleet_wide=request.nodes is None)
            answers: dict[str, dict] = {}
            try:
                for link in links:
                    if link.entry.id not in later:
                        answer = await self._ask(link, body, later)
                        if answer is not None:
                            answers[link.entry.id] = answer
            except InputError:
                for node_id in answers:
                    previous = before[node_id]
                    if previous is not None:
                        with contextlib.suppress(InputError):
                            restore = AdmissionRequest.restoring(previous).model_dump(mode="json")
                            await self._send(
                                self.links[node_id], "PUT", "/v1/node/admission", restore, "admission"
                            )
                raise
            ran = {
                node_id: AdmissionSettings.model_validate(a["admission"]) for node_id, a in answers.items()
            }
            for node_id, settings in ran.items():
                self.links[node_id].ran(settings)
            settings = next(iter(ran.values()), request.settings().bare())
            if request.nodes is None:
                self._fleet_admission = settings
                self._overrides.clear()
            else:
                self._overrides.update({node_id: ran.get(node_id, settings) for node_id in targets})
            self._save_admission()
            if later:
                self._events.append(
                    Event(
                        time_s=self.fleet_time(),
                        kind="admission",
                        message=f"admission ({settings_words(settings)}): {_given_when_back(sorted(later))}",
                        data={"nodes": sorted(later)},
                    )
                )
            return answers

    async def _ask(self, link: NodeLink, body: dict, later: set[str]) -> dict | None:
        """PUT `body` to `link`'s node; a node the rollout restarts that stopped answering meanwhile joins
        `later` (None) instead of failing the change: its new process is given the settings when back."""
        try:
            return await self._send(link, "PUT", "/v1/node/admission", body, "admission")
        except NodeUnreachable:
            if self.rollout is None or link.entry.id not in self.rollout.restarting:
                raise
            later.add(link.entry.id)
            return None

    async def _new_process(self, link: NodeLink, frame: Frame) -> AdmissionSettings | None:
        """A node's new process (a restart by the rollout, a supervisor after a crash, a service manager
        after SIGHUP) starts on its command-line settings: give it what the operator set for it — its
        per-node override, else the fleet's — before the fleet shows it (`NodeLink.on_new_process`), and
        say so. One that refuses runs its own, said, and shows as an override: it is one."""
        node_id = link.entry.id
        async with self._admission_lock:
            own = self._overrides.get(node_id)
            wanted = own or self._fleet_admission
            started = frame.admission
            first_since_restore = node_id in self._unseen_since_restore
            self._unseen_since_restore.discard(node_id)
            if wanted is None or started is None or started.limits_key() == wanted.limits_key():
                return None
            whose = "its own (set on this node)" if own is not None else "the fleet's"
            if first_since_restore:
                said = (
                    f"{node_id} runs {settings_words(started)}, not what was set for it before this "
                    "controller restarted"
                )
            else:
                how = "started" if link.epoch is None else "came back as a new process"
                said = f"{node_id} {how} on its start-up settings ({settings_words(started)})"
            body = AdmissionRequest.restoring(wanted.bare()).model_dump(
                mode="json", exclude={"confirm", "override_reason", "nodes"}
            )
            try:
                answer = await self._send(link, "PUT", "/v1/node/admission", body, "admission")
            except InputError as error:
                runs = "those" if first_since_restore else "its start-up settings"
                message = (
                    f"{said}{',' if first_since_restore else ''} and did not take {whose} "
                    f"({settings_words(wanted)}): {error}. It runs {runs}, shown as a per-node override: "
                    "set admission again once it answers"
                )
                self._events.append(
                    Event(time_s=self.fleet_time(), kind="admission", node=node_id, message=message)
                )
                return None
            given = AdmissionSettings.model_validate(answer["admission"])
            again = "" if link.epoch is None and not first_since_restore else " again"
            message = f"{said}: given {whose}{again}: {settings_words(given)}"
            self._events.append(
                Event(time_s=self.fleet_time(), kind="admission", node=node_id, message=message)
            )
            return given

    def _restore_admission(self, state_file: AdmissionStateFile) -> None:
        """Take up the admission the controller before this one had set: what the fleet shows as its own and
        its overrides, and what each node's new process is given (`_new_process`). The nodes kept running
        what they were given; one that runs other settings now (restarted meanwhile) is given these when
        first heard from, and said so. An override of a node no longer in the nodes file is dropped, said."""
        record = state_file.load()
        if record is None:
            return
        overrides = record.override_settings()
        dropped = [node_id for node_id in overrides if node_id not in self.links]
        self._fleet_admission = record.fleet_settings()
        self._overrides = {node_id: s for node_id, s in overrides.items() if node_id not in dropped}
        self._unseen_since_restore = set(self.links)
        self.admission_restored = restored_words(record, dropped)
        self._events.append(
            Event(
                time_s=self.fleet_time(),
                kind="admission",
                message=restored_note(record, state_file.path, dropped),
                data={"state_file": str(state_file.path), "dropped": dropped},
            )
        )

    def _save_admission(self) -> None:
        """Keep what the operator set in its state file; a failure is said once, on the event stream."""
        if self._admission_file is None:
            return
        record = AdmissionRecord.of(self.fleet_name, self._fleet_admission, self._overrides, time.time())
        try:
            self._admission_file.save(record)
        except OSError as error:
            if not self._admission_unsaved:
                message = (
                    f"admission not kept in {self._admission_file.path} ({error.strerror or error}): a "
                    "controller restarted now would not give it again to nodes' new processes"
                )
                self._events.append(Event(time_s=self.fleet_time(), kind="admission", message=message))
            self._admission_unsaved = True
        else:
            self._admission_unsaved = False

    # --- adding capacity --------------------------------------------------------------------------

    def add_nodes(self, count: int) -> list[str]:
        """Have the provisioner start `count` nodes; they show `provisioning` at once and join the fleet
        (admission as the fleet has it) as each starts. A node that fails to start is announced and
        dropped: the add was accepted, like a cloud's, and its outcome is in the events."""
        if self.provisioning is None:
            raise self._no_provisioner(count)
        known = [*self.links, *self._provisioning_only()]
        added = self.provisioning.add(count, known, self._joined, self._failed_to_start)
        self._states.update(dict.fromkeys(added, NodeState.PROVISIONING))
        message = f"operator added {count} nodes ({added[0]}..{added[-1]}), provisioning"
        self._events.append(
            Event(
                time_s=self.fleet_time(),
                kind="capacity",
                message=message,
                data={"count": count, "nodes": added},
            )
        )
        return added

    async def _joined(self, entry: NodeEntry) -> None:
        link = self._link_to(entry, random.Random(self._rng.getrandbits(64)))
        self.links[entry.id] = link
        # Its first frame is a new process's: the fleet's admission, if one was set, is given it then
        # (`_new_process`), as to any node's new process. Without one it runs what it was started with —
        # the fleet's other nodes' arguments.
        self._tasks.append(asyncio.create_task(link.run()))
        message = f"{entry.id} started" + (f": clients {entry.client_url}" if entry.client_url else "")
        self._events.append(Event(time_s=self.fleet_time(), kind="capacity", node=entry.id, message=message))

    def _failed_to_start(self, node_id: str, error: Exception) -> None:
        self._states.pop(node_id, None)
        message = f"{node_id} failed to start: {error}"
        self._events.append(Event(time_s=self.fleet_time(), kind="capacity", node=node_id, message=message))

    # --- rollouts ----------------------------------------------------------------------------------

    def rollout_status(self) -> RolloutStatus:
        status = self.rollout.status if self.rollout is not None else RolloutStatus()
        said: dict[str, object] = {}
        # Said in every frame and snapshot, so a console refuses at the key instead of after its form.
        refusal = self._restart_refusal()
        if refusal is not None:
            said["unavailable"] = str(refusal)
            # Typed too: the words say what to do, the reason lets a console say what is missing unparsed.
            said["unavailable_reason"] = UnavailableReason.NO_RESTART_COMMAND
        waiting = self.rollout.waiting_for() if self.rollout is not None else None
        if waiting is not None:
            said["waiting_for"] = waiting  # seconds waited as of this frame: not kept in the status itself
        return status.model_copy(update=said) if said else status

    def start_rollout(
        self, request: RolloutRequest, batch_drain: DrainRequest | None = None
    ) -> RolloutStatus:
        """Start restarting the fleet in batches (in the nodes file's order) through each node's command."""
        refusal = self._rollout_refusal()
        if refusal is not None:
            raise refusal
        self.rollout = Rollout(
            request,
            list(self.links),
            **self._rollout_reach(),
            clock=self.fleet_time,
            thresholds=self.thresholds,
            **({"batch_drain": batch_drain} if batch_drain is not None else {}),
        )
        self.rollout.on_change = self._save_rollout
        self._save_rollout()
        self._rollout_task = asyncio.create_task(self.rollout.run())
        return self.rollout.status

    def _rollout_reach(self) -> dict[str, Any]:
        """What a rollout reaches the fleet through (`Rollout`'s arguments of those names): the nodes'
        statuses, each node's stream epoch (a new one is a new process: restarted), the drain action, and
        each node's restart command."""
        return {
            "nodes": self.nodes,
            "epochs": lambda node_id: self.links[node_id].epoch,
            "drain": self.drain,
            "restart_commands": {node_id: link.entry.restart or "" for node_id, link in self.links.items()},
        }

    def _restore_rollout(self, state_file: RolloutStateFile) -> None:
        """Take up the rollout a controller before this one was running, halted: the operator resumes it
        (or starts another) through the guarded actions. The nodes went on by themselves meanwhile: a drain
        runs in its node to its end (or deadline), and the node then stays drained until restarted or
        undrained — their frames show where they are now."""
        record = state_file.load()
        if record is None or not record.unfinished:
            return  # a rollout that ended leaves nothing to take up: the next one replaces the file
        try:
            self.rollout = Rollout.restored(
                record,
                self.clock_zero_unix_s,
                restart_note(record),
                **self._rollout_reach(),
                clock=self.fleet_time,
                thresholds=self.thresholds,
            )
        except (InputError, ValidationError) as error:
            raise RolloutStateUnreadable(
                "rollout state file",
                state_file.path,
                f"holds a rollout this controller cannot take up with its nodes file ({error})",
            ) from None
        self.rollout.on_change = self._save_rollout
        status = self.rollout.status
        self._events.append(
            Event(
                time_s=self.fleet_time(),
                kind="rollout",
                message=f"rollout halted: {status.pause_reason}",
                data={
                    "state_file": str(state_file.path),
                    "batch": status.batch,
                    "batches": status.batches,
                    "nodes": record.batches[status.batch - 1] if status.batch else [],
                },
            )
        )

    def _save_rollout(self) -> None:
        """Keep the rollout as it is now in its state file; a failure is said once, on the event stream."""
        if self._rollout_file is None or self.rollout is None:
            return
        try:
            self._rollout_file.save(self.rollout.record(self.fleet_name, self.clock_zero_unix_s, time.time()))
        except OSError as error:
            if not self._rollout_unsaved:
                message = (
                    f"rollout state not saved to {self._rollout_file.path} ({error.strerror or error}): "
                    "a controller restarted now would not know where this rollout is"
                )
                self._events.append(Event(time_s=self.fleet_time(), kind="rollout", message=message))
            self._rollout_unsaved = True
        else:
            self._rollout_unsaved = False

    def _rollout_refusal(self) -> InputError | None:
        if self._rollout_task is not None and not self._rollout_task.done():
            return InputError(
                "rollout", self.rollout_status().state.value, "no rollout running (halt it first)"
            )
        return self._restart_refusal()

    def _restart_refusal(self) -> InputError | None:
        """A start refused whatever the guards say: a node without a restart command."""
        missing = [node_id for node_id, link in self.links.items() if not link.entry.restart]
        if not missing:
            return None
        if self.provisioning is not None:
            # Only `fleet up` hands the controller a provisioner: it started these nodes itself, and its
            # user wrote no nodes file — "every node in --nodes" (a count there) told them nothing to do.
            return NoRestartCommand(
                missing,
                "`fleet up` starts its nodes without a restart command, so it cannot roll them out: serve "
                "nodes you can restart with `stormdeck controller --nodes FILE`, "
                'restart = "…{node}…" for each node in FILE (docs/gateway.md)',
            )
        return NoRestartCommand.in_nodes_file(missing, self.links[missing[0]].entry.source)

    def halt_rollout(self) -> RolloutStatus:
        """Halt the running or paused rollout; refused with nothing to halt, in the guard's words (applied
        anyway, the halt was answered as applied and changed nothing)."""
        status = self.rollout_status()
        if status.state not in HALTABLE:
            raise NothingTo(ActionKind.ROLLOUT_HALT, status)
        if self._rollout_task is not None:
            self._rollout_task.cancel()
        return self.rollout_status()

    def _resume_refusal(self) -> InputError | None:
        """A halted rollout goes on with the batch under way, and knows which of its nodes already restarted
        by their stream epochs — which this controller learns from each node's first frame. Resumed before,
        a node restarted under the controller before this one read as not restarted, and was restarted
        again. Refused (not waited for: the operator sees at once why nothing moves, the rollout stays
        halted, and a node that never answers does not leave a `running` rollout that does nothing)."""
        if self.rollout is None or self.rollout.status.state is not RolloutState.HALTED:
            return None
        unheard = [node for node in self.rollout.unfinished_batch() if self.links[node].epoch is None]
        if not unheard:
            return None
        return InputError(
            "rollout",
            "halted",
            f"a resume once every node of the batch under way has reported: not yet heard from "
            f"{first_named(unheard)} since this controller started, and only a node's stream epoch says "
            "whether it already restarted — retry once it shows in the fleet (one that stays down: start it "
            "by hand, and the rollout will not restart it again)",
        )

    def resume_rollout(self) -> RolloutStatus:
        if self.rollout is None:
            raise NothingTo(ActionKind.ROLLOUT_RESUME, self.rollout_status())
        refusal = self._resume_refusal()
        if refusal is not None:
            raise refusal
        if self.rollout.resume():  # a halted one: its run ended, so it runs again from where it stopped
            self._rollout_task = asyncio.create_task(self.rollout.run())
        return self.rollout_status()


def _given_when_back(nodes: list[str]) -> str:
    """ "a is restarting: it is given these settings when it is back" (the answer, the audit, the event)."""
    if len(nodes) == 1:
        return f"{nodes[0]} is restarting: it is given these settings when it is back"
    return f"{first_named(nodes)} are restarting: they are given these settings when they are back"
