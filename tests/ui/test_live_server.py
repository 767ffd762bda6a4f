"""The console against a real `stormdeck sim serve` on loopback, run as a subprocess as a user runs it.

tests/client/test_stream.py and tests/ui/test_resilience.py cover the same contract against the in-test
server (tests/client/fake_fleet_server.py), which lets them script drops and garbage.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from console.client.stream import StreamClient
from console.model import LinkState
from console.policies import FullJitter
from console.ui.app import ConsoleApp

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE

TOKEN = "live-test-token-7"


def start_server(token_file: Path, port: int = 0) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, "-m", "console", "sim", "serve", "thundering-herd"]
    command += ["--port", str(port), "--token-file", str(token_file)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    for line in process.stdout:
        if line.startswith("url:"):
            # keep reading what the server prints, so a full pipe can never stall it
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process, line.split()[1]
    process.kill()
    raise AssertionError("sim serve printed no url")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


async def test_401_without_a_token_then_kill_restart_and_the_console_recovers(tmp_path):
    token_file = tmp_path / "tokens"
    token_file.write_text(f"viewer {TOKEN} test\n")
    process, url = start_server(token_file)
    try:
        assert httpx.get(f"{url}/v1/fleet", timeout=5).status_code == 401
        client = StreamClient(url, TOKEN, policy=FullJitter(base_ms=100.0, max_ms=500.0))
        app = ConsoleApp(source=client, remember_theme=False)
        async with app.run_test(size=SIZE):
            await wait_for(lambda: app.model.frames_applied >= 2, timeout_s=20, what="frames from sim serve")
            assert app.model.fleet == "thundering-herd" and app.model.link.state is LinkState.LIVE
            port = int(url.rsplit(":", 1)[1])
            await asyncio.to_thread(stop, process)
            await wait_for(lambda: app.model.link.state is LinkState.RECONNECTING, what="reconnecting")
            before = app.model.frames_applied
            process, _ = await asyncio.to_thread(start_server, token_file, port)
            await wait_for(lambda: app.model.frames_applied >= before + 2, timeout_s=30, what="frames again")
            assert app.model.gaps >= 1  # a new server process is a new history: a fresh start, marked
    finally:
        stop(process)
