"""The simulator behind the backend protocol: folding fleet seconds into one frame, and the time budget."""

from __future__ import annotations

from console.protocol import WAVE_BIN_MS, FleetSnapshot
from console.server.backend import FleetBackend
from console.server.simulator import SimulatorBackend
from tests.fleet_builders import STORMY_DEMO

SMALL = ["nodes.count=6", "clients.count=10000", "rollout.batch_size=2"]


def backend() -> SimulatorBackend:
    return SimulatorBackend.from_scenario("thundering-herd", SMALL, seed=3)


async def test_it_is_a_fleet_backend_and_starts_at_zero() -> None:
    simulator = backend()
    assert isinstance(simulator, FleetBackend)
    snapshot = await simulator.start()
    assert isinstance(snapshot, FleetSnapshot)
    assert snapshot.fleet == "thundering-herd" and len(snapshot.nodes) == 6


async def test_several_fleet_seconds_fold_into_one_frame_keeping_every_bin() -> None:
    simulator = backend()
    started_at_s = (await simulator.start()).time_s
    tick = await simulator.tick(5, budget_s=60.0)
    assert tick.fleet_seconds == 5 and tick.frame.span_s == 5.0
    assert tick.frame.time_s == started_at_s + 5 and tick.snapshot.time_s == started_at_s + 5
    assert len(tick.frame.waves.attempts) == 5 * 1000 // WAVE_BIN_MS
    assert tick.snapshot.nodes is tick.frame.nodes  # one set of node records for both


async def test_a_spent_budget_stops_after_one_second() -> None:
    simulator = backend()
    started_at_s = (await simulator.start()).time_s
    tick = await simulator.tick(50, budget_s=0.0)
    assert tick.fleet_seconds == 1 and tick.frame.time_s == started_at_s + 1


async def test_the_same_seed_gives_the_same_frames() -> None:
    first, second = backend(), backend()
    await first.start()
    await second.start()
    one = await first.tick(3, budget_s=60.0)
    two = await second.tick(3, budget_s=60.0)
    assert one.frame.waves.attempts == two.frame.waves.attempts
    assert one.frame.totals == two.frame.totals


def test_the_guards_are_told_the_batch_drain_the_simulator_applies() -> None:
    """Found in review: the rollout guard judged a batch drained over its own 600 s window, whatever the
    fleet applied. The capacity record now says the drain `_start_batch` gives each batch node."""
    from console.protocol import ActionKind, ActionRequest, RolloutMode, RolloutRequest
    from console.server.actions import FleetAction
    from console.server.simulator import apply_action

    simulator = SimulatorBackend.from_scenario(
        "graceful-drain",
        ["nodes.count=4", "clients.count=4000", "rollout.drain_rate_per_s=40"],
        seed=3,
    )
    capacity = simulator.capacity()
    assert (capacity.batch_drain_rate_per_s, capacity.batch_drain_deadline_s, capacity.restart_s) == (
        40,
        600,
        10,
    )
    sim = simulator.simulation
    sim.step()
    apply_action(
        sim, FleetAction(ActionKind.ROLLOUT_HALT, ActionRequest())
    )  # the scheduled one, not started yet
    start = RolloutRequest(batch_size=2, interval_s=5, mode=RolloutMode.DRAIN)
    apply_action(sim, FleetAction(ActionKind.ROLLOUT_START, start))
    sim.step()
    applied = [(d.rate_per_s, d.deadline_at_s - d.started_at_s) for d in sim.drains.values()]
    assert applied == [(capacity.batch_drain_rate_per_s, capacity.batch_drain_deadline_s)] * 2


def test_a_scenario_without_a_rollout_tells_the_default_batch_drain() -> None:
    overrides = ["nodes.count=4", "clients.count=4000", "rollout.enabled=false"]
    simulator = SimulatorBackend.from_scenario("graceful-drain", overrides, seed=3)
    assert simulator.simulation.scenario.rollout is None
    capacity = simulator.capacity()
    assert (capacity.batch_drain_rate_per_s, capacity.batch_drain_deadline_s) == (833.0, 600.0)


