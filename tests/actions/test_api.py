"""The write side of the fleet API against a real uvicorn over a small simulation: every path and status."""

from __future__ import annotations

import httpx
import pytest

from console.audit import verify_file
from console.errors import InputError
from console.guards import Thresholds
from console.guards.drain import LIMITED_BY
from console.protocol import NodeState
from tests.actions.conftest import PROBLEM, Acting, auth
from tests.client.fake_fleet_server import wait_for

DRAIN_OK = {"rate_per_s": 10, "deadline_s": 600, "hint_ms": [1000, 30000]}
# A hint window under hint_window_min_ms (lockstep). (A 0 s deadline was the example: it force-closes a node
# of 8 at once, 12.5 % of the fleet, over connections_drop's line — typed now, force_close_drop_pct.)
DRAIN_CONFIRM = {**DRAIN_OK, "hint_ms": [1000, 1500]}
DRAIN_BLOCKED = {**DRAIN_OK, "rate_per_s": 1_000_000}  # far beyond the survivors' spare admission
ADMISSION_CONFIRM = {"retry_after_s": [1, 2]}  # a 1 s Retry-After window: lockstep
ROLLOUT_ABRUPT = {"batch_size": 2, "interval_s": 30, "mode": "abrupt"}

MUTATIONS = [
    ("POST", "/v1/nodes/gw-001/drain", DRAIN_OK),
    ("POST", "/v1/nodes/gw-001/undrain", None),
    ("POST", "/v1/rollout", ROLLOUT_ABRUPT),
    ("POST", "/v1/rollout/halt", None),
    ("POST", "/v1/rollout/resume", None),
    ("PUT", "/v1/admission", ADMISSION_CONFIRM),
    ("POST", "/v1/capacity", {"count": 1}),
]


def problem(response: httpx.Response, status: int, field: str | None = None, *fragments: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["status"] == status and body["title"] and body["detail"]
    if status == 422:  # bad input or blocked: one of ours, never about:blank (a script tests the type)
        assert body["type"].startswith("urn:stormdeck:problem:"), body
    if field is not None:
        assert body.get("field") == field, body
    for fragment in fragments:
        assert fragment in body["detail"], body["detail"]
    return body


def node_state(acting: Acting, node_id: str) -> NodeState:
    sim = acting.simulation
    return sim.state_of(sim.index_of(node_id))


def audit_outcomes(acting: Acting) -> list[str]:
    return [record["outcome"] for record in acting.audit.tail(1000)]


@pytest.mark.parametrize(("method", "path", "body"), MUTATIONS)
async def test_no_token_is_401_and_a_viewer_is_403_on_every_mutation(
    acting: Acting, method, path, body
) -> None:
    problem(await acting.call(method, path, body, role=None), 401, "authorization")
    problem(await acting.call(method, path, body, role="viewer"), 403, "authorization", "operator role")
    assert node_state(acting, "gw-001") is NodeState.READY
    records = acting.audit.tail(10)
    assert [r["outcome"] for r in records] == ["forbidden"]  # the anonymous call has no one to record
    assert records[0]["actor"] == "viewer-person" and records[0]["status"] == 403


async def test_the_token_is_checked_before_the_body_is_read_on_every_action_route(acting: Acting) -> None:
    # FastAPI parses a body before a route's dependencies: a malformed one drew a 422 describing it from a
    # caller with no token. Every action route, whoever serves it (simulator or controller, both
    # `create_app`), is found from the app's own contract, so a route added later is checked too.
    actions = sorted(
        (method.upper(), path.replace("{node_id}", "gw-001"))
        for path, operations in acting.server.app.openapi()["paths"].items()
        for method in operations
        if method in {"post", "put", "patch", "delete"}
    )
    assert ("POST", "/v1/nodes/gw-001/drain") in actions and ("POST", "/v1/sim/inject") in actions
    assert ("POST", "/v1/sim/clock") in actions and ("PUT", "/v1/admission") in actions
    malformed = {"content-type": "application/json"}
    async with acting.client() as client:
        for method, path in actions:
            for headers in ({}, {"Authorization": "Bearer not-a-token"}):
                sent = await client.request(
                    method, path, content=b'{"rate_per_s": ', headers={**malformed, **headers}
                )
                problem(sent, 401, "authorization")
            # A role too low is told before the body too (an admin's inject, an operator's actions).
            viewer = await client.request(
                method, path, content=b'{"rate_per_s": ', headers={**malformed, **auth("viewer")}
            )
            problem(viewer, 403, "authorization")
        # An operator's malformed body is still told as such.
        operator = await client.post(
            "/v1/nodes/gw-001/drain", content=b'{"rate_per_s": ', headers={**malformed, **auth("operator")}
        )
        problem(operator, 422, "body", "not valid JSON")
    assert node_state(acting, "gw-001") is NodeState.READY


async def test_an_ok_drain_is_applied_at_once_and_answered_202(acting: Acting) -> None:
    response = await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_OK)
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["applied"] and body["verdict"]["level"] == "ok" and body["node"] == "gw-001"
    assert node_state(acting, "gw-001") is NodeState.DRAINING
    assert body["audit_seq"] == acting.audit.seq and body["audit_hash"] == acting.audit.last_hash
    # The next frames show it.
    async with acting.client() as client:
        for _ in range(100):
            fleet = (
                await client.get("/v1/fleet", headers={"Authorization": "Bearer viewer-token-0123456789"})
            ).json()
            node = next(n for n in fleet["nodes"] if n["id"] == "gw-001")
            if node["state"] == "draining":
                break
        assert node["state"] == "draining" and node["drain"]["rate_per_s"] == 10


