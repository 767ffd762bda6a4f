"""The simulator engine at small scale: invariants, actions, determinism, forks, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from console.cli import main
from console.errors import InputError
from console.protocol import NodeState, RolloutMode, RolloutState
from console.sim.engine import Simulation
from console.sim.scenario_loader import build_scenario, list_scenarios, load_scenario
from console.sim.summary import RunRecorder

SMALL = {
    "name": "small",
    "duration_s": 120,
    "clients": {"count": 40_000, "churn_per_min": 600},
    "nodes": {"count": 8, "capacity_connections": 8_000, "handshakes_per_s": 2_000},
}


def small(**sections: dict) -> Simulation:
    data = {key: (dict(value) if isinstance(value, dict) else value) for key, value in SMALL.items()}
    for key, value in sections.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return Simulation(build_scenario(data))


def clients_accounted(sim: Simulation) -> int:
    """Every client is either connected somewhere or waiting in the wheel to retry."""
    return int(sim.conn.sum() + sim.wheel.sum())


def test_packaged_scenarios_load_and_cite_their_seed() -> None:
    names = [name for name, _ in list_scenarios()]
    for required in (
        "thundering-herd",
        "regional-outage",
        "graceful-drain",
        "gitlab-reset-burst",
        "resync-cliff",
        "socketio-lockstep",
    ):
        assert required in names
    for name in names:
        scenario = load_scenario(name)
        assert scenario.seed_source, f"{name} must cite the seed it comes from"
        assert scenario.teaches, f"{name} must say what it teaches"


def test_node_ids_have_one_width_past_999_nodes_so_none_is_another_ones_prefix() -> None:
    # `--set nodes.count=1200` named gw-000 … gw-999, gw-1000 … gw-1199: gw-100 was the start of gw-1000
    # (one keystroke apart in a typed confirmation) and text order put gw-1000 after gw-100.
    sim = small(nodes={"count": 1200})
    assert sim.node_ids[:2] == ["gw-0000", "gw-0001"] and sim.node_ids[-1] == "gw-1199"
    added = sim.add_nodes(sim.room_nodes())  # to the last slot: still the fleet's width
    assert added[-1] == f"gw-{sim.capacity_nodes - 1}" and len(added[-1]) == len("gw-0000")
    assert sorted(sim.node_ids) == sim.node_ids
    assert len({len(node_id) for node_id in sim.node_ids}) == 1
    assert sim.node_ids[sim.index_of("gw-0100")] == "gw-0100"
    with pytest.raises(InputError, match=r"gw-0000\.\.gw-"):
        sim.index_of("gw-100")
    # A timeline is checked against the same names.
    ok = {"nodes": {"count": 1200}, "events": [{"at_s": 5, "action": "restart_nodes", "nodes": ["gw-1100"]}]}
    assert build_scenario({**SMALL, **ok}).node_id_digits == 4
    with pytest.raises(InputError, match=r"events\.0\.nodes"):
        build_scenario(
            {**SMALL, **ok, "events": [{"at_s": 5, "action": "restart_nodes", "nodes": ["gw-110"]}]}
        )


def test_a_fleet_that_fits_keeps_3_digit_ids_and_its_room() -> None:
    # Every packaged scenario keeps its names; thundering-herd's room (480 nodes + 200 scheduled, room for
    # 480 more) is cut to 320 so that it, too, keeps them (the seed's 200 still fit).
    for name, _title in list_scenarios():
        scenario = load_scenario(name)
        assert scenario.node_id_digits == 3 and scenario.node_slots <= 1000, name
    herd = load_scenario("thundering-herd")
    assert (herd.nodes.count, herd.node_slots) == (480, 1000)
    # The small ones keep as many again as they have, at least 64.
    assert small().capacity_nodes == 8 + 64 and small().node_ids[-1] == "gw-007"
    assert small(nodes={"count": 500}).capacity_nodes == 1000
    # Past 936 scheduled nodes 3 digits would leave less than 64 of room: 4 digits, room as many again.
    assert small(nodes={"count": 950}).node_ids[0] == "gw-0000"
    assert small(nodes={"count": 950}).capacity_nodes == 1900


def test_clients_are_conserved_through_restarts_drains_and_overload() -> None:
    sim = small(
        events=[
            {"at_s": 10, "action": "restart_nodes", "nodes": ["gw-000", "gw-001"]},
            {"at_s": 20, "action": "disconnect_fraction", "fraction": 0.5},
            {
                "at_s": 30,
                "action": "drain_nodes",
                "nodes": ["gw-003"],
                "rate_per_s": 200,
                "deadline_s": 20,
                "hint_ms": [500, 5000],
            },
            {"at_s": 40, "action": "kill_nodes", "nodes": ["gw-004"]},
        ]
    )
    total = sim.scenario.clients.count
    assert clients_accounted(sim) == total
    for _ in range(90):
        sim.step()
        assert clients_accounted(sim) == total
        assert (sim.conn >= 0).all() and (sim.wheel >= 0).all() and (sim.fresh <= sim.conn).all()


def test_a_restart_drops_the_node_and_it_comes_back() -> None:
    sim = small(nodes={**SMALL["nodes"], "restart_s": 5})
    sim.step()
    before = int(sim.conn[:, 2].sum())
    sim.restart_nodes(["gw-002"])
    result = sim.step()
    assert sim.state_of(2) is NodeState.RESTARTING
    assert result.connections[2] == 0
    assert result.fleet_out.sum() > 0
    assert any(e.kind == "disconnect" and e.data["dropped"] == before for e in result.events)
    for _ in range(6):
        sim.step()
    assert sim.state_of(2) is NodeState.READY


def test_a_batch_restart_or_kill_is_one_disconnect_naming_its_nodes() -> None:
    # A fleet restart is one action: one event for the consoles (and the report's advice), not 200.
    sim = small()
    sim.step()
    held = {node: int(sim.conn[:, i].sum()) for i, node in enumerate(sim.node_ids)}
    sim.restart_nodes(["gw-000", "gw-001", "gw-002"])
    sim.kill_nodes(["gw-003", "gw-004"])
    cuts = [e for e in sim.step().events if e.kind == "disconnect"]
    assert [(e.node, e.node_ids(), e.data["dropped"], e.message) for e in cuts] == [
        (
            None,
            ("gw-000", "gw-001", "gw-002"),
            held["gw-000"] + held["gw-001"] + held["gw-002"],
            f"restart of 3 nodes dropped {held['gw-000'] + held['gw-001'] + held['gw-002']:,} connections",
        ),
        (
            None,
            ("gw-003", "gw-004"),
            held["gw-003"] + held["gw-004"],
            f"2 nodes down, dropped {held['gw-003'] + held['gw-004']:,}",
        ),
    ]
    assert all(e.data["mass"] for e in cuts)


def test_drain_closes_at_the_requested_rate_then_the_node_is_drained() -> None:
    sim = small()
    sim.step()
    held = int(sim.conn[:, 5].sum())
    sim.drain("gw-005", rate_per_s=400, deadline_s=600, hint_ms=(1000, 5000))
    closes = []
    while sim.state_of(5) is NodeState.DRAINING:
        result = sim.step()
        closes.append(result.node_out[5][5])  # ON_CLOSES
    # The last second with connections closes what is left; the state changes at the next second's start.
    steady = closes[:-2]
    assert np.mean(steady) == pytest.approx(400, rel=0.02)
    assert sum(closes) >= held  # churn adds a few, nothing is lost
    assert sim.state_of(5) is NodeState.DRAINED
    sim.undrain("gw-005")
    assert sim.state_of(5) is NodeState.READY


def test_drain_force_closes_at_the_deadline() -> None:
    sim = small()
    sim.step()
    sim.drain("gw-001", rate_per_s=10, deadline_s=5, hint_ms=(1000, 2000))
    forced = 0.0
    for _ in range(8):
        forced += sim.step().node_out[9][1]  # ON_FORCED
    assert forced > 4000  # ~5,000 held, 50 closed at the rate, the rest at the deadline
    assert sim.state_of(1) is NodeState.DRAINED


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda sim: sim.drain("gw-999", 100, 60, (0, 10)), "node"),
        (lambda sim: sim.drain("gw-001", 0, 60, (0, 10)), "rate_per_s"),
        (lambda sim: sim.drain("gw-001", 100, -1, (0, 10)), "deadline_s"),
        (lambda sim: sim.drain("gw-001", 100, 60, (500, 10)), "hint_ms"),
        (lambda sim: sim.undrain("gw-001"), "node"),
        (lambda sim: sim.add_nodes(0), "count"),
        (lambda sim: sim.disconnect_fraction(1.5), "fraction"),
    ],
)
def test_bad_actions_name_the_field_and_change_nothing(call, field: str) -> None:
    sim = small()
    sim.step()
    before = (sim.conn.copy(), sim.node_f.copy())
    with pytest.raises(InputError) as error:
        call(sim)
    assert error.value.field == field
    assert np.array_equal(sim.conn, before[0]) and np.array_equal(sim.node_f, before[1])


def test_same_seed_same_frames_and_a_fork_continues_identically() -> None:
    def run(sim: Simulation, seconds: int) -> list[str]:
        return [sim.advance()[0].model_dump_json() for _ in range(seconds)]

    a = small(events=[{"at_s": 5, "action": "disconnect_fraction", "fraction": 0.3}])
    b = small(events=[{"at_s": 5, "action": "disconnect_fraction", "fraction": 0.3}])
    assert run(a, 20) == run(b, 20)
    twin = a.fork()
    assert run(a, 15) == run(twin, 15)
    other = Simulation(a.scenario, seed=a.seed + 1)
    assert run(other, 20) != run(
        small(events=[{"at_s": 5, "action": "disconnect_fraction", "fraction": 0.3}]), 20
    )


def test_a_batch_run_without_history_runs_the_same_and_adds_nodes() -> None:
    """`sim run` keeps no per-node history: same frames, an empty node history, and adds still work."""
    scenario = small().scenario
    kept, batch = Simulation(scenario), Simulation(scenario, keep_history=False)
    for sim in (kept, batch):
        for _ in range(10):
            sim.step()
        sim.add_nodes(3)
    frames = [[sim.advance()[0].model_dump_json() for _ in range(5)] for sim in (kept, batch)]
    assert frames[0] == frames[1]
    assert len(kept.node_history(kept.node_ids[-1])) == 15  # widened for the added node
    assert batch.node_history(batch.node_ids[0]) == []


def test_rollout_runs_batches_and_can_halt_and_resume() -> None:
    sim = small(
        rollout={"enabled": True, "start_at_s": 2, "batch_size": 2, "interval_s": 10, "mode": "abrupt"},
        nodes={**SMALL["nodes"], "restart_s": 3},
    )
    for _ in range(15):
        sim.step()
    status = sim.rollout.status()
    assert status.state is RolloutState.RUNNING and status.batch == 2 and status.batches == 4
    sim.rollout.halt()
    halted_at_s = sim.time_s
    for _ in range(20):
        sim.step()
    assert sim.rollout.status().batch == 2
    assert sim.rollout.status().halted_at_s == halted_at_s  # since when, while halted
    sim.rollout.resume()
    assert sim.rollout.status().halted_at_s is None
    for _ in range(40):
        sim.step()
    assert sim.rollout.status().state is RolloutState.COMPLETED


@pytest.mark.parametrize("mode", [RolloutMode.DRAIN, RolloutMode.ABRUPT])
def test_a_rollout_restarts_a_node_out_of_rotation_as_its_batch_comes_to_it(mode: RolloutMode) -> None:
    """Both backends plan every node; the controller restarts a drained batch node (without draining it
    again) and a draining one once drained. The simulator left them alone: in drain mode it then waited for
    the drained node to be ready and never did — "running, batch 2 of 3" for good; abrupt, it "completed"
    with the node never restarted."""
    sim = small(nodes={**SMALL["nodes"], "count": 3, "restart_s": 3}, clients={"count": 3000})
    sim.step()
    sim.drain(sim.node_ids[1], 1000, 5, (100, 500))  # the operator's: out of rotation, not to restart
    sim.drain(sim.node_ids[2], 1, 600, (100, 500))  # still draining when its batch comes
    for _ in range(10):
        sim.step()
    assert [sim.state_of(i) for i in range(3)] == [NodeState.READY, NodeState.DRAINED, NodeState.DRAINING]
    sim.rollout.start(1, 5, mode, 75)
    restarted: set[str] = set()
    for _ in range(1200):
        sim.step()
        restarted |= {sim.node_ids[i] for i in range(3) if sim.state_of(i) is NodeState.RESTARTING}
        if sim.rollout.status().state is RolloutState.COMPLETED:
            break
    assert sim.rollout.status().state is RolloutState.COMPLETED and sim.rollout.status().batches == 3
    assert restarted == set(sim.node_ids)


def _until_rollout(sim: Simulation, states: set[RolloutState], seconds: int = 1200) -> None:
    for _ in range(seconds):
        sim.step()
        if sim.rollout.status().state in states:
            return


def test_a_drain_rollout_halts_on_a_node_down_as_the_controllers_does() -> None:
    """A batch node down never becomes ready: the simulator's drain-mode rollout waited for it for good
    ("running, batch 2 of 3") where the controller's halts — "restart it, then resume"."""
    sim = small(nodes={**SMALL["nodes"], "count": 3, "restart_s": 3}, clients={"count": 3000})
    sim.step()
    sim.kill_nodes([sim.node_ids[1]])
    sim.rollout.start(1, 5, RolloutMode.DRAIN, 75)
    _until_rollout(sim, {RolloutState.HALTED, RolloutState.COMPLETED})
    status = sim.rollout.status()
    assert status.state is RolloutState.HALTED and status.batch == 2
    assert sim.node_ids[1] in (status.pause_reason or "") and "restart it, then resume" in status.pause_reason
    sim.restart_nodes([sim.node_ids[1]])
    sim.rollout.resume()
    _until_rollout(sim, {RolloutState.HALTED, RolloutState.COMPLETED})
    assert sim.rollout.status().state is RolloutState.COMPLETED


