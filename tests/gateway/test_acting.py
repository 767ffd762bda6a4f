"""The controller as an `ActingBackend`: its capacity record and where each figure comes from, and actions
forwarded to in-process nodes all-or-nothing, a refusal naming the field."""

from __future__ import annotations

import json

import pytest
from textual.content import Content

from console.audit import verify_file
from console.cli.act import render_answer
from console.client.actions import ActionAnswer
from console.errors import InputError
from console.gateway.acting import (
    DEFAULT_CONNECTIONS_PER_NODE,
    DEFAULT_HANDSHAKES_PER_S,
    CapacityConfig,
    capacity_of,
    load_capacity,
)
from console.gateway.controller import Controller
from console.gateway.nodes_file import NodeEntry
from console.model.actions.refusals import pointless
from console.protocol import (
    ActionKind,
    ActionRequest,
    AdmissionRequest,
    AdmissionSettings,
    DrainRequest,
    NodeState,
    RolloutRequest,
    UnavailableReason,
)
from console.server.actions import FleetAction
from console.server.backend import ActingBackend
from tests.gateway.conftest import TOKEN, node_config, operator_api, wait_for
from tests.gateway.test_controller import _status
from tests.gateway.test_drain import drain_through_the_api

pytestmark = pytest.mark.timeout(30)


def _admission(rate_per_s: float | None) -> AdmissionSettings:
    return AdmissionSettings(rate_per_s=rate_per_s, max_connections=None, retry_after_s=(1.0, 2.0))


def test_capacity_from_the_nodes_file_first_then_the_nodes_then_defaults() -> None:
    statuses = [_status("a", NodeState.READY, 10, capacity=800), _status("b", NodeState.READY, 10, 1200)]
    from_nodes = capacity_of(CapacityConfig(), statuses)
    assert (from_nodes.handshakes_per_s, from_nodes.connections_per_node) == (DEFAULT_HANDSHAKES_PER_S, 800)
    assert from_nodes.cpu_pct_per_handshake_per_s == pytest.approx(100 / DEFAULT_HANDSHAKES_PER_S)
    assert from_nodes.handshakes_planned and from_nodes.steady_inflow_per_s == 0.0
    configured = capacity_of(CapacityConfig(2000.0, 5000, 40.0), statuses)
    assert (configured.handshakes_per_s, configured.connections_per_node) == (2000.0, 5000)
    assert configured.steady_inflow_per_s == 40.0 and not configured.handshakes_planned
    unknown = capacity_of(CapacityConfig(), [])
    assert (unknown.handshakes_per_s, unknown.connections_per_node) == (
        DEFAULT_HANDSHAKES_PER_S,
        DEFAULT_CONNECTIONS_PER_NODE,
    )


def test_an_admission_rate_is_not_the_nodes_cpu_ceiling() -> None:
    """A loopback fleet at 2/s admission with no [capacity] table: the record took the 2/s as each node's
    handshake ceiling, so 50 CPU points per handshake/s, and a drain's verdict projected the survivors at
    225 %. Admission bounds what the survivors accept (spare admission); their CPU is projected from the
    500/s planning figure, and the verdict says both."""
    from console.guards import judge_drain
    from tests.guards.fleets import loopback_fleet

    admission = _admission(2.0)
    snapshot = loopback_fleet(9.8).model_copy(update={"admission": admission})
    capacity = capacity_of(CapacityConfig(), list(snapshot.nodes))
    assert capacity.handshakes_per_s == DEFAULT_HANDSHAKES_PER_S and capacity.handshakes_planned
    request = DrainRequest(rate_per_s=10.0, deadline_s=600, hint_ms=(1000, 31000))
    verdict = judge_drain(snapshot, capacity, "node-2", request)
    # 2 survivors × 1.5 skew × 0.2 points per handshake/s: (10 + 0.6)/2 × 0.3 ≈ 1.6 points over 9.8 %.
    assert verdict.projections["survivor_cpu_max_pct"] == pytest.approx(9.8 + 10.6 / 2 * 1.5 * 0.2, abs=1e-3)
    whys = {c.name: c for c in verdict.checks}
    assert whys["survivor_cpu_vs_pause_pct"].ok and "planning figure" in whys["survivor_cpu_vs_pause_pct"].why
    pacing = whys["drain_pacing_per_s"]
    assert not pacing.ok and (pacing.value, pacing.limit) == (10.0, 2.2)  # 2 × 2/s less 1.8/s admitted
    assert "admission limit of 2/s a node" in pacing.why, pacing.why


