"""`stormdeck drill NAME --serve` as a real process on loopback, and `stormdeck inject` against it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from console.audit import verify_file
from console.cli import main
from console.drills.schema import Drill, build_drill, hints_due
from console.drills.served import DrillBackend, DrillNarrator
from console.errors import InputError
from console.protocol import ActionKind, AdmissionRequest
from console.server.actions import FleetAction
from tests.server.conftest import receive_until
from tests.server.test_serve_cli import read_announcement

#: A one-minute drill on 8 nodes: its first event fires at fleet second 2 (a few wall seconds at 2×).
SHORT_DRILL = """
name = "short-served"
title = "A short drill to serve"
seed_source = "a test: no seed"
scenario = "thundering-herd"
overrides = { "nodes.count" = 8, "clients.count" = 20000, "rollout.batch_size" = 2 }
clock_start = "04:00"
duration_s = 60
briefing = "A test drill."

[[timeline]]
at = "04:00:02"
say = "a third of the connections reset"
action = "disconnect_fraction"
fraction = 0.3

[[hints]]
after_s = 1
text = "Watch the attempts."

[[objectives]]
name = "no override"
kind = "no_override"
points = 10
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[dict[str, Any]]:
    drill = tmp_path / "short.toml"
    drill.write_text(SHORT_DRILL)
    audit = tmp_path / "audit.jsonl"
    command = [sys.executable, "-m", "console", "drill", str(drill), "--serve", "--port", "0"]
    command += ["--speed", "2", "--audit-log", str(audit)]
    # The tokens the server makes go under the test's own state dir, not the user's.
    environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment)
    try:
        fields = read_announcement(process)
        yield {**fields, "process": process, "audit": audit}
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def inject(url: str, *words: str, token_file: Path) -> int:
    """`stormdeck inject` as a user types it (in a thread: the CLI runs its own event loop)."""
    return await asyncio.to_thread(main, ["inject", url, *words, "--token-file", str(token_file)])


async def test_a_served_drill_fires_its_timeline_and_takes_an_instructors_injection(served, capsys) -> None:
    url = served["url"]
    trainee_file, admin_file = Path(served["token"].split()[0]), Path(served["admin"].split()[0])
    assert trainee_file.read_text().split()[0] == "operator"
    assert admin_file.read_text().split()[0] == "admin"
    assert f"--token-file {admin_file}" in served["inject"]
    trainee = {"Authorization": f"Bearer {trainee_file.read_text().split()[1]}"}

    stream = url.replace("http://", "ws://") + "/v1/stream"
    async with connect(stream, additional_headers=trainee, max_queue=None) as ws:
        hello = json.loads(await ws.recv())
        assert hello["fleet"] == "thundering-herd"
        # The drill's story, its hint, and the timeline's injection, all from the stream alone.
        seen = await receive_until(
            ws, lambda m: m["type"] == "event" and m.get("kind") == "disconnect", timeout_s=15
        )
        told = [m["message"] for m in seen if m["type"] == "event" and m.get("kind") == "drill"]
        assert "04:00:02 a third of the connections reset" in told
        assert any(m.get("kind") == "hint" and m["message"] == "Watch the attempts." for m in seen)
        assert "(30%)" in seen[-1]["message"]

        # The trainee's operator token cannot inject; the instructor's admin token can.
        assert await inject(url, "add_nodes", "count=2", token_file=trainee_file) == 1
        assert "403" in capsys.readouterr().out
        assert await inject(url, "add_nodes", "count=2", token_file=admin_file) == 0
        assert "injected add_nodes(count=2)" in capsys.readouterr().out
        assert await inject(url, "add_nodes", "count=lots", token_file=admin_file) == 2
        assert "count" in capsys.readouterr().out
        injected = await receive_until(
            ws, lambda m: m["type"] == "event" and m.get("kind") == "injection", timeout_s=10
        )
        data = injected[-1]["data"]
        assert (data["event"], data["params"], data["role"]) == ("add_nodes", {"count": 2}, "admin")
        assert data["actor"] and isinstance(data["audit_seq"], int)  # who: the instructor's token's name
        frames = await receive_until(ws, lambda m: m["type"] == "frame", timeout_s=10)
        assert [n["state"] for n in frames[-1]["nodes"][8:]] == ["provisioning", "provisioning"]

    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        fleet = (await client.get("/v1/fleet", headers=trainee)).json()
        # The clock is the instructor's: a trainee can neither pause the drill nor run it at 100×.
        instructor = {"Authorization": f"Bearer {admin_file.read_text().split()[1]}"}
        for change in ({"paused": True}, {"speed": 100}):
            refused = await client.post("/v1/sim/clock", json=change, headers=trainee)
            assert refused.status_code == 403 and "needs the admin role" in refused.json()["detail"]
        assert (await client.get("/v1/sim/clock", headers=trainee)).json()["speed"] == 2
        faster = await client.post("/v1/sim/clock", json={"speed": 3}, headers=instructor)
        assert faster.status_code == 200 and faster.json()["speed"] == 3
    assert fleet["fleet"] == "thundering-herd" and len(fleet["nodes"]) == 10

    process: subprocess.Popen[str] = served["process"]
    process.send_signal(signal.SIGTERM)
    assert process.wait(15) == 0
    assert not trainee_file.exists() and not admin_file.exists(), "the tokens it made go with the server"
    records = [json.loads(line) for line in served["audit"].read_text().splitlines()]
    assert [(r.get("record"), r["status"]) for r in records] == [
        (None, 403),  # the trainee's attempt, refused at the door and audited
        ("injection", 200),
        ("injection", 422),
        (None, 403),  # the trainee's pause, refused and audited
        (None, 403),  # and 100×
        ("clock", 200),  # the instructor's change of speed
    ]
    assert records[-1]["actor"] == "instructor" and records[-1]["parameters"] == {"speed": 3}
    assert verify_file(served["audit"]).intact