def test_an_undrained_batch_node_halts_a_drain_rollout_as_the_controllers_does() -> None:
    """Maintenance-window run: gw-004, draining in the rollout's batch 3, undrained from the console — the
    simulator's rollout took it as done (ready) and went on, so it would complete with gw-004 never
    restarted. The controller halts ("back in rotation before it drained"), and its resume drains it
    again; so does the simulator now."""
    sim = small(nodes={**SMALL["nodes"], "count": 3, "restart_s": 3}, clients={"count": 12_000})
    sim.step()
    sim.rollout.start(1, 5, RolloutMode.DRAIN, 75)
    for _ in range(5):
        sim.step()
        if sim.state_of(0) is NodeState.DRAINING:
            break
    assert sim.state_of(0) is NodeState.DRAINING
    sim.undrain(sim.node_ids[0])
    status = sim.rollout.status()
    assert status.state is RolloutState.HALTED, status
    assert f"{sim.node_ids[0]} is back in rotation before it drained" in (status.pause_reason or "")
    sim.rollout.resume()
    sim.step()
    assert sim.state_of(0) is NodeState.DRAINING  # drained again, to be restarted
    _until_rollout(sim, {RolloutState.HALTED, RolloutState.COMPLETED})
    assert sim.rollout.status().state is RolloutState.COMPLETED