def test_a_per_node_admission_change_stays_per_node() -> None:
    """Found in review: `set_admission` stored a per-node change as the fleet's — the fleet API showed it
    as the fleet's setting and nodes added later got it. The controller keeps the two apart; so does this."""
    from console.protocol import AdmissionSettings
    from console.sim import kernel as k

    sim = SimulatorBackend.from_scenario(
        "graceful-drain", ["nodes.count=4", "clients.count=4000"], seed=3
    ).simulation
    sim.step()
    fleet_wide = AdmissionSettings(
        rate_per_s=200.0, burst=None, max_connections=None, retry_after_s=(2.0, 40.0)
    )
    sim.set_admission(fleet_wide)
    one_node = fleet_wide.model_copy(update={"rate_per_s": 5.0, "max_connections": 900, "nodes": ["gw-001"]})
    sim.set_admission(one_node)
    tick_s = sim.tick_ms / 1000
    assert sim.node_f[k.NF_RATE, 1] == 5.0 * tick_s and sim.node_f[k.NF_CEILING, 1] == 900
    assert sim.node_f[k.NF_RATE, 0] == 200.0 * tick_s and sim.node_f[k.NF_CEILING, 0] == 0
    assert sim.admission == fleet_wide and sim.snapshot().admission == fleet_wide
    assert sim.snapshot().admission_overrides == [one_node]  # … and shown as that node's own
    added = sim.add_nodes(1)
    new = sim.index_of(added[0])
    assert sim.node_f[k.NF_RATE, new] == 200.0 * tick_s and sim.node_f[k.NF_CEILING, new] == 0


def test_a_per_node_retry_after_is_refused_naming_the_field_and_nothing_changes() -> None:
    """The kernel draws Retry-After from one fleet-wide window: a per-node change of it would have changed
    every node's. It is refused, whole."""
    import pytest

    from console.errors import InputError
    from console.protocol import AdmissionSettings
    from console.sim import kernel as k

    sim = SimulatorBackend.from_scenario(
        "graceful-drain", ["nodes.count=4", "clients.count=4000"], seed=3
    ).simulation
    before = (sim.admission, sim.node_f.copy(), sim.fleet_f.copy())
    change = AdmissionSettings(
        rate_per_s=5.0, max_connections=None, retry_after_s=(1.0, 2.0), nodes=["gw-001"]
    )
    with pytest.raises(InputError) as refused:
        sim.set_admission(change)
    assert refused.value.field == "retry_after_s"
    assert "[1, 30]" in str(refused.value) and "fleet-wide" in str(refused.value)
    assert sim.admission == before[0]
    assert (sim.node_f == before[1]).all() and (sim.fleet_f[k.FF_RA_LO] == before[2][k.FF_RA_LO]).all()


def test_the_capacity_record_carries_the_batch_drain_in_its_schema() -> None:
    """GET /v1/capacity kept the new fields only as extras: the schema (and /openapi.json) did not name them."""
    import dataclasses

    from console.protocol.answers import CapacityRecord

    capacity = SimulatorBackend.from_scenario(
        "graceful-drain", ["nodes.count=4", "clients.count=4000"], seed=3
    ).capacity()
    record = CapacityRecord(**dataclasses.asdict(capacity))
    properties = CapacityRecord.model_json_schema()["properties"]
    for name in ("batch_drain_rate_per_s", "batch_drain_deadline_s", "restart_s"):
        assert name in properties and "description" in properties[name]
        assert getattr(record, name) == getattr(capacity, name)


def per_second_sums(seconds: int) -> list[dict[str, int]]:
    """The same fleet run one second at a time: for each second, the running sum of every counted rate
    of its own frame (the simulator's own per-second figures)."""
    from console.protocol import TOTAL_COUNTERS
    from console.sim.engine import Simulation
    from console.sim.scenario_loader import load_scenario

    simulation = Simulation(load_scenario("demo", STORMY_DEMO), seed=3)
    sums = dict.fromkeys(TOTAL_COUNTERS, 0)
    running = []
    for _ in range(seconds):
        totals = simulation.advance()[0].totals
        for name, rate in TOTAL_COUNTERS.items():
            sums[name] += round(getattr(totals, rate))
        running.append(dict(sums))
    return running