def test_serve_and_headless_do_not_mix(capsys) -> None:
    assert main(["drill", "thundering-herd", "--serve", "--headless"]) == 2
    assert "--serve" in capsys.readouterr().err


def test_the_narrator_tells_each_entry_once_in_order_and_the_end() -> None:
    import tomllib

    drill = build_drill(tomllib.loads(SHORT_DRILL))
    narrator = DrillNarrator(drill, duration_s=60)
    assert narrator.due(0.0) == []
    assert [e.kind for e in narrator.due(1.0)] == ["hint"]  # due after 1 s of fleet time, told once
    assert narrator.due(2.0) == []  # the entry at 2 s fires in the second from 2 to 3
    second = narrator.due(3.0)
    assert [(e.kind, e.message) for e in second] == [("drill", "04:00:02 a third of the connections reset")]
    assert narrator.due(30.0) == []
    assert [e.data.get("ended") for e in narrator.due(61.0)] == [True]
    assert narrator.due(62.0) == []


async def _frame_times(url: str, headers: dict[str, str], count: int) -> list[float]:
    async with connect(url.replace("http://", "ws://") + "/v1/stream", additional_headers=headers) as ws:
        frames: list[float] = []
        while len(frames) < count:
            message = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if message["type"] == "frame":
                frames.append(message["time_s"])
        return frames


def test_drill_modes_child_server_serves_the_drill_paused_and_leaves_nothing_behind(tmp_path: Path) -> None:
    """`stormdeck drill NAME` serves its drill as the embedded default serves `sim serve`, with the fleet
    clock paused from the start: the briefing is read before the drill's first second."""
    from console.cli.embedded import EmbeddedServer

    drill = tmp_path / "short.toml"
    drill.write_text(SHORT_DRILL)
    serve = ["drill", str(drill), "--serve", "--paused"]  # as drill mode gives it
    serve += ["--audit-log", str(tmp_path / "a.jsonl")]
    server = EmbeddedServer("thundering-herd", serve=serve, clock_token=True).start()
    directory = server.token_path.parent
    try:
        headers = {"Authorization": f"Bearer {server.token}"}  # the operator token drill mode attaches with
        clock = httpx.get(f"{server.url}/v1/sim/clock", headers=headers).json()
        assert clock["paused"] is True
        # Frames keep coming while paused, and the fleet has not moved past its first second.
        assert set(asyncio.run(_frame_times(server.url, headers, 3))) <= {0.0, 1.0}
        fleet = httpx.get(f"{server.url}/v1/fleet", headers=headers).json()
        assert fleet["fleet"] == "thundering-herd" and len(fleet["nodes"]) == 8  # the drill's overrides
        # A served drill's clock is an admin's: the console's operator token may not start it, the
        # clock token made for this player's pause key may.
        refused = httpx.post(f"{server.url}/v1/sim/clock", json={"paused": False}, headers=headers)
        assert refused.status_code == 403 and "admin" in refused.json()["detail"]
        clock_headers = {"Authorization": f"Bearer {server.clock_token}"}
        started = httpx.post(f"{server.url}/v1/sim/clock", json={"paused": False}, headers=clock_headers)
        assert started.status_code == 200 and started.json()["paused"] is False
        assert max(asyncio.run(_frame_times(server.url, headers, 3))) > 1.0  # the start key's call runs it
    finally:
        server.stop()
    assert not directory.exists()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/v1/fleet")


