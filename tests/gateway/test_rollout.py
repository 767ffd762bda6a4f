"""Rollouts: batches, the pause on a hot survivor, and a drain-mode rollout over real, respawned nodes."""

from __future__ import annotations

import asyncio
import itertools
import threading

import pytest

from console.alarms import AlarmEngine
from console.errors import InputError
from console.gateway.controller import Controller
from console.gateway.loadgen import ClientPool
from console.gateway.nodes_file import NodeEntry
from console.gateway.rollout import (
    AbortWatch,
    LeftTheDrain,
    Rollout,
    hot_survivor,
    wait_before_next,
)
from console.guards.rollout import nothing_to, plan_batches
from console.guards.thresholds import Thresholds
from console.protocol import (
    ActionKind,
    DrainRequest,
    NodeState,
    NodeStatus,
    RolloutMode,
    RolloutRequest,
    RolloutState,
)
from tests.gateway.conftest import CHEAP_SIGNER, CHEAP_WORK_FACTOR, TOKEN, operator_api, wait_for

pytestmark = pytest.mark.timeout(90)


def _node(node_id: str, cpu_pct: float, state: NodeState = NodeState.READY) -> NodeStatus:
    return NodeStatus(
        id=node_id,
        state=state,
        connections=0,
        cpu_pct=cpu_pct,
        attempts_per_s=0,
        accepts_per_s=0,
        rejects_per_s=0,
        timeouts_per_s=0,
        handshake_p99_ms=0,
        # Room for clients: the resume guard asks first under the headroom budget, and a node planned for
        # none counts as no capacity (headroom 0 %).
        capacity_connections=1000,
    )


def _reported(
    controller: Controller, cpu: dict[str, float], states: dict[str, NodeState] | None = None
) -> None:
    """Each node's latest report, fresh: not `down` (no link runs here)."""
    for node_id, pct in cpu.items():
        controller.links[node_id].latest = _node(node_id, pct, (states or {}).get(node_id, NodeState.READY))
        controller.links[node_id].received_s = 1e12


async def _halted_after_its_pause(controller: Controller, api) -> None:  # type: ignore[no-untyped-def]
    """A rollout started with a node above the pause line (75 %): paused before batch 1, then halted."""
    controller.start_rollout(RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.ABRUPT))
    await wait_for(lambda: controller.rollout_status().state is RolloutState.PAUSED, 5, "the pause")
    assert (await api.post("/v1/rollout/halt", json={})).status_code == 200
    await wait_for(lambda: controller.rollout_status().state is RolloutState.HALTED, 5, "the halt")


def test_batches_are_paced_from_start_to_start() -> None:
    """The controller waited the interval after a batch was back, so a real rollout ran a batch's drain
    and restart longer than the simulator's and the guard's (found in review)."""
    assert wait_before_next(90.0, 30.0) == 60.0
    assert wait_before_next(90.0, 120.0) == 0.0  # a slow batch: the next starts at once


def test_batches_and_the_hot_survivor() -> None:
    assert plan_batches(["a", "b", "c", "d", "e"], 2) == [["a", "b"], ["c", "d"], ["e"]]
    fleet = [_node("a", 90), _node("b", 76), _node("c", 20), _node("d", 99, NodeState.DRAINED)]
    assert hot_survivor(fleet, ["a"], 75.0).id == "b"  # a is in the batch, d is out of rotation
    assert hot_survivor(fleet, ["a", "b"], 75.0) is None


async def test_a_hot_survivor_pauses_until_the_operator_resumes() -> None:
    cpu = {"a": 10.0, "b": 90.0}
    epochs = itertools.count()
    rollout = Rollout(
        RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.ABRUPT),
        ["a", "b"],
        lambda: [_node(n, c) for n, c in cpu.items()],
        lambda node_id: str(next(epochs)),  # every look sees a new process: restarts are instant here
        lambda node_id, request: None,
        {"a": "true", "b": "true"},
    )
    running = asyncio.create_task(rollout.run())
    await wait_for(lambda: rollout.status.state is RolloutState.PAUSED, 5, "the pause")
    assert rollout.status.batch == 0 and "b CPU 90 %" in rollout.status.pause_reason
    cpu["b"] = 30.0
    rollout.resume()
    assert (await asyncio.wait_for(running, 5)).state is RolloutState.COMPLETED
    assert rollout.status.batch == 2
    with pytest.raises(InputError, match=r"^node a has no restart command: add restart = ") as refused:
        Rollout(RolloutRequest(batch_size=1, interval_s=1), ["a"], list, str, print, {})
    assert refused.value.field == "restart"


