"""`stormdeck fleet up`: nodes, publisher, controller and load on loopback; SIGTERM stops them all."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from console.gateway.processes import child_env
from tests.gateway.conftest import needs_redis

pytestmark = [pytest.mark.timeout(60), needs_redis]


def test_fleet_up_serves_the_fleet_and_stops_everything(tmp_path) -> None:
    (tmp_path / "api.tokens").write_text("operator op-token tester\n")
    command = [
        sys.executable,
        "-m",
        "console",
        "fleet",
        "up",
        "--nodes",
        "2",
        "--port",
        "0",
        "--clients",
        "60",
    ]
    command += ["--token-file", str(tmp_path / "api.tokens"), "--work-factor", "200"]
    command += ["--audit-log", str(tmp_path / "audit.jsonl")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=child_env())
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Ctrl-C"):
                break
        url = next(line.split()[1] for line in lines if line.startswith("url:"))
        pids = [int(line.split("pid")[1].split()[0]) for line in lines if " pid " in line]
        assert len(pids) == 5, lines  # two nodes, redis, the publisher, the load generator
        headers = {"Authorization": "Bearer op-token"}
        deadline = time.monotonic() + 30
        while True:
            fleet = httpx.get(f"{url}/v1/fleet", headers=headers).json()
            if fleet["totals"]["connections"] == 60 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert [n["id"] for n in fleet["nodes"]] == ["node-1", "node-2"]
        assert fleet["totals"]["connections"] == 60
        assert any(line.startswith("audit:") and "audit.jsonl" in line for line in lines)
        # fleet up serves the guarded action routes too: a dry run is judged and audited, nothing applied.
        dry = {"rate_per_s": 10, "deadline_s": 60, "hint_ms": [0, 1000], "dry_run": True}
        judged = httpx.post(f"{url}/v1/nodes/node-1/drain", json=dry, headers=headers)
        assert judged.status_code == 200 and judged.json()["applied"] is False, judged.text
        records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
        assert [(r["action"], r["target"], r["outcome"]) for r in records] == [("drain", "node-1", "dry_run")]
        with httpx.Client(
            base_url=next(line.split("admin ")[1].strip() for line in lines if "admin " in line)
        ) as a:
            assert "stormdeck_gateway_connections" in a.get("/metrics").text
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}"), f"pid {pid} outlived fleet up"


def _children(pid: int) -> set[int]:
    """Direct children of `pid`, from /proc (every thread's list: a node started from a worker thread)."""
    found: set[int] = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as handle:
            found.update(int(child) for child in handle.read().split())
    return found


@pytest.mark.timeout(60)
def test_fleet_up_adds_capacity_by_starting_a_node_and_stops_it_too(tmp_path) -> None:
    """One node, no load, then `add_capacity`: fleet up starts node-2 as it started node-1, and stops it."""
    (tmp_path / "api.tokens").write_text("operator op-token tester\n")
    command = [sys.executable, "-m", "console", "fleet", "up", "--nodes", "1", "--port", "0"]
    command += ["--token-file", str(tmp_path / "api.tokens"), "--work-factor", "200"]
    command += ["--audit-log", str(tmp_path / "audit.jsonl")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=child_env())
    children: set[int] = set()
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Ctrl-C"):
                break
        url = next(line.split()[1] for line in lines if line.startswith("url:"))
        headers = {"Authorization": "Bearer op-token"}
        asked = httpx.post(f"{url}/v1/capacity", json={"count": 1}, headers=headers)  # 1 on 1: confirm
        assert asked.status_code == 409, asked.text
        confirm = {"token": asked.json()["confirm_token"]}
        added = httpx.post(f"{url}/v1/capacity", json={"count": 1, "confirm": confirm}, headers=headers)
        assert added.status_code == 202, added.text
        deadline = time.monotonic() + 30
        while True:
            states = {
                n["id"]: n["state"] for n in httpx.get(f"{url}/v1/fleet", headers=headers).json()["nodes"]
            }
            if states.get("node-2") == "ready" or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert states == {"node-1": "ready", "node-2": "ready"}
        children = _children(process.pid)
        assert len(children) >= 2  # the two nodes (and a publisher only with Redis)
        records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
        assert [(r["action"], r["outcome"]) for r in records][-1] == ("add_capacity", "applied")
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    for pid in children:
        assert not os.path.exists(f"/proc/{pid}"), f"pid {pid} outlived fleet up"