def test_the_capacity_table_of_a_nodes_file(tmp_path) -> None:
    path = tmp_path / "nodes.toml"
    path.write_text('[capacity]\nhandshakes_per_s = 900\nconnections_per_node = 20000\n[[nodes]]\nid = "a"\n')
    assert load_capacity(str(path)) == CapacityConfig(handshakes_per_s=900, connections_per_node=20000)
    path.write_text("[capacity]\nhandshakes = 900\n")
    with pytest.raises(InputError, match=r"capacity\.handshakes"):
        load_capacity(str(path))
    path.write_text('[capacity]\nhandshakes_per_s = "fast"\n')
    with pytest.raises(InputError, match=r"capacity\.handshakes_per_s"):
        load_capacity(str(path))
    path.write_text("[capacity]\nconnections_per_node = nan\n")
    with pytest.raises(InputError, match=r"capacity\.connections_per_node"):
        load_capacity(str(path))


async def test_apply_forwards_to_the_nodes_all_or_nothing(start_node) -> None:
    a = await start_node(node_config("a"))
    b = await start_node(node_config("b"))
    controller = Controller([NodeEntry("a", a.admin_url), NodeEntry("b", b.admin_url)], TOKEN)
    await controller.start()
    try:
        assert isinstance(controller, ActingBackend)
        drain = FleetAction(
            ActionKind.DRAIN, DrainRequest(rate_per_s=50, deadline_s=5, hint_ms=(0, 100)), "b"
        )
        assert await controller.forecast(drain) is None  # no twin of a real fleet (docs/gateway.md)
        await controller.apply(drain)
        assert b.node.state in (NodeState.DRAINING, NodeState.DRAINED)
        # The next action is judged on the drain at once, before b's next frame says so.
        snapshot = await controller.current_snapshot()
        assert snapshot.nodes[1].state in (NodeState.DRAINING, NodeState.DRAINED)
        await controller.apply(FleetAction(ActionKind.UNDRAIN, ActionRequest(), "b"))
        assert b.node.state is NodeState.READY

        await controller.apply(FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=400, burst=40)))
        assert a.node.admission.settings.rate_per_s == b.node.admission.settings.rate_per_s == 400
        # The guards bound what the nodes admit by the fleet's admission; their CPU ceiling is not it.
        assert controller.snapshot().admission.rate_per_s == 400
        assert controller.capacity().handshakes_per_s == DEFAULT_HANDSHAKES_PER_S

        await b.stop()  # a node that cannot take the settings: none of them takes them
        with pytest.raises(InputError) as refused:
            await controller.apply(FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=50)))
        assert refused.value.field == "nodes" and refused.value.value == ["b"]  # (named with the answering)
        assert a.node.admission.settings.rate_per_s == 400

        with pytest.raises(InputError) as no_command:
            await controller.apply(
                FleetAction(ActionKind.ROLLOUT_START, RolloutRequest(batch_size=1, interval_s=1))
            )
        assert no_command.value.field == "restart"
        # The guard's words (`nothing_to`), not "'idle' is not allowed; expected a paused or halted rollout".
        with pytest.raises(InputError, match=r"^rollout resume: nothing to resume — no rollout has started"):
            await controller.apply(FleetAction(ActionKind.ROLLOUT_RESUME, ActionRequest()))
        await wait_for(lambda: controller.snapshot().nodes[1].state is NodeState.DOWN, 8, "b shown down")
    finally:
        await controller.close()


