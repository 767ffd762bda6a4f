"""Audit durability: `kill -9` the `sim serve` process in the middle of a burst of actions; every action the
server acknowledged is in the log, and the chain verifies."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from console.audit import verify_file
from tests.server.test_serve_cli import read_announcement

TOKEN = "operator-durability-token-0123"
ROOT = Path(__file__).resolve().parents[2]
CONCURRENT = 6
ACKNOWLEDGED_BEFORE_KILL = 40


async def test_kill_9_loses_no_acknowledged_record(tmp_path: Path) -> None:
    token_file = tmp_path / "tokens"
    token_file.write_text(f"operator {TOKEN} burst-operator\n")
    audit = tmp_path / "audit.jsonl"
    command = [
        sys.executable,
        "-m",
        "console",
        "sim",
        "serve",
        "thundering-herd",
        "--port",
        "0",
        "--token-file",
        str(token_file),
        "--audit-log",
        str(audit),
        "--set",
        "nodes.count=8",
        "--set",
        "clients.count=20000",
        "--set",
        "rollout.enabled=false",
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    acknowledged: list[tuple[int, str]] = []
    try:
        url = read_announcement(process)["url"]
        headers = {"Authorization": f"Bearer {TOKEN}"}
        enough = asyncio.Event()

        async def burst(client: httpx.AsyncClient, worker: int) -> None:
            index = 0
            while True:
                index += 1
                # Each one a distinct change, within the window's hour: worker w sends 10 + w·100 + index/1000 s.
                body = {"retry_after_s": [1, 10 + worker * 100 + index / 1000]}
                try:
                    response = await client.put("/v1/admission", json=body, headers=headers)
                except httpx.TransportError:
                    return  # the server is gone: this one was never acknowledged
                assert response.status_code == 200, response.text
                answer = response.json()
                acknowledged.append((answer["audit_seq"], answer["audit_hash"]))
                if len(acknowledged) >= ACKNOWLEDGED_BEFORE_KILL:
                    enough.set()

        async with httpx.AsyncClient(base_url=url, timeout=10) as client:
            workers = [asyncio.create_task(burst(client, w)) for w in range(CONCURRENT)]
            await asyncio.wait_for(enough.wait(), 60)
            process.send_signal(signal.SIGKILL)  # mid-burst: other requests are in flight
            await asyncio.wait_for(asyncio.gather(*workers), 30)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL
    report = verify_file(audit)
    assert report.intact, report
    on_disk = {}
    for line in audit.read_bytes().splitlines():
        record = json.loads(line)
        on_disk[record["seq"]] = record["hash"]
    assert len(acknowledged) >= ACKNOWLEDGED_BEFORE_KILL
    for seq, digest in acknowledged:
        assert on_disk.get(seq) == digest, seq
