"""Instructor injections on a real server on loopback: applied between seconds, shown, guarded, audited."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from console.audit import verify_file
from console.server.simulator import injector
from tests.actions.conftest import CALM, TOKENS, Acting, calm_simulation, start_acting
from tests.server.conftest import receive_until

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels() -> None:
    """Compile (or load) the kernels before a server starts, so its first frame is not late."""
    sim = calm_simulation()
    sim.step()


@pytest.fixture
def acting(tmp_path: Path) -> Iterator[Acting]:
    running = start_acting(tmp_path)
    yield running
    running.server.stop()
    running.audit.close()


def stream(acting: Acting) -> Any:
    ws_url = acting.url.replace("http://", "ws://") + "/v1/stream"
    return connect(ws_url, additional_headers={"Authorization": f"Bearer {TOKENS['viewer']}"})


async def next_frame(ws: ClientConnection) -> dict[str, Any]:
    messages = await receive_until(ws, lambda m: m["type"] == "frame")
    return messages[-1]


def fleet_state(acting: Acting) -> list[tuple[str, str]]:
    """Each node's id and state, read off the simulation (the calm fleet's states change only by an
    action or injection; the backend's own lock belongs to the server's event loop, not the test's)."""
    simulation = acting.simulation
    return [(node, simulation.state_of(i).value) for i, node in enumerate(simulation.node_ids)]


def is_injection(message: dict[str, Any]) -> bool:
    return message["type"] == "event" and message.get("kind") == "injection"