async def test_a_node_refusal_names_the_field_the_node_named(start_node) -> None:
    a = await start_node(node_config("a"))
    controller = Controller([NodeEntry("a", a.admin_url)], "not-the-controller-token")
    await controller.start()
    try:
        with pytest.raises(InputError) as refused:
            await controller.apply(FleetAction(ActionKind.UNDRAIN, ActionRequest(), "a"))
        assert refused.value.field == "Authorization" and "403" in str(refused.value)
        with pytest.raises(InputError, match="one of a"):
            await controller.apply(FleetAction(ActionKind.UNDRAIN, ActionRequest(), "z"))
    finally:
        await controller.close()


async def test_a_refusing_node_is_a_422_through_the_fleet_api_and_audited(start_node, tmp_path) -> None:
    """The desk over the controller: a node that refuses (here: it does not trust the controller's token)
    answers the drain with 422 refused-by-fleet naming the node's field; the audit record written before
    applying is superseded by the refusal's, and the chain verifies."""
    a = await start_node(node_config("a"))
    b = await start_node(node_config("b"))
    entries = [NodeEntry("a", a.admin_url), NodeEntry("b", b.admin_url)]
    controller = Controller(entries, "not-the-controller-token")
    await controller.start()
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            body = {"rate_per_s": 50, "deadline_s": 30, "hint_ms": [0, 500]}
            answer = await drain_through_the_api(api, "b", body)
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert problem["type"].endswith("refused-by-fleet") and problem["field"] == "Authorization"
        assert "nothing applied" in problem["detail"]
        assert b.node.state is NodeState.READY
    finally:
        await controller.close()
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert records[-1]["outcome"] == "refused_by_fleet"
    assert records[-1]["supersedes"] == records[-2]["seq"] and records[-2]["outcome"] == "applied"
    report = verify_file(tmp_path / "audit.jsonl")
    assert report.intact and report.records == len(records)


class InProcessProvisioner:
    """Starts in-process nodes (the test's `start_node`), as `fleet up`'s provisioner starts children."""

    provisioning_s = 1.0

    def __init__(self, start_node, max_nodes: int) -> None:
        self._start = start_node
        self.max_nodes = max_nodes
        self.started: list[object] = []

    async def start_node(self, node_id: str) -> NodeEntry:
        running = await self._start(node_config(node_id))
        self.started.append(running)
        return NodeEntry(node_id, running.admin_url)


async def test_add_capacity_starts_nodes_that_join_with_the_fleets_admission(start_node, tmp_path) -> None:
    a = await start_node(node_config("a"))
    provisioner = InProcessProvisioner(start_node, max_nodes=2)
    controller = Controller([NodeEntry("a", a.admin_url)], TOKEN, provisioner=provisioner)
    await controller.start()
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            assert (await api.put("/v1/admission", json={"rate_per_s": 400, "burst": 40})).status_code == 200
            fleet = json.loads(controller.frame().model_dump_json())  # as the stream sends it
            assert fleet["max_nodes"] == 2, fleet  # the provisioner's limit, as `fleet up`'s says its 16
            assert fleet["rollout"]["unavailable_reason"] == "no_restart_command", fleet["rollout"]
            too_many = await api.post("/v1/capacity", json={"count": 2})
            assert too_many.status_code == 422 and too_many.json()["field"] == "count"
            assert (
                "[1, 1]" in too_many.json()["detail"]
                and "room left in the fleet" in too_many.json()["detail"]
            )
            asked = await api.post("/v1/capacity", json={"count": 1})  # 1 node on 1 is 100 %: confirm
            assert asked.status_code == 409 and asked.json()["verdict"]["level"] == "confirm"
            confirm = {"token": asked.json()["confirm_token"]}
            answer = await api.post("/v1/capacity", json={"count": 1, "confirm": confirm})
            assert answer.status_code == 202, answer.text
            assert answer.json()["verdict"]["projections"]["ready_in_s"] == 1.0
        states = {n.id: n.state for n in controller.snapshot().nodes}
        assert states["node-2"] in (NodeState.PROVISIONING, NodeState.READY)
        await wait_for(
            lambda: {n.id: n.state for n in controller.snapshot().nodes}.get("node-2") is NodeState.READY,
            8,
            "node-2 ready in the fleet",
        )
        (new,) = provisioner.started
        assert new.node.admission.settings.rate_per_s == 400  # the fleet's admission, not the node's default
        kinds = [(e.kind, e.message) for e in controller.drain_events()]
        assert ("capacity", "operator added 1 nodes (node-2..node-2), provisioning") in kinds
        assert any(kind == "node_state" and "provisioning → ready" in message for kind, message in kinds)
    finally:
        await controller.close()