async def test_a_dry_run_judges_and_forecasts_but_applies_nothing(acting: Acting) -> None:
    response = await acting.call("POST", "/v1/nodes/gw-001/drain", {**DRAIN_BLOCKED, "dry_run": True})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["dry_run"] and not body["applied"] and body["verdict"]["level"] == "blocked"
    forecast = body["verdict"]["forecast"]
    assert forecast["tick_ms"] == acting.simulation.tick_ms and forecast["horizon_s"] == 60
    for run in ("without_action", "with_action"):
        assert len(forecast[run]["connections"]) == 60
    # The drain moves reconnects onto the survivors: the forecast with it shows more attempts.
    assert forecast["with_action"]["attempts_per_s_peak"] > forecast["without_action"]["attempts_per_s_peak"]
    assert node_state(acting, "gw-001") is NodeState.READY
    assert audit_outcomes(acting) == ["dry_run"]


async def test_confirm_is_409_with_a_single_use_token(acting: Acting) -> None:
    first = problem(await acting.call("PUT", "/v1/admission", ADMISSION_CONFIRM), 409, "confirm")
    assert first["verdict"]["level"] == "confirm" and first["type"].endswith("confirmation-required")
    assert first["verdict"]["forecast"] is not None
    token = first["confirm_token"]
    assert first["verdict"]["confirm_token"] == token and first["expires_in_s"] == 60
    # "needs confirm confirmation" said the level's name and the word it names (review)
    assert " needs confirmation: " in first["detail"] and "confirm confirmation" not in first["detail"]
    assert acting.simulation.admission.retry_after_s == (1.0, 30.0)  # nothing applied yet
    confirmed = await acting.call("PUT", "/v1/admission", {**ADMISSION_CONFIRM, "confirm": {"token": token}})
    assert confirmed.status_code == 200, confirmed.text
    assert acting.simulation.admission.retry_after_s == (1.0, 2.0)
    reused = problem(
        await acting.call("PUT", "/v1/admission", {**ADMISSION_CONFIRM, "confirm": {"token": token}}),
        409,
        "confirm.token",
        "already used",
    )
    assert reused["reason"] == "reused" and reused["confirm_token"] != token
    assert audit_outcomes(acting) == ["needs_confirmation", "applied", "confirm_refused"]


async def test_a_token_expires_after_60_s(acting: Acting) -> None:
    token = (await acting.call("PUT", "/v1/admission", ADMISSION_CONFIRM)).json()["confirm_token"]
    acting.clock.now += 60.0
    late = problem(
        await acting.call("PUT", "/v1/admission", {**ADMISSION_CONFIRM, "confirm": {"token": token}}),
        409,
        "confirm.token",
        "expired",
    )
    assert late["reason"] == "expired"
    assert acting.simulation.admission.retry_after_s == (1.0, 30.0)


async def test_a_token_for_other_parameters_is_refused(acting: Acting) -> None:
    token = (await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_CONFIRM)).json()["confirm_token"]
    changed = {**DRAIN_CONFIRM, "rate_per_s": 20, "confirm": {"token": token}}
    refused = problem(
        await acting.call("POST", "/v1/nodes/gw-001/drain", changed),
        409,
        "confirm.token",
        "rate_per_s was 10",
    )
    assert refused["reason"] == "changed"
    other_node = problem(
        await acting.call("POST", "/v1/nodes/gw-002/drain", {**DRAIN_CONFIRM, "confirm": {"token": token}}),
        409,
        "confirm.token",
    )
    assert other_node["reason"] == "changed"
    assert node_state(acting, "gw-001") is NodeState.READY and node_state(acting, "gw-002") is NodeState.READY
    # A token is the holder's own: the admin cannot spend the operator's.
    by_admin = await acting.call(
        "POST", "/v1/nodes/gw-001/drain", {**DRAIN_CONFIRM, "confirm": {"token": token}}, role="admin"
    )
    assert problem(by_admin, 409, "confirm.token")["reason"] == "other_actor"
    applied = await acting.call(
        "POST", "/v1/nodes/gw-001/drain", {**DRAIN_CONFIRM, "confirm": {"token": token}}
    )
    assert applied.status_code == 202, applied.text


async def test_typed_needs_the_name_typed_back(acting: Acting) -> None:
    asked = problem(await acting.call("POST", "/v1/rollout", ROLLOUT_ABRUPT), 409, "confirm")
    assert asked["verdict"]["level"] == "typed" and asked["verdict"]["typed_expected"] == "calm-test"
    token = asked["confirm_token"]
    wrong = {**ROLLOUT_ABRUPT, "confirm": {"token": token, "typed": "calm-tset"}}
    problem(await acting.call("POST", "/v1/rollout", wrong), 422, "confirm.typed", "'calm-test'")
    missing = {**ROLLOUT_ABRUPT, "confirm": {"token": token}}
    problem(await acting.call("POST", "/v1/rollout", missing), 422, "confirm.typed")
    assert acting.simulation.rollout.state.value == "idle"
    right = {**ROLLOUT_ABRUPT, "confirm": {"token": token, "typed": "calm-test"}}
    started = await acting.call("POST", "/v1/rollout", right)
    assert started.status_code == 202, started.text
    assert acting.simulation.rollout.state.value == "running"
    # A rollout while one runs is bad input, named.
    again = problem(await acting.call("POST", "/v1/rollout", ROLLOUT_ABRUPT), 422, "rollout", "halt it first")
    assert "verdict" not in again
    halted = await acting.call("POST", "/v1/rollout/halt")
    assert halted.status_code == 200 and halted.json()["verdict"]["level"] == "ok"
    assert acting.simulation.rollout.state.value == "halted"
    # Halting it again changes nothing: said so, not "applied".
    problem(await acting.call("POST", "/v1/rollout/halt"), 422, "rollout", "nothing to halt")