def test_an_abrupt_rollout_restarts_a_node_down_as_the_controllers_does() -> None:
    """The controller runs every batch node's restart command, a down one's too: it comes back. The
    simulator skipped it and never completed (its last batch was never all ready)."""
    sim = small(nodes={**SMALL["nodes"], "count": 3, "restart_s": 3}, clients={"count": 3000})
    sim.step()
    sim.kill_nodes([sim.node_ids[2]])
    sim.rollout.start(1, 5, RolloutMode.ABRUPT, 75)
    _until_rollout(sim, {RolloutState.HALTED, RolloutState.COMPLETED})
    assert sim.rollout.status().state is RolloutState.COMPLETED
    assert sim.state_of(2) is NodeState.READY


def test_rollout_auto_pauses_when_a_survivor_runs_hot() -> None:
    sim = small(
        rollout={
            "enabled": True,
            "start_at_s": 2,
            "batch_size": 4,
            "interval_s": 5,
            "mode": "abrupt",
            "pause_cpu_pct": 50,
        },
        nodes={**SMALL["nodes"], "handshakes_per_s": 300, "restart_s": 30},
    )
    for _ in range(30):
        sim.step()
    status = sim.rollout.status()
    assert status.state is RolloutState.PAUSED
    assert "CPU" in (status.pause_reason or "")


