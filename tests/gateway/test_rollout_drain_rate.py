"""The controller's rollout drains each batch node at the rate the request asks for (`drain_rate_per_s`),
its own deadline and hint window kept (`DEFAULT_BATCH_DRAIN`); the rate travels in the rollout's state
file, so a controller restarted under it resumes at that rate."""

from __future__ import annotations

import asyncio

import pytest

from console.gateway.controller import Controller
from console.gateway.nodes_file import NodeEntry
from console.gateway.rollout import DEFAULT_BATCH_DRAIN, Rollout
from console.protocol import DrainRequest, NodeState, NodeStatus, RolloutMode, RolloutRequest
from tests.gateway.conftest import TOKEN, node_config, operator_api, wait_for
from tests.gateway.test_rollout import _node

pytestmark = pytest.mark.timeout(60)


def _ready(node_id: str) -> NodeStatus:
    return _node(node_id, 5.0)


async def test_the_rollout_sends_each_batch_node_the_rate_asked_for() -> None:
    sent: list[tuple[str, DrainRequest]] = []
    rollout = Rollout(
        RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.DRAIN, drain_rate_per_s=7),
        ["a", "b"],
        lambda: [_ready("a"), _ready("b")],
        lambda node_id: "1",
        lambda node_id, request: sent.append((node_id, request)),
        {"a": "true", "b": "true"},
    )
    running = asyncio.create_task(rollout.run())
    try:
        await wait_for(lambda: bool(sent), 5, "a's drain")
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
    assert sent == [("a", DEFAULT_BATCH_DRAIN.model_copy(update={"rate_per_s": 7.0}))]
    assert rollout.record("f", 0.0, 0.0).batch_drain.rate_per_s == 7.0  # kept across a controller restart


def _rollout(request: RolloutRequest) -> Rollout:
    return Rollout(
        request,
        ["a", "b"],
        lambda: [_ready("a"), _ready("b")],
        lambda node_id: "1",
        print,
        {"a": "true", "b": "true"},
    )


def test_the_status_says_the_rate_asked_for_and_so_does_a_rollout_a_restarted_controller_took_up() -> None:
    """The status says the rollout's `drain_rate_per_s` (null: none asked, the controller's own rate), and a
    controller restarted under it says it again from the rate its state file kept."""
    asked = _rollout(RolloutRequest(batch_size=1, interval_s=30, drain_rate_per_s=7))
    assert asked.status.drain_rate_per_s == 7.0
    own = _rollout(RolloutRequest(batch_size=1, interval_s=30))
    assert own.status.drain_rate_per_s is None

    def taken_up(rollout: Rollout) -> Rollout:
        record = rollout.record("f", 1000.0, 1000.0)
        reach = (lambda: [_ready("a"), _ready("b")], lambda node_id: "1", print, {"a": "true", "b": "true"})
        return Rollout.restored(record, 1000.0, "controller restarted", *reach)

    assert taken_up(asked).status.drain_rate_per_s == 7.0
    assert taken_up(own).status.drain_rate_per_s is None


async def test_the_controller_passes_the_rate_on_to_the_real_node(start_node, tmp_path) -> None:
    a = await start_node(node_config("a"))
    b = await start_node(node_config("b"))
    entries = [NodeEntry(n.node.config.node_id, n.admin_url, restart="true") for n in (a, b)]
    controller = Controller(entries, TOKEN)
    await controller.start()
    try:
        await wait_for(
            lambda: [n.state for n in controller.nodes()] == [NodeState.READY] * 2, 10, "both nodes reporting"
        )
        body = {"batch_size": 1, "interval_s": 30, "mode": "drain", "drain_rate_per_s": 7}
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            started = await api.post("/v1/rollout", json=body)
        assert started.status_code == 202, started.text
        await wait_for(lambda: a.node.drain_run is not None, 5, "a's drain")
        plan = a.node.drain_run.plan
        assert plan.rate_per_s == 7.0
        assert plan.deadline_s - plan.started_s == DEFAULT_BATCH_DRAIN.deadline_s  # the backend's deadline
        assert b.node.drain_run is None  # the next batch's
    finally:
        await controller.close()
