"""`POST /v1/capacity` against a real uvicorn over a small simulation: the add-capacity action end to end —
applied (202) and the nodes provisioned then ready, confirm, dry run with forecast, bad input naming
`count` and its range with nothing applied, idempotent retries, the audit record."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from console.protocol import NodeState
from tests.actions.conftest import CALM, Acting, start_acting
from tests.actions.test_api import audit_outcomes, problem

# The calm fleet's 8 nodes, provisioned in 3 fleet seconds (the frames come every 50 ms), with the
# engine's room of 64 spare nodes (console.sim.engine._SPARE_NODES).
QUICK = {**CALM["nodes"], "provisioning_s": 3}
ROOM = 64


@pytest.fixture
def growing(tmp_path: Path) -> Iterator[Acting]:
    running = start_acting(tmp_path, nodes=QUICK)
    yield running
    running.server.stop()
    running.audit.close()


async def fleet_nodes(acting: Acting) -> dict[str, str]:
    fleet = (await acting.call("GET", "/v1/fleet", role="viewer")).json()
    return {node["id"]: node["state"] for node in fleet["nodes"]}


async def test_an_add_is_applied_at_once_and_the_nodes_become_ready(growing: Acting) -> None:
    response = await growing.call("POST", "/v1/capacity", {"count": 2})
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["applied"] and body["action"] == "add_capacity" and body["verdict"]["level"] == "ok"
    projections = body["verdict"]["projections"]
    assert (projections["nodes_now"], projections["nodes_after"], projections["ready_in_s"]) == (8, 10, 3.0)
    sim = growing.simulation
    assert sim.n_nodes == 10
    new_ids = sim.node_ids[8:]
    assert [sim.state_of(sim.index_of(i)) for i in new_ids] == [NodeState.PROVISIONING] * 2
    # The frames show them provisioning, then ready once the provisioning time has passed.
    for _ in range(200):
        states = await fleet_nodes(growing)
        if all(states.get(i) == "ready" for i in new_ids):
            break
        await asyncio.sleep(0.02)  # polling the server for a condition, with a bound
    assert all(states.get(i) == "ready" for i in new_ids), states
    record = growing.audit.tail(1)[0]
    assert (record["action"], record["outcome"], record["status"]) == ("add_capacity", "applied", 202)
    assert record["parameters"] == {"count": 2} and record["target"] == "fleet"


async def test_a_large_add_asks_for_confirmation_then_applies(growing: Acting) -> None:
    first = problem(await growing.call("POST", "/v1/capacity", {"count": 5}), 409, "confirm")
    assert first["verdict"]["level"] == "confirm" and "added_share_pct" in first["detail"]
    assert growing.simulation.n_nodes == 8  # nothing yet
    confirmed = await growing.call(
        "POST", "/v1/capacity", {"count": 5, "confirm": {"token": first["confirm_token"]}}
    )
    assert confirmed.status_code == 202, confirmed.text
    assert growing.simulation.n_nodes == 13
    assert audit_outcomes(growing) == ["needs_confirmation", "applied"]


async def test_a_dry_run_forecasts_and_adds_nothing(growing: Acting) -> None:
    response = await growing.call("POST", "/v1/capacity", {"count": 2, "dry_run": True})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["dry_run"] and not body["applied"]
    assert body["verdict"]["forecast"]["horizon_s"] == 60
    assert growing.simulation.n_nodes == 8 and audit_outcomes(growing) == ["dry_run"]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"count": ROOM + 1}, f"[1, {ROOM}]"),  # beyond the fleet's room: the guard
        ({"count": 0}, f"[1, {ROOM}]"),  # below the request model's bound: the fleet's range too
        ({"count": 2.5}, "integer"),
        ({}, "required"),
    ],
)
async def test_bad_input_names_count_and_its_range_and_adds_nothing(growing: Acting, body, fragment) -> None:
    problem(await growing.call("POST", "/v1/capacity", body), 422, "count", fragment)
    assert growing.simulation.n_nodes == 8
    assert audit_outcomes(growing) == ["invalid"]


@pytest.mark.parametrize("count", [0, -3, 20_000, 0.0])
async def test_a_count_beyond_the_request_models_bound_is_named_in_the_fleets_range(
    growing: Acting, count: float
) -> None:
    """0 and 20 000 (beyond the model's [1, 10000]) answered pydantic's words and the API's bound ("Input
    should be greater than or equal to 1 (got 0); allowed: [1, 10000] (nodes to add)") — a range this fleet
    cannot take — while 65 named the fleet's room. Now all say it as the guard, the console's form and
    `act add-capacity` do, and the audit record keeps the same words."""
    expected = (
        f"count: {count:g} is not allowed; expected an integer in [1, {ROOM}] (room left in the fleet: "
    )
    body = problem(await growing.call("POST", "/v1/capacity", {"count": count}), 422, "count", expected)
    assert "greater than" not in body["detail"] and "less than" not in body["detail"], body
    assert growing.simulation.n_nodes == 8
    (record,) = growing.audit.tail(1000)
    assert record["outcome"] == "invalid" and record["detail"] == body["detail"], record


async def test_the_fleets_range_for_count_keeps_the_bodys_other_faults(growing: Acting) -> None:
    body = {"count": 0, "dry_run": "yes"}
    said = problem(await growing.call("POST", "/v1/capacity", body), 422, "count")["detail"]
    assert f"count: 0 is not allowed; expected an integer in [1, {ROOM}]" in said, said
    assert "dry_run: " in said, said


async def test_a_retry_with_the_same_key_adds_once(growing: Acting) -> None:
    key = {"Idempotency-Key": "add-once-1"}
    first = await growing.call("POST", "/v1/capacity", {"count": 1}, **key)
    again = await growing.call("POST", "/v1/capacity", {"count": 1}, **key)
    assert first.status_code == again.status_code == 202 and first.json() == again.json()
    assert growing.simulation.n_nodes == 9
    assert audit_outcomes(growing) == ["applied", "replayed"]


async def test_the_room_shrinks_as_nodes_are_added(growing: Acting) -> None:
    add = {"count": ROOM - 8}
    token = (await growing.call("POST", "/v1/capacity", add)).json()["confirm_token"]
    assert (
        await growing.call("POST", "/v1/capacity", {**add, "confirm": {"token": token}})
    ).status_code == 202
    problem(await growing.call("POST", "/v1/capacity", {"count": 9}), 422, "count", "[1, 8]", "room left")
    assert growing.simulation.n_nodes == 8 + ROOM - 8


async def test_a_scheduled_add_keeps_its_room(tmp_path: Path) -> None:
    """The scenario's own `add_nodes` (at 3000 s) has its 10 nodes reserved: an operator's add may not take
    them, or the timeline event would find no room when its time comes."""
    events = [{"at_s": 3000, "action": "add_nodes", "count": 10}]
    acting = start_acting(tmp_path, nodes=QUICK, events=events)
    try:
        assert acting.simulation.capacity_nodes == 8 + 10 + ROOM
        problem(await acting.call("POST", "/v1/capacity", {"count": ROOM + 1}), 422, "count", f"[1, {ROOM}]")
        assert acting.simulation.room_nodes() == ROOM and acting.simulation.n_nodes == 8
    finally:
        acting.server.stop()
        acting.audit.close()