def test_rollout_abort_names_the_hot_node_and_its_cpu() -> None:
    """The abort reason names which survivor ran hot and how hot, as the controller's does: the simulator's
    read "abort criterion: node CPU > 80 % for 30 s", the threshold without the node or the value."""
    sim = small(
        rollout={
            "enabled": True,
            "start_at_s": 2,
            "batch_size": 4,
            "interval_s": 5,
            "mode": "abrupt",
            "abort_cpu_pct": 50,
            "abort_after_s": 2,
        },
        nodes={**SMALL["nodes"], "handshakes_per_s": 300, "restart_s": 30},
    )
    _until_rollout(sim, {RolloutState.ABORTED, RolloutState.COMPLETED})
    reason = sim.rollout.status().pause_reason or ""
    assert sim.rollout.status().state is RolloutState.ABORTED, reason
    named = [node_id for node_id in sim.node_ids if f"{node_id} CPU " in reason]
    assert len(named) == 1, reason
    value = float(reason.split(f"{named[0]} CPU ")[1].split(" %")[0])
    assert value > 50 and "> 50 % for 2 s" in reason


def test_frame_matches_the_protocol_and_totals_add_up() -> None:
    sim = small()
    frame, _ = sim.advance()
    payload = json.loads(frame.model_dump_json())
    assert {"seq", "epoch", "time_s", "nodes", "totals", "waves"} <= payload.keys()
    assert len(payload["nodes"]) == 8 and len(payload["waves"]["attempts"]) == 10
    assert payload["totals"]["connections"] == sum(n["connections"] for n in payload["nodes"])
    assert sum(payload["waves"]["attempts"]) == pytest.approx(payload["totals"]["attempts_per_s"])
    history = sim.node_history("gw-000")
    assert len(history) == 1 and history[0].connections == payload["nodes"][0]["connections"]


