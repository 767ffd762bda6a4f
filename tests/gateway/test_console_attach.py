"""The console attached to a real fleet: `fleet up` (3 node processes, controller, load), Pilot-driven: it
sees the three real nodes and drains one through its drain dialog, guarded and audited by the controller."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading

import pytest

from console.client.actions import ActionClient
from console.client.stream import StreamClient
from console.gateway.processes import child_env
from console.model import LinkState
from console.policies import FullJitter
from console.protocol import NodeState
from console.ui.app import ConsoleApp
from console.ui.screens.action_form import ActionForm
from console.ui.screens.main import MainScreen
from console.ui.screens.verdict_dialog import VerdictDialog
from tests.client.fake_fleet_server import wait_for
from tests.gateway.conftest import needs_redis
from tests.ui.conftest import SIZE

pytestmark = [pytest.mark.timeout(60), needs_redis]


async def test_console_sees_the_three_real_nodes_and_drains_one(tmp_path) -> None:
    (tmp_path / "api.tokens").write_text("operator console-token pilot\n")
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
        admin = ActionClient(url, "console-token")
        app = ConsoleApp(source=client, admin=admin, remember_theme=False)
        async with app.run_test(size=SIZE) as pilot:
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

            # Drain node-1 (under the cursor: the first by id) through the console's dialog.
            await pilot.pause()
            await pilot.press("d")
            await wait_for(lambda: isinstance(app.screen, ActionForm), timeout_s=10, what="the drain form")
            await pilot.pause()
            assert "server's drain planner" in str(app.screen.prefill.source)  # the controller planned it
            await pilot.press("enter")
            await wait_for(
                lambda: app.actions.outcomes or isinstance(app.screen, VerdictDialog),
                timeout_s=10,
                what="the controller's answer",
            )
            if isinstance(app.screen, VerdictDialog):  # the guards asked for a confirmation
                dialog = app.screen
                assert dialog.asks.value == "confirm", dialog.verdict
                await pilot.press("y")
            await wait_for(lambda: app.actions.outcomes, timeout_s=10, what="the drain applied")
            outcome = app.actions.outcomes[-1].answer
            assert outcome.outcome.value == "applied", outcome.message
            await wait_for(
                lambda: app.model.nodes["node-1"].state in (NodeState.DRAINING, NodeState.DRAINED),
                timeout_s=10,
                what="node-1 draining in the controller's frames",
            )
            await wait_for(lambda: isinstance(app.screen, MainScreen), what="back on the fleet")
        records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
        assert (records[-1]["action"], records[-1]["target"], records[-1]["outcome"]) == (
            "drain",
            "node-1",
            "applied",
        )
        assert records[-1]["actor"] == "pilot"
        print("audit outcomes:", [r["outcome"] for r in records])
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(20)