async def test_a_rollout_paused_before_its_first_batch_starts_when_that_batch_does() -> None:
    """`started_at_s` is the fleet time its first batch started: paused on a hot survivor at once and
    resumed later, it kept the start request's time though nothing had started then — null until then,
    and so in the state file a controller restarted meanwhile reads."""
    cpu = {"a": 10.0, "b": 90.0}
    epochs = itertools.count()
    now = [100.0]
    rollout = Rollout(
        RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.ABRUPT),
        ["a", "b"],
        lambda: [_node(n, c) for n, c in cpu.items()],
        lambda node_id: str(next(epochs)),  # every look sees a new process: restarts are instant here
        lambda node_id, request: None,
        {"a": "true", "b": "true"},
        clock=lambda: now[0],
    )
    running = asyncio.create_task(rollout.run())
    await wait_for(lambda: rollout.status.state is RolloutState.PAUSED, 5, "the pause")
    assert rollout.status.batch == 0 and rollout.status.started_at_s is None
    record = rollout.record("f", 1000.0, 1100.0)
    assert record.started_at_unix_s is None
    reach = (list, str, print, {"a": "true", "b": "true"})
    assert Rollout.restored(record, 1000.0, "restarted", *reach).status.started_at_s is None
    now[0] = 160.0
    cpu["b"] = 30.0
    rollout.resume()
    assert (await asyncio.wait_for(running, 5)).state is RolloutState.COMPLETED
    assert rollout.status.started_at_s == 160.0 and rollout.status.completed_at_s == 160.0
    restored = Rollout.restored(rollout.record("f", 1000.0, 1200.0), 1000.0, "restarted", *reach)
    assert restored.status.started_at_s == 160.0


async def test_drain_rollout_restarts_every_real_node(node_processes, tmp_path) -> None:
    cheap = ("--work-factor", str(CHEAP_WORK_FACTOR))
    nodes = {n: node_processes(n, *cheap) for n in ("a", "b", "c")}
    stop_supervising = threading.Event()

    def supervise() -> None:
        # What systemd's Restart=always would do: a node that exits comes back on the same ports.
        while not stop_supervising.wait(0.05):
            for node_id, node in nodes.items():
                if node.process is not None and node.process.poll() is not None:
                    node.start()
                    (tmp_path / f"{node_id}.pid").write_text(str(node.pid))

    for node_id, node in nodes.items():
        (tmp_path / f"{node_id}.pid").write_text(str(node.pid))
    supervisor = threading.Thread(target=supervise, daemon=True)
    supervisor.start()
    restart = f"kill -TERM $(cat {tmp_path}/{{node}}.pid)"
    entries = [NodeEntry(n, p.admin_url, p.url, restart) for n, p in nodes.items()]
    controller = Controller(entries, TOKEN)
    pool = ClientPool([p.url for p in nodes.values()], 60, "full_jitter", signer=CHEAP_SIGNER, seed=2)
    await controller.start()
    pool.start()
    try:
        await pool.wait_connected(60, 10)
        first_pids = {n: p.pid for n, p in nodes.items()}
        drain = DrainRequest(rate_per_s=100, deadline_s=10, hint_ms=(0, 200))
        controller.start_rollout(RolloutRequest(batch_size=1, interval_s=0.2, mode=RolloutMode.DRAIN), drain)
        with pytest.raises(InputError, match="halt it first"):
            controller.start_rollout(RolloutRequest(batch_size=1, interval_s=0.2))
        await wait_for(
            lambda: controller.rollout_status().state is not RolloutState.RUNNING, 60, "the rollout"
        )
        status = controller.frame().rollout
        assert (status.state, status.batch, status.batches) == (RolloutState.COMPLETED, 3, 3), status
        assert all(nodes[n].pid != pid for n, pid in first_pids.items())  # every node is a new process
        await pool.wait_connected(60, 15)
        assert pool.stats.planned_reconnects >= 40  # the drains moved the clients, not the kills
    finally:
        stop_supervising.set()
        supervisor.join(5)
        await pool.stop()
        await controller.close()