async def test_a_controller_without_a_provisioner_refuses_to_add_capacity(start_node, tmp_path) -> None:
    a = await start_node(node_config("a"))
    controller = Controller([NodeEntry("a", a.admin_url)], TOKEN)
    await controller.start()
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            answer = await api.post("/v1/capacity", json={"count": 1})
            fleet = json.loads(controller.frame().model_dump_json())  # as the stream sends it
        assert answer.status_code == 422 and answer.json()["field"] == "count"
        # Said up front, typed, so node_down's advice names the one way on this fleet has (start it again
        # where it runs), and the rollout panel says what is missing without reading the words.
        assert fleet["max_nodes"] == 0, fleet
        assert fleet["rollout"]["unavailable_reason"] == "no_restart_command", fleet["rollout"]
        # What to do instead, as the console's `c` says it (it read "count: 1 is not allowed; expected no
        # nodes: fleet 'loopback' cannot add capacity (its backend provisions no nodes)").
        detail = answer.json()["detail"]
        assert detail.startswith(
            "count: fleet 'loopback' cannot add capacity — it adds no nodes: this controller starts no node "
            "process; start one where the nodes run, add it to the --nodes file's [[nodes]] and restart the "
            "controller (it reads the file as it starts), or shed load with admission"
        ), detail
        assert answer.json()["type"].endswith("refused-by-fleet")
        assert [n.id for n in controller.snapshot().nodes] == ["a"]
        with pytest.raises(InputError, match="starts no node process;"):
            controller.add_nodes(1)
    finally:
        await controller.close()


async def test_a_controllers_fleet_api_serves_the_thresholds_its_guards_judge_with(
    start_node, tmp_path
) -> None:
    """The console pre-fills its forms against GET /v1/thresholds: a controller serves it as the simulator
    does (the same app), so a console on a real fleet starts from the controller's lines, not its own."""
    a = await start_node(node_config("a"))
    controller = Controller([NodeEntry("a", a.admin_url)], TOKEN)
    await controller.start()
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            answer = await api.get("/v1/thresholds")
        assert answer.status_code == 200, answer.text
        served = answer.json()["thresholds"]
        assert served["cpu_pause_pct"] == {"value": 75, "source": "default"}
    finally:
        await controller.close()


async def test_a_node_that_fails_to_start_is_announced_and_dropped(start_node) -> None:
    class Broken:
        max_nodes = 3
        provisioning_s = 1.0

        async def start_node(self, node_id: str) -> NodeEntry:
            raise RuntimeError("no port left")

    a = await start_node(node_config("a"))
    controller = Controller([NodeEntry("a", a.admin_url)], TOKEN, provisioner=Broken())
    await controller.start()
    try:
        assert controller.capacity().max_nodes == 3
        assert controller.add_nodes(1) == ["node-2"]
        events: list = []

        def announced() -> bool:
            events.extend(controller.drain_events())
            return any(
                e.kind == "capacity" and "node-2 failed to start: no port left" in e.message for e in events
            )

        await wait_for(announced, 5, "the failure announced")
        assert [n.id for n in controller.snapshot().nodes] == ["a"]
        with pytest.raises(InputError, match=r"\[1, 2\]"):
            controller.add_nodes(3)
    finally:
        await controller.close()


#: What a start over a nodes file whose node `a` has no restart command is refused with: what is missing and
#: where to add it. It read "restart: 'a' is not allowed; expected a restart = … command", as if node a had
#: been refused by something.
NO_RESTART_IN_NODES_TOML = (
    'node a has no restart command: add restart = "…{node}…" to its [[nodes]] table in nodes.toml'
)