def test_a_paused_served_drill_says_so_and_how_to_start_it(tmp_path: Path) -> None:
    drill = tmp_path / "short.toml"
    drill.write_text(SHORT_DRILL)
    command = [sys.executable, "-m", "console", "drill", str(drill), "--serve", "--port", "0", "--paused"]
    command += ["--audit-log", str(tmp_path / "audit.jsonl")]
    environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment)
    try:
        fields = read_announcement(process)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    # Found in review: it said 0:00:00, but the fleet is served from its first second (GET /v1/fleet: 1.0).
    # On the drill's clock, as its `drill:` line and every console say it: it read 0:00:01 beside "(04:00:00
    # to 04:01:00 …)".
    assert fields["clock"].startswith("paused at 04:00:01 (the drill's first second")
    assert "Fleet clock: start / resume" in fields["clock"] and '{"paused": false}' in fields["clock"]
    assert fields["clock"].endswith("with the instructor's admin token")


def moot_drill() -> Drill:
    """SHORT_DRILL with a second hint, moot once admission is set."""
    import tomllib

    text = SHORT_DRILL.replace(
        "[[objectives]]",
        '[[hints]]\nafter_s = 5\nunless_done = "admission"\ntext = "Set admission."\n\n[[objectives]]',
        1,
    )
    return build_drill(tomllib.loads(text))


def test_a_hint_is_not_told_when_the_trainee_already_did_what_it_says() -> None:
    """The thundering-herd drill told 'halt the rollout' at 420 s to a trainee who had halted at 300 s."""

    def hints(narrator: DrillNarrator, first_done: dict[str, float]) -> list[str]:
        return [e.message for e in narrator.due(6.0, first_done) if e.kind == "hint"]

    assert hints(DrillNarrator(moot_drill(), duration_s=60), {"admission": 4.0}) == ["Watch the attempts."]
    # applied after the hint fell due: it was told
    told = hints(DrillNarrator(moot_drill(), duration_s=60), {"admission": 5.5})
    assert told == ["Watch the attempts.", "Set admission."]
    assert [h.text for h in hints_due(moot_drill(), 60.0, {"admission": 4.0})] == ["Watch the attempts."]


def test_a_hint_names_a_known_action_to_be_moot() -> None:
    import tomllib

    text = SHORT_DRILL.replace('text = "Watch the attempts."', 'text = "x"\nunless_done = "reboot"')
    with pytest.raises(InputError, match=r"hints\.0\.unless_done: 'reboot'.*rollout_halt"):
        build_drill(tomllib.loads(text))


async def test_the_served_drill_remembers_what_was_applied_and_skips_the_moot_hint() -> None:
    backend = DrillBackend.from_drill(moot_drill(), seed=1)
    told: list[str] = []
    for second in range(8):
        if second == 2:
            await backend.apply(FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=400, burst=40)))
            assert backend.first_done == {"admission": backend.simulation.time_s}
        tick = await backend.tick(1, budget_s=30.0)
        told += [e.message for e in tick.events if e.kind == "hint"]
    assert backend.simulation.time_s >= 6
    assert told == ["Watch the attempts."]