def test_abort_watch_needs_the_heat_to_last() -> None:
    watch = AbortWatch(cpu_abort_pct=80.0, cpu_abort_for_s=30.0)
    hot, cool = [_node("a", 85.0)], [_node("a", 50.0)]
    assert watch.observe(hot, 0.0) is None and watch.observe(hot, 29.0) is None
    assert watch.observe(cool, 29.5) is None  # a dip resets the clock
    assert watch.observe(hot, 30.0) is None and watch.observe(hot, 59.0) is None
    assert "a CPU > 80 % for 30 s" in watch.observe(hot, 60.0)


async def test_a_paused_rollout_aborts_when_the_heat_lasts() -> None:
    rollout = Rollout(
        RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.ABRUPT),
        ["a", "b"],
        lambda: [_node("a", 10.0), _node("b", 95.0)],
        lambda node_id: None,
        lambda node_id, request: None,
        {"a": "true", "b": "true"},
        thresholds=Thresholds(cpu_abort_for_s=0.3),
    )
    status = await asyncio.wait_for(rollout.run(), 5)
    assert status.state is RolloutState.ABORTED and "b CPU > 80 %" in status.pause_reason


async def test_halting_a_paused_rollout() -> None:
    rollout = Rollout(
        RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.ABRUPT),
        ["a", "b"],
        lambda: [_node("a", 10.0), _node("b", 78.0)],  # above the pause line, below the abort line
        lambda node_id: None,
        lambda node_id, request: None,
        {"a": "true", "b": "true"},
        clock=lambda: 42.0,  # the fleet clock
    )
    running = asyncio.create_task(rollout.run())
    await wait_for(lambda: rollout.status.state is RolloutState.PAUSED, 5, "the pause")
    assert rollout.status.halted_at_s is None
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    assert rollout.status.state is RolloutState.HALTED and rollout.status.pause_reason == "halted by operator"
    assert rollout.status.halted_at_s == 42.0  # since when, on the fleet clock
    assert rollout.resume() and rollout.status.halted_at_s is None


async def test_a_batch_node_back_in_rotation_halts_the_rollout_instead_of_waiting_out_the_drain() -> None:
    """A second operator undrains the node the rollout is draining (or a supervisor restarts it after a
    `kill -9`): it serves again and will never be `drained`. The rollout used to wait the drain's deadline
    (+10 s: 610 s here) showing `running`; it halts, saying why, once the node has served 3 s."""
    states = {"a": NodeState.READY, "b": NodeState.READY}
    drained: list[str] = []

    def drain(node_id: str, request: DrainRequest) -> None:
        drained.append(node_id)  # the node takes the drain, then is undrained at once by someone else

    status = await asyncio.wait_for(_draining_rollout(states, drain).run(), 15)
    assert drained == ["a"]
    assert status.state is RolloutState.HALTED and status.batch == 1, status
    assert "a is back in rotation before it drained" in status.pause_reason


def test_left_the_drain_forgives_one_stale_ready_frame() -> None:
    left = LeftTheDrain(["a"], 3.0)
    ready, draining = [_node("a", 5.0)], [_node("a", 5.0, NodeState.DRAINING)]
    assert left.observe(ready, 0.0) is None  # a frame sent just before the drain arrived
    assert left.observe(draining, 1.0) is None
    assert left.observe(ready, 2.0) is None and left.observe(ready, 4.9) is None
    assert "a is back in rotation" in left.observe(ready, 5.0)
    down = [_node("a", 5.0, NodeState.DOWN)]
    assert left.observe(down, 6.0) is None  # down a moment: a supervisor may bring it back
    assert left.observe(draining, 7.0) is None and left.observe(down, 8.0) is None  # down anew
    assert "a went down before it drained" in left.observe(down, 11.0)


async def test_a_batch_node_that_dies_mid_drain_halts_the_rollout() -> None:
    """`kill -9` (or a hang) of the node the rollout is draining: it shows `down` and will never be
    `drained`. The rollout waited the drain's deadline (+10 s: 610 s) showing `running` (seen on a loopback
    fleet: still `running` 30 s after, the node down); it halts, saying why, once the node has been down 3 s."""
    states = {"a": NodeState.READY, "b": NodeState.READY}

    def drain(node_id: str, request: DrainRequest) -> None:
        states[node_id] = NodeState.DOWN  # the node takes the drain, then dies

    status = await asyncio.wait_for(_draining_rollout(states, drain).run(), 15)
    assert status.state is RolloutState.HALTED and status.batch == 1, status
    assert "a went down before it drained" in status.pause_reason


