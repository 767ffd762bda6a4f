"""The recorder against the real fleet API (console.server) serving the simulator, then its report."""

from __future__ import annotations

import asyncio
from pathlib import Path

from console.protocol import Source
from console.record.daemon import StreamRecorder, StreamRefused, record_stream
from console.record.reader import RecordingReader
from console.record.report import write_report
from console.server.app import create_app
from console.server.runner import ServerThread
from console.server.simulator import SimulatorBackend
from console.server.tokens import parse_tokens
from tests.record.conftest import OUTAGE_OVERRIDES

VIEWER = "viewer-token-for-the-recorder"
#: Frames every 50 ms: the 30 s of calm before the outage pass in 1.5 s of wall time.
FRAME_INTERVAL_S = 0.05


async def _no_wait(_: float) -> None:
    await asyncio.sleep(0)


async def test_records_the_served_simulator_through_the_outage(tmp_path: Path) -> None:
    backend = SimulatorBackend.from_scenario("regional-outage", OUTAGE_OVERRIDES)
    app = create_app(backend, parse_tokens(f"viewer {VIEWER} recorder"), frame_interval_s=FRAME_INTERVAL_S)
    out = tmp_path / "live.sdrec"
    with ServerThread(app) as server:
        recorder = StreamRecorder(out, url=server.url, fsync=False, max_frames=40)
        written = await asyncio.wait_for(record_stream(recorder, server.url, VIEWER, sleep=_no_wait), 30)
        recorder.close()
        refused = StreamRecorder(tmp_path / "refused.sdrec", url=server.url, fsync=False)
        try:
            await asyncio.wait_for(record_stream(refused, server.url, "not-a-token", sleep=_no_wait), 10)
        except StreamRefused as error:
            assert "401" in str(error)
        else:
            raise AssertionError("a wrong token must stop the recorder")
    assert written == 40
    with RecordingReader(out) as recording:
        frames = list(recording.frames())
        assert recording.header.source is Source.SIMULATOR and recording.header.url == server.url
        assert [f.seq for f in frames] == list(range(frames[0].seq, frames[0].seq + 40))
        assert any(e.data.get("mass") for e in recording.events())  # every node restarted at 30 s
        assert {m.label for m in recording.markers("alarm")} >= {"connections_drop"}
    report = write_report(out, tmp_path / "report").markdown.read_text()
    # The only cut is the scenario's own restart at 0:30, nobody's choice: nothing to drain instead.
    assert "### Drain, don't disconnect" not in report
    assert "| mass disconnects | 1 (1 scripted: 0:30 restart_nodes by the scenario) |" in report


async def test_a_recording_of_the_served_simulator_at_x10_counts_503s_and_timeouts_exactly(
    tmp_path: Path,
) -> None:
    """`sim serve demo --speed 10`, recorded: each frame stands for ten fleet seconds and carries the
    last one's rates, but its running counts hold all ten — the report's 503s and timeouts are the
    simulator's own per-second sums over the same fleet seconds, with no ≈. The fleet starts paused and
    runs once the recorder holds a frame, so the recording covers the storm from its start."""
    import httpx

    from tests.fleet_builders import STORMY_DEMO
    from tests.record.test_running_counts import per_second_running_sums

    backend = SimulatorBackend.from_scenario("demo", STORMY_DEMO, seed=3)
    tokens = parse_tokens(f"viewer {VIEWER} recorder\noperator operator-token-for-the-clock ops")
    app = create_app(backend, tokens, frame_interval_s=FRAME_INTERVAL_S, speed=10, paused=True)
    out = tmp_path / "x10.sdrec"
    holding = asyncio.Event()
    with ServerThread(app) as server:
        recorder = StreamRecorder(out, url=server.url, fsync=False, max_frames=12)
        receive = recorder.receive

        def receive_and_tell(message: object) -> None:
            receive(message)  # type: ignore[arg-type]
            if recorder.frames_written:
                holding.set()

        recorder.receive = receive_and_tell  # type: ignore[method-assign]
        recording = asyncio.create_task(record_stream(recorder, server.url, VIEWER, sleep=_no_wait))
        await asyncio.wait_for(holding.wait(), 30)
        async with httpx.AsyncClient(base_url=server.url) as client:
            headers = {"Authorization": "Bearer operator-token-for-the-clock"}
            response = await client.post("/v1/sim/clock", json={"paused": False}, headers=headers)
            assert response.status_code == 200, response.text
        await asyncio.wait_for(recording, 30)
        recorder.close()
    with RecordingReader(out) as recording_file:
        frames = list(recording_file.frames())
    assert frames[0].time_s == 1.0 and frames[0].span_s == 0.0  # the fleet as started: no second of its own
    assert len(frames) == 12 and any(f.span_s > 1 for f in frames)
    end_s = int(frames[-1].time_s)
    rejects, timeouts = per_second_running_sums(end_s)
    exact = (rejects[end_s] - rejects[1], timeouts[end_s] - timeouts[1])
    assert exact[0] > 0
    report = write_report(out, tmp_path / "report").markdown.read_text()
    row = next(line for line in report.splitlines() if line.startswith("| 503s / handshake timeouts |"))
    assert row == (
        f"| 503s / handshake timeouts | {exact[0]:,} / {exact[1]:,} (the source's running counts: exact for "
        f"all {end_s - 1} fleet seconds) |"
    )