async def test_resuming_with_a_node_down_asks_first_as_starting_does(acting: Acting) -> None:
    """Starting a rollout with a node down asked first (nodes_down); resuming a halted one with a node
    down was applied at once (found after nodes_down was added to the start)."""
    asked = problem(await acting.call("POST", "/v1/rollout", ROLLOUT_ABRUPT), 409, "confirm")
    typed = {"token": asked["confirm_token"], "typed": "calm-test"}
    assert (await acting.call("POST", "/v1/rollout", {**ROLLOUT_ABRUPT, "confirm": typed})).status_code == 202
    assert (await acting.call("POST", "/v1/rollout/halt")).status_code == 200
    killed = await acting.call(
        "POST", "/v1/sim/inject", {"event": "kill_nodes", "params": {"nodes": ["gw-007"]}}, "admin"
    )
    assert killed.status_code == 200, killed.text
    assert node_state(acting, "gw-007") is NodeState.DOWN
    resume = problem(await acting.call("POST", "/v1/rollout/resume"), 409, "confirm")
    assert resume["verdict"]["level"] == "confirm"
    failing = [c for c in resume["verdict"]["checks"] if not c["ok"]]
    assert [c["name"] for c in failing] == ["nodes_down"] and "gw-007" in failing[0]["why"]
    assert acting.simulation.rollout.state.value == "halted"  # asked, nothing applied
    confirmed = await acting.call(
        "POST", "/v1/rollout/resume", {"confirm": {"token": resume["confirm_token"]}}
    )
    assert confirmed.status_code == 200, confirmed.text
    assert acting.simulation.rollout.state.value == "running"


async def test_a_rollouts_verdict_counts_the_batches_the_simulator_runs(acting: Acting) -> None:
    """The verdict counted batches over the nodes in rotation; the fleet plans every node. With gw-007
    draining (out of rotation), a rollout of batches of 1 over 8 nodes was projected as 7 batches."""
    assert (await acting.call("POST", "/v1/nodes/gw-007/drain", DRAIN_OK)).status_code == 202
    body = {"batch_size": 1, "interval_s": 5, "mode": "drain"}
    tried = await acting.call("POST", "/v1/rollout", {**body, "dry_run": True})
    assert tried.status_code == 200, tried.text
    projected = tried.json()["verdict"]["projections"]["batches"]
    started = await acting.call("POST", "/v1/rollout", body)
    if started.status_code == 409:  # asked: answer it, the count is what this test is about
        started = await acting.call(
            "POST", "/v1/rollout", {**body, "confirm": {"token": started.json()["confirm_token"]}}
        )
    assert started.status_code == 202, started.text
    assert projected == acting.simulation.rollout.status().batches == 8


async def test_blocked_is_422_and_only_an_admin_with_a_reason_overrides(acting: Acting) -> None:
    blocked = problem(
        await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_BLOCKED), 422, None, "blocked"
    )
    assert blocked["verdict"]["level"] == "blocked" and blocked["type"].endswith("blocked")
    assert "confirm_token" not in blocked
    assert node_state(acting, "gw-001") is NodeState.READY
    forced = {**DRAIN_BLOCKED, "override_reason": "incident 42: node is corrupting sessions"}
    problem(await acting.call("POST", "/v1/nodes/gw-001/drain", forced), 403, "override_reason", "admin")
    assert node_state(acting, "gw-001") is NodeState.READY
    by_admin = await acting.call("POST", "/v1/nodes/gw-001/drain", forced, role="admin")
    assert by_admin.status_code == 202, by_admin.text
    assert by_admin.json()["overridden"] and node_state(acting, "gw-001") is NodeState.DRAINING
    last = acting.audit.tail(1)[0]
    assert last["outcome"] == "overridden" and last["actor"] == "admin-person"
    assert last["override_reason"].startswith("incident 42") and last["verdict"]["level"] == "blocked"
    assert audit_outcomes(acting) == ["blocked", "forbidden", "overridden"]


async def test_a_rollout_with_no_node_in_rotation_is_blocked_and_an_admin_may_force_it(
    acting: Acting,
) -> None:
    """With every node down, a start was bad input: "batch_size: expected 1 … 0 (the nodes in rotation)".
    It is a block on nodes_in_rotation now, named as the problem's field — forced, as any block, only by an
    admin with a reason (a rollout restarts every node, the ones down too)."""
    nodes = list(acting.simulation.node_ids)
    killed = await acting.call(
        "POST", "/v1/sim/inject", {"event": "kill_nodes", "params": {"nodes": nodes}}, "admin"
    )
    assert killed.status_code == 200, killed.text
    blocked = problem(
        await acting.call("POST", "/v1/rollout", ROLLOUT_ABRUPT), 422, "nodes_in_rotation", "blocked"
    )
    failing = [c for c in blocked["verdict"]["checks"] if not c["ok"] and c["level"] == "blocked"]
    assert [(c["name"], c["value"], c["limit"], c["bound"]) for c in failing] == [
        ("nodes_in_rotation", 0, 1, "min")
    ]
    assert acting.simulation.rollout.state.value == "idle"
    forced = {**ROLLOUT_ABRUPT, "override_reason": "every node crashed: the rollout ships the fix"}
    by_admin = await acting.call("POST", "/v1/rollout", forced, role="admin")
    assert by_admin.status_code == 202, by_admin.text
    assert by_admin.json()["overridden"] and acting.simulation.rollout.state.value == "running"