def _draining_rollout(states: dict[str, NodeState], drain) -> Rollout:
    """A drain-mode rollout of nodes a and b, one a batch, whose nodes are as `states` says (the test's
    `drain` moves them)."""
    return Rollout(
        RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.DRAIN),
        ["a", "b"],
        lambda: [_node(n, 5.0, state) for n, state in states.items()],
        lambda node_id: "epoch-1",
        drain,
        {"a": "true", "b": "true"},
    )


async def test_the_controllers_rollout_aborts_on_the_configured_criterion() -> None:
    """`STORMDECK_CPU_ABORT_PCT=60` (or stormdeck.toml) moved the guards' and the alarms' abort line, but
    the controller's rollout kept the default 80 %: a survivor at 70 % for as long as you like went on."""
    entries = [NodeEntry(n, f"http://127.0.0.1:9/{n}", restart="true") for n in ("a", "b")]
    controller = Controller(
        entries, TOKEN, thresholds=Thresholds(cpu_abort_pct=60.0, cpu_pause_pct=55.0, cpu_abort_for_s=0.0)
    )
    try:
        _reported(controller, {"a": 10.0, "b": 70.0})
        controller.start_rollout(RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.ABRUPT))
        await wait_for(lambda: controller.rollout_status().state is RolloutState.ABORTED, 5, "the abort")
        assert "b CPU > 60 %" in controller.rollout_status().pause_reason
    finally:
        await controller.close()


async def test_a_halted_rollout_resumes_on_a_real_fleet_as_its_dry_run_said(tmp_path) -> None:
    """Found in review: the guard (and the simulator) resume a paused or halted rollout, but the
    controller's refused a halted one — the dry run said ok, the real call was a 422."""
    entries = [NodeEntry(n, f"http://127.0.0.1:9/{n}", restart="true") for n in ("a", "b")]
    controller = Controller(entries, TOKEN)
    _reported(
        controller, {"a": 10.0, "b": 78.0}
    )  # b above the pause line (75 %), below the abort line (80 %)
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            await _halted_after_its_pause(controller, api)
            _reported(controller, {"b": 30.0})
            tried = await api.post("/v1/rollout/resume", json={"dry_run": True})
            assert tried.status_code == 200 and tried.json()["verdict"]["level"] == "ok", tried.text
            resumed = await api.post("/v1/rollout/resume", json={})
            assert resumed.status_code == 200, resumed.text
            assert controller.rollout_status().state is RolloutState.RUNNING
            await wait_for(lambda: controller.rollout_status().batch == 1, 5, "batch 1 under way")
    finally:
        await controller.close()


async def test_resuming_a_halted_rollout_with_a_node_down_asks_first_on_a_real_fleet(tmp_path) -> None:
    """Starting a rollout with a node down asked first (nodes_down); resuming a halted one did not — and a
    real rollout halts exactly so: "c went down before it drained (killed or hung): restart it, then
    resume". Resumed with c still down, the next batches drain the nodes holding its clients."""
    entries = [NodeEntry(n, f"http://127.0.0.1:9/{n}", restart="true") for n in ("a", "b", "c")]
    controller = Controller(entries, TOKEN)
    _reported(controller, {"a": 10.0, "b": 78.0, "c": 10.0})  # b above the pause line: paused before batch 1
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            await _halted_after_its_pause(controller, api)
            _reported(controller, {"b": 30.0})
            controller.links["c"].refused = True  # its process is gone: the admin port refuses
            assert {n.id: n.state for n in controller.nodes()}["c"] is NodeState.DOWN
            asked = await api.post("/v1/rollout/resume", json={})
            assert asked.status_code == 409, asked.text
            verdict = asked.json()["verdict"]
            failing = [c for c in verdict["checks"] if not c["ok"]]
            assert verdict["level"] == "confirm" and [c["name"] for c in failing] == ["nodes_down"]
            assert "c down" in failing[0]["why"]
            assert controller.rollout_status().state is RolloutState.HALTED  # asked, nothing applied
            confirm = {"confirm": {"token": asked.json()["confirm_token"]}}
            resumed = await api.post("/v1/rollout/resume", json=confirm)
            assert resumed.status_code == 200, resumed.text
            assert controller.rollout_status().state is RolloutState.RUNNING
    finally:
        await controller.close()