async def test_disconnect_fraction_shows_as_an_event_and_drops_connections(acting: Acting) -> None:
    async with stream(acting) as ws:
        before = (await next_frame(ws))["totals"]["connections"]
        response = await acting.call(
            "POST", "/v1/sim/inject", {"event": "disconnect_fraction", "params": {"fraction": 0.5}}, "admin"
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["applied"] and body["params"] == {"fraction": 0.5}
        seen = await receive_until(ws, is_injection)
        event = seen[-1]
        # Who injected it, as an applied action's event says who acted: a recording of the stream keeps it
        # (the replay's audit log lists the injection by its instructor), and its audit record's seq.
        assert event["data"] == {
            "event": "disconnect_fraction",
            "params": {"fraction": 0.5},
            "actor": "admin-person",
            "role": "admin",
            "audit_seq": body["audit_seq"],
        }
        assert (
            event["message"] == "instructor admin-person (admin) injected disconnect_fraction(fraction=0.5)"
        )
        after = (await next_frame(ws))["totals"]
    # Half of 20 000 reset at once: the next frame counts them as abnormal closes (the calm fleet's clients
    # are back within the second, so the reset shows in the flow, not in the connection count).
    assert before > 15_000
    assert 0.4 * before <= after["abnormal_closes_per_s"] <= 0.6 * before, after
    assert after["attempts_per_s"] >= 0.4 * before, after
    assert any(m["type"] == "event" and m.get("kind") == "disconnect" for m in seen)


async def test_add_nodes_adds_provisioning_nodes(acting: Acting) -> None:
    async with stream(acting) as ws:
        assert len((await next_frame(ws))["nodes"]) == 8
        response = await acting.call(
            "POST", "/v1/sim/inject", {"event": "add_nodes", "params": {"count": 3}}, "admin"
        )
        assert response.status_code == 200, response.text
        await receive_until(ws, is_injection)
        frame = await next_frame(ws)
    added = [node for node in frame["nodes"] if node["id"] in ("gw-008", "gw-009", "gw-010")]
    assert [node["state"] for node in added] == ["provisioning"] * 3
    assert len(frame["nodes"]) == 11


async def test_restart_by_count_resolves_node_ids(acting: Acting) -> None:
    response = await acting.call(
        "POST", "/v1/sim/inject", {"event": "restart_nodes", "params": {"nodes": 2, "first": 3}}, "admin"
    )
    assert response.status_code == 200, response.text
    assert response.json()["params"] == {"nodes": ["gw-003", "gw-004"]}
    states = dict(fleet_state(acting))
    assert states["gw-003"] != "ready" and states["gw-004"] != "ready" and states["gw-005"] == "ready"


@pytest.mark.parametrize("role", ["viewer", "operator"])
async def test_only_an_admin_injects(acting: Acting, role: str) -> None:
    before = fleet_state(acting)
    response = await acting.call(
        "POST", "/v1/sim/inject", {"event": "restart_nodes", "params": {"nodes": 8}}, role
    )
    assert response.status_code == 403
    assert response.headers["content-type"].startswith(PROBLEM)
    assert fleet_state(acting) == before
    refusal = acting.audit.tail(1)[0]
    assert (refusal["action"], refusal["status"], refusal["role"]) == ("inject", 403, role)


@pytest.mark.parametrize(
    ("body", "field", "allowed_has"),
    [
        ({"event": "meteor_strike"}, "event", "disconnect_fraction"),
        ({"event": "disconnect_fraction", "params": {"fraction": 1.5}}, "fraction", "(0, 1]"),
        ({"event": "disconnect_fraction", "params": {"share": 0.5}}, "share", "fraction"),
        ({"event": "add_nodes", "params": {"count": 0}}, "count", "an integer in [1, "),
        ({"event": "restart_nodes", "params": {"nodes": ["gw-001", "gw-999"]}}, "nodes", "gw-000..gw-007"),
        ({"event": "set_policy", "params": {"policy": "yolo"}}, "policy", "full_jitter"),
    ],
)
async def test_a_bad_injection_is_422_naming_the_field_and_applies_nothing(
    acting: Acting, body: dict[str, Any], field: str, allowed_has: str
) -> None:
    before = fleet_state(acting), [policy.name for policy in acting.simulation.policies]
    response = await acting.call("POST", "/v1/sim/inject", body, "admin")
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    problem = response.json()
    assert problem["field"] == field
    assert allowed_has in problem["allowed"] and allowed_has in problem["detail"]
    # Nothing applied: gw-001 of the half-bad list was not restarted, no node added, no policy changed.
    assert (fleet_state(acting), [policy.name for policy in acting.simulation.policies]) == before
    record = acting.audit.tail(1)[0]
    assert (record["record"], record["outcome"], record["status"]) == ("injection", "invalid", 422)


async def test_injections_join_the_actions_hash_chain(acting: Acting) -> None:
    drained = await acting.call(
        "POST", "/v1/nodes/gw-001/drain", {"rate_per_s": 100, "deadline_s": 60, "hint_ms": [100, 200]}
    )
    assert drained.status_code in (200, 202, 409), drained.text
    injected = await acting.call(
        "POST", "/v1/sim/inject", {"event": "kill_nodes", "params": {"nodes": "gw-006"}}, "admin"
    )
    assert injected.status_code == 200, injected.text
    body = injected.json()
    acting.audit.close()
    lines = [json.loads(line) for line in acting.audit.path.read_text().splitlines()]
    record = lines[-1]
    assert record["seq"] == body["audit_seq"] and record["hash"] == body["audit_hash"]
    assert record["record"] == "injection"
    assert (record["actor"], record["role"], record["event"]) == ("admin-person", "admin", "kill_nodes")
    assert record["parameters"] == {"nodes": ["gw-006"]}
    assert lines[-2]["action"] == "drain"  # one log: the action's record comes just before
    report = verify_file(acting.audit.path)
    assert report.intact and report.records == len(lines), report


async def test_set_policy_changes_the_client_mix_and_a_bad_population_is_named(acting: Acting) -> None:
    populations = [p.name for p in acting.simulation.scenario.clients.populations]
    bad = await acting.call(
        "POST",
        "/v1/sim/inject",
        {"event": "set_policy", "params": {"policy": "fixed", "population": "martians"}},
        "admin",
    )
    assert bad.status_code == 422 and bad.json()["field"] == "population"
    assert all(name in bad.json()["allowed"] for name in populations)
    bad_param = await acting.call(
        "POST", "/v1/sim/inject", {"event": "set_policy", "params": {"policy": "fixed", "warp": 9}}, "admin"
    )
    assert bad_param.status_code == 422 and bad_param.json()["field"] == "policy.warp"
    assert [policy.name for policy in acting.simulation.policies] != ["fixed"] * len(populations)
    async with stream(acting) as ws:
        good = await acting.call(
            "POST", "/v1/sim/inject", {"event": "set_policy", "params": {"policy": "fixed"}}, "admin"
        )
        assert good.status_code == 200, good.text
        seen = await receive_until(ws, is_injection)
    assert [policy.name for policy in acting.simulation.policies] == ["fixed"] * len(populations)
    assert any(m.get("kind") == "policy" for m in seen)  # the engine's own event, sent with it


async def test_a_retried_injection_is_applied_once(acting: Acting) -> None:
    body = {"event": "add_nodes", "params": {"count": 1}}
    first = await acting.call("POST", "/v1/sim/inject", body, "admin", **{"Idempotency-Key": "k-1"})
    again = await acting.call("POST", "/v1/sim/inject", body, "admin", **{"Idempotency-Key": "k-1"})
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert acting.simulation.n_nodes == 9
    assert acting.audit.tail(1)[0]["outcome"] == "replayed"


async def test_a_restart_of_many_nodes_reaches_the_stream_as_two_events_naming_them(tmp_path: Path) -> None:
    # Each event is a message to every console: a fleet restart is one state change and one disconnect,
    # not 2 × 12 (the server groups a second's alike node events past 10; the simulator cuts per action).
    acting = start_acting(tmp_path, nodes={**CALM["nodes"], "count": 16})
    try:
        async with stream(acting) as ws:
            await next_frame(ws)
            response = await acting.call(
                "POST", "/v1/sim/inject", {"event": "restart_nodes", "params": {"nodes": 12}}, "admin"
            )
            assert response.status_code == 200, response.text
            seen = await receive_until(
                ws, lambda m: m["type"] == "frame" and any(n["state"] == "restarting" for n in m["nodes"])
            )
    finally:
        acting.server.stop()
        acting.audit.close()
    restarted = [f"gw-{i:03d}" for i in range(12)]
    about_nodes = [m for m in seen if m["type"] == "event" and m["kind"] in ("node_state", "disconnect")]
    assert [(m["kind"], m["node"], m["data"]["nodes"]) for m in about_nodes] == [
        ("node_state", None, restarted),
        ("disconnect", None, restarted),
    ]
    assert about_nodes[0]["message"] == "12 nodes restarted (injected): ready → restarting"
    held = 12 * 20_000 // 16  # the calm fleet's clients, spread evenly
    assert (
        about_nodes[1]["message"]
        == f"restart of 12 nodes dropped {about_nodes[1]['data']['dropped']:,} connections"
    )
    assert 0.9 * held <= about_nodes[1]["data"]["dropped"] <= 1.1 * held


def test_the_injection_says_who_without_repeating_the_default_instructors_name() -> None:
    """`drill --serve`'s own admin token is named "instructor": its injections read "instructor (admin)
    injected …", not "instructor instructor (admin)"; another name is said; none, plain "instructor"."""
    assert injector({"actor": "instructor", "role": "admin"}) == "instructor (admin)"
    assert injector({"actor": "dana", "role": "admin"}) == "instructor dana (admin)"
    assert injector({}) == "instructor"