@pytest.mark.parametrize(
    ("path", "body", "field", "fragment"),
    [
        ("/v1/nodes/gw-001/drain", {**DRAIN_OK, "rate_per_s": -5}, "rate_per_s", "(0, 1000000000]"),
        ("/v1/nodes/gw-001/drain", {**DRAIN_OK, "rate_per_s": 0}, "rate_per_s", "greater than 0"),
        ("/v1/nodes/gw-001/drain", {**DRAIN_OK, "deadline_s": -1}, "deadline_s", "[0,"),
        ("/v1/nodes/gw-001/drain", {**DRAIN_OK, "hint_ms": [5000, 1000]}, "hint_ms", "min ≤ max"),
        ("/v1/nodes/gw-999/drain", DRAIN_OK, "node", "gw-999"),
        ("/v1/nodes/gw-001/undrain", None, "node", "draining or drained"),
        ("/v1/rollout/resume", None, "rollout", "nothing to resume — no rollout has started"),
        ("/v1/rollout", {**ROLLOUT_ABRUPT, "batch_size": 99}, "batch_size", "1 … 8"),
        ("/v1/rollout", {**ROLLOUT_ABRUPT, "interval_s": 0}, "interval_s", "greater than 0"),
        ("/v1/nodes/gw-001/drain", {"rate_per_s": 10}, "deadline_s", "required"),
    ],
)
async def test_bad_input_names_the_field_and_applies_nothing(
    acting: Acting, path, body, field, fragment
) -> None:
    answer = problem(await acting.call("POST", path, body), 422, field, fragment)
    assert all(node_state(acting, n) is NodeState.READY for n in acting.simulation.node_ids)
    assert acting.simulation.rollout.state.value == "idle"
    assert audit_outcomes(acting) == ["invalid"]
    # The audit log (the console's L) says what the caller was told: a body the model refused was recorded
    # as pydantic's error list ("[{'type': 'greater_than', 'loc': ('body', 'rate_per_s'), …").
    assert acting.audit.tail(1)[0]["detail"] == answer["detail"]


@pytest.mark.parametrize(
    ("method", "path", "body", "field", "fragments"),
    [
        # A typo of a control must not apply what was meant as a dry run (nor end up in the parameters).
        (
            "PUT",
            "/v1/admission",
            {"retry_after_s": [2, 40], "dryrun": True},
            "dryrun",
            ["unknown field", "did you mean 'dry_run'?"],
        ),
        (
            "PUT",
            "/v1/admission",
            {"retry_after_s": [2, 40], "bogus": 1},
            "bogus",
            ["allowed fields:", "nodes"],
        ),
        (
            "POST",
            "/v1/nodes/gw-001/drain",
            {**DRAIN_OK, "confirm": {"token": "t", "typo": "gw-001"}},
            "confirm.typo",
            ["unknown field", "token, typed"],
        ),
        (
            "POST",
            "/v1/rollout/halt",
            {"dry_run": True, "why": "x"},
            "why",
            ["dry_run, confirm, override_reason"],
        ),
        ("POST", "/v1/capacity", {"count": 1, "extra": 1}, "extra", ["unknown field"]),
        # The scenario's ranges: a Retry-After window within an hour, a hint window within an hour.
        (
            "PUT",
            "/v1/admission",
            {"retry_after_s": [1, 1e9]},
            "retry_after_s",
            ["1000000000", "0 ≤ min ≤ max ≤ 3600"],
        ),
        ("PUT", "/v1/admission", {"retry_after_s": [-1, 30]}, "retry_after_s", ["≤ 3600"]),
        ("PUT", "/v1/admission", {"retry_after_s": [40, 30]}, "retry_after_s", ["0 ≤ min ≤ max ≤ 3600"]),
        ("PUT", "/v1/admission", {"burst": 2_000_000_000}, "burst", ["(0, 1000000000]"]),
        (
            "POST",
            "/v1/nodes/gw-001/drain",
            {**DRAIN_OK, "hint_ms": [0, 3_600_001]},
            "hint_ms",
            ["0 ≤ min ≤ max ≤ 3600000"],
        ),
        # Literal types: a bool is not a number, a string is not a number, a count is whole.
        ("POST", "/v1/capacity", {"count": True}, "count", ["valid integer", "True", "[1, 10000]"]),
        ("POST", "/v1/capacity", {"count": "1"}, "count", ["valid integer"]),
        ("POST", "/v1/capacity", {"count": 1.5}, "count", ["1.5"]),
        ("PUT", "/v1/admission", {"rate_per_s": "100"}, "rate_per_s", ["valid number", "'100'"]),
        ("PUT", "/v1/admission", {"max_connections": True}, "max_connections", ["valid integer"]),
        ("PUT", "/v1/admission", {"dry_run": "true"}, "dry_run", ["boolean"]),
        ("POST", "/v1/nodes/gw-001/drain", {**DRAIN_OK, "deadline_s": "600"}, "deadline_s", ["valid number"]),
        ("POST", "/v1/nodes/gw-001/drain", {**DRAIN_OK, "hint_ms": ["1000", 30000]}, "hint_ms", ["integer"]),
        ("POST", "/v1/rollout", {**ROLLOUT_ABRUPT, "batch_size": True}, "batch_size", ["valid integer"]),
        # No body at all: it said "body: Field required", not what a body holds.
        (
            "POST",
            "/v1/nodes/gw-001/drain",
            None,
            "body",
            ["expected a JSON object with rate_per_s, deadline_s, hint_ms"],
        ),
    ],
)
async def test_unknown_fields_ranges_and_loose_types_are_refused_and_apply_nothing(
    acting: Acting, method, path, body, field, fragments
) -> None:
    answer = problem(await acting.call(method, path, body), 422, field, *fragments)
    assert all(node_state(acting, n) is NodeState.READY for n in acting.simulation.node_ids)
    assert acting.simulation.admission.retry_after_s == (1.0, 30.0)
    assert acting.simulation.rollout.state.value == "idle"
    assert audit_outcomes(acting) == ["invalid"]
    assert acting.audit.tail(1)[0]["detail"] == answer["detail"]