async def test_a_rollouts_verdict_counts_the_batches_the_controller_runs(tmp_path) -> None:
    """Seen on 3 nodes with one drained: the verdict said 2 batches (the nodes in rotation), the controller
    ran 3 (every node of its nodes file, the drained one restarted too)."""
    entries = [NodeEntry(n, f"http://127.0.0.1:9/{n}", restart="true") for n in ("a", "b", "c")]
    controller = Controller(entries, TOKEN)
    _reported(controller, dict.fromkeys(("a", "b", "c"), 10.0), {"b": NodeState.DRAINED})
    body = {"batch_size": 1, "interval_s": 30, "mode": "abrupt"}
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            tried = await api.post("/v1/rollout", json={**body, "dry_run": True})
            assert tried.status_code == 200, tried.text
            projected = tried.json()["verdict"]["projections"]["batches"]
            controller.start_rollout(RolloutRequest(**body))
            assert projected == controller.rollout_status().batches == 3
    finally:
        await controller.close()


async def test_a_resumed_rollout_goes_on_with_the_batch_the_halt_interrupted() -> None:
    """Halted mid-batch: a node already restarted is not restarted again; one still drained is not
    drained again (the node refuses a second drain) — it is restarted, and the rollout goes on."""
    states = {"a": NodeState.READY, "b": NodeState.READY}
    epochs = {"a": 1, "b": 1}
    drained: list[str] = []

    def drain(node_id: str, request: DrainRequest) -> None:
        assert states[node_id] is NodeState.READY, f"{node_id} drained twice"
        drained.append(node_id)
        states[node_id] = NodeState.DRAINED

    rollout = Rollout(
        RolloutRequest(batch_size=2, interval_s=0.01, mode=RolloutMode.DRAIN),
        ["a", "b"],
        lambda: [_node(n, 5.0, state) for n, state in states.items()],
        lambda node_id: str(epochs[node_id]),  # a restart never comes back here: the halt is mid-batch
        drain,
        {"a": "true", "b": "true"},
        ready_timeout_s=30,
    )
    running = asyncio.create_task(rollout.run())
    await wait_for(lambda: rollout._restarted == {"a", "b"}, 5, "both restarted, not yet back")
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    assert rollout.status.state is RolloutState.HALTED
    rollout._restarted.discard("b")  # as if the halt came between a's restart and b's
    assert rollout.resume() is True
    running = asyncio.create_task(rollout.run())
    await wait_for(lambda: rollout._restarted == {"a", "b"}, 5, "b restarted, still drained before")
    for node_id in ("a", "b"):
        states[node_id], epochs[node_id] = NodeState.READY, 2  # both back as new processes
    status = await asyncio.wait_for(running, 5)
    assert status.state is RolloutState.COMPLETED and drained == ["a", "b"]


async def test_a_node_the_rollout_restarts_is_restarting_not_down_until_the_rollout_stops_waiting() -> None:
    """A real rollout's restart stops the node's process, and the controller showed it `down` until the new
    one answered: every planned restart raised `node_down` (found adding that alarm). While the rollout waits
    for it, it is `restarting`, as the simulator shows one; halted, nobody waits — a node still gone is down."""
    entries = [NodeEntry(n, f"http://127.0.0.1:9/{n}", restart="true") for n in ("a", "b")]
    controller = Controller(entries, TOKEN)
    _reported(controller, {"a": 10.0, "b": 10.0})
    engine = AlarmEngine()

    def states() -> dict[str, NodeState]:
        frame = controller.frame()
        engine.update(frame)
        return {n.id: n.state for n in frame.nodes}

    try:
        controller.start_rollout(RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.ABRUPT))
        await wait_for(lambda: controller.rollout.restarting == {"a"}, 5, "a's restart command ran")
        controller.links["a"].refused = True  # its process is gone: the admin port refuses
        assert states() == {"a": NodeState.RESTARTING, "b": NodeState.READY}
        assert "node_down" not in [a.name for a in engine.active]
        controller.halt_rollout()
        await wait_for(lambda: controller.rollout_status().state is RolloutState.HALTED, 5, "the halt")
        assert states() == {"a": NodeState.DOWN, "b": NodeState.READY}
        assert [(a.name, a.node) for a in engine.active if a.name == "node_down"] == [("node_down", "a")]
    finally:
        await controller.close()


