"""`stormdeck record` of a served drill (`stormdeck drill NAME --serve`): the recording knows its drill.

An attached console reads the drill's clock from the stream's hello (`hello.drill`); the recorder wrote a
header without it, so the replay and the report of the same session read fleet time only.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from console.cli import main
from console.drills.schema import build_drill
from console.errors import InputError, StormdeckError
from console.model.units import drill_clock
from console.protocol import Hello, ServedDrill, Source
from console.record.container import RecordKind
from console.record.daemon import StreamRecorder
from console.record.reader import RecordingReader
from console.record.records import DrillInfo
from console.record.replay import ReplaySource
from console.ui.replay import ReplayApp
from console.ui.widgets.header import FleetHeader
from tests.client.fake_fleet_server import wait_for
from tests.drills.test_serve import SHORT_DRILL, served_in_process
from tests.server.conftest import TOKEN_FILE, auth
from tests.ui.conftest import SIZE, fleet_ready

#: SHORT_DRILL's `clock_start = "04:00"`.
CLOCK_START_S = 4 * 3600
FRAMES = 4
ROOT = Path(__file__).resolve().parents[2]


def _token_file(directory: Path) -> Path:
    path = directory / "tokens"
    path.write_text(TOKEN_FILE.split("\n", 1)[0] + "\n")  # the first line's token: the viewer's
    path.chmod(0o600)
    return path


def _record(url: str, out: Path, token_file: Path) -> int:
    args = ["record", url, "--out", str(out), "--token-file", str(token_file), "--no-fsync"]
    return main([*args, "--frames", str(FRAMES)])


@pytest.fixture(scope="module")
def served_url() -> Iterator[str]:
    """The drill served paused: nothing of it is told before a recorder is there to record it."""
    server = served_in_process(build_drill(tomllib.loads(SHORT_DRILL)), paused=True)
    try:
        yield server.url
    finally:
        server.stop()


def _holds_the_drills_line(path: Path) -> bool:
    try:
        with RecordingReader(path) as reader:
            told = [event.message for event in reader.events() if event.kind == "drill"]
            return any(line.startswith("04:00:02 ") for line in told) and reader.frame_count > 0
    except StormdeckError:  # caught mid-write: not yet
        return False


async def _record_the_drills_start(url: str, out: Path, token_file: Path) -> int:
    """`stormdeck record` from the drill's first second until its line at 04:00:02 is recorded: the
    clock is started once the recorder has the stream's hello (its file is made then), and the recorder
    stopped (SIGTERM) once the line and a frame are in the file."""
    args = ["record", url, "--out", str(out), "--token-file", str(token_file), "--no-fsync"]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "console", *args, cwd=ROOT, env=environment
    )
    try:
        await wait_for(out.exists, timeout_s=30, what="the recorder's first hello")
        async with httpx.AsyncClient(base_url=url, headers=auth("admin"), timeout=10) as client:
            started = await client.post("/v1/sim/clock", json={"paused": False})
            assert started.status_code == 200, started.text
        await wait_for(lambda: _holds_the_drills_line(out), timeout_s=30, what="the drill's line recorded")
        child.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(child.wait(), 30)
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()


@pytest.fixture(scope="module")
def recording(served_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("served")
    out = directory / "served.sdrec"
    assert asyncio.run(_record_the_drills_start(served_url, out, _token_file(directory))) == 0
    return out


def test_the_header_names_the_served_drill_and_where_its_clock_starts(recording: Path) -> None:
    with RecordingReader(recording) as reader:
        drill = reader.header.drill
        assert reader.frame_count > 0
    assert drill is not None, "the header says nothing of the drill the stream said it served"
    assert (drill.name, drill.title) == ("short-served", "A short drill to serve")
    assert drill.seed_source == "a test: no seed"
    assert drill.clock_start_s == CLOCK_START_S
    assert drill.speed is None  # the hello does not say it: not guessed


async def test_the_replay_of_a_recorded_served_drill_reads_the_drill_clock(recording: Path) -> None:
    with RecordingReader(recording) as reader:
        first_s = reader.frame_at(0).time_s
        app = ReplayApp(ReplaySource(reader, paused=True, clock=lambda: 1000.0), remember_theme=False)
        async with app.run_test(size=SIZE):
            await fleet_ready(app)
            await wait_for(
                lambda: app.model.frame is not None and app.model.frame.time_s == first_s,
                what="the recording's first frame",
            )
            await fleet_ready(app)
            header = str(app.screen.query_one(FleetHeader).render())
    expected = f"drill clock {drill_clock(CLOCK_START_S).text(first_s)}"
    assert expected.startswith("drill clock 04:00:")
    assert expected in header and "fleet clock" not in header, header


def test_the_report_of_a_recorded_served_drill_has_the_drill_clock_column(
    recording: Path, tmp_path: Path
) -> None:
    assert main(["report", str(recording), "--out", str(tmp_path / "report")]) == 0
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "| drill | short-served (drill clock 04:00:00 at fleet time 0:00) |" in markdown
    timeline = markdown.split("## Timeline")[1].split("## What the seeds say")[0]
    assert "| time | drill clock | kind | what | verdict |" in timeline
    # Nothing scores a served drill (docs/drills.md): the report does not say a score was to come.
    objectives = markdown.split("## Objectives")[1].split("## Timeline")[0]
    assert "short-served" in objectives and "scored it" not in objectives, objectives
    assert "(`--serve`, which scores nothing)" in objectives, objectives


def test_recording_on_into_the_same_drills_file_keeps_its_one_header(served_url: str, tmp_path: Path) -> None:
    """A restarted `record --out FILE` continues the file: its header, written once, still holds."""
    out, token_file = tmp_path / "on.sdrec", _token_file(tmp_path)
    assert _record(served_url, out, token_file) == 0
    with RecordingReader(out) as reader:
        before = reader.header
    assert _record(served_url, out, token_file) == 0
    with RecordingReader(out) as reader:
        assert reader.header == before and reader.header.drill is not None
        assert reader.frame_count == 2 * FRAMES
        kinds = [entry.kind for entry in reader.entries()]
        assert kinds.count(RecordKind.HEADER) == 1 and kinds[0] is RecordKind.HEADER


def _hello(drill: ServedDrill | None, fleet: str = "thundering-herd") -> Hello:
    return Hello(fleet=fleet, source=Source.SIMULATOR, epoch="e1", seq=0, drill=drill)


def test_attach_record_reads_the_drill_from_the_hello_and_a_plain_fleet_has_none(tmp_path: Path) -> None:
    """`attach --record` records through the same recorder; a fleet that serves no drill gets no drill."""
    served = ServedDrill(name="x", title="X", clock_start_s=3600, duration_s=60)
    tapped = StreamRecorder(tmp_path / "attach.sdrec", option="--record", fsync=False)
    tapped.receive(_hello(served))
    plain = StreamRecorder(tmp_path / "plain.sdrec", fsync=False)
    plain.receive(_hello(None))
    try:
        assert tapped.writer is not None and plain.writer is not None
        drill = tapped.writer.header.drill
        assert drill is not None and (drill.name, drill.title, drill.clock_start_s) == ("x", "X", 3600)
        assert drill.seed_source is None  # the hello's "" (not said) is not a seed
        assert plain.writer.header.drill is None
    finally:
        tapped.close()
        plain.close()


def _recorded(path: Path, drill: ServedDrill | None) -> bytes:
    """A recording begun by a served drill's (or a plain fleet's) hello."""
    recorder = StreamRecorder(path, fsync=False)
    recorder.receive(_hello(drill))
    recorder.close()
    return path.read_bytes()


OTHER = ServedDrill(name="thundering-herd", title="Thundering herd", clock_start_s=4 * 3600, duration_s=900)
SHORT = ServedDrill(
    name="short-served", title="A short drill to serve", clock_start_s=CLOCK_START_S, duration_s=60
)


@pytest.mark.parametrize(
    ("held", "now", "names"),
    [
        (SHORT, OTHER, ["'short-served'", "'thundering-herd'"]),  # the next drill on the same fleet
        (SHORT, None, ["'short-served'", "without a drill"]),  # `sim serve` of the drill's scenario
        (SHORT, SHORT.model_copy(update={"clock_start_s": 3600}), ["04:00:00", "01:00:00"]),  # edited
    ],
)
def test_a_drills_recording_is_not_continued_with_another_sessions_frames(
    tmp_path: Path, held: ServedDrill, now: ServedDrill | None, names: list[str]
) -> None:
    """Its header, written once, gives the whole file the drill's clock: another drill's frames (or a
    plain fleet's) of the same fleet would be read on it. Refused as another fleet's file is: naming the
    option, both sessions, and the file left as it was."""
    path = tmp_path / "drill.sdrec"
    before = _recorded(path, held)
    for option in ("--out", "--record"):  # `record`; `attach --record`, whose console goes on unrecorded
        recorder = StreamRecorder(path, option=option, fsync=False)
        recorder.receive(_hello(now))
        recorder.close()
        assert recorder.done.is_set() and isinstance(recorder.wrong_fleet, InputError)
        told = str(recorder.wrong_fleet)
        assert recorder.wrong_fleet.field == option and all(name in told for name in names), told
        assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("held", "now"),
    [
        pytest.param(
            None, SHORT, id="a plain recording, or a served drill's made before: fleet time throughout"
        ),
        pytest.param(DrillInfo(name="short-served"), SHORT, id="a drill's header older than its clock"),
        pytest.param(DrillInfo(name="short-served", clock_start_s=CLOCK_START_S), SHORT, id="the same drill"),
    ],
)
def test_a_recording_whose_clock_still_holds_is_continued(
    tmp_path: Path, held: DrillInfo | None, now: ServedDrill
) -> None:
    path = tmp_path / "on.sdrec"
    first = StreamRecorder(path, fsync=False, drill=held)  # the header as `drill --record` writes it
    first.receive(_hello(None))
    first.close()
    with RecordingReader(path) as reader:
        header = reader.header
    recorder = StreamRecorder(path, fsync=False)
    recorder.receive(_hello(now))
    recorder.close()
    assert recorder.wrong_fleet is None and not recorder.done.is_set()
    with RecordingReader(path) as reader:
        assert reader.header == header  # written once: the file keeps its own
        assert [entry.kind for entry in reader.entries()] == [
            RecordKind.HEADER,
            RecordKind.HELLO,
            RecordKind.HELLO,
        ]