async def test_running_counts_count_every_second_a_frame_folds() -> None:
    """A frame of a sped-up fleet carries its last second's rates only; its running counts hold every
    second it ran, the first (run to make the starting snapshot) included: at each frame they equal the
    sums of the per-second figures of the same fleet run a second at a time."""
    from console.protocol import TOTAL_COUNTERS

    simulator = SimulatorBackend.from_scenario("demo", STORMY_DEMO, seed=3)
    frames_totals = [(await simulator.start()).totals]
    for seconds in (10, 10, 1, 10, 7, 10, 10):
        tick = await simulator.tick(seconds, budget_s=60.0)
        assert tick.snapshot.totals is tick.frame.totals
        frames_totals.append(tick.frame.totals)
    frames_totals.append((await simulator.current_snapshot()).totals)
    expected = per_second_sums(59)
    at = [1, 11, 21, 22, 32, 39, 49, 59, 59]
    counted = [{name: getattr(totals, name) for name in TOTAL_COUNTERS} for totals in frames_totals]
    assert counted == [expected[s - 1] for s in at]
    assert expected[-1]["rejects_total"] > 0 and expected[-1]["timeouts_total"] > 0


async def test_a_simulation_handed_over_already_run_has_no_running_counts() -> None:
    """Its earlier seconds were never seen here: null (unknown), not a count short of them."""
    from console.sim.engine import Simulation
    from console.sim.scenario_loader import load_scenario

    simulation = Simulation(load_scenario("demo", STORMY_DEMO), seed=3)
    simulation.step()
    simulator = SimulatorBackend(simulation)
    await simulator.start()
    tick = await simulator.tick(3, budget_s=60.0)
    assert tick.frame.totals.rejects_total is None and tick.frame.totals.attempts_total is None


async def test_the_synthetic_storm_counts_its_folded_seconds_too() -> None:
    from console.client.synthetic import SyntheticFleet
    from console.protocol import Frame
    from console.server.synthetic import SyntheticBackend

    served = SyntheticBackend(nodes=20, storm_at_s=3)
    await served.start()
    tick = await served.tick(8, budget_s=60.0)
    twin = SyntheticFleet(nodes=20, seed=7, storm_at_s=3)
    seconds = [Frame.model_validate(twin.next_frame()).totals for _ in range(9)]
    assert tick.frame.totals.attempts_total == sum(round(t.attempts_per_s) for t in seconds) > 0
    assert tick.frame.totals.rejects_total == sum(round(t.rejects_per_s) for t in seconds)


async def test_a_folded_frame_carries_every_earlier_seconds_totals() -> None:
    """`folded_totals`: what the alarms judge each folded second by — the same fleet run a second at a
    time, its totals but the running counts (the frame's own totals carry those)."""
    from console.protocol import TOTAL_COUNTERS
    from console.sim.engine import Simulation
    from console.sim.scenario_loader import load_scenario

    simulator = SimulatorBackend.from_scenario("demo", STORMY_DEMO, seed=3)
    await simulator.start()
    ticks = [await simulator.tick(seconds, budget_s=60.0) for seconds in (10, 1, 7)]
    twin = Simulation(load_scenario("demo", STORMY_DEMO), seed=3)
    uncounted = dict.fromkeys(TOTAL_COUNTERS)
    per_second = [twin.advance()[0].totals for _ in range(19)][1:]  # the first ran for `start`
    assert ticks[0].frame.folded_totals == per_second[:9]
    assert ticks[1].frame.folded_totals is None  # one second: nothing folded
    assert ticks[2].frame.folded_totals == per_second[11:17]
    assert ticks[2].frame.totals.model_copy(update=uncounted) == per_second[17]
    assert [t.frame.time_s for t in ticks] == [11.0, 12.0, 19.0]


async def test_a_folded_frame_says_which_serving_nodes_were_over_each_watched_cpu_line() -> None:
    """`folded_hot`: for the abort line (and any line watched besides), each earlier second's serving nodes
    over it — the nodes the same fleet's frame of that second, run a second at a time, shows over it."""
    from console.sim.engine import Simulation
    from console.sim.scenario_loader import load_scenario

    simulator = SimulatorBackend.from_scenario("demo", STORMY_DEMO, seed=3)
    simulator.watch_cpu_line(60.0)
    assert simulator.hot_lines == (80.0, 60.0)
    await simulator.start()
    ticks = [await simulator.tick(60, budget_s=60.0) for _ in range(2)]
    twin = Simulation(load_scenario("demo", STORMY_DEMO), seed=3)
    per_second = [twin.advance()[0] for _ in range(121)][1:]  # the first ran for `start`
    said = 0
    for tick, seconds in zip(ticks, (per_second[:59], per_second[60:119]), strict=True):
        assert [spells.cpu_pct for spells in tick.frame.folded_hot or []] == [80.0, 60.0]
        for line in (80.0, 60.0):
            over = tick.frame.hot_by_second(line)
            assert over == [set(second.nodes_over(line)) for second in seconds]
            said += sum(map(len, over or []))
    assert said > 0  # the storm put nodes over the lines
    one = await simulator.tick(1, budget_s=60.0)
    assert one.frame.folded_hot is None  # one second: its nodes say it