async def test_a_rollout_resumed_while_a_restarted_node_is_not_back_waits_for_it() -> None:
    """User pass on a controller over three real nodes (batches of one, drain mode): halted while the first
    batch's node was restarted and not yet back, then resumed — the batch's only node was 'already
    restarted', so nothing was left to wait for, and the rollout drained the next node at once: two of
    three out of rotation, connections −43 %, 503 share 70 %. A resume waits for the batch's restarted
    nodes to come back, as the run before the halt did."""
    states = {"a": NodeState.READY, "b": NodeState.READY, "c": NodeState.READY}
    epochs = {"a": 1, "b": 1, "c": 1}
    drained: list[str] = []

    def drain(node_id: str, request: DrainRequest) -> None:
        drained.append(node_id)
        states[node_id] = NodeState.DRAINED

    looks = [0]  # how often the rollout looked at the fleet

    def nodes() -> list[NodeStatus]:
        looks[0] += 1
        return [_node(n, 5.0, state) for n, state in states.items()]

    rollout = Rollout(
        RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.DRAIN),
        ["a", "b", "c"],
        nodes,
        lambda node_id: str(epochs[node_id]),
        drain,
        {n: "true" for n in states},
        ready_timeout_s=30,
    )
    running = asyncio.create_task(rollout.run())
    await wait_for(lambda: rollout._restarted == {"a"}, 5, "a restarted, not yet back")
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    assert rollout.resume() is True
    running = asyncio.create_task(rollout.run())
    try:
        seen = looks[0]  # the resumed rollout's polls (every 0.1 s): enough of them to have moved on
        await wait_for(lambda: looks[0] > seen + 10, 5, "the resumed rollout to look at the fleet")
        assert drained == ["a"], f"{drained[1:]} drained while a was still out of rotation"
        assert rollout.status.batch == 1 and rollout.status.state is RolloutState.RUNNING, rollout.status
        states["a"], epochs["a"] = NodeState.READY, 2  # a is back, a new process
        await wait_for(lambda: drained == ["a", "b"], 5, "the next batch once a is back")
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


async def test_a_node_not_back_after_its_restart_halts_saying_what_to_do() -> None:
    """On-call walk (controller over real nodes, restart = "true"): the halt read "timed out after 60 s
    waiting for ['a'] back in rotation" — a Python list, and not a word of what to do. It names the nodes
    as the operator does, that the restart command did run, and the two ways on."""
    states = {"a": NodeState.READY, "b": NodeState.READY}

    def drain(node_id: str, request: DrainRequest) -> None:
        states[node_id] = NodeState.DRAINED

    rollout = Rollout(
        RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.DRAIN),
        ["a", "b"],
        lambda: [_node(n, 5.0, state) for n, state in states.items()],
        lambda node_id: "1",  # the same process: the command ran and the node never restarted
        drain,
        {"a": "true", "b": "true"},
        ready_timeout_s=0.3,
    )
    status = await asyncio.wait_for(rollout.run(), 5)
    assert status.state is RolloutState.HALTED
    reason = status.pause_reason or ""
    assert "['a']" not in reason and "waiting for a back in rotation" in reason, reason
    assert "restart command ran" in reason and "resume (r)" in reason and "undrain" in reason, reason


async def test_the_status_says_what_a_running_rollout_waits_for() -> None:
    """On-call walk: for the 60 s a restarted node had to come back, the panel said only "running batch 1
    of 3". The controller's status says the wait — its kind, its nodes, how long so far, how long at most —
    and the pause before the next batch; nothing once the rollout stops waiting."""
    entries = [NodeEntry(n, f"http://127.0.0.1:9/{n}", restart="true") for n in ("a", "b")]
    controller = Controller(entries, TOKEN)
    _reported(controller, {"a": 10.0, "b": 10.0})
    for link in controller.links.values():
        link.epoch = "1"
    try:
        controller.start_rollout(RolloutRequest(batch_size=1, interval_s=30, mode=RolloutMode.ABRUPT))
        await wait_for(lambda: controller.rollout_status().waiting_for is not None, 5, "the restart wait")
        wait = controller.rollout_status().waiting_for
        assert (wait.what, wait.nodes, wait.limit_s) == ("restart", ["a"], 60.0), wait
        assert 0.0 <= wait.waited_s < 5.0, wait
        controller.links["a"].epoch = "2"  # a new process, in rotation: a is back
        await wait_for(
            lambda: getattr(controller.rollout_status().waiting_for, "what", None) == "interval",
            5,
            "the pause before batch 2",
        )
        wait = controller.rollout_status().waiting_for
        assert wait.nodes == [] and wait.limit_s is not None and 25.0 < wait.limit_s <= 30.0, wait
        controller.halt_rollout()
        await wait_for(lambda: controller.rollout_status().state is RolloutState.HALTED, 5, "the halt")
        assert controller.rollout_status().waiting_for is None
    finally:
        await controller.close()


