"""A resumed rollout keeps what is left of its interval (batch start to batch start), as the simulator does.

Reviewer, real loopback fleet (drain mode, batches of 1, every 90 s): batch 1 started at 35.7 s, so batch 2
was due at 125.7 s; halted while the panel said "next batch in 70 s" and resumed at 77 s, batch 2's node went
draining at 79 s — 47 s early, while batch 1's clients were still coming back on their hints (connections
300 → 121). The controller's resume began the next batch at once.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from console.gateway.controller import Controller
from console.gateway.nodes_file import NodeEntry
from console.gateway.rollout import Rollout
from console.protocol import DrainRequest, NodeState, RolloutMode, RolloutRequest, RolloutState
from tests.gateway.conftest import TOKEN, operator_api, wait_for
from tests.gateway.test_rollout import _node

pytestmark = pytest.mark.timeout(60)


class Fleet:
    """Three fake nodes a drain-mode rollout drains and restarts; the test brings a restarted node back
    (`back`) and moves the fleet clock (`now`)."""

    def __init__(self, now_s: float) -> None:
        self.now_s = now_s
        self.states = dict.fromkeys(("a", "b", "c"), NodeState.READY)
        self.epochs = dict.fromkeys(("a", "b", "c"), 1)
        self.drained: list[str] = []

    def drain(self, node_id: str, request: DrainRequest) -> None:
        self.drained.append(node_id)
        self.states[node_id] = NodeState.DRAINED

    def back(self, node_id: str) -> None:
        self.states[node_id], self.epochs[node_id] = NodeState.READY, self.epochs[node_id] + 1

    def rollout(self, interval_s: float = 90.0) -> Rollout:
        return Rollout(
            RolloutRequest(batch_size=1, interval_s=interval_s, mode=RolloutMode.DRAIN),
            list(self.states),
            lambda: [_node(n, 5.0, state) for n, state in self.states.items()],
            lambda node_id: str(self.epochs[node_id]),
            self.drain,
            dict.fromkeys(self.states, "true"),
            ready_timeout_s=30,
            clock=lambda: self.now_s,
        )


def _wait_what(rollout: Rollout) -> str | None:
    wait = rollout.waiting_for()
    return wait.what if wait is not None else None


def _left_s(rollout: Rollout) -> float:
    """What the panel says of an interval wait: "next batch in N s"."""
    wait = rollout.waiting_for()
    assert wait is not None and wait.what == "interval" and wait.limit_s is not None, wait
    return wait.limit_s - wait.waited_s


async def _halt(running: asyncio.Task) -> None:
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)


async def test_a_rollout_halted_in_its_interval_resumes_with_the_rest_of_it() -> None:
    fleet = Fleet(now_s=35.7)
    rollout = fleet.rollout()
    running = asyncio.create_task(rollout.run())
    await wait_for(lambda: rollout._restarted == {"a"}, 5, "a drained and restarted")
    fleet.back("a")
    await wait_for(lambda: _wait_what(rollout) == "interval", 5, "the interval after batch 1")
    assert _left_s(rollout) == 90.0 and rollout.status.next_batch_at_s == 125.7
    fleet.now_s = 55.7  # "next batch in 70 s": the operator halts
    assert _left_s(rollout) == 70.0
    await _halt(running)
    halted = rollout.status
    assert halted.state is RolloutState.HALTED and halted.batch == 1 and halted.next_batch_at_s == 125.7

    fleet.now_s = 77.0  # resumed: batch 2 is still 48.7 s away
    assert rollout.resume() is True
    running = asyncio.create_task(rollout.run())
    try:
        await wait_for(lambda: _wait_what(rollout) == "interval", 5, "the rest of the interval")
        assert round(_left_s(rollout), 1) == 48.7, rollout.waiting_for()
        assert rollout.status.batch == 1 and fleet.drained == ["a"], "batch 2 began before its interval"
        await _halt(running)

        fleet.now_s = 125.2  # half a second left: resumed, batch 2 begins once it has passed, not before
        rollout.resume()
        resumed = time.monotonic()
        running = asyncio.create_task(rollout.run())
        await wait_for(lambda: fleet.drained == ["a", "b"], 5, "batch 2 once its interval is over")
        assert time.monotonic() - resumed >= 0.45
        assert rollout.status.batch == 2 and rollout.status.next_batch_at_s is None  # during a batch
    finally:
        await _halt(running)


async def test_a_halt_during_a_batch_resumes_that_batch_at_once_and_its_interval_runs_from_the_resume() -> (
    None
):
    """The halt came during batch 1 (a restarted, not yet back): the resume goes on with the batch at once,
    as before, and its interval runs from the resume, as before — a resumed batch may move clients only then
    (a node undrained meanwhile is drained again), and the next batch must not follow before they are back."""
    fleet = Fleet(now_s=10.0)
    rollout = fleet.rollout()
    running = asyncio.create_task(rollout.run())
    await wait_for(lambda: rollout._restarted == {"a"}, 5, "a restarted, not yet back")
    fleet.now_s = 20.0
    await _halt(running)
    assert rollout.status.batch == 1 and rollout.status.next_batch_at_s is None  # mid-batch: no interval yet
    fleet.now_s = 30.0
    rollout.resume()
    running = asyncio.create_task(rollout.run())
    try:
        await wait_for(lambda: _wait_what(rollout) == "restart", 5, "batch 1 goes on at once")
        fleet.now_s = 100.0  # 90 s after batch 1 began: not yet 90 s after its resume
        fleet.back("a")
        await wait_for(lambda: _wait_what(rollout) == "interval", 5, "the interval after batch 1")
        assert _left_s(rollout) == 20.0 and rollout.status.next_batch_at_s == 120.0  # from 30 s, not 10 s
        assert fleet.drained == ["a"]
    finally:
        await _halt(running)


async def test_a_rollout_taken_up_halted_by_a_restarted_controller_keeps_its_interval() -> None:
    """A controller restarted between batches takes the rollout up halted (docs/gateway.md); its state file
    keeps when the batch started, so a resume waits out the rest of the interval — on the fleet clock,
    which ran on while no controller did: past its end, the next batch starts at once."""
    fleet = Fleet(now_s=35.7)
    rollout = fleet.rollout()
    running = asyncio.create_task(rollout.run())
    await wait_for(lambda: rollout._restarted == {"a"}, 5, "a restarted")
    fleet.back("a")
    await wait_for(lambda: _wait_what(rollout) == "interval", 5, "the interval after batch 1")
    record = rollout.record("f", 1_000.0, 1_050.0)
    await _halt(running)  # the controller's process ends (its state file already says all of this)
    assert record.batch_started_at_unix_s == 1_035.7

    fleet.now_s = 77.0
    reach = (
        lambda: [_node(n, 5.0, state) for n, state in fleet.states.items()],
        lambda node_id: str(fleet.epochs[node_id]),
        fleet.drain,
        dict.fromkeys(fleet.states, "true"),
    )
    taken_up = Rollout.restored(record, 1_000.0, "controller restarted", *reach, clock=lambda: fleet.now_s)
    assert taken_up.status.state is RolloutState.HALTED and taken_up.status.next_batch_at_s == 125.7
    assert taken_up.resume() is True
    running = asyncio.create_task(taken_up.run())
    try:
        await wait_for(lambda: _wait_what(taken_up) == "interval", 5, "the rest of the interval")
        assert round(_left_s(taken_up), 1) == 48.7 and fleet.drained == ["a"]
    finally:
        await _halt(running)

    older = record.model_copy(update={"batch_started_at_unix_s": None})  # a file an older controller wrote
    unknown = Rollout.restored(older, 1_000.0, "controller restarted", *reach, clock=lambda: fleet.now_s)
    assert unknown.status.next_batch_at_s is None  # not known: not said
    unknown.resume()
    running = asyncio.create_task(unknown.run())
    try:  # nothing says how much of the interval is left: a whole one, from the resume
        await wait_for(lambda: _wait_what(unknown) == "interval", 5, "a whole interval")
        assert _left_s(unknown) == 90.0 and fleet.drained == ["a"]
    finally:
        await _halt(running)


async def test_the_resume_verdict_says_when_the_next_batch_starts_on_a_real_controller(tmp_path) -> None:
    """The controller's status says when the next batch is due (`next_batch_at_s`), and the resume's
    verdict says it: "batch 2 starts in N s"."""
    entries = [NodeEntry(n, f"http://127.0.0.1:9/{n}", restart="true") for n in ("a", "b")]
    controller = Controller(entries, TOKEN)
    for node_id, link in controller.links.items():
        link.latest, link.received_s, link.epoch = _node(node_id, 5.0), 1e12, "1"
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            controller.start_rollout(RolloutRequest(batch_size=1, interval_s=30, mode=RolloutMode.ABRUPT))
            await wait_for(lambda: controller.rollout.restarting == {"a"}, 5, "a's restart command ran")
            controller.links["a"].epoch = "2"  # a new process, in rotation: a is back
            await wait_for(lambda: _wait_what(controller.rollout) == "interval", 5, "the interval")
            controller.halt_rollout()
            await wait_for(lambda: controller.rollout_status().state is RolloutState.HALTED, 5, "the halt")
            status = controller.rollout_status()
            assert status.next_batch_at_s is not None
            assert 25 < status.next_batch_at_s - controller.fleet_time() <= 30, status
            tried = await api.post("/v1/rollout/resume", json={"dry_run": True})
            assert tried.status_code == 200, tried.text
            verdict = tried.json()["verdict"]
            said = next(c for c in verdict["checks"] if c["name"] == "next_batch")
            assert said["why"].startswith("batch 2 starts in "), said
            assert 25 < verdict["projections"]["next_batch_in_s"] <= 30, verdict["projections"]
            resumed = await api.post("/v1/rollout/resume", json={})
            assert resumed.status_code == 200, resumed.text
            await wait_for(lambda: _wait_what(controller.rollout) == "interval", 5, "the rest of it")
            assert controller.rollout_status().batch == 1
    finally:
        await controller.close()