@pytest.mark.parametrize(
    ("method", "path", "body", "field", "fragment"),
    [
        (
            "POST",
            "/v1/nodes/gw-001/drain",
            {**DRAIN_OK, "hint_ms": [1000]},
            "hint_ms",
            "0 ≤ min ≤ max ≤ 3600000",
        ),
        ("PUT", "/v1/admission", {"retry_after_s": [5]}, "retry_after_s", "0 ≤ min ≤ max ≤ 3600"),
    ],
)
async def test_a_window_short_of_its_max_says_so_not_field_required(
    acting: Acting, method, path, body, field, fragment
) -> None:
    """`hint_ms: [1000]` read "hint_ms: Field required (got [1000])": the field was there, its max was not."""
    detail = problem(await acting.call(method, path, body), 422, field, fragment, "max is missing")["detail"]
    assert "Field required" not in detail
    assert audit_outcomes(acting) == ["invalid"]


async def test_a_whole_number_may_come_as_a_float(acting: Acting) -> None:
    # What many JSON encoders write for 2 (the scenario loader takes 1e6 the same way); 1.5 is refused.
    response = await acting.call("POST", "/v1/capacity", {"count": 2.0, "dry_run": True})
    assert response.status_code == 200, response.text
    assert response.json()["dry_run"] is True and not response.json()["applied"]


async def test_admission_rate_names_admission_words_not_a_drains(acting: Acting) -> None:
    # Both bodies have a rate_per_s; each range names its own meaning.
    admission = problem(await acting.call("PUT", "/v1/admission", {"rate_per_s": -1}), 422, "rate_per_s")
    assert "closes" not in admission["detail"] and "admitted per second" in admission["detail"]
    drain = problem(await acting.call("POST", "/v1/nodes/gw-001/drain", {**DRAIN_OK, "rate_per_s": -1}), 422)
    assert "closes per second" in drain["detail"]


async def test_a_drain_of_a_draining_node_is_bad_input(acting: Acting) -> None:
    assert (await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_OK)).status_code == 202
    problem(await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_OK), 422, "node", "it is draining")
    undrained = await acting.call("POST", "/v1/nodes/gw-001/undrain", {})
    assert undrained.status_code == 200 and node_state(acting, "gw-001") is NodeState.READY


async def test_an_idempotency_key_makes_a_retry_safe(acting: Acting) -> None:
    key = {"Idempotency-Key": "retry-me-1"}
    first = await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_OK, **key)
    again = await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_OK, **key)
    assert first.status_code == again.status_code == 202
    assert first.json() == again.json()  # the same answer, audit_seq included: not applied twice
    assert audit_outcomes(acting) == ["applied", "replayed"]
    other = await acting.call("POST", "/v1/nodes/gw-002/drain", DRAIN_OK, **key)
    body = problem(other, 422, "idempotency-key", "different request")
    assert body["type"] == "urn:stormdeck:problem:invalid"  # as every bad input's (was about:blank)
    # Its audit record names the key it reused (was null: which earlier request it collided with was lost).
    refused = acting.audit.tail(1)[0]
    assert (refused["outcome"], refused["idempotency_key"]) == ("invalid", "retry-me-1")
    assert node_state(acting, "gw-002") is NodeState.READY
    # Another holder's key space is their own.
    admins = await acting.call("POST", "/v1/nodes/gw-002/drain", DRAIN_OK, role="admin", **key)
    assert admins.status_code == 202


async def test_the_audit_log_is_served_newest_last_and_verifies(acting: Acting) -> None:
    await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_OK)
    await acting.call("PUT", "/v1/admission", ADMISSION_CONFIRM)
    await acting.call("POST", "/v1/rollout/halt", role="viewer")
    response = await acting.call("GET", "/v1/audit", role="viewer")
    assert response.status_code == 200
    page = response.json()
    assert page["total"] == 3
    assert [r["seq"] for r in page["records"]] == [1, 2, 3]
    assert [r["action"] for r in page["records"]] == ["drain", "admission", "rollout_halt"]
    assert [r["actor"] for r in page["records"]] == ["operator-person", "operator-person", "viewer-person"]
    checks = page["records"][0]["verdict"]["checks"]
    assert {"name", "value", "limit", "ok", "why"} <= set(checks[0])
    limited = (await acting.call("GET", "/v1/audit?limit=1", role="viewer")).json()
    assert [r["seq"] for r in limited["records"]] == [3]
    problem(await acting.call("GET", "/v1/audit?limit=0", role="viewer"), 422, "limit")
    assert verify_file(acting.audit.path).intact


