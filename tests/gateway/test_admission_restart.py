"""A node's process restarted (by the rollout, a crash and its supervisor, SIGHUP and a service manager)
comes back on its command-line admission: the controller gives it again what the operator set for it —
the fleet's, or its own per-node override — before the fleet shows the new process, so no frame shows
a restarted node as an override the operator never asked for."""

from __future__ import annotations

import json

import pytest

from console.gateway.controller import Controller
from console.gateway.nodes_file import NodeEntry
from console.protocol import (
    ActionKind,
    AdmissionRequest,
    NodeState,
    RolloutMode,
    RolloutRequest,
    RolloutState,
)
from console.server.actions import FleetAction
from tests.gateway.conftest import TOKEN, node_config, operator_api, wait_for

pytestmark = pytest.mark.timeout(60)


class OverrideWatch:
    """Every `admission_overrides` the fleet's frames showed while a wait polled it."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller
        self.seen: list[list[tuple[float | None, list[str] | None]]] = []

    def look(self) -> None:
        shown = self.controller.frame().admission_overrides
        if shown is not None:
            self.seen.append([(o.rate_per_s, o.nodes) for o in shown])


def _state(controller: Controller, node_id: str) -> NodeState:
    return next(n.state for n in controller.snapshot().nodes if n.id == node_id)


def _new_process(controller: Controller, node_id: str, old_epoch: str | None) -> bool:
    """The fleet shows `node_id` as a new process (another stream epoch), in rotation."""
    epoch = controller.links[node_id].epoch
    return epoch not in (None, old_epoch) and _state(controller, node_id) is NodeState.READY


async def _restarted(start_node, running, node_id: str):  # type: ignore[no-untyped-def]
    """`running`'s process gone and a new one on the same admin port, on its command-line settings."""
    port = running.admin_port
    await running.stop()
    return await start_node(node_config(node_id), admin_port=port)


async def _put_admission(api, body: dict) -> dict:  # type: ignore[no-untyped-def]
    answer = await api.put("/v1/admission", json=body)
    if answer.status_code == 409:
        answer = await api.put(
            "/v1/admission", json={**body, "confirm": {"token": answer.json()["confirm_token"]}}
        )
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_a_node_restarted_by_other_means_comes_back_on_what_the_operator_set(start_node) -> None:
    a = await start_node(node_config("a"))
    b = await start_node(node_config("b"))
    c = await start_node(node_config("c"))
    entries = [NodeEntry(n, node.admin_url) for n, node in (("a", a), ("b", b), ("c", c))]
    controller = Controller(entries, TOKEN)
    await controller.start()
    try:
        fleet_wide = AdmissionRequest(rate_per_s=400, burst=40, retry_after_s=(2, 20))
        await controller.apply(FleetAction(ActionKind.ADMISSION, fleet_wide))
        only_c = AdmissionRequest(rate_per_s=100, burst=10, retry_after_s=(2, 20), nodes=["c"])
        await controller.apply(FleetAction(ActionKind.ADMISSION, only_c))
        controller.drain_events()
        watch = OverrideWatch(controller)
        old_epochs = {n: controller.links[n].epoch for n in ("a", "c")}
        # a crashes and its supervisor starts it again; c likewise (SIGHUP, then the service manager).
        a = await _restarted(start_node, a, "a")
        c = await _restarted(start_node, c, "c")

        def back() -> bool:
            watch.look()
            return all(_new_process(controller, n, old_epochs[n]) for n in ("a", "c"))

        await wait_for(back, 15, "a and c back as new processes")
        assert a.node.admission.settings.rate_per_s == 400  # the fleet's, given again
        assert c.node.admission.settings.rate_per_s == 100  # c's own override, kept
        # Only the override the operator asked for was ever shown: a never showed as one.
        assert all(shown == [(100, ["c"])] for shown in watch.seen), watch.seen
        shown = controller.snapshot()
        assert shown.admission.rate_per_s == 400
        assert [(o.rate_per_s, o.nodes) for o in shown.admission_overrides or []] == [(100, ["c"])]
        # a and c come back in the same second (nodes send frames on whole wall-clock seconds): either order.
        said = sorted(
            (e for e in controller.drain_events() if e.kind == "admission"), key=lambda e: e.node or ""
        )
        assert [e.node for e in said] == ["a", "c"], said
        assert "a came back as a new process on its start-up settings (unlimited)" in said[0].message, said[0]
        assert (
            "given the fleet's again: rate 400/s per node, burst 40, Retry-After 2–20 s" in said[0].message
        ), said[0]
        assert "given its own (set on this node) again: rate 100/s per node, burst 10" in said[1].message, (
            said[1]
        )
    finally:
        await controller.close()


async def test_admission_set_while_a_node_restarts_reaches_it_when_it_is_back(start_node, tmp_path) -> None:
    """The rollout restarted a (its command ran; the new process is not up): the operator's fleet-wide
    change is applied to b at once and to a when it is back — said so in the answer and its audit record,
    not refused (a rollout is when an operator sheds load) and not half-applied."""
    a = await start_node(node_config("a"))
    b = await start_node(node_config("b"))
    # `true`: the test stands for the restart the command would do (stop a, start a new process).
    entries = [NodeEntry("a", a.admin_url, restart="true"), NodeEntry("b", b.admin_url, restart="true")]
    controller = Controller(entries, TOKEN)
    await controller.start()
    try:
        await wait_for(lambda: all(link.epoch for link in controller.links.values()), 8, "nodes' frames")
        controller.start_rollout(RolloutRequest(batch_size=1, interval_s=0.01, mode=RolloutMode.ABRUPT))
        await wait_for(lambda: "a" in controller.rollout.restarting, 8, "a's restart command")
        a_port, a_epoch = a.admin_port, controller.links["a"].epoch
        await a.stop()
        await wait_for(lambda: _state(controller, "a") is NodeState.RESTARTING, 8, "a shown restarting")
        watch = OverrideWatch(controller)
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            answer = await _put_admission(api, {"rate_per_s": 50, "burst": 5})
        assert b.node.admission.settings.rate_per_s == 50
        note = "a is restarting: it is given these settings when it is back"
        assert note in answer["message"], answer["message"]
        (record,) = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()][-1:]
        assert record["outcome"] == "applied" and note in record["detail"], record
        assert controller.snapshot().admission.rate_per_s == 50

        a = await start_node(node_config("a"), admin_port=a_port)

        def a_back() -> bool:
            watch.look()
            return _new_process(controller, "a", a_epoch)

        await wait_for(a_back, 15, "a back in rotation")
        assert a.node.admission.settings.rate_per_s == 50
        assert watch.seen == [], watch.seen  # a never showed its command-line settings as an override
        # b's turn: its new process is given the fleet's settings too, and the rollout completes.
        b_port = b.admin_port
        await b.stop()
        b = await start_node(node_config("b"), admin_port=b_port)
        await wait_for(lambda: controller.rollout_status().state is RolloutState.COMPLETED, 15, "the rollout")
        assert b.node.admission.settings.rate_per_s == 50
        assert controller.snapshot().admission_overrides is None
    finally:
        await controller.close()