OPERATOR = "operator-token-for-the-rollout"


async def _start_an_abrupt_rollout(url: str, at_least_s: float) -> None:
    """The operator's own cut: an abrupt rollout (2 nodes every 5 s) once the fleet is past `at_least_s`,
    through the guards as any client goes (typed confirmation: the fleet's name)."""
    import httpx

    headers = {"Authorization": f"Bearer {OPERATOR}"}
    body = {"batch_size": 2, "interval_s": 5, "mode": "abrupt", "pause_cpu_pct": 75}
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        for _ in range(600):  # 30 s at most
            if (await client.get("/v1/fleet", headers=headers)).json()["time_s"] >= at_least_s:
                break
            await asyncio.sleep(0.05)
        asked = await client.post("/v1/rollout", json=body, headers=headers)
        assert asked.status_code == 409, asked.text
        confirm = {"token": asked.json()["confirm_token"], "typed": "regional-outage"}
        done = await client.post("/v1/rollout", json={**body, "confirm": confirm}, headers=headers)
        assert done.status_code == 202, done.text  # applied; it goes on in the fleet


async def test_the_report_of_a_sim_serve_recording_counts_only_the_operators_disconnects(
    tmp_path: Path,
) -> None:
    """User pass on `sim serve regional-outage`, recorded: the report's "Drain, don't disconnect" counted
    the scenario's own power failure (its timeline restarts every node at 0:30) against the operator, as
    if a drain or an action of theirs had cut them. The simulator's disconnects say when the scenario's
    script made them (`data.scripted`), as an injection is told; the report leaves those out, as it does
    injected ones, and counts the operator's own abrupt rollout only."""
    from console.audit import AuditLog

    backend = SimulatorBackend.from_scenario("regional-outage", OUTAGE_OVERRIDES)
    tokens = parse_tokens(f"viewer {VIEWER} recorder\noperator {OPERATOR} ops")
    audit = AuditLog(tmp_path / "audit.jsonl")
    app = create_app(backend, tokens, frame_interval_s=FRAME_INTERVAL_S, audit_log=audit)
    out = tmp_path / "served.sdrec"
    try:
        with ServerThread(app) as server:
            recorder = StreamRecorder(out, url=server.url, fsync=False, max_frames=90)
            recording = asyncio.create_task(record_stream(recorder, server.url, VIEWER, sleep=_no_wait))
            await _start_an_abrupt_rollout(server.url, at_least_s=65.0)
            await asyncio.wait_for(recording, 60)
            recorder.close()
    finally:
        audit.close()
    with RecordingReader(out) as reader:
        events = list(reader.events())
    [started] = [e for e in events if e.kind == "action" and e.data.get("action") == "rollout_start"]
    cut = [e for e in events if e.data.get("mass")]
    scripted = [e for e in cut if e.time_s < started.time_s]
    operators = [e for e in cut if e.time_s >= started.time_s]
    assert [e.time_s for e in scripted] == [30.0] and scripted[0].data.get("scripted") == "restart_nodes"
    assert operators and not any("scripted" in e.data for e in operators)
    report = write_report(out, tmp_path / "report").markdown.read_text()
    drain = report.split("### Drain, don't disconnect")[1].split("###")[0]
    dropped = sum(int(e.data["dropped"]) for e in operators)
    assert f"{dropped:,} connections cut abruptly (not drained)" in drain, drain
    assert "not counted: 1 scripted (0:30 restart_nodes by the scenario)" in drain, drain
    row = next(line for line in report.splitlines() if line.startswith("| mass disconnects |"))
    assert f"| {len(cut):,} (1 scripted: 0:30 restart_nodes by the scenario; {len(operators):,} not) |" in row
