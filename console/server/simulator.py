"""The simulator as a fleet API backend: `console.sim.engine.Simulation` behind `FleetBackend`.

The engine is CPU-heavy (milliseconds to tens of milliseconds a fleet second at 13 M clients) and
releases the GIL in its numba kernels, so it always runs in a worker thread. One lock serializes every
use of the simulation — ticks, actions, and the forks a forecast starts from — because it is not
thread-safe: an action lands between two fleet seconds, never inside one. A forecast runs its twins
outside the lock, so the live fleet keeps its pace while it computes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from console.errors import InputError
from console.guards import FleetCapacity, Thresholds
from console.protocol import (
    WAVE_BIN_MS,
    ActionKind,
    AdmissionRequest,
    CapacityRequest,
    DrainRequest,
    Event,
    FleetSnapshot,
    FoldedDrain,
    Frame,
    HotSpells,
    RolloutRequest,
    Source,
    Totals,
    Waves,
    named_instructor,
)
from console.protocol.models import UnderWay
from console.server.actions import FleetAction
from console.server.backend import BeforeInjecting, RunningCounts, Tick

if TYPE_CHECKING:
    from console.sim.engine import Simulation
    from console.sim.injection import Injection

T = TypeVar("T")


class SimulatorBackend:
    source = Source.SIMULATOR
    clock_control = True

    def __init__(
        self, simulation: Simulation, forecast_horizon_s: int | None = None, overrides: Sequence[str] = ()
    ) -> None:
        """`overrides`: the `--set key=value`s the scenario was loaded with, as the hello says them."""
        self.simulation = simulation
        self.overrides = list(overrides)
        self.forecast_horizon_s = forecast_horizon_s  # None: the forecast module's 60 s
        self.fleet_name = simulation.fleet_name
        self._lock = asyncio.Lock()
        # One forecast at a time: two of them would take both cores from the fleet's own worker thread.
        self._forecasting = asyncio.Lock()
        # The frames' running counts (`totals.*_total`), from the fleet's first second: none for a
        # simulation handed over already run (its earlier seconds were not seen), nor once one is missed.
        self._counts: RunningCounts | None = RunningCounts() if simulation.seq == 0 else None
        # The CPU lines a sped-up frame says, for each second it folds, which serving nodes were over
        # (`Frame.folded_hot`): the abort line by default; a served drill adds its abort criteria's.
        self.hot_lines: tuple[float, ...] = (Thresholds().cpu_abort_pct,)

    def scenario_name(self) -> str:
        """The scenario's `name`, as the stream's hello says it (`ScenarioBackend`)."""
        return self.simulation.scenario.name

    def scenario_seed(self) -> int:
        """The run's seed (`--seed`, else the scenario's), as the stream's hello says it (`ScenarioBackend`)."""
        return self.simulation.seed

    def scenario_overrides(self) -> list[str]:
        """The run's `--set key=value`s, in order, as the stream's hello says them (`ScenarioBackend`)."""
        return list(self.overrides)

    def watch_cpu_line(self, cpu_pct: float) -> None:
        """Say in sped-up frames which serving nodes were over `cpu_pct` each folded second too."""
        self.hot_lines = tuple(dict.fromkeys([*self.hot_lines, cpu_pct]))

    @classmethod
    def from_scenario(cls, scenario: str, overrides: list[str], seed: int | None = None) -> SimulatorBackend:
        """Load a scenario by name or path (raises `InputError` for a bad name or override)."""
        from console.sim.engine import Simulation
        from console.sim.scenario_loader import load_scenario

        return cls(Simulation(load_scenario(scenario, overrides), seed=seed), overrides=overrides)

    async def exclusive(self, work: Callable[..., T], *args: object) -> T:
        """Run `work(*args)` on the simulation in a worker thread, with nothing else touching it."""
        async with self._lock:
            return await asyncio.to_thread(work, *args)

    async def start(self) -> FleetSnapshot:
        return await self.exclusive(self._counted_snapshot, self.simulation.snapshot)

    async def tick(self, fleet_seconds: int, budget_s: float) -> Tick:
        return await self.exclusive(self._advance, fleet_seconds, budget_s)

    async def close(self) -> None:
        return None

    # --- the write side (issue #4) ----------------------------------------------------------------------

    def capacity(self) -> FleetCapacity:
        return capacity_of(self.simulation)

    async def current_snapshot(self) -> FleetSnapshot:
        return await self.exclusive(self._counted_snapshot, self.simulation.live_snapshot)

    def refuses(self, action: FleetAction) -> InputError | None:
        """What a simulated fleet can tell it would refuse, so a dry run refuses it too: a per-node
        admission change with a Retry-After window other than the fleet's (the engine's window is
        fleet-wide). `apply` checks the rest."""
        if action.kind is ActionKind.ADMISSION:
            assert isinstance(action.request, AdmissionRequest)
            return self.simulation.admission_refusal(action.request.settings())
        return None

    def deferred(self, action: FleetAction) -> str | None:
        """None: a simulated fleet applies every action between two of its seconds."""
        return None

    async def apply(self, action: FleetAction) -> None:
        await self.exclusive(apply_action, self.simulation, action)

    async def forecast(self, action: FleetAction) -> dict[str, Any] | None:
        from console.sim.forecast import HORIZON_S, fork_pair, run_pair

        def act(twin: Simulation) -> None:
            apply_action(twin, action)

        async with self._forecasting:
            without, acted = await self.exclusive(fork_pair, self.simulation, act)
            horizon_s = self.forecast_horizon_s or HORIZON_S
            result = await asyncio.to_thread(run_pair, without, acted, horizon_s)
        return result.as_dict()

    # --- an instructor's injections (issue #5) ----------------------------------------------------------

    async def inject(
        self, event: str, params: dict[str, Any], before_applying: BeforeInjecting
    ) -> tuple[Injection, float]:
        return await self.exclusive(inject_into, self.simulation, event, params, before_applying)

    # --- the running counts (worker thread, under the lock) -----------------------------------------------

    def _catch_up(self) -> RunningCounts | None:
        """The running counts, with any second the simulation ran of itself counted: its first frame
        (`start`) is made by running one. Any other second not seen here makes the counts unknown."""
        counts, simulation = self._counts, self.simulation
        if counts is None or counts.seconds == simulation.seq:
            return counts
        last = simulation.last
        if last is not None and last.seq == simulation.seq == counts.seconds + 1:
            from console.sim.records import totals

            counts.add(totals(simulation, last))
            return counts
        self._counts = None
        return None

    def _counted_snapshot(self, snapshot_of: Callable[[], FleetSnapshot]) -> FleetSnapshot:
        snapshot = snapshot_of()
        update: dict[str, Any] = {"max_nodes": max_nodes_of(self.simulation)}
        counts = self._catch_up()
        if counts is not None:
            update["totals"] = counts.stamp(snapshot.totals)
        return snapshot.model_copy(update=update)

    def _advance(self, fleet_seconds: int, budget_s: float) -> Tick:
        # Worker thread. At least one second always advances; beyond that, stop when the budget is spent
        # so the frame still leaves on time (the clock then reports a lower effective speed). Only the
        # last second becomes a whole frame: the others contribute their wave bins, events, counts and
        # totals (`folded_totals`, which the alarms judge second by second).
        from console.sim.records import serving_above, totals

        started = time.perf_counter()
        simulation = self.simulation
        counts = self._catch_up()
        bins: list[int] = []
        events: list[Event] = []
        earlier: list[Totals] = []
        hot: list[list[list[str]]] = []  # per earlier second, per line: the serving nodes over it
        drains: list[tuple[float, list[UnderWay]]] = []  # per earlier second: the drains under way
        seconds = 0
        while True:
            result = simulation.step()
            seconds += 1
            bins.extend(result.bins.tolist())
            events.extend(result.events)
            if seconds >= fleet_seconds or time.perf_counter() - started >= budget_s:
                break
            earlier.append(totals(simulation, result))
            hot.append([serving_above(simulation, result, line) for line in self.hot_lines])
            drains.append((simulation.time_s, under_way(simulation)))
            if counts is not None:
                counts.add(earlier[-1])
        frame: Frame = simulation.frame(result)
        update: dict[str, Any] = {
            "waves": Waves(bin_ms=WAVE_BIN_MS, attempts=bins),
            "span_s": float(seconds),
            "folded_totals": earlier or None,
            "folded_hot": folded_hot(self.hot_lines, frame.time_s, hot) if hot else None,
            # (a drain started and ended between two frames is in neither frame's nodes)
            "folded_drains": FoldedDrain.ended(drains, under_way(simulation)) if drains else None,
            "max_nodes": max_nodes_of(simulation),
        }
        if counts is not None:
            counts.add(frame.totals)
            update["totals"] = counts.stamp(frame.totals)
        frame = frame.model_copy(update=update)
        snapshot = FleetSnapshot.of_frame(frame, self.fleet_name, self.source)
        return Tick(frame, events, snapshot, seconds, time.perf_counter() - started)


