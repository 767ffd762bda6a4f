"""The console attached to a real fleet: `fleet up` (3 node processes, controller, load), Pilot-driven."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import pytest

from console.client.stream import StreamClient
from console.gateway.processes import child_env
from console.model import LinkState
from console.policies import FullJitter
from console.ui.app import ConsoleApp
from tests.client.fake_fleet_server import wait_for
from tests.gateway.conftest import needs_redis
from tests.ui.conftest import SIZE

pytestmark = [pytest.mark.timeout(60), needs_redis]


async def test_console_sees_the_three_real_nodes(tmp_path) -> None:
    (tmp_path / "api.tokens").write_text("viewer console-token pilot\n")
    command = [
        sys.executable,
        "-m",
        "console",
        "fleet",
        "up",
        "--nodes",
        "3",
        "--port",
        "0",
        "--clients",
        "90",
    ]
    command += ["--token-file", str(tmp_path / "api.tokens"), "--work-factor", "200"]
    command += ["--audit-log", str(tmp_path / "audit.jsonl")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=child_env())
    try:
        assert process.stdout is not None
        url = next(line.split()[1] for line in process.stdout if line.startswith("url:"))
        threading.Thread(target=process.stdout.read, daemon=True).start()  # never let its pipe fill
        client = StreamClient(url, "console-token", policy=FullJitter(base_ms=100.0, max_ms=500.0))
        app = ConsoleApp(source=client, remember_theme=False)
        async with app.run_test(size=SIZE):
            await wait_for(
                lambda: app.model.frames_applied >= 2, timeout_s=20, what="frames from the controller"
            )
            assert app.model.link.state is LinkState.LIVE
            await wait_for(
                lambda: sum(n.connections for n in app.model.nodes.values()) == 90,
                timeout_s=30,
                what="the 90 clients counted across the real nodes",
            )
            assert sorted(app.model.nodes) == ["node-1", "node-2", "node-3"]
            assert all(n.state == "ready" for n in app.model.nodes.values())
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(20)