def test_drill_modes_child_server_keeps_an_audit_log_of_the_runs_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`L` in a second interactive run showed the first run's actions: the child logged to the user's
    shared default file for the fleet. Each run now has its own log, in its private directory."""
    from console.cli.embedded import EmbeddedServer

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the child inherits it
    drill = tmp_path / "short.toml"
    drill.write_text(SHORT_DRILL)
    serve = ["drill", str(drill), "--serve", "--paused"]
    for run in (1, 2):
        server = EmbeddedServer("thundering-herd", serve=serve, clock_token=True, own_audit_log=True).start()
        try:
            headers = {"Authorization": f"Bearer {server.token}"}
            before = httpx.get(f"{server.url}/v1/audit", headers=headers).json()["records"]
            assert before == [], f"run {run} starts with an earlier run's records"
            httpx.post(
                f"{server.url}/v1/rollout/halt", json={}, headers=headers
            )  # audited, whatever its answer
            after = httpx.get(f"{server.url}/v1/audit", headers=headers).json()["records"]
            assert len(after) == 1
        finally:
            server.stop()
    assert not (tmp_path / "state" / "stormdeck" / "audit").exists()  # the shared default is untouched


def served_in_process(drill: Drill, **options: Any) -> Any:
    """The drill served by the fleet API in this process (a thread, loopback, fast frames)."""
    from console.server.app import create_app
    from console.server.runner import ServerThread
    from console.server.tokens import parse_tokens
    from tests.server.conftest import FAST_FRAME_INTERVAL_S, TOKEN_FILE

    backend = DrillBackend.from_drill(drill, seed=1)
    app = create_app(backend, parse_tokens(TOKEN_FILE), frame_interval_s=FAST_FRAME_INTERVAL_S, **options)
    return ServerThread(app).start()


async def test_a_served_drills_hello_says_which_drill_and_its_clock() -> None:
    """An attached console showed `fleet clock 0:00:45` beside the drill's "04:00:45" lines: the stream
    said nothing of the drill's clock. Its hello now does, so every console reads the drill's."""
    import tomllib

    from tests.server.conftest import auth

    server = served_in_process(build_drill(tomllib.loads(SHORT_DRILL)))
    try:
        stream = server.url.replace("http://", "ws://") + "/v1/stream"
        async with connect(stream, additional_headers=auth("viewer")) as ws:
            hello = json.loads(await ws.recv())
    finally:
        server.stop()
    assert hello["type"] == "hello"
    drill = hello["drill"]
    assert (drill["name"], drill["title"]) == ("short-served", "A short drill to serve")
    assert (drill["clock_start_s"], drill["duration_s"]) == (4 * 3600, 60)
    # ... and what its briefing shows a trainee on `attach` (docs/drills.md)
    assert (drill["seed_source"], drill["briefing"]) == ("a test: no seed", "A test drill.")
    assert drill["objectives"] == [{"name": "no override", "points": 10}]
    # ... and the run's seed beside its scenario: a recording of it says how to run it again
    assert (hello["scenario"], hello["seed"], hello["overrides"]) == ("thundering-herd", 1, [])


async def test_a_hello_after_the_drills_end_carries_its_end() -> None:
    """Found attaching a trainee late: the hello of a drill whose time was up said only the drill, so the
    console opened on its briefing as if it were about to start. After the end the hello carries the end
    event the stream sent (`drill.ended`), in its words; before it, none."""
    import tomllib

    from tests.server.conftest import auth

    short = SHORT_DRILL.replace("duration_s = 60", "duration_s = 3")
    server = served_in_process(build_drill(tomllib.loads(short)))
    stream = server.url.replace("http://", "ws://") + "/v1/stream"
    try:
        async with connect(stream, additional_headers=auth("viewer")) as ws:
            early = json.loads(await ws.recv())
            seen = await receive_until(
                ws, lambda m: m["type"] == "event" and m["data"].get("ended"), timeout_s=10
            )
        async with connect(stream, additional_headers=auth("viewer")) as ws:
            late = json.loads(await ws.recv())
    finally:
        server.stop()
    assert early["drill"].get("ended") is None
    end = seen[-1]
    assert late["drill"].get("ended") is not None, late["drill"]
    assert late["drill"]["ended"]["message"] == "04:00:03 the drill's time is up (A short drill to serve)"
    assert {k: late["drill"]["ended"][k] for k in ("kind", "time_s", "data")} == {
        "kind": "drill",
        "time_s": 3.0,
        "data": end["data"],
    }


def test_the_serve_terminal_says_when_the_drill_ends_and_that_the_fleet_runs_on(tmp_path: Path) -> None:
    """Found running a served drill: its terminal said nothing when the drill's time was up — the
    instructor learned it from a trainee. One line says it, what goes on, and how to stop."""
    from concurrent.futures import ThreadPoolExecutor

    drill = tmp_path / "short.toml"
    drill.write_text(SHORT_DRILL)
    command = [sys.executable, "-m", "console", "drill", str(drill), "--serve", "--port", "0"]
    command += ["--speed", "100", "--audit-log", str(tmp_path / "audit.jsonl")]
    environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment)
    reader = ThreadPoolExecutor(1)
    try:
        read_announcement(process)
        assert process.stdout is not None
        next_line = reader.submit(process.stdout.readline)
        line = next_line.result(timeout=60)  # 60 fleet seconds at 100×: a wall second or two
        running_on = process.poll() is None
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        reader.shutdown()  # (its readline ends with the process's output)
    assert process.stdout is not None
    rest = process.stdout.read()
    assert line.startswith("stormdeck: drill short-served ended at 04:01:00 (fleet second 60)"), line
    assert "the simulation keeps running" in line and "Ctrl-C stops the server" in line
    assert running_on  # and it does
    assert "ended" not in rest  # said once


async def test_a_served_drill_refuses_actions_once_its_time_is_up(tmp_path: Path) -> None:
    """Review: after a drill's end, `c` then Enter added 59 nodes (`add_capacity … ✓ applied 202`) to a
    fleet frozen at its end, and `R` reached the server. Its fleet API now refuses every action once the
    drill has ended — a dry run too — with a 409 naming why, audited; `act` and any attached console are
    refused alike. Before the end the same request applies."""
    import tomllib

    from console.audit import AuditLog
    from tests.server.conftest import auth

    short = SHORT_DRILL.replace("duration_s = 60", "duration_s = 3")
    audit = AuditLog(tmp_path / "audit.jsonl")
    # Paused until the request before the end is answered: 3 fleet seconds pass in a few fast frames.
    server = served_in_process(build_drill(tomllib.loads(short)), audit_log=audit, paused=True)
    stream = server.url.replace("http://", "ws://") + "/v1/stream"
    operator = auth("operator")
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
            before = await client.post("/v1/capacity", json={"count": 1}, headers=operator)
            async with connect(stream, additional_headers=auth("viewer"), max_queue=None) as ws:
                await client.post("/v1/sim/clock", json={"paused": False}, headers=operator)
                await receive_until(ws, lambda m: (m.get("data") or {}).get("ended") is True, timeout_s=10)
            after = [
                await client.post("/v1/capacity", json=body, headers=operator)
                for body in ({"count": 1}, {"count": 1, "dry_run": True})
            ]
            halt = await client.post("/v1/rollout/halt", json={}, headers=auth("admin"))
    finally:
        server.stop()
        audit.close()
    assert before.status_code == 202, before.text
    for answer in [*after, halt]:
        assert answer.status_code == 409, answer.text
        assert answer.headers["content-type"].startswith("application/problem+json")
        problem = answer.json()
        assert problem["type"] == "urn:stormdeck:problem:drill-ended", problem
        assert "the drill short-served ended at 04:00:03" in problem["detail"], problem
        assert "nothing applied" in problem["detail"], problem
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    refused = [r for r in records if r.get("outcome") == "drill_ended"]
    assert [r["action"] for r in refused] == ["add_capacity", "add_capacity", "rollout_halt"], records


def test_a_served_drills_backend_names_the_overrides_beyond_the_drills_own() -> None:
    """`drill NAME --serve --set K=V`: the hello says the trainee's `--set`s (the drill's own are the drill's),
    so a recording of it says how to run it again."""
    import tomllib

    drill = build_drill(tomllib.loads(SHORT_DRILL))
    backend = DrillBackend.from_drill(drill, ["clients.policy=full_jitter"], seed=1)
    assert backend.scenario_overrides() == ["clients.policy=full_jitter"]
    assert DrillBackend.from_drill(drill, seed=1).scenario_overrides() == []