async def test_a_dry_run_says_what_the_fleet_would_refuse(start_node, tmp_path) -> None:
    """`fleet up`'s nodes have no restart command: the dry run of a rollout said ok, then Apply was
    refused. The fleet's refusal comes first now, dry run or not, naming the field; nothing is applied.
    The same words reach the problem+json, `stormdeck act`'s output and the console's notice at R."""
    a = await start_node(node_config("a"))
    controller = Controller([NodeEntry("a", a.admin_url, source="nodes.toml")], TOKEN)
    await controller.start()
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            body = {"batch_size": 1, "interval_s": 60, "mode": "drain", "pause_cpu_pct": 75}
            tried = await api.post("/v1/rollout", json={**body, "dry_run": True})
            applied = await api.post("/v1/rollout", json=body)
        for answer in (tried, applied):
            assert answer.status_code == 422, answer.text
            problem = answer.json()
            assert problem["field"] == "restart", problem
            assert problem["detail"] == f"{NO_RESTART_IN_NODES_TOML}; nothing applied", problem
            said = render_answer(ActionAnswer(answer.status_code, problem, answer.headers["content-type"]))
            # The fleet's refusal, not input typed wrong (exit 2 all the same).
            assert (
                said.splitlines()[0] == f"422 refused_by_fleet: {NO_RESTART_IN_NODES_TOML}; nothing applied"
            )
        assert controller.rollout_status().state.value == "idle"
        # The console refuses R at the key with the frame's words, as its notice renders them (markup).
        notice = pointless(ActionKind.ROLLOUT_START, None, controller.frame().rollout)
        assert notice is not None
        shown = Content.from_markup(notice).plain
        assert shown == f"this fleet cannot start a rollout — {NO_RESTART_IN_NODES_TOML}; nothing sent", shown
    finally:
        await controller.close()
    outcomes = [json.loads(line)["outcome"] for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert outcomes == ["refused_by_fleet", "refused_by_fleet"]


async def test_the_fleets_admission_is_the_fleet_wide_one_not_a_nodes_override(start_node) -> None:
    """Found in review: `Controller.admission()` read the first node's settings, so after a per-node change
    of that node the fleet API showed the override as the fleet's, and an added node took it."""
    a = await start_node(node_config("a"))
    b = await start_node(node_config("b"))
    provisioner = InProcessProvisioner(start_node, max_nodes=3)
    controller = Controller(
        [NodeEntry("a", a.admin_url), NodeEntry("b", b.admin_url)], TOKEN, provisioner=provisioner
    )
    await controller.start()
    try:
        fleet_wide = AdmissionRequest(rate_per_s=400, burst=40, retry_after_s=(2, 20))
        await controller.apply(FleetAction(ActionKind.ADMISSION, fleet_wide))
        override = AdmissionRequest(rate_per_s=100, burst=40, retry_after_s=(2, 20), nodes=["a"])
        await controller.apply(FleetAction(ActionKind.ADMISSION, override))
        assert a.node.admission.settings.rate_per_s == 100 and b.node.admission.settings.rate_per_s == 400
        shown = controller.snapshot().admission
        assert (shown.rate_per_s, shown.burst, shown.nodes) == (400, 40, None)
        # … and a's own is shown apart from it, as a runs it.
        (apart,) = controller.snapshot().admission_overrides or []
        assert (apart.rate_per_s, apart.nodes) == (100, ["a"])
        (added,) = controller.add_nodes(1)
        await wait_for(lambda: len(provisioner.started) == 1, 8, f"{added} started")
        (new,) = provisioner.started
        await wait_for(lambda: new.node.admission.settings.rate_per_s == 400, 8, f"{added} takes 400/s")
        # A fleet-wide change covers every node again: no override is left.
        await controller.apply(FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=300, burst=30)))
        assert controller.snapshot().admission.rate_per_s == 300
        assert a.node.admission.settings.rate_per_s == 300
        assert (
            controller.snapshot().admission_overrides is None
            and controller.frame().admission_overrides is None
        )
    finally:
        await controller.close()


