"""Drain a node of a running simulation through the API and watch it empty at the requested rate."""

from __future__ import annotations

import itertools
import json

from websockets.asyncio.client import connect

from tests.actions.conftest import TOKENS, Acting

RATE_PER_S = 40.0
SECONDS = 25


async def test_a_drained_node_loses_connections_at_the_requested_rate(acting: Acting) -> None:
    ws_url = acting.url.replace("http://", "ws://") + "/v1/stream"
    async with connect(ws_url, additional_headers={"Authorization": f"Bearer {TOKENS['viewer']}"}) as ws:
        response = await acting.call(
            "POST",
            "/v1/nodes/gw-005/drain",
            {"rate_per_s": RATE_PER_S, "deadline_s": 600, "hint_ms": [1000, 20000]},
        )
        assert response.status_code == 202, response.text
        samples: list[tuple[float, int]] = []  # (fleet time, connections of gw-005) while it drains
        while len(samples) < SECONDS:
            message = json.loads(await ws.recv())
            if message["type"] != "frame":
                continue
            node = next(n for n in message["nodes"] if n["id"] == "gw-005")
            if node["state"] == "draining":
                assert node["drain"]["rate_per_s"] == RATE_PER_S
                samples.append((message["time_s"], node["connections"]))
    (t0, c0), (t1, c1) = samples[0], samples[-1]
    observed_per_s = (c0 - c1) / (t1 - t0)
    assert abs(observed_per_s - RATE_PER_S) <= 0.1 * RATE_PER_S, (observed_per_s, samples)
    # And the node took no new connections meanwhile: every second's fall is the drain's.
    assert all(b[1] <= a[1] for a, b in itertools.pairwise(samples))