def test_summary_measures_recovery_from_the_first_disconnect() -> None:
    sim = small(
        events=[{"at_s": 10, "action": "restart_nodes", "nodes": 8}], nodes={**SMALL["nodes"], "restart_s": 5}
    )
    recorder = RunRecorder(sim)
    for _ in range(120):
        recorder.record(sim.step())
    summary = recorder.summary(wall_s=0.0)
    assert summary["min_connections"] == 0
    assert 5 <= summary["recovery_s"] < 60
    assert summary["peak_attempts_per_100ms"] > 0


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["sim", "run", "no-such-scenario"], ["scenario", "thundering-herd"]),
        (["sim", "run", "regional-outage", "--set", "nodes.cont=3"], ["nodes.cont", "count"]),
        (["sim", "run", "regional-outage", "--set", "nodes.count=0"], ["nodes.count", "[1, 10000]"]),
        (
            ["sim", "run", "regional-outage", "--set", "clients.policy=nope"],
            ["clients.policy", "full_jitter"],
        ),
        (["sim", "run", "regional-outage", "--set", "lb.mode=random"], ["lb.mode", "skewed"]),
        (
            ["sim", "run", "regional-outage", "--set", "admission.retry_after_s=[5, 1]"],
            ["retry_after_s", "min ≤ max"],
        ),
        (["sim", "run", "regional-outage", "--set", "nodes"], ["--set", "KEY=VALUE"]),
        # A table set to a value would have dropped its keys (a TypeError in validation).
        (["sim", "run", "thundering-herd", "--set", "nodes=3"], ["nodes: 3", "a table", "nodes.count"]),
        (["sim", "run", "thundering-herd", "--set", "clients=5"], ["clients: 5", "a table", "clients.count"]),
        (["sim", "run", "demo", "--set", "nodes={cont=4}"], ["nodes.cont: 4", "a known key"]),
        (["sim", "run", "demo", "--set", "clients.populations.0=3"], ["clients.populations.0: 3"]),
        (["sim", "run", "demo", "--set", "clients.populations.0.params=3"], ["populations.0.params: 3"]),
        (["sim", "run", "demo", "--set", "events=3"], ["events: 3", "a list"]),
        # A position past a list's end said "an index below 0" of a list with no entries.
        (
            ["sim", "run", "graceful-drain", "--set", "events.0.at_s=3"],
            ["events.0.at_s: 3", "an entry of 'events', which has none"],
        ),
        (
            ["sim", "run", "regional-outage", "--set", "events.3.nodes=1"],
            ["events.3.nodes: 1", "a position in [0, 0] ('events' has 1 entry)"],
        ),
        (
            ["sim", "run", "demo", "--set", "clients.populations.x.share=1"],
            ["clients.populations.x.share: 1", "a position in [0, 0] ('clients.populations' has 1 entry)"],
        ),
        # A policy's parameter is named by the path the user set (it said 'clients.populations.0.policy.nope').
        (
            ["sim", "run", "graceful-drain", "--set", "clients.populations.0.params.nope=5"],
            ["clients.populations.0.params.nope: 5", "a parameter of full_jitter: base_ms, max_ms"],
        ),
        (
            ["sim", "run", "graceful-drain", "--set", "clients.populations.0.params.base_ms=-5"],
            ["clients.populations.0.params.base_ms: -5", "≥ 0"],
        ),
        # The rollout's batch depends on the fleet's size: named by its dotted path, with the reason.
        (
            ["sim", "run", "thundering-herd", "--set", "nodes.count=10"],
            ["rollout.batch_size: 30", "[1, 10]", "nodes.count"],
        ),
        # Integer fields refuse fractions instead of truncating them (40.7 ran as 40 nodes).
        (
            ["sim", "run", "thundering-herd", "--set", "nodes.count=40.7"],
            ["nodes.count: 40.7", "an integer in [1, 10000]"],
        ),
        (["sim", "run", "thundering-herd", "--set", "nodes.count=1.5"], ["nodes.count: 1.5", "[1, 10000]"]),
        (["sim", "run", "demo", "--set", "admission.burst=nan"], ["admission.burst: nan", "an integer"]),
        (["sim", "run", "demo", "--set", "rollout.enabled=1"], ["rollout.enabled: 1", "true or false"]),
        (
            ["sim", "run", "demo", "--seed", "-1", "--until", "1"],
            ["--seed: '-1'", "[0, 9223372036854775807]"],
        ),
        # An empty key named no path (': 3 is not allowed').
        (["sim", "run", "demo", "--set", "=3"], ["--set: '=3'", "KEY=VALUE with a dotted KEY"]),
        # The simulator runs whole seconds: 0.5 ran none and printed a summary of zeros, 1.7 ran one.
        (["sim", "run", "demo", "--until", "0.5"], ["--until: 0.5", "whole seconds in [1, 90000]"]),
        (["sim", "run", "demo", "--until", "1.7"], ["--until: 1.7", "whole seconds in [1, 90000]"]),
        (["sim", "run", "demo", "--until", "0"], ["--until: 0 is", "whole seconds in [1, 90000]"]),
        # Shown as typed: it read "--until: -5.0", "--until: 99999.0".
        (["sim", "run", "demo", "--until", "-5"], ["--until: -5 is", "whole seconds in [1, 90000]"]),
        (["sim", "run", "demo", "--until", "99999"], ["--until: 99999 is", "whole seconds in [1, 90000]"]),
        (["sim", "run", "demo", "--until", "1e30"], ["--until: 1e+30", "whole seconds in [1, 90000]"]),
        (
            ["sim", "run", "demo", "--until", "1", "--frames", "/nonexistent/dir/f.jsonl"],
            ["--frames", "/nonexistent/dir/f.jsonl", "a writable file"],
        ),
    ],
)
def test_bad_input_exits_2_naming_path_value_and_range(argv, words, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for word in words:
        assert word in err


@pytest.mark.parametrize(
    ("until", "said"),
    [
        # It was argparse's "argument --until: invalid float value: 'abc'", after the usage, with no range.
        ("abc", "--until: 'abc' is not allowed; expected whole seconds in [1, 150000] (simulated seconds, "),
        ("", "--until: '' is not allowed; expected whole seconds in [1, 150000]"),
        # The simulator runs whole fleet seconds and cannot stop within one: say so, and the two nearest.
        ("1.5", "--until: 1.5 is not allowed; expected whole seconds in [1, 150000] (the simulator runs "),
        (
            "299.25",
            "expected whole seconds in [1, 150000] (the simulator runs whole fleet seconds: 299 or 300)",
        ),
        (
            "150001",
            "--until: 150001 is not allowed; expected whole seconds in [1, 150000] (simulated seconds, ",
        ),
    ],
)
def test_until_refused_names_the_option_its_range_and_its_unit(
    capsys: pytest.CaptureFixture[str], until: str, said: str
) -> None:
    """Review: `--until abc` got a bare argparse message and `--until 1.5` no word of why not."""
    assert main(["sim", "run", "thundering-herd", "--until", until]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stormdeck: --until: ") and said in err, err
    assert "usage:" not in err and "invalid float" not in err
    if until == "1.5":
        assert "(the simulator runs whole fleet seconds: 1 or 2)" in err
    if until == "abc":
        assert "at most 100 × the scenario's duration_s, 1500)" in err


def test_until_as_typed_in_whole_seconds_runs_that_long(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "run", "demo", "--until", "3.0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["simulated_s"] == 3


def test_frames_dash_is_refused_not_written_to_a_file_named_dash(tmp_path, monkeypatch, capsys) -> None:
    """`--frames -` (stdout, as in most tools) wrote the frames to a file named '-' in the working
    directory and printed the summary: a `| jq` got the summary, and the file was left behind."""
    monkeypatch.chdir(tmp_path)
    assert main(["sim", "run", "demo", "--until", "1", "--frames", "-"]) == 2
    err = capsys.readouterr().err
    assert "--frames: '-' is not allowed; expected a file path" in err
    assert list(tmp_path.iterdir()) == []


def test_clients_policy_lists_the_policies_not_the_empty_default(capsys) -> None:
    assert main(["sim", "run", "demo", "--set", "clients.policy=nope"]) == 2
    err = capsys.readouterr().err
    assert "''" not in err and "'full_jitter'" in err and "unset" in err


def test_a_policy_parameter_the_scenario_left_at_its_default_can_be_set() -> None:
    """graceful-drain's population has no `params` table: `--set …params.base_ms=500` was refused as an
    unknown path (docs/scenarios.md shows it)."""
    scenario = load_scenario("graceful-drain", ["clients.populations.0.params.base_ms=500"])
    assert scenario.clients.populations[0].policy.base_ms == 500
    assert load_scenario("graceful-drain").clients.populations[0].policy.base_ms != 500


def test_an_integral_float_is_taken_as_its_integer() -> None:
    """TOML reads 1e4 as a float: an integer field takes it as 10 000, not refuses it."""
    assert build_scenario({}, ["clients.count=1e4", "nodes={count=4}"]).clients.count == 10_000
    assert build_scenario({}, ["nodes={count=4}"]).nodes.count == 4


def test_sim_list_prints_one_scenario_a_line_name_first(capsys) -> None:
    assert main(["sim", "list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split("\t")[0] == sorted(n for n, _ in list_scenarios())[0]
    assert all("\t" in line for line in lines)


def test_sim_list_json_is_a_json_list_of_the_scenarios(capsys) -> None:
    assert main(["sim", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [item["name"] for item in listed] == [name for name, _ in list_scenarios()]
    assert {key for item in listed for key in item} == {
        "name",
        "title",
        "seed_source",
        "teaches",
        "clients",
        "nodes",
        "duration_s",
    }
    herd = next(item for item in listed if item["name"] == "thundering-herd")  # as its file says
    assert (herd["clients"], herd["nodes"], herd["duration_s"]) == (13_000_000, 480, 1500)
    assert herd["title"].startswith("Rolling restart") and "outage seed" in herd["seed_source"]


def test_sim_run_json_holds_the_contract_fields(capsys) -> None:
    assert main(["sim", "run", "demo", "--until", "40", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    for key in (
        "peak_attempts_per_100ms",
        "lockstep_index",
        "min_connections",
        "min_connections_at_s",
        "recovery_s",
        "max_node_cpu_pct",
        "rejects_total",
        "timeouts_total",
        "full_resyncs_total",
        "drain_close_rate_per_s",
        "rollout_completed_s",
        "alarms_fired",
        "wall_s",
    ):
        assert key in summary, key
    assert summary["lockstep_index"] >= 4  # the demo's first batch comes back in waves
    assert "lockstep_waves" in summary["alarms_fired"]
    assert summary["simulated_s"] == 40


def test_sim_run_fires_node_down_for_a_kill_and_not_for_a_restart(tmp_path, capsys) -> None:
    """`sim run` judges the nodes as columns: a node killed at 40 s is `node_down` in the frame that ends
    that second (41 s, as the restart at 10 s lowers headroom in the frame at 11 s); the nodes restarted
    earlier (planned, `restarting`) raise nothing."""
    scenario = tmp_path / "kill.toml"
    scenario.write_text(
        """name = "kill"
duration_s = 60
[clients]
count = 40_000
[nodes]
count = 8
capacity_connections = 8_000
handshakes_per_s = 2_000
restart_s = 5
[[events]]
at_s = 10
action = "restart_nodes"
nodes = ["gw-000", "gw-001"]
[[events]]
at_s = 40
action = "kill_nodes"
nodes = ["gw-004"]
"""
    )
    assert main(["sim", "run", str(scenario), "--json"]) == 0
    fired = json.loads(capsys.readouterr().out)["alarms_fired"]
    assert fired.get("node_down") == 41 and fired.get("headroom_low") == 11


def test_sim_run_says_how_many_nodes_it_started_with_and_why_the_rollout_did_not_complete(capsys) -> None:
    """The demo's timeline halts its rollout and adds 20 nodes: the summary said '68 nodes' and 'rollout
    completed —'."""
    overrides = ["--set", "events.0.at_s=40", "--set", "events.1.at_s=40"]
    assert main(["sim", "run", "demo", "--until", "45", *overrides]) == 0
    out = capsys.readouterr().out
    assert "48 nodes, 68 at the end" in out
    assert "rollout completed       — (halted by the scenario's timeline)" in out


def test_the_scenarios_own_restart_is_not_called_injected() -> None:
    # "(injected)" tells a trainee the instructor did it; the scenario's timeline is what happens.
    sim = small(events=[{"at_s": 1, "action": "restart_nodes", "nodes": 1}])
    messages = [e.message for _ in range(3) for e in sim.step().events if e.kind == "node_state"]
    assert "gw-000 restarted: ready → restarting" in messages
    sim.apply_injection("restart_nodes", {"nodes": ["gw-001"]})
    assert "gw-001 restarted (injected): ready → restarting" in [e.message for e in sim.step().events]


def test_the_readme_says_what_the_demo_shows_before_its_restart(capsys) -> None:
    """User pass: the README promised "calm for ten seconds", and `sim run demo` fired a critical
    headroom_low at 1 s. The demo is the outage at 20 % headroom (the seed's, before its fix), under the
    35 % budget from the start: the README says so rather than "calm"."""
    from pathlib import Path

    assert main(["sim", "run", "demo", "--until", "9", "--json"]) == 0
    before_restart = json.loads(capsys.readouterr().out)["alarms_fired"]
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("The first starts a simulated fleet")
    says = " ".join(readme[start : readme.index("(scenario `demo`)", start)].split())
    assert before_restart == {"headroom_low": 1.0}
    assert "calm" not in says and "headroom_low" in says, says


@pytest.mark.parametrize(
    ("override", "field", "allowed_has"),
    [
        # A bare word is a string: "no" was taken as a true flag (bool("no")), the opposite of what was asked.
        ("clients.populations.0.honours_hints=no", "clients.populations.0.honours_hints", "true or false"),
        ("clients.populations.0.honours_hints=1", "clients.populations.0.honours_hints", "true or false"),
        ("clients.populations.0.name=[1]", "clients.populations.0.name", "a string"),
    ],
)
def test_a_population_value_of_the_wrong_type_is_refused_not_coerced(
    override: str, field: str, allowed_has: str
) -> None:
    with pytest.raises(InputError) as error:
        load_scenario("demo", [override])
    assert error.value.field == field
    assert allowed_has in str(error.value)


def test_a_population_flag_given_as_a_boolean_is_taken() -> None:
    scenario = load_scenario("demo", ["clients.populations.0.honours_hints=false"])
    assert scenario.clients.populations[0].honours_hints is False


@pytest.mark.parametrize("command", ["run", "serve"])
def test_a_forgotten_scenario_is_named_with_the_scenarios_to_choose_from(command: str, capsys) -> None:
    """`stormdeck sim run` read argparse's "the following arguments are required: scenario" under its
    usage, naming no scenario; `stormdeck drill` names its drills."""
    assert main(["sim", command]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stormdeck: SCENARIO is required: one of demo, ")
    assert "thundering-herd" in err and "sim list" in err


def test_a_switched_policy_takes_the_constants_set_after_the_switch() -> None:
    """`--set clients.policy=phoenix --set clients.populations.0.params.after_ms=3000` ran Phoenix on its
    defaults: the switch dropped every population's params, the ones typed after it as well."""
    switched = ["clients.policy=phoenix", "clients.populations.0.params.after_ms=3000"]
    assert load_scenario("demo", switched).clients.populations[0].policy.after_ms == 3000
    # demo's own constants are its exponential's (multiplier 2): the switch drops them.
    decorrelated = load_scenario("demo", ["clients.policy=decorrelated"]).clients.populations[0].policy
    assert decorrelated.multiplier == 3


@pytest.mark.parametrize(
    ("policy", "param", "words"),
    [
        ("phoenix", "schedule_ms=[]", ["params.schedule_ms: []", "a non-empty list of delays"]),
        ("decorrelated", "state_bins=0", ["params.state_bins: 0", "an integer in [1, 256]"]),
        ("socketio", "randomization=1", ["params.randomization: 1.0", "a fraction in [0, 1)"]),
    ],
)
def test_a_bad_constant_of_a_switched_policy_exits_2(policy, param, words, capsys) -> None:
    """These ran, exit 0, on the policy's defaults: the value was dropped unseen."""
    argv = ["sim", "run", "demo", "--until", "1", "--set", f"clients.policy={policy}"]
    assert main([*argv, "--set", f"clients.populations.0.params.{param}"]) == 2
    err = capsys.readouterr().err
    for word in words:
        assert word in err


def test_the_scenarios_own_cuts_say_they_are_scripted_and_the_operators_do_not() -> None:
    """A report must tell the scenario's doing from the operator's (docs/recording.md): the disconnects its
    timeline or its `[rollout]` make say `scripted`; once the operator resumes that rollout, its batches
    are the operator's choice, and so is a rollout the operator starts."""
    overrides = ["nodes.count=8", "clients.count=20000", "rollout.batch_size=2", "rollout.interval_s=5"]
    sim = Simulation(load_scenario("thundering-herd", [*overrides, "rollout.start_at_s=2"]))

    def cuts_until(end_s: float) -> list[object]:
        cut = []
        while sim.time_s < end_s:
            cut += [e.data.get("scripted") for e in sim.step().events if e.data.get("mass")]
        return cut

    assert cuts_until(8) == ["rollout", "rollout"]  # batches at 2 and 7 s: the scenario's
    sim.rollout.halt()
    sim.rollout.resume()  # the operator's
    assert cuts_until(20) == [None, None]
    regional = Simulation(
        load_scenario("regional-outage", ["nodes.count=8", "clients.count=20000", "events.0.nodes=8"])
    )
    cut = [e for _ in range(45) for e in regional.step().events if e.data.get("mass")]
    assert [e.data.get("scripted") for e in cut] == ["restart_nodes"]  # at 30 s; back by 45 s
    regional.rollout.start(batch_size=4, interval_s=5, mode=RolloutMode.ABRUPT, pause_cpu_pct=0)
    cut = [e for _ in range(3) for e in regional.step().events if e.data.get("mass")]
    assert cut and not any("scripted" in e.data for e in cut)


@pytest.mark.parametrize("mode", [RolloutMode.DRAIN, RolloutMode.ABRUPT])
def test_the_simulators_rollout_says_what_it_waits_for_as_the_controllers_does(mode: RolloutMode) -> None:
    """Drain mode waits for the batch to drain and come back; abrupt mode for the interval (start to start)
    and, on the last batch, for its nodes to come back. Nothing once it completes."""
    sim = small(nodes={**SMALL["nodes"], "count": 3, "restart_s": 3}, clients={"count": 3000})
    sim.step()
    sim.rollout.start(1, 20, mode, 75)
    seen: list[tuple[str, list[str]]] = []
    for _ in range(1200):
        sim.step()
        status = sim.rollout.status()
        wait = status.waiting_for
        if wait is not None:
            if wait.what == "interval":
                assert wait.limit_s == 20 and 0 <= wait.waited_s <= 20, wait
            if (wait.what, wait.nodes) not in seen:
                seen.append((wait.what, wait.nodes))
        if status.state is RolloutState.COMPLETED:
            break
    assert sim.rollout.status().state is RolloutState.COMPLETED
    assert sim.rollout.status().waiting_for is None
    first, last = sim.node_ids[0], sim.node_ids[-1]
    if mode is RolloutMode.DRAIN:
        assert seen[:2] == [("drain", [first]), ("restart", [first])], seen
    else:
        assert seen[0] == ("interval", []) and seen[-1] == ("restart", [last]), seen


def test_a_resumed_rollout_drains_an_undrained_batch_node_again_at_the_rate_asked_for() -> None:
    """The operator's `drain_rate_per_s` holds for the whole rollout: the resume that drains again a batch
    node undrained from the console drained it at the scenario's rate instead."""
    sim = small(nodes={**SMALL["nodes"], "count": 3, "restart_s": 3}, clients={"count": 12_000})
    sim.step()
    sim.rollout.start(1, 5, RolloutMode.DRAIN, 75, drain_rate_per_s=7.0)
    for _ in range(5):
        sim.step()
        if sim.state_of(0) is NodeState.DRAINING:
            break
    assert sim.drains[0].rate_per_s == 7.0
    sim.undrain(sim.node_ids[0])
    sim.rollout.resume()
    sim.step()
    assert sim.state_of(0) is NodeState.DRAINING
    assert sim.drains[0].rate_per_s == 7.0
