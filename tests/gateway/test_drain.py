"""Drain end to end THROUGH THE FLEET API: three node processes sharing a Redis history, 3,000 SDK clients,
the `stormdeck controller` process serving the guarded action routes. The drain is asked of the fleet API
(two-phase when the guards want it); the node closes at the rate, every client lands elsewhere, no gaps,
no duplicates, one hash-chained audit log that `stormdeck audit verify` accepts, and a viewer is refused."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from console.gateway.drain import achieved_rate_per_s
from console.gateway.loadgen import ClientPool
from console.gateway.processes import NodeProcess, child_env
from tests.gateway.conftest import CHEAP_SIGNER, CHEAP_WORK_FACTOR, TOKEN, wait_for, wait_while_progressing

pytestmark = pytest.mark.timeout(180)

#: The issue's figure: 3 nodes, 3,000 clients, about 1,000 of them on the drained node.
CLIENTS = 3000
RATE_PER_S = 100.0
OPERATOR, VIEWER = "op-token", "view-token"
#: Well below the rollout pause line (75 %), with room for the drained node's share the guards project.
CALM_CPU_PCT = 60


@pytest.fixture
def controller_url(tmp_path: Path) -> Iterator[callable]:
    """Start `stormdeck controller` over given nodes; yields a starter returning its URL; stopped by pid."""
    started: list[subprocess.Popen[str]] = []

    def start(nodes: list[NodeProcess], audit: Path) -> str:
        nodes_file = tmp_path / "nodes.toml"
        nodes_file.write_text(
            "".join(f'[[nodes]]\nid = "{n.node_id}"\nadmin = "{n.admin_url}"\n' for n in nodes)
            # What these cheap-signer nodes can do, as an operator states what they measured: 0.43 ms of node
            # CPU per handshake at work factor 200 (measure_costs of console/gateway/bench.py, 2026-11-30),
            # ~2,300/s on one core. Without it the guards assume the nodes' admission rate is their ceiling
            # and project a 100/s drain as ~70 % of a survivor's CPU: blocked whenever CI is busy.
            + "[capacity]\nhandshakes_per_s = 2000\n"
        )
        (tmp_path / "node.token").write_text(TOKEN + "\n")
        (tmp_path / "api.tokens").write_text(f"operator {OPERATOR} ops\nviewer {VIEWER} watcher\n")
        command = [sys.executable, "-m", "console", "controller", "--nodes", str(nodes_file), "--port", "0"]
        command += ["--node-token-file", str(tmp_path / "node.token")]
        command += ["--token-file", str(tmp_path / "api.tokens"), "--audit-log", str(audit)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=child_env())
        started.append(process)
        assert process.stdout is not None
        return next(line.split()[1] for line in process.stdout if line.startswith("url:"))

    yield start
    for process in started:
        process.terminate()
        process.wait(10)


async def drain_through_the_api(api: httpx.AsyncClient, node_id: str, body: dict) -> httpx.Response:
    """POST the drain; when the guards ask for a confirmation (409), answer it with the token given."""
    response = await api.post(f"/v1/nodes/{node_id}/drain", json=body)
    if response.status_code == 409:
        problem = response.json()
        assert problem["field"] == "confirm", problem
        confirm = {"token": problem["confirm_token"]}
        if problem["verdict"]["level"] == "typed":
            confirm["typed"] = problem["verdict"].get("typed_expected") or node_id
        response = await api.post(f"/v1/nodes/{node_id}/drain", json={**body, "confirm": confirm})
    return response


async def test_drain_through_the_fleet_api_moves_every_client_without_gaps(
    node_processes, redis_server, controller_url, tmp_path
) -> None:
    cheap = ("--work-factor", str(CHEAP_WORK_FACTOR))
    nodes = [
        node_processes("a", *cheap, "--publish-rate-per-s", "3", history=redis_server.url),
        node_processes("b", *cheap, history=redis_server.url),
        node_processes("c", *cheap, history=redis_server.url),
    ]
    audit = tmp_path / "audit.jsonl"
    url = controller_url(nodes, audit)
    pool = ClientPool([n.url for n in nodes], CLIENTS, "full_jitter", signer=CHEAP_SIGNER, ramp_s=2.0, seed=5)
    pool.start()
    operator = httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=10)
    viewer = httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {VIEWER}"}, timeout=10)
    fleet: dict = {}

    async def fleet_now() -> dict:
        nonlocal fleet
        fleet = (await operator.get("/v1/fleet")).json()
        return fleet

    try:
        await pool.wait_connected(CLIENTS, timeout_s=90, stall_s=15)  # slower, not stuck, when busy
        await wait_for(lambda: pool.stats.messages >= CLIENTS * 3, 15, "messages flowing")
        await wait_for_async(
            lambda: fleet_now(), lambda f: f["totals"]["connections"] == CLIENTS, 10, "the API to count all"
        )
        # Drain a calm fleet, as an operator would: the guards project the survivors' real CPU, which the
        # 3,000 connections' burst keeps high on a 2-core CI machine for a few seconds.
        await wait_for_async(
            lambda: fleet_now(),
            lambda f: max(n["cpu_pct"] for n in f["nodes"]) <= CALM_CPU_PCT,
            30,
            f"every node's CPU at or below {CALM_CPU_PCT} % before the drain",
        )
        print("CPU before the drain:", [n["cpu_pct"] for n in fleet["nodes"]])
        assert [(n["id"], n["state"]) for n in fleet["nodes"]] == [
            ("a", "ready"),
            ("b", "ready"),
            ("c", "ready"),
        ]
        moving = [c for c in pool.clients if c.node == "b"]
        assert len(moving) > CLIENTS // 4
        body = {"rate_per_s": RATE_PER_S, "deadline_s": 60, "hint_ms": [0, 1000]}

        refused = await viewer.post("/v1/nodes/b/drain", json=body)
        assert refused.status_code == 403
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert nodes[1].status()["state"] == "ready"  # a viewer changes nothing

        answer = await drain_through_the_api(operator, "b", body)
        assert answer.status_code == 202, answer.text
        assert answer.json()["applied"] is True
        assert nodes[1].status()["state"] in ("draining", "drained")  # forwarded, not just promised

        # How long the moves take is mostly this process's: it plays 3,000 clients (9,000 messages/s)
        # and on a loaded machine reads the hints late (the node closed at 100/s, the clients saw 85/s)
        # and once took longer than the drain + 15 s it was given. The node's pace is asserted from its
        # own close times below; here what must hold is that the moves finish, and a stuck one fails
        # 15 s after the last client moved.
        def settled() -> tuple[int, int]:
            return sum(c.node in ("a", "c") for c in pool.clients), pool.stats.resumes

        def all_moved() -> bool:
            on_a_or_c, resumes = settled()
            return on_a_or_c == CLIENTS and resumes >= len(moving)

        try:
            took_s = await wait_while_progressing(
                all_moved,
                settled,
                stall_s=15,
                cap_s=len(moving) / RATE_PER_S + 45,
                what="every client of b settled on a or c, each move resumed",
            )
        except AssertionError as error:
            unsettled = Counter(c.node for c in pool.clients if c.node not in ("a", "c"))
            s = pool.stats
            raise AssertionError(
                f"{error}: not on a or c {dict(unsettled)}, resumes {s.resumes} of {len(moving)}, "
                f"resyncs {s.full_resyncs}, hints {len(s.reconnect_times_s)}, 503s {s.rejects_503}, "
                f"failures {s.failures}, drops {s.drops}, b: {nodes[1].status()}"
            ) from None
        print(f"the moves settled {took_s:.1f} s after the drain was applied")
        received = pool.stats.messages
        await wait_for(lambda: pool.stats.messages >= received + CLIENTS * 2, 15, "messages after the drain")
        drained = nodes[1].status()
        assert drained["state"] == "drained"
        await wait_for_async(
            lambda: fleet_now(), lambda f: f["nodes"][1]["state"] == "drained", 5, "the API to show b drained"
        )
        audit_page = (await viewer.get("/v1/audit")).json()
    finally:
        await pool.stop()
        await operator.aclose()
        await viewer.aclose()
    stats = pool.stats
    achieved = drained["drain"]["achieved_rate_per_s"]  # the node's own close times
    seen = achieved_rate_per_s(sorted(stats.reconnect_times_s))  # when the clients read the hints
    print(
        f"drained {len(moving)} clients through the fleet API at {achieved:.1f}/s (clients saw {seen:.1f}/s); "
        f"gaps {stats.gaps}, duplicates {stats.duplicates}"
    )
    assert len(stats.reconnect_times_s) == len(moving) == drained["drain"]["closed"]
    assert achieved == pytest.approx(RATE_PER_S, rel=0.10)
    assert all(c.nodes_seen[-1] != "b" and c.nodes_seen[-2] == "b" for c in moving)
    assert (stats.resumes, stats.full_resyncs) == (len(moving), 0)  # every move resumed from the history
    assert stats.gaps == 0
    assert stats.duplicates == 0  # the replay starts after the client's offset, so it adds none

    # One audit log, hash-chained: the viewer's refusal, the confirmation asked (if any), the drain applied.
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    outcomes = [r["outcome"] for r in records]
    print("audit outcomes:", outcomes)
    assert outcomes in (["forbidden", "applied"], ["forbidden", "needs_confirmation", "applied"]), outcomes
    assert records[0]["actor"] == "watcher" and records[-1]["actor"] == "ops"
    assert records[-1]["action"] == "drain"
    assert records[-1]["target"] == "b" and records[-1]["parameters"]["rate_per_s"] == RATE_PER_S
    assert audit_page["total"] == len(records)
    verify = [sys.executable, "-m", "console", "audit", "verify", str(audit)]
    checked = subprocess.run(verify, capture_output=True, text=True, env=child_env(), timeout=30)
    assert checked.returncode == 0, checked.stdout + checked.stderr


async def wait_for_async(probe, holds, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not holds(await probe()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(0.1)