async def test_a_folded_frame_lists_the_drains_that_ended_inside_it() -> None:
    """`folded_drains`: graceful-drain's batches of 2 on 6 small nodes each drain in 2–3 s (31–32, 43–45,
    56–58 s), all inside one ×60 frame (2–61 s) whose nodes, its last second's, show none of them. The frame
    lists each with the last second its node was draining — as the same fleet run a second at a time
    shows them."""
    from console.protocol import FoldedDrain, NodeState
    from console.sim.engine import Simulation
    from console.sim.scenario_loader import load_scenario

    simulator = SimulatorBackend.from_scenario("graceful-drain", SMALL, seed=3)
    await simulator.start()
    tick = await simulator.tick(60, budget_s=60.0)
    assert (tick.frame.time_s, tick.frame.span_s) == (61.0, 60.0)
    twin = Simulation(load_scenario("graceful-drain", SMALL), seed=3)
    last_s: dict[tuple[str, float], tuple[float, float]] = {}
    for second in [twin.advance()[0] for _ in range(61)][
        1:60
    ]:  # the first ran for `start`; 61 s is the frame's
        for node in second.nodes:
            if node.state is NodeState.DRAINING and node.drain is not None:
                last_s[(node.id, node.drain.started_at_s)] = (node.drain.rate_per_s, second.time_s)
    assert len(last_s) == 6
    assert not any(node.state is NodeState.DRAINING for node in tick.frame.nodes)
    assert sorted(tick.frame.folded_drains or [], key=lambda d: (d.last_s, d.node)) == [
        FoldedDrain(node=node, started_at_s=started_at_s, rate_per_s=rate_per_s, last_s=time_s)
        for (node, started_at_s), (rate_per_s, time_s) in sorted(
            last_s.items(), key=lambda kv: (kv[1][1], kv[0])
        )
    ]
    one = await simulator.tick(1, budget_s=60.0)
    assert one.frame.folded_drains is None  # one second: its nodes say it


async def test_the_simulators_frames_say_the_most_nodes_it_may_hold_and_that_it_can_roll_out() -> None:
    """What a fleet can do, typed (`max_nodes`, `rollout.unavailable_reason`): the simulator says it as the
    controller does — its room to add capacity, the nodes it preallocated (an autoscaled scenario's ceiling)
    — and, restarting nodes itself, never that it cannot roll out."""
    autoscaled = SimulatorBackend.from_scenario(
        "thundering-herd", [*SMALL, "autoscale.enabled=true", "autoscale.max_nodes=10"], seed=3
    )
    for simulator in (backend(), autoscaled):
        snapshot = await simulator.start()
        tick = await simulator.tick(3, budget_s=60.0)
        max_nodes = simulator.capacity().max_nodes
        assert max_nodes > len(snapshot.nodes)  # room for an operator's add: the simulator adds capacity
        for said in (snapshot, tick.frame, tick.snapshot):
            assert said.max_nodes == max_nodes
            assert said.rollout is not None and said.rollout.unavailable_reason is None


async def test_the_served_first_frame_says_the_most_nodes_too() -> None:
    """Frame 1 is made from the snapshot the backend started with (`feed.frame_of`): a console attaching at
    once reads `max_nodes` from it as from every later frame."""
    from console.server.feed import FleetFeed

    simulator = backend()
    feed = FleetFeed(simulator)
    await feed.start()
    try:
        first = feed.history.newest
        assert first is not None and first.seq == 1
        assert first.frame.max_nodes == simulator.capacity().max_nodes == feed.snapshot().max_nodes
        assert '"max_nodes":' in first.messages[-1]  # as sent on the stream
    finally:
        await feed.stop()