async def test_the_drain_plan_passes_its_own_guards(acting: Acting) -> None:
    plan = (await acting.call("GET", "/v1/nodes/gw-003/drain-plan", role="viewer")).json()
    assert plan["nodes"] == ["gw-003"] and plan["rate_per_s"] > 0
    # The CPU margin it planned with under the pause line, for the console and the CLI to say.
    assert plan["cpu_margin_pct"] == Thresholds().drain_plan_cpu_margin_pct > 0
    # The fleet's room, for the console's no-rate remedy to name adding capacity only where it can.
    assert plan["room_nodes"] == acting.simulation.room_nodes() > 0
    # The admission limit under the nodes' ceiling that sets spare admission: none on this fleet (null).
    assert "admission_limit_per_s" in plan and plan["admission_limit_per_s"] is None
    request = {k: v for k, v in plan["request"].items() if k in ("rate_per_s", "deadline_s", "hint_ms")}
    judged = (await acting.call("POST", "/v1/nodes/gw-003/drain", {**request, "dry_run": True})).json()
    failed = {c["name"] for c in judged["verdict"]["checks"] if not c["ok"]}
    assert not failed & {"drain_pacing_per_s", "survivor_cpu_vs_pause_pct", "hint_window_ms"}
    problem(await acting.call("GET", "/v1/nodes/gw-999/drain-plan", role="viewer"), 422, "node")


def test_the_drain_plans_schema_names_every_limit_and_keeps_the_set_open(acting: Acting) -> None:
    """`limited_by` gained `no_survivors` (the last node in rotation): the schema names every value the
    planner says, and stays a string — an older console reads a newer limit as its name, not a 5xx."""
    schema = acting.server.app.openapi()["components"]["schemas"]["DrainPlanResult"]
    limited_by = schema["properties"]["limited_by"]
    assert limited_by["type"] == "string" and "enum" not in limited_by
    assert all(f"`{name}`" in limited_by["description"] for name in LIMITED_BY), limited_by


async def test_the_capacity_record_is_what_the_guards_judge_with(acting: Acting) -> None:
    record = (await acting.call("GET", "/v1/capacity", role="viewer")).json()
    capacity = acting.backend.capacity()
    assert record == {
        "handshakes_per_s": capacity.handshakes_per_s,
        "cpu_pct_per_handshake_per_s": capacity.cpu_pct_per_handshake_per_s,
        "connections_per_node": capacity.connections_per_node,
        "steady_inflow_per_s": capacity.steady_inflow_per_s,
        "max_nodes": capacity.max_nodes,
        "provisioning_s": capacity.provisioning_s,
        "batch_drain_rate_per_s": capacity.batch_drain_rate_per_s,
        "batch_drain_deadline_s": capacity.batch_drain_deadline_s,
        "restart_s": capacity.restart_s,
        "hint_max_ms": acting.simulation.hint_max_ms,
        "handshakes_planned": False,  # the simulator knows its nodes' ceiling
        # What holding a connection and refusing one cost: the admission guard's CPU line.
        "cpu_pct_per_connection": capacity.cpu_pct_per_connection,
        "cpu_pct_per_reject_per_s": capacity.cpu_pct_per_reject_per_s,
    }
    assert record["max_nodes"] > 0 and record["connections_per_node"] > 0


async def test_a_hint_beyond_the_simulators_reach_is_refused_at_the_first_answer(acting: Acting) -> None:
    """Found with two consoles on graceful-drain: a hint the engine cannot give was judged typed, and
    refused only after the operator typed the node's name. Now a dry run says it, and nothing is applied."""
    reach = acting.simulation.hint_max_ms
    beyond = {**DRAIN_OK, "hint_ms": [1000, reach + 1], "dry_run": True}
    problem(await acting.call("POST", "/v1/nodes/gw-001/drain", beyond), 422, "hint_ms", f"max ≤ {reach} ms")
    del beyond["dry_run"]
    problem(await acting.call("POST", "/v1/nodes/gw-001/drain", beyond), 422, "hint_ms", f"max ≤ {reach} ms")
    assert node_state(acting, "gw-001") is NodeState.READY


async def test_a_rollout_dry_run_judges_the_batch_drain_the_fleet_applies(acting: Acting) -> None:
    """Found in review: the guard judged a batch drained over its 600 s window (20 000 clients on 8 nodes:
    a batch of 2 was ~17 closes/s, and 2 × 600 s + intervals) while the simulator drains each node at 833/s."""
    body = {"batch_size": 2, "interval_s": 5, "mode": "drain", "dry_run": True}
    verdict = (await acting.call("POST", "/v1/rollout", body)).json()["verdict"]
    pacing = next(c for c in verdict["checks"] if c["name"] == "drain_pacing_per_s")
    biggest = sorted(n["connections"] for n in (await acting.call("GET", "/v1/fleet")).json()["nodes"])[-2:]
    assert pacing["value"] == pytest.approx(sum(min(833.0, c) for c in biggest), rel=0.05)
    assert verdict["projections"]["restart_s"] == acting.simulation.scenario.nodes.restart_s
    assert verdict["projections"]["duration_s"] < 600


async def test_a_per_node_admission_change_is_not_the_fleets(acting: Acting) -> None:
    """Found in review: the simulator showed a per-node change as the fleet's admission (and gave it to
    added nodes), as the controller did before its fix. GET /v1/fleet shows the fleet-wide setting."""
    fleet_before = (await acting.call("GET", "/v1/fleet", role="viewer")).json()["admission"]
    one_node = {"rate_per_s": 50, "retry_after_s": [1, 30], "nodes": ["gw-002"]}
    applied = await acting.call("PUT", "/v1/admission", one_node)
    assert applied.status_code == 200, applied.text
    fleet = (await acting.call("GET", "/v1/fleet", role="viewer")).json()
    assert fleet["admission"] == fleet_before and fleet["admission"]["nodes"] is None
    assert acting.simulation.admission.rate_per_s is None


