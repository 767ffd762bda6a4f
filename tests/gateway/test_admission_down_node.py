"""Admission with a node that does not answer its admin API (down, or hung): refused whole — a hung node that
comes back keeps its old settings, so nothing is half-applied — in words that say the way on: the field is
`nodes`, the answering nodes are named (and listed in the problem for a client to offer them), and the
problem is the fleet's refusal, not input the operator typed wrong (found on a real 3-node loopback fleet
with one node SIGSTOPped: `422 bad_input: node: 'n3' is not allowed; expected a node that answers its admin
API (it is down)`)."""

from __future__ import annotations

import json

import httpx
import pytest

from console.cli.act import render_answer
from console.cli.act.request import options_of
from console.cli.act.run import EXIT
from console.client.actions import ActionAnswer
from console.gateway.acting import NodesNotAnswering
from console.gateway.controller import Controller
from console.gateway.nodes_file import NodeEntry
from console.protocol import AdmissionRequest, NodeState
from tests.gateway.conftest import TOKEN, node_config, operator_api, wait_for


async def _fleet_with_c_down(start_node) -> tuple[Controller, dict]:
    nodes = {node_id: await start_node(node_config(node_id)) for node_id in ("a", "b", "c")}
    controller = Controller([NodeEntry(n, node.admin_url) for n, node in nodes.items()], TOKEN)
    await controller.start()
    await wait_for(lambda: all(link.admission for link in controller.links.values()), 8, "nodes' frames")
    await nodes["c"].stop()
    await wait_for(lambda: controller.snapshot().nodes[2].state is NodeState.DOWN, 8, "c shown down")
    return controller, nodes


async def test_a_fleet_wide_change_names_nodes_and_the_answering_ones(start_node, tmp_path) -> None:
    controller, nodes = await _fleet_with_c_down(start_node)
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            fleet_wide = await api.put("/v1/admission", json={"rate_per_s": 50, "burst": 20})
            named = await api.put("/v1/admission", json={"rate_per_s": 50, "nodes": ["a", "c"]})
            only_c = await api.put("/v1/admission", json={"rate_per_s": 50, "nodes": ["c"], "dry_run": True})
        problem = fleet_wide.json()
        assert fleet_wide.status_code == 422, fleet_wide.text
        assert problem["type"].endswith(":refused-by-fleet") and problem["field"] == "nodes"
        assert problem["title"] == "Refused by the fleet"  # not "Invalid input": nothing typed was wrong
        assert problem["detail"] == (
            "nodes: c does not answer its admin API (down): a fleet-wide admission change needs every node "
            "to take it; set the answering ones with nodes a, b, or wait for c to answer; nothing applied"
        )
        assert (problem["nodes_down"], problem["nodes_answering"]) == (["c"], ["a", "b"])
        assert named.json()["detail"] == (
            "nodes: c does not answer its admin API (down): every node named must take the change; leave it "
            "out (nodes a), or wait for c to answer; nothing applied"
        )
        assert named.json()["nodes_answering"] == ["a"]
        assert only_c.json()["detail"] == (
            "nodes: c does not answer its admin API (down): every node named must take the change; wait for "
            "c to answer; nothing applied"
        )
        assert only_c.json()["nodes_answering"] == []
        # Nothing half-applied: the answering nodes keep what they ran.
        assert nodes["a"].node.admission.settings.rate_per_s is None
        records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
        assert records[0]["outcome"] == "refused_by_fleet" and records[0]["detail"] == problem["detail"]
    finally:
        await controller.close()


async def test_a_node_that_hangs_before_it_is_shown_down_is_refused_in_the_same_words(
    start_node, monkeypatch
) -> None:
    """SIGSTOPped: its admin API times out before its stream has been silent long enough to show it down.
    Every target is asked (a dry run) before any takes the settings, so nothing is applied."""
    nodes = {node_id: await start_node(node_config(node_id)) for node_id in ("a", "b", "c")}
    controller = Controller([NodeEntry(n, node.admin_url) for n, node in nodes.items()], TOKEN)
    await controller.start()
    try:
        await wait_for(lambda: all(link.admission for link in controller.links.values()), 8, "nodes' frames")
        send = controller._http.request

        async def hung_c(method: str, url: str, **kwargs: object) -> httpx.Response:
            if url.startswith(nodes["c"].admin_url):
                raise httpx.ReadTimeout("timed out")
            return await send(method, url, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(controller._http, "request", hung_c)
        with pytest.raises(NodesNotAnswering) as refused:
            await controller.set_admission(AdmissionRequest(rate_per_s=50))
        assert str(refused.value) == (
            "nodes: c does not answer its admin API (ReadTimeout): a fleet-wide admission change needs every "
            "node to take it; set the answering ones with nodes a, b, or wait for c to answer"
        )
        assert refused.value.problem_members() == {"nodes_down": ["c"], "nodes_answering": ["a", "b"]}
        assert all(node.node.admission.settings.rate_per_s is None for node in nodes.values())
    finally:
        await controller.close()


def test_the_cli_says_the_fleet_refused_and_the_command_that_sets_the_answering_nodes() -> None:
    detail = (
        "nodes: n3 does not answer its admin API (down): a fleet-wide admission change needs every node to "
        "take it; set the answering ones with nodes n1, n2, or wait for n3 to answer; nothing applied"
    )
    body = {
        "type": "urn:stormdeck:problem:refused-by-fleet",
        "title": "Refused by the fleet",
        "status": 422,
        "detail": detail,
        "field": "nodes",
        "nodes_down": ["n3"],
        "nodes_answering": ["n1", "n2"],
    }
    said = render_answer(ActionAnswer(422, body), options_of(AdmissionRequest)).splitlines()
    assert said[0] == "422 refused_by_fleet: --nodes (nodes): " + detail.removeprefix("nodes: ")
    assert said[-1] == "to set the answering nodes: run again with --nodes n1,n2"
    assert EXIT[ActionAnswer(422, body).reply] == 2
    none_answer = {**body, "nodes_answering": []}
    assert "run again" not in render_answer(ActionAnswer(422, none_answer), options_of(AdmissionRequest))
