"""The fleet API judges admission by the calm baseline it learns from the frames it publishes — the attempts
gauge's "steady" — not by the second it is asked in (found in review: a fleet of held clients, no attempts in
the second asked, passed 0.001/s a node as ok: "admission_rate_per_s 0.001 ≥ 0 pass")."""

from __future__ import annotations

from websockets.asyncio.client import connect

from console.guards import Thresholds
from tests.actions.conftest import TOKENS, Acting
from tests.server.conftest import receive_until


async def test_a_quiet_fleet_is_judged_by_the_steady_rate_learned_not_the_second_asked(
    acting: Acting,
) -> None:
    """calm-test holds its 20 000 clients with no churn and no lifetimes: no steady inflow in the capacity
    record, and 0 attempts every second. Once the baseline is learned it reads the reconnect floor, as the
    console's gauge does ("steady (10/s)"), and 0.001/s a node must have the fleet's name typed."""
    t = Thresholds()
    assert acting.backend.capacity().steady_inflow_per_s == 0
    ws_url = acting.url.replace("http://", "ws://") + "/v1/stream"
    async with connect(ws_url, additional_headers={"Authorization": f"Bearer {TOKENS['viewer']}"}) as ws:
        # The baseline is learned over baseline_learn_s fleet seconds, and closed by the first one past it.
        await receive_until(ws, lambda m: m["type"] == "frame" and m["time_s"] > t.baseline_learn_s + 2)
    said = await acting.call("PUT", "/v1/admission", {"rate_per_s": 0.001, "dry_run": True})
    assert said.status_code == 200, said.text
    verdict = said.json()["verdict"]
    rate = next(c for c in verdict["checks"] if c["name"] == "admission_rate_per_s")
    assert verdict["projections"]["steady_inflow_per_s"] == t.reconnect_floor_per_s, verdict["projections"]
    assert (verdict["level"], rate["level"], rate["ok"]) == ("typed", "typed", False), rate
    assert rate["limit"] == t.reconnect_floor_per_s / 8  # the 8 nodes' share, a node
    assert acting.simulation.admission.rate_per_s is None  # a dry run: nothing applied