async def test_a_per_node_retry_after_is_refused_by_a_simulated_fleet_dry_run_or_not(acting: Acting) -> None:
    """The simulator's Retry-After window is fleet-wide (its kernel draws from one window): a per-node change
    of it would have changed every node's. Refused before the guards, dry run too, naming the field."""
    one_node = {"rate_per_s": 50, "retry_after_s": [2, 40], "nodes": ["gw-002"]}
    for body in ({**one_node, "dry_run": True}, one_node):
        refused = problem(
            await acting.call("PUT", "/v1/admission", body), 422, "retry_after_s", "[2.0, 40.0]", "[1, 30]"
        )
        assert refused["type"].endswith("refused-by-fleet"), refused
    assert acting.simulation.admission.retry_after_s == (1.0, 30.0)
    assert audit_outcomes(acting) == ["refused_by_fleet", "refused_by_fleet"]


async def test_a_fleet_refusal_after_the_guards_is_recorded_and_applies_nothing(
    acting: Acting, monkeypatch
) -> None:
    # A fleet may refuse what the guards allowed, when it applies (a real node's admin API says no; the
    # simulator's wheel reach is in the capacity record now, so the guards see it first).
    def refuse(node_id, rate_per_s, deadline_s, hint_ms, then_restart=False):
        raise InputError("hint_ms", list(hint_ms), "what this fleet's nodes accept")

    monkeypatch.setattr(acting.simulation, "drain", refuse)
    response = await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_OK)
    body = problem(response, 422, "hint_ms", "nothing applied")
    assert body["type"].endswith("refused-by-fleet")
    assert node_state(acting, "gw-001") is NodeState.READY
    first, second = acting.audit.tail(2)
    assert first["outcome"] == "applied" and second["outcome"] == "refused_by_fleet"
    assert second["supersedes"] == first["seq"] and body["audit_seq"] == second["seq"]


async def test_no_action_is_applied_without_its_record(acting: Acting, monkeypatch) -> None:
    def full_disk(record):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(acting.audit, "append", full_disk)
    response = await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_OK)
    problem(response, 500, None, "nothing was applied")
    assert node_state(acting, "gw-001") is NodeState.READY


async def test_concurrent_actions_are_judged_one_after_the_other(tmp_path) -> None:
    import asyncio

    from tests.actions.conftest import start_acting

    # One drain at a time allowed; frames every 10 s, so no frame shows the first drain before the second
    # is judged: only the live state can.
    acting = start_acting(tmp_path, frame_interval_s=10.0, thresholds=Thresholds(max_concurrent_drains=1))
    try:
        answers = await asyncio.gather(
            *(acting.call("POST", f"/v1/nodes/gw-00{i}/drain", DRAIN_OK) for i in (1, 2, 3))
        )
    finally:
        acting.server.stop()
        acting.audit.close()
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [202, 409, 409], [a.text for a in answers]
    for answer in answers:
        if answer.status_code == 409:
            failed = [c["name"] for c in answer.json()["verdict"]["checks"] if not c["ok"]]
            assert failed == ["concurrent_drains"]
    draining = [n for n in ("gw-001", "gw-002", "gw-003") if node_state(acting, n) is NodeState.DRAINING]
    assert len(draining) == 1


async def test_an_action_applied_while_the_clock_stands_still_shows_at_once(acting: Acting) -> None:
    """A paused drill: the admission was applied (200) but GET /v1/fleet and the frames kept the old one
    until the clock ran again."""
    viewer = {"Authorization": "Bearer viewer-token-0123456789"}
    assert (await acting.call("POST", "/v1/sim/clock", {"paused": True})).status_code == 200
    async with acting.client() as client:

        async def fleet_after(seq: int) -> dict:
            for _ in range(500):  # frames leave every 50 ms here
                fleet = (await client.get("/v1/fleet", headers=viewer)).json()
                if fleet["seq"] > seq:
                    return fleet
            raise AssertionError(f"no frame after seq {seq}")

        before = (await client.get("/v1/fleet", headers=viewer)).json()
        paused = await fleet_after(before["seq"])  # a frame taken after the pause
        response = await acting.call("PUT", "/v1/admission", {"retry_after_s": [2, 40]})
        assert response.status_code == 200 and response.json()["applied"], response.text
        drained = await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_OK)
        assert drained.status_code == 202, drained.text
        fleet = await fleet_after((await client.get("/v1/fleet", headers=viewer)).json()["seq"])
    assert fleet["time_s"] == paused["time_s"]  # still paused
    assert fleet["admission"]["retry_after_s"] == [2.0, 40.0]
    assert next(n for n in fleet["nodes"] if n["id"] == "gw-001")["state"] == "draining"


