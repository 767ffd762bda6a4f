"""An applied action is told on the stream — who, what, its audit record — to every console and recorder."""

from __future__ import annotations

from typing import Any

from websockets.asyncio.client import connect

from tests.actions.conftest import TOKENS, Acting
from tests.actions.test_api import DRAIN_BLOCKED, DRAIN_OK
from tests.server.conftest import receive_until


def is_action(message: dict[str, Any]) -> bool:
    return message["type"] == "event" and message.get("kind") == "action"


async def test_a_colleagues_drain_reaches_every_stream_with_its_actor(acting: Acting) -> None:
    """Found with two operators: another console saw gw-001 start draining and not who did it, and a
    `stormdeck record` recording held no action at all (its report said nothing was done)."""
    ws_url = acting.url.replace("http://", "ws://") + "/v1/stream"
    async with connect(ws_url, additional_headers={"Authorization": f"Bearer {TOKENS['viewer']}"}) as ws:
        await receive_until(ws, lambda m: m["type"] == "frame")
        dry = await acting.call("POST", "/v1/nodes/gw-002/drain", {**DRAIN_OK, "dry_run": True})
        blocked = await acting.call("POST", "/v1/nodes/gw-003/drain", DRAIN_BLOCKED)
        before = (await acting.call("GET", "/v1/fleet", role="viewer")).json()["time_s"]
        applied = await acting.call("POST", "/v1/nodes/gw-001/drain", DRAIN_OK)
        assert (dry.status_code, blocked.status_code, applied.status_code) == (200, 422, 202)
        seen = await receive_until(ws, is_action)
        frame = (await receive_until(ws, lambda m: m["type"] == "frame"))[-1]
    told = [m for m in seen if is_action(m)]
    assert len(told) == 1  # the dry run and the blocked drain changed nothing: not told
    event = told[0]
    assert event["node"] == "gw-001"
    # Numbers as an operator writes them, not 10.0 and 600.0 (found in the user pass).
    assert event["message"] == (
        "operator-person (operator): drain gw-001 (rate_per_s=10, deadline_s=600, hint_ms=[1000, 30000])"
    )
    assert event["data"]["actor"] == "operator-person" and event["data"]["role"] == "operator"
    assert (event["data"]["action"], event["data"]["outcome"]) == ("drain", "applied")
    assert event["data"]["parameters"]["rate_per_s"] == DRAIN_OK["rate_per_s"]
    assert event["data"]["audit_seq"] == applied.json()["audit_seq"]
    assert event["seq"] == frame["seq"]  # told with the next frame, before it …
    # … stamped with the fleet second it was judged and applied in, not the next frame's: the report's
    # "halted +130 s after the criterion" was +120 s at ×10 (found in the user pass). (A tick may fall
    # between the verdict and the frame that tells it: a bound, not the frame before.)
    assert before <= event["time_s"] < frame["time_s"]