async def test_the_controllers_own_halt_and_resume_refusals_say_what_the_guard_says() -> None:
    """Called directly — what a halt or resume meets when the rollout moved between the server's judge and
    the apply — the controller said "rollout: 'idle' is not allowed; expected a paused or halted rollout",
    and a halt of nothing answered as applied. The guard's words (`nothing_to`), the same bad input."""
    entries = [NodeEntry(n, f"http://127.0.0.1:9/{n}", restart="true") for n in ("a", "b")]
    controller = Controller(entries, TOKEN)
    try:
        for kind, act in (
            (ActionKind.ROLLOUT_HALT, controller.halt_rollout),
            (ActionKind.ROLLOUT_RESUME, controller.resume_rollout),
        ):
            with pytest.raises(InputError) as refused:
                act()
            said = nothing_to(kind, controller.rollout_status())
            assert said is not None and "no rollout has started on this fleet" in said
            verb = "halt" if kind is ActionKind.ROLLOUT_HALT else "resume"
            assert str(refused.value) == f"rollout {verb}: {said}"
            assert refused.value.field == "rollout"
    finally:
        await controller.close()


async def test_a_completed_rollouts_resume_says_when_it_completed() -> None:
    cpu = {"a": 10.0, "b": 10.0}
    epochs = itertools.count()
    rollout = Rollout(
        RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.ABRUPT),
        ["a", "b"],
        lambda: [_node(n, c) for n, c in cpu.items()],
        lambda node_id: str(next(epochs)),
        lambda node_id, request: None,
        {"a": "true", "b": "true"},
        clock=lambda: 7.0,
    )
    assert (await asyncio.wait_for(rollout.run(), 5)).state is RolloutState.COMPLETED
    with pytest.raises(InputError) as refused:
        rollout.resume()
    assert str(refused.value) == (
        "rollout resume: nothing to resume — the rollout completed at 0:00:07 (batch 2 of 2); start a new "
        "one with `stormdeck act URL rollout start`"
    )
    assert str(refused.value) == f"rollout resume: {nothing_to(ActionKind.ROLLOUT_RESUME, rollout.status)}"


async def test_a_start_over_a_halted_rollout_asks_first_and_the_controller_replaces_it(tmp_path) -> None:
    """A start while a rollout is halted replaces it (its batches not yet started are dropped); judged as if
    none existed, it was applied unasked. It asks first (halted_rollout), and confirmed the controller runs
    the new rollout — its plan, from its first batch — in the halted one's place."""
    entries = [NodeEntry(n, f"http://127.0.0.1:9/{n}", restart="true") for n in ("a", "b", "c")]
    controller = Controller(entries, TOKEN)
    _reported(controller, {"a": 10.0, "b": 78.0, "c": 10.0})  # b above the pause line: paused before batch 1
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            await _halted_after_its_pause(controller, api)
            halted = controller.rollout
            _reported(controller, {"b": 30.0})
            body = {"batch_size": 2, "interval_s": 30, "mode": "drain"}
            asked = await api.post("/v1/rollout", json=body)
            assert asked.status_code == 409, asked.text
            failing = [c for c in asked.json()["verdict"]["checks"] if not c["ok"]]
            assert [(c["name"], c["value"]) for c in failing] == [("halted_rollout", "before its start")]
            assert "drops its 3 batches, none started" in failing[0]["why"]
            assert controller.rollout is halted  # asked, nothing applied
            confirm = {"confirm": {"token": asked.json()["confirm_token"]}}
            started = await api.post("/v1/rollout", json={**body, **confirm})
            assert started.status_code == 202, started.text
            assert controller.rollout is not halted
            status = controller.rollout_status()
            assert (status.batch_size, status.batches) == (2, 2) and status.state is not RolloutState.HALTED
    finally:
        await controller.close()