async def test_admission_on_two_node_subsets_shows_both_as_the_nodes_run_them(start_node, tmp_path) -> None:
    """Found in review: a per-node change ran on its nodes and the fleet API showed only the fleet's
    settings. Each node's own, as its frames report it, is shown apart from the fleet's, in the snapshot
    (`GET /v1/fleet`) and in every frame. (The read routes over a snapshot are the simulator's tests'.)"""
    nodes = {node_id: await start_node(node_config(node_id)) for node_id in ("a", "b", "c")}
    controller = Controller([NodeEntry(n, node.admin_url) for n, node in nodes.items()], TOKEN)
    await controller.start()
    try:
        await wait_for(lambda: all(link.admission for link in controller.links.values()), 8, "nodes' frames")
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            for body in (
                {"rate_per_s": 50, "burst": 5, "nodes": ["a"]},
                {"max_connections": 900, "nodes": ["c"]},
            ):
                answer = await api.put("/v1/admission", json=body)
                if answer.status_code == 409:
                    token = answer.json()["confirm_token"]
                    answer = await api.put("/v1/admission", json={**body, "confirm": {"token": token}})
                assert answer.status_code == 200, answer.text
        assert nodes["a"].node.admission.settings.rate_per_s == 50
        assert nodes["c"].node.admission.settings.max_connections == 900
        for shown in (controller.snapshot(), controller.frame()):
            assert shown.admission is not None and shown.admission.limits_key()[:3] == (None, None, None)
            said = [
                (o.rate_per_s, o.burst, o.max_connections, o.nodes) for o in shown.admission_overrides or []
            ]
            assert said == [(50, 5, None, ["a"]), (None, None, 900, ["c"])]
        # b's frames say it runs its own settings as started: nothing is shown apart for it.
        assert controller.links["b"].admission == controller.snapshot().admission
    finally:
        await controller.close()


async def test_an_admission_dry_run_refuses_a_node_shown_down(start_node, tmp_path) -> None:
    """Found in review: with a node killed, the admission dry run said ok and the real call was a 422 (the
    node does not answer its admin API). What the controller already knows is refused first, dry run or not."""
    a = await start_node(node_config("a"))
    b = await start_node(node_config("b"))
    controller = Controller([NodeEntry("a", a.admin_url), NodeEntry("b", b.admin_url)], TOKEN)
    await controller.start()
    try:
        await b.stop()
        await wait_for(lambda: controller.snapshot().nodes[1].state is NodeState.DOWN, 8, "b shown down")
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            body = {"rate_per_s": 300, "burst": 30}
            tried = await api.put("/v1/admission", json={**body, "dry_run": True})
            applied = await api.put("/v1/admission", json=body)
            only_a = await api.put("/v1/admission", json={**body, "nodes": ["a"], "dry_run": True})
        for answer in (tried, applied):
            assert answer.status_code == 422, answer.text
            problem = answer.json()
            assert problem["type"].endswith("refused-by-fleet") and problem["field"] == "nodes"
            assert problem["detail"].startswith("nodes: b does not answer its admin API (down)"), problem
        assert only_a.status_code == 200, only_a.text  # a node that answers may still be changed
        assert a.node.admission.settings.rate_per_s is None
    finally:
        await controller.close()


def test_a_rollout_refusal_says_what_to_do_from_where_the_fleet_came() -> None:
    """Found in review: `fleet up`'s refusal read 'expected a restart = "…{node}…" command for every node in
    --nodes' — but there `--nodes` is a count, and its user wrote no nodes file. (No node runs here: the
    refusal is decided from the nodes' entries.)"""
    entries = [NodeEntry("node-1", "http://127.0.0.1:9/node-1")]
    start = FleetAction(ActionKind.ROLLOUT_START, RolloutRequest(batch_size=1, interval_s=1))
    fleet_up = Controller(entries, TOKEN, provisioner=InProcessProvisioner(None, max_nodes=16))
    refused = fleet_up.refuses(start)
    assert refused is not None and refused.field == "restart"
    assert str(refused).startswith(
        "`fleet up` starts its nodes without a restart command, so it cannot roll them out: "
    )
    assert "stormdeck controller --nodes FILE" in str(refused) and "in --nodes" not in str(refused)
    assert "is not allowed" not in str(refused)
    from_file = [NodeEntry("a", "http://127.0.0.1:9/a", source="nodes.toml")]
    nodes_file = Controller(from_file, TOKEN).refuses(start)
    assert nodes_file is not None and nodes_file.field == "restart"
    assert str(nodes_file) == NO_RESTART_IN_NODES_TOML
    # Several nodes: named (the first few), each one's table; entries built in code say which file they
    # came from no more than "the --nodes file".
    several = [NodeEntry(node, f"http://127.0.0.1:9/{node}") for node in ("a", "b", "c", "d", "e")]
    several[1] = NodeEntry("b", "http://127.0.0.1:9/b", restart="true {node}")
    refused_several = Controller(several, TOKEN).refuses(start)
    assert refused_several is not None and refused_several.field == "restart"
    assert str(refused_several) == (
        'nodes a, c, d and 1 more have no restart command: add restart = "…{node}…" to their [[nodes]] '
        "tables in the --nodes file"
    )


