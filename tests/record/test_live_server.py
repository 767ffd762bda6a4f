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
    assert "### Drain, don't disconnect" in report