def under_way(simulation: Simulation) -> list[UnderWay]:
    """The drains under way in the second the simulation just ran — its draining nodes' (its drain status
    is dropped once the node drains, at the next second's start)."""
    node_ids = simulation.node_ids
    return [(node_ids[i], drain.started_at_s, drain.rate_per_s) for i, drain in simulation.drains.items()]


def folded_hot(lines: tuple[float, ...], time_s: float, hot: list[list[list[str]]]) -> list[HotSpells]:
    """The spells over each line among the earlier seconds of a frame ending at `time_s`: `hot` holds, per
    earlier second (oldest first), per line, the serving nodes over it."""
    first_s = time_s - len(hot)
    return [
        HotSpells.of_seconds(line, [(first_s + i, second[j]) for i, second in enumerate(hot)])
        for j, line in enumerate(lines)
    ]


def max_nodes_of(simulation: Simulation) -> int:
    """The most nodes the simulated fleet may hold: the nodes the engine preallocated, less those a scheduled
    `add_nodes` will take (`Frame.max_nodes`, the capacity record's `max_nodes`)."""
    return simulation.n_nodes + max(simulation.room_nodes(), 0)


def capacity_of(simulation: Simulation) -> FleetCapacity:
    """The guards' capacity record from the scenario's node model: a handshake costs 1 ÷ handshakes_per_s
    of a node's CPU second (the kernel's FF_HS_COST), a held connection hold_cpu_pct_at_capacity ÷
    capacity_connections (FF_HOLD_COST), a refusal reject_cost of a handshake (FF_REJ_COST); calm inflow is churn plus scheduled lifetimes; the
    fleet can grow into the nodes the engine preallocated, less those a scheduled `add_nodes` will take,
    each ready after `nodes.provisioning_s`; a rollout batch drains as `_start_batch` drains it and a node
    restarts in `nodes.restart_s`."""
    from console.sim.rollout import batch_drain

    nodes = simulation.scenario.nodes
    drain_rate_per_s, drain_deadline_s, _ = batch_drain(simulation.scenario)
    clients = simulation.scenario.clients
    inflow_per_s = clients.churn_per_min / 60.0
    if clients.max_lifetime_s > 0:
        inflow_per_s += clients.count / max(clients.max_lifetime_s - clients.lifetime_dither_s / 2.0, 1.0)
    return FleetCapacity(
        handshakes_per_s=nodes.handshakes_per_s,
        cpu_pct_per_handshake_per_s=100.0 / nodes.handshakes_per_s,
        connections_per_node=nodes.capacity_connections,
        cpu_pct_per_connection=nodes.hold_cpu_pct_at_capacity / nodes.capacity_connections,
        cpu_pct_per_reject_per_s=nodes.reject_cost * 100.0 / nodes.handshakes_per_s,
        steady_inflow_per_s=inflow_per_s,
        max_nodes=max_nodes_of(simulation),
        provisioning_s=nodes.provisioning_s,
        batch_drain_rate_per_s=drain_rate_per_s,
        batch_drain_deadline_s=drain_deadline_s,
        restart_s=nodes.restart_s,
        hint_max_ms=simulation.hint_max_ms,
    )