async def test_a_scheduled_rollout_halts_over_http_and_a_halt_the_fleet_refuses_says_the_guards_words(
    tmp_path,
) -> None:
    """A real server over a scenario whose rollout starts at 3000 s: the snapshot says it is scheduled
    (`starts_at_s`, `state` still `running`); a halt lands between the server's judge and its apply (the
    scenario's timeline here, another operator's in life): the fleet's own refusal said "'halted' is not
    allowed; …" — a halt the simulator could not do was answered `applied`. It says the guard's words,
    as the guard itself says them to the next halt."""
    from console.guards.rollout import nothing_to
    from console.protocol import ActionKind, RolloutStatus
    from tests.actions.conftest import calm_simulation, start_acting

    rollout = {"enabled": True, "start_at_s": 3000, "batch_size": 2, "interval_s": 30, "mode": "abrupt"}
    acting = start_acting(tmp_path, simulation=calm_simulation(rollout=rollout))
    try:
        fleet = await acting.call("GET", "/v1/fleet")
        said = RolloutStatus.model_validate(fleet.json()["rollout"])
        assert said.state.value == "running" and said.starts_at_s == 3000 and said.state_said() == "scheduled"
        backend, apply = acting.backend, acting.backend.apply

        async def halted_first(action) -> None:  # type: ignore[no-untyped-def]
            await backend.exclusive(
                acting.simulation.rollout.halt_if_under_way, "halted by the scenario's timeline"
            )
            await apply(action)

        backend.apply = halted_first  # type: ignore[method-assign]
        refused = problem(await acting.call("POST", "/v1/rollout/halt"), 422, "rollout")
        backend.apply = apply  # type: ignore[method-assign]
        guard = problem(await acting.call("POST", "/v1/rollout/halt"), 422, "rollout")
        words = nothing_to(ActionKind.ROLLOUT_HALT, acting.simulation.rollout.status())
        assert words is not None and words.startswith("nothing to halt — the rollout is halted already")
        assert guard["detail"] == f"rollout halt: {words}"
        assert refused["detail"] == f"rollout halt: {words}; nothing applied"
        assert refused["type"].endswith("refused-by-fleet")
        assert acting.simulation.rollout.status().pause_reason == (
            "halted by the scenario's timeline before its start: it does not start; resume starts it"
        )
    finally:
        acting.server.stop()
        acting.audit.close()


async def test_resuming_under_the_headroom_budget_is_blocked_as_starting_is(tmp_path) -> None:
    """Reviewer, graceful-drain at 30.7 %: `rollout start` was blocked on headroom_pct, `rollout resume`
    only asked (confirm) and `--yes` resumed it. Here a scheduled rollout halted before its start, at
    27.5 % (8 × 50 k holding 290 k) with every node in rotation: resumed, it restarts every node as a start
    would — blocked as the start is, on the same check, and only an admin with a reason forces it."""
    from tests.actions.conftest import calm_simulation, start_acting

    rollout = {"enabled": True, "start_at_s": 3000, "batch_size": 2, "interval_s": 30, "mode": "drain"}
    simulation = calm_simulation(clients={"count": 290_000}, rollout=rollout)
    acting = start_acting(tmp_path, simulation=simulation)
    try:
        assert (await acting.call("POST", "/v1/rollout/halt")).status_code == 200
        body = {"batch_size": 1, "interval_s": 30, "mode": "drain", "dry_run": True}
        start = (await acting.call("POST", "/v1/rollout", body)).json()["verdict"]
        resume = problem(await acting.call("POST", "/v1/rollout/resume"), 422, "headroom_pct", "blocked")
        assert resume["verdict"]["level"] == "blocked" and "confirm_token" not in resume

        def headroom(verdict: dict) -> tuple:
            check = next(c for c in verdict["checks"] if c["name"] == "headroom_pct")
            return check["ok"], check["level"], check["value"], check["limit"]

        assert headroom(resume["verdict"]) == headroom(start) == (False, "blocked", 27.5, 35.0)
        assert acting.simulation.rollout.state.value == "halted"  # blocked: nothing applied
        forced = {"override_reason": "change 77: the fix ships in this rollout"}
        problem(await acting.call("POST", "/v1/rollout/resume", forced), 403, "override_reason", "admin")
        by_admin = await acting.call("POST", "/v1/rollout/resume", forced, role="admin")
        assert by_admin.status_code == 200, by_admin.text
        assert by_admin.json()["overridden"] and acting.simulation.rollout.state.value == "running"
    finally:
        acting.server.stop()
        acting.audit.close()


async def test_a_start_over_a_halted_rollout_asks_first_and_the_simulator_replaces_it(acting: Acting) -> None:
    """Starting a rollout while one is halted drops the halted one's remaining batches; judged as if none
    existed, it was applied unasked. It asks first (halted_rollout), and confirmed the simulator runs the
    new rollout from its first batch."""
    first = {"batch_size": 1, "interval_s": 600, "mode": "drain"}
    started = await acting.call("POST", "/v1/rollout", first)
    assert started.status_code == 202, started.text
    await wait_for(lambda: acting.simulation.rollout.batch >= 1, what="its first batch")
    assert (await acting.call("POST", "/v1/rollout/halt")).status_code == 200
    halted = acting.simulation.rollout.status()
    assert (halted.state.value, halted.batches) == ("halted", 8) and 1 <= halted.batch < 8
    second = {"batch_size": 2, "interval_s": 30, "mode": "drain"}
    asked = problem(await acting.call("POST", "/v1/rollout", second), 409, "confirm")
    failing = [c for c in asked["verdict"]["checks"] if not c["ok"]]
    assert [(c["name"], c["level"]) for c in failing] == [("halted_rollout", "confirm")]
    assert failing[0]["value"] == f"batch {halted.batch} of 8"
    assert f"replaces the rollout halted at batch {halted.batch} of 8" in failing[0]["why"]
    assert acting.simulation.rollout.status().batches == 8  # asked: the halted one is still there
    confirmed = await acting.call(
        "POST", "/v1/rollout", {**second, "confirm": {"token": asked["confirm_token"]}}
    )
    assert confirmed.status_code == 202, confirmed.text
    replaced = acting.simulation.rollout.status()
    assert (replaced.state.value, replaced.batch_size, replaced.batches) == ("running", 2, 4)