def test_a_fleet_that_cannot_roll_out_says_so_in_its_frames_and_snapshot() -> None:
    """User pass: on `fleet up` the console's rollout form opened and took input; only the submit was
    refused. The refusal a start would meet is in every frame and snapshot (`rollout.unavailable`), so the
    console can say so at the key; a fleet with restart commands leaves it null."""
    entries = [NodeEntry("node-1", "http://127.0.0.1:9/node-1")]
    start = FleetAction(ActionKind.ROLLOUT_START, RolloutRequest(batch_size=1, interval_s=1))
    fleet_up = Controller(entries, TOKEN, provisioner=InProcessProvisioner(None, max_nodes=16))
    refused = fleet_up.refuses(start)
    assert refused is not None
    assert fleet_up.snapshot().rollout.unavailable == str(refused) == fleet_up.frame().rollout.unavailable
    restartable = [NodeEntry("node-1", "http://127.0.0.1:9/node-1", restart="true {node}")]
    assert Controller(restartable, TOKEN).snapshot().rollout.unavailable is None


def test_what_a_fleet_can_do_is_typed_in_its_frames_and_snapshot() -> None:
    """The console chose "unable: no restart command" by searching `rollout.unavailable` for "restart" and
    "command", and node_down named two ways on because nothing said which fleet it was. The controller says
    both, typed: why it cannot roll out (`unavailable_reason`) and the most nodes it may hold (`max_nodes`:
    a provisioner's limit on `fleet up`, 0 over a nodes file, whose adds it refuses)."""
    entries = [NodeEntry("node-1", "http://127.0.0.1:9/node-1")]
    fleet_up = Controller(entries, TOKEN, provisioner=InProcessProvisioner(None, max_nodes=16))
    nodes_file = Controller(entries, TOKEN)
    for controller, max_nodes in ((fleet_up, 16), (nodes_file, 0)):
        for said in (controller.frame(), controller.snapshot()):
            assert said.rollout is not None
            assert said.rollout.unavailable_reason == UnavailableReason.NO_RESTART_COMMAND
            assert said.max_nodes == max_nodes == controller.capacity().max_nodes
    restartable = Controller([NodeEntry("node-1", "http://127.0.0.1:9/node-1", restart="true {node}")], TOKEN)
    assert restartable.frame().rollout.unavailable_reason is None
    assert restartable.snapshot().rollout.unavailable_reason is None


def test_the_guards_are_told_the_batch_drain_the_controller_applies() -> None:
    """Found in review: a dry run projected a batch drained over the 600 s window (0.87/s, 610 s) while the
    controller drained each batch node at DEFAULT_BATCH_DRAIN, 100/s. (No node runs: the record is the
    controller's own.)"""
    from console.gateway.rollout import DEFAULT_BATCH_DRAIN

    controller = Controller([NodeEntry("node-1", "http://127.0.0.1:9/node-1")], TOKEN)
    capacity = controller.capacity()
    assert capacity.batch_drain_rate_per_s == DEFAULT_BATCH_DRAIN.rate_per_s == 100.0
    assert capacity.batch_drain_deadline_s == DEFAULT_BATCH_DRAIN.deadline_s
    assert capacity.restart_s == 0.0  # not known to a controller: the guard says so