def apply_action(simulation: Simulation, action: FleetAction) -> None:
    """Apply an allowed action to a simulation — the live one, or a forecast's twin. Each engine call
    checks before it changes anything, so an `InputError` leaves the simulation as it was."""
    request = action.request
    match action.kind:
        case ActionKind.DRAIN:
            assert isinstance(request, DrainRequest) and action.node_id is not None
            simulation.drain(action.node_id, request.rate_per_s, request.deadline_s, tuple(request.hint_ms))
        case ActionKind.UNDRAIN:
            assert action.node_id is not None
            simulation.undrain(action.node_id)
        case ActionKind.ROLLOUT_START:
            assert isinstance(request, RolloutRequest)
            simulation.rollout.start(
                batch_size=request.batch_size,
                interval_s=request.interval_s,
                mode=request.mode,
                pause_cpu_pct=request.pause_cpu_pct,
                drain_rate_per_s=request.drain_rate_per_s,
            )
        case ActionKind.ROLLOUT_HALT:
            simulation.rollout.halt("halted by operator")
        case ActionKind.ROLLOUT_RESUME:
            simulation.rollout.resume()
        case ActionKind.ADMISSION:
            assert isinstance(request, AdmissionRequest)
            if request.nodes:
                for node_id in request.nodes:
                    simulation.index_of(node_id)  # every name checked before anything changes
            simulation.set_admission(request.settings())
        case ActionKind.ADD_CAPACITY:
            assert isinstance(request, CapacityRequest)
            room = simulation.room_nodes()
            if not 1 <= request.count <= room:  # checked before any node is added
                raise InputError("count", request.count, f"an integer in [1, {max(room, 0)}] (room left)")
            added = simulation.add_nodes(request.count)
            simulation.announce(
                "capacity",
                f"operator added {len(added)} nodes ({added[0]}..{added[-1]}), ready after "
                f"{simulation.scenario.nodes.provisioning_s:g} s",
                data={"count": len(added), "nodes": added},
            )


