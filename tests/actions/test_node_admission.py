"""Per-node admission over the fleet API: what each node runs is what the snapshot, the stream's frames and
the node's detail say (found in review: a `nodes` change ran on its nodes and showed nowhere)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from tests.actions.conftest import TOKENS, Acting
from tests.server.conftest import receive_until


async def applied(acting: Acting, ws: ClientConnection, body: dict[str, Any]) -> dict[str, Any]:
    """`PUT /v1/admission` applied (confirmed, the fleet's name typed, where the verdict asks), and the
    first frame after it: the one the stream tells it with."""
    answer = await acting.call("PUT", "/v1/admission", body)
    if answer.status_code == 409:
        said = answer.json()
        confirm = {"token": said["confirm_token"], "typed": said["verdict"].get("typed_expected")}
        answer = await acting.call("PUT", "/v1/admission", {**body, "confirm": confirm})
    assert answer.status_code == 200 and answer.json()["applied"], answer.text
    audit_seq = answer.json()["audit_seq"]
    await receive_until(ws, lambda m: m.get("kind") == "action" and m["data"]["audit_seq"] == audit_seq)
    return (await receive_until(ws, lambda m: m["type"] == "frame"))[-1]


@asynccontextmanager
async def stream(acting: Acting) -> AsyncIterator[ClientConnection]:
    ws_url = acting.url.replace("http://", "ws://") + "/v1/stream"
    async with connect(ws_url, additional_headers={"Authorization": f"Bearer {TOKENS['viewer']}"}) as ws:
        await receive_until(ws, lambda m: m["type"] == "frame")
        yield ws


async def fleet(acting: Acting) -> dict[str, Any]:
    return (await acting.call("GET", "/v1/fleet", role="viewer")).json()


def settings(said: dict[str, Any]) -> tuple:
    return (said["rate_per_s"], said["burst"], said["max_connections"], said["nodes"])


async def test_admission_set_on_two_node_subsets_shows_both_in_the_snapshot_frames_and_detail(
    acting: Acting,
) -> None:
    async with stream(acting) as ws:
        await applied(acting, ws, {"rate_per_s": 500, "burst": 50, "nodes": ["gw-001", "gw-002"]})
        frame = await applied(acting, ws, {"rate_per_s": 800, "max_connections": 40_000, "nodes": ["gw-005"]})
        snapshot = await fleet(acting)
        assert settings(snapshot["admission"]) == (None, None, None, None)  # the fleet's: what the rest run
        shown = [settings(override) for override in snapshot["admission_overrides"]]
        assert shown == [(500, 50, None, ["gw-001", "gw-002"]), (800, None, 40_000, ["gw-005"])]
        assert [settings(override) for override in frame["admission_overrides"]] == shown

        for node_id, rate in (("gw-001", 500), ("gw-005", 800), ("gw-000", None)):
            detail = (await acting.call("GET", f"/v1/nodes/{node_id}?history_frames=0", role="viewer")).json()
            assert detail["admission"]["rate_per_s"] == rate, (node_id, detail["admission"])
            assert detail["admission"]["nodes"] is None  # this node's settings, not whom they cover

        # A later change of one of them moves it to the other group; a fleet-wide change ends every override.
        frame = await applied(acting, ws, {"rate_per_s": 800, "max_connections": 40_000, "nodes": ["gw-002"]})
        assert [settings(override) for override in frame["admission_overrides"]] == [
            (500, 50, None, ["gw-001"]),
            (800, None, 40_000, ["gw-002", "gw-005"]),
        ]
        frame = await applied(acting, ws, {"rate_per_s": 900, "burst": 90})
        assert settings(frame["admission"]) == (900, 90, None, None)
        # Left out while every node runs the fleet's: frames stay the size they were.
        assert "admission_overrides" not in frame and "admission_overrides" not in await fleet(acting)


async def test_a_fleet_wide_change_then_one_node_shows_that_node_apart(acting: Acting) -> None:
    async with stream(acting) as ws:
        await applied(acting, ws, {"rate_per_s": 900, "burst": 90})
        frame = await applied(acting, ws, {"rate_per_s": 500, "burst": 50, "nodes": ["gw-003"]})
        assert settings(frame["admission"]) == (900, 90, None, None)
        assert [settings(o) for o in frame["admission_overrides"]] == [(500, 50, None, ["gw-003"])]
        # Set back to what the fleet runs, the node is no longer apart from it.
        frame = await applied(acting, ws, {"rate_per_s": 900, "burst": 90, "nodes": ["gw-003"]})
        assert "admission_overrides" not in frame


async def test_an_unknown_node_is_refused_naming_it_and_nothing_is_applied(acting: Acting) -> None:
    """The answer the console's admission form and `act … --nodes` both get: 422 naming `nodes`, every
    unknown id and the fleet's ids, the nearest named; one record (invalid), no override anywhere."""
    body = {"rate_per_s": 30, "burst": 5, "nodes": ["gw-001", "gw-01", "zz"]}
    for confirm in ({}, {"confirm": {"token": "x", "typed": "calm-test"}}, {"dry_run": True}):
        answer = await acting.call("PUT", "/v1/admission", {**body, **confirm})
        assert answer.status_code == 422, answer.text
        said = answer.json()
        assert said["field"] == "nodes"
        assert said["detail"] == (
            "nodes: ['gw-01', 'zz'] is not allowed; expected nodes of fleet 'calm-test': gw-000 … gw-007 "
            "(8 nodes); nearest to 'gw-01': gw-001"
        )
    assert [r["outcome"] for r in acting.audit.tail(100)] == ["invalid"] * 3
    snapshot = await fleet(acting)
    assert snapshot["admission"]["rate_per_s"] is None and "admission_overrides" not in snapshot
