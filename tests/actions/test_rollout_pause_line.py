"""A rollout start on the simulator, through the fleet API, judged against the pause line it asks for —
reproducing what a real loopback fleet showed (`--pause-cpu 15` over nodes at 18.2 %: `verdict: ok`, then
"paused: b CPU 18 % > 15 %" at once) — and the paused rollout's position before its first batch."""

from __future__ import annotations

import asyncio

from console.protocol import FleetSnapshot
from tests.actions.conftest import Acting


async def _snapshot(acting: Acting) -> FleetSnapshot:
    answer = await acting.call("GET", "/v1/fleet", role="viewer")
    assert answer.status_code == 200, answer.text
    return FleetSnapshot.model_validate(answer.json())


async def test_a_start_under_the_fleets_cpu_is_blocked_in_its_own_terms_and_forced_pauses_before_batch_1(
    acting: Acting,
) -> None:
    snapshot = await _snapshot(acting)
    hottest = max(node.cpu_pct for node in snapshot.nodes)
    assert hottest > 1.0, hottest  # a line under it must be a valid pause_cpu_pct (> 0)
    line = round(hottest / 2, 1)
    body = {"batch_size": 2, "interval_s": 20, "mode": "drain", "pause_cpu_pct": line}
    answer = await acting.call("POST", "/v1/rollout", {**body, "dry_run": True})
    assert answer.status_code == 200 and answer.json()["verdict"]["level"] == "blocked", answer.text
    cpu = next(c for c in answer.json()["verdict"]["checks"] if c["name"] == "cpu_now_pct")
    assert (cpu["limit"], cpu["ok"]) == (line, False), cpu
    assert f"{line:g} % (pause_cpu_pct)" in cpu["why"] and "pause at once" in cpu["why"], cpu["why"]
    # Forced by an admin, the simulator pauses before its first batch: said so, not "batch 0 of 4".
    forced = {**body, "override_reason": "the pause line test"}
    started = await acting.call("POST", "/v1/rollout", forced, role="admin")
    assert started.status_code == 202, started.text
    # The start is applied at once, but /v1/fleet serves the last published frame: until the next tick it
    # still shows the rollout idle, then running until the simulation's first second pauses it.
    for _ in range(200):
        rollout = (await _snapshot(acting)).rollout
        if rollout.state.value not in ("idle", "running"):
            break
        await asyncio.sleep(0.05)
    assert rollout.state.value == "paused" and rollout.batch == 0, rollout
    assert rollout.position() == "before batch 1 of 4"