def injector(told_by: dict[str, Any]) -> str:
    """Who injected, as the stream's event says it: "instructor dana (admin)"; "instructor (admin)" for
    `drill --serve`'s own admin token, which is named "instructor" (not "instructor instructor"); plain
    "instructor" when the audit hook names nobody."""
    actor, role = told_by.get("actor"), told_by.get("role", "?")
    if not actor:
        return "instructor"
    name = named_instructor(actor)
    return f"instructor {name} ({role})" if name else f"instructor ({role})"


def inject_into(
    simulation: Simulation, event: str, params: dict[str, Any], before_applying: BeforeInjecting
) -> tuple[Injection, float]:
    """Check, record, apply, announce (worker thread, under the backend's lock): the injection lands
    whole between two fleet seconds, and the stream shows it before the frame that shows its effect —
    with who injected it, so a recording of the stream can say whose doing it was."""
    from console.sim.injection import FleetFacts, check_injection

    facts = FleetFacts(
        node_ids=tuple(simulation.node_ids),
        room_nodes=max(simulation.room_nodes(), 0),
        populations=tuple(population.name for population in simulation.scenario.clients.populations),
        states={node_id: simulation.state_of(i).value for i, node_id in enumerate(simulation.node_ids)},
    )
    injection = check_injection(event, params, facts)
    told_by = dict(before_applying(injection) or {})
    simulation.apply_injection(injection.event, dict(injection.params))
    simulation.announce(
        "injection",
        f"{injector(told_by)} injected {injection.describe()}",
        data={"event": injection.event, "params": injection.params, **told_by},
    )
    return injection, simulation.time_s
