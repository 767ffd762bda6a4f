"""The headless recorder against a stream: records everything once, resumes, survives restarts."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from console.record.daemon import StreamRecorder, StreamRefused, record_stream
from console.record.reader import RecordingReader
from tests.record.conftest import Tick
from tests.record.stream_server import TOKEN, FleetStream

ROOT = Path(__file__).resolve().parents[2]


async def _no_wait(_: float) -> None:
    await asyncio.sleep(0)


async def test_records_every_frame_once_across_a_dropped_connection(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    ticks = outage_ticks[:40]
    async with FleetStream(ticks, drop_after_frames=15).serving() as stream:
        recorder = StreamRecorder(recording_path, url=stream.url, fsync=False, max_frames=40)
        written = await asyncio.wait_for(record_stream(recorder, stream.url, TOKEN, sleep=_no_wait), 20)
        recorder.close()
    assert written == 40
    assert stream.resumes[0] == (None, None) and stream.resumes[1] == ("15", "sim")
    with RecordingReader(recording_path) as recording:
        assert [f.seq for f in recording.frames()] == list(range(1, 41))
        assert list(recording.frames()) == [t.frame for t in ticks]
        assert recording.header.fleet == "stream-fleet" and recording.header.url == stream.url
        events = list(recording.events())
        stream_events = [e for e in events if e.data.get("origin") != "recorder"]
        assert len(stream_events) == sum(len(t.events) for t in ticks)
        assert any(e.kind == "alarm" and e.data.get("origin") == "recorder" for e in events)


async def test_a_restarted_recorder_resumes_from_its_file(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    async with FleetStream(outage_ticks[:30]).serving() as stream:
        first = StreamRecorder(recording_path, url=stream.url, fsync=False, max_frames=12)
        await asyncio.wait_for(record_stream(first, stream.url, TOKEN, sleep=_no_wait), 20)
        first.close()
        second = StreamRecorder(recording_path, url=stream.url, fsync=False, max_frames=18)
        assert second.resume_from == (12, "sim")
        await asyncio.wait_for(record_stream(second, stream.url, TOKEN, sleep=_no_wait), 20)
        second.close()
    assert stream.resumes[-1] == ("12", "sim")
    with RecordingReader(recording_path) as recording:
        assert [f.seq for f in recording.frames()] == list(range(1, 31))


async def test_a_recording_of_another_fleet_is_not_continued_with_this_ones_frames(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    """User pass: `record URL_B --out session.sdrec` where session.sdrec was fleet demo's recording (a name
    reused for the next incident) appended graceful-drain's frames to demo's, under demo's header — a
    report and a replay of two fleets as one. The stream's hello names its fleet: another fleet's file is
    refused, naming --out and both fleets, and left as it was."""
    from console.errors import InputError
    from console.protocol import Hello, Source

    earlier = StreamRecorder(recording_path, url="http://127.0.0.1:1", fsync=False)
    earlier.receive(Hello(fleet="demo", source=Source.SIMULATOR, epoch="first", seq=0))
    for tick in outage_ticks[:5]:
        earlier.receive(tick.frame.model_copy(update={"epoch": "first"}))
    earlier.close()
    before = recording_path.read_bytes()
    async with FleetStream(outage_ticks[:10]).serving() as stream:  # its hello says "stream-fleet"
        recorder = StreamRecorder(recording_path, url=stream.url, fsync=False, max_frames=10)
        with pytest.raises(InputError) as refused:
            await asyncio.wait_for(record_stream(recorder, stream.url, TOKEN, sleep=_no_wait), 10)
        recorder.close()
    told = str(refused.value)
    assert refused.value.field == "--out" and "'demo'" in told and "'stream-fleet'" in told, told
    assert recording_path.read_bytes() == before
    assert recorder.frames_written == 0


async def test_a_wrong_token_stops_the_recorder(outage_ticks: list[Tick], recording_path: Path) -> None:
    async with FleetStream(outage_ticks[:3]).serving() as stream:
        recorder = StreamRecorder(recording_path, url=stream.url, fsync=False)
        with pytest.raises(StreamRefused, match="401") as refused:
            await asyncio.wait_for(record_stream(recorder, stream.url, "wrong", sleep=_no_wait), 10)
    assert not recording_path.exists()  # nothing is created before a hello
    # User pass: "(HTTP 401: the token was not accepted — check --token-file or STORMDECK_TOKEN): check the
    # token" said it twice, and not that nothing was recorded.
    told = str(refused.value)
    assert told.count("check") == 1 and told.endswith("; nothing recorded"), told


@pytest.mark.parametrize("stop", ["frames", "sigterm"])
async def test_the_cli_records_until_told_to_stop(
    outage_ticks: list[Tick], tmp_path: Path, stop: str
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(f"viewer {TOKEN} tests\n")
    token_file.chmod(0o600)  # else its first stderr line is the warning that others may read it
    out = tmp_path / "daemon.sdrec"
    async with FleetStream(outage_ticks[:20]).serving() as stream:
        args = ["record", stream.url, "--out", str(out), "--token-file", str(token_file), "--no-fsync"]
        if stop == "frames":
            args += ["--frames", "20"]
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "console",
            *args,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stderr=asyncio.subprocess.PIPE,
        )
        if stop == "sigterm":
            assert child.stderr is not None
            line = await asyncio.wait_for(child.stderr.readline(), 20)  # "recording URL into FILE, …"
            assert b"recording" in line
            child.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(child.wait(), 30)
    assert code == 0
    with RecordingReader(out) as recording:
        seqs = [f.seq for f in recording.frames()]
    assert seqs == list(range(1, len(seqs) + 1))
    if stop == "frames":
        assert len(seqs) == 20


async def test_stopped_before_a_frame_came_the_recorder_says_nothing_was_recorded(tmp_path: Path) -> None:
    """User pass: `record http://127.0.0.1:1 --out down.sdrec`, stopped while it retried, ended with
    "0 frames recorded into down.sdrec" — a file it never made. It says nothing was recorded, and why."""
    token_file = tmp_path / "token"
    token_file.write_text(f"viewer {TOKEN} tests\n")
    token_file.chmod(0o600)
    out = tmp_path / "down.sdrec"
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "console", "record", "http://127.0.0.1:9", "--out", str(out)),
        *("--token-file", str(token_file), "--no-fsync"),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=asyncio.subprocess.PIPE,
    )
    assert child.stderr is not None
    line = await asyncio.wait_for(child.stderr.readline(), 20)
    # retrying the closed port, within --wait-s (never reached: not a stream lost)
    assert b"waiting for the fleet API at http://127.0.0.1:9 (never reached: connection refused)" in line, (
        line
    )
    child.send_signal(signal.SIGTERM)
    told = (await asyncio.wait_for(child.stderr.read(), 30)).decode()
    assert await child.wait() == 0
    assert not out.exists()
    assert "0 frames recorded" not in told
    assert f"nothing recorded: no frame came from http://127.0.0.1:9; {out} was not created" in told, told


async def _run_record(*words: str, timeout_s: float = 30) -> tuple[int, str]:
    """`stormdeck record WORDS` in a child process: its exit status and its stderr."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "console", "record", *words),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(child.communicate(), timeout_s)
    assert child.returncode is not None
    return child.returncode, err.decode()


async def test_a_fleet_never_reached_ends_the_recorder_after_its_wait(tmp_path: Path) -> None:
    """Review as a new user: `record http://127.0.0.1:1 --out x.sdrec --frames 1` retried for ever
    ("stream lost …; reconnecting in 25.8 s"), so a script hung. A fleet never reached is waited for
    --wait-s seconds, then the recorder fails as `act` does when nothing answers: exit 1, saying so."""
    async with FleetStream([]).serving() as stream:
        url = stream.url
    token_file = tmp_path / "token"
    token_file.write_text(f"viewer {TOKEN} tests\n")
    token_file.chmod(0o600)
    out = tmp_path / "x.sdrec"
    code, told = await _run_record(
        url, *("--out", str(out), "--token-file", str(token_file), "--frames", "1", "--wait-s", "0")
    )
    assert code == 1, told
    assert f"never reached {url}: connection refused — is the server running?" in told, told
    assert "lost" not in told and "reconnecting" not in told
    assert not out.exists()


def test_the_recorder_waits_for_a_fleet_never_reached_no_longer_than_told(tmp_path: Path) -> None:
    from console.model.link import LinkState, LinkStatus

    recorder = StreamRecorder(tmp_path / "x.sdrec", url="http://127.0.0.1:1", fsync=False, wait_s=10.0)
    recorder.sink(LinkStatus(LinkState.CONNECTING, 0, at_s=100.0))
    recorder.sink(LinkStatus(LinkState.RECONNECTING, 1, 4.0, "connection refused", 100.5, reached=False))
    assert not recorder.done.is_set()  # the next try, at 104.5 s, is within the 10 s
    recorder.sink(LinkStatus(LinkState.CONNECTING, 1, at_s=104.5))
    recorder.sink(LinkStatus(LinkState.RECONNECTING, 2, 6.0, "connection refused", 105.0, reached=False))
    assert recorder.done.is_set() and recorder.never_reached == "connection refused"
    # A fleet once reached is a stream lost: followed however long it takes (a daemon across restarts).
    patient = StreamRecorder(tmp_path / "y.sdrec", url="http://127.0.0.1:1", fsync=False, wait_s=10.0)
    patient.sink(LinkStatus(LinkState.CONNECTING, 0, at_s=100.0))
    patient.sink(LinkStatus(LinkState.RECONNECTING, 9, 30.0, "connection refused", 500.0, reached=True))
    assert not patient.done.is_set() and patient.never_reached is None
    recorder.close()
    patient.close()


async def test_a_refused_token_exits_1_as_act_does(outage_ticks: list[Tick], tmp_path: Path) -> None:
    """Review: `record URL --token-file BAD` exited 2 while `act … undrain` and `plan drain` with the same
    token exited 1, README's rule for auth (a token the fleet refuses)."""
    from console.client.admin import ApiError

    bad = tmp_path / "bad"
    bad.write_text("viewer not-the-token tests\n")
    bad.chmod(0o600)
    async with FleetStream(outage_ticks[:3]).serving() as stream:
        code, told = await _run_record(
            stream.url, "--out", str(tmp_path / "y.sdrec"), "--token-file", str(bad)
        )
    assert code == 1 == ApiError(401, "no").exit_code, told
    assert "refused the stream (HTTP 401" in told, told


def test_the_recorders_last_line_counts_frames_in_the_singular_and_says_a_recording_was_continued(
    tmp_path: Path,
) -> None:
    from console.cli.record import what_was_recorded

    out = tmp_path / "s.sdrec"
    out.write_bytes(b"x")
    assert what_was_recorded(1, out, "http://h:1", continued=False) == f"1 frame recorded into {out}"
    assert what_was_recorded(3, out, "http://h:1", continued=True) == f"3 frames added to {out}"
    assert (
        what_was_recorded(0, out, "http://h:1", continued=True)
        == f"no frame came from http://h:1: no frames added to {out}"
    )


@pytest.mark.parametrize(
    ("text", "size"), [("1000000", 1_000_000), ("500M", 500 * 1024**2), ("2GiB", 2 * 1024**3)]
)
def test_sizes_read_as_people_write_them(text: str, size: int) -> None:
    from console.cli.record import parse_size

    assert parse_size(text) == size


def test_the_cli_refuses_nonsense_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from console.cli import main

    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    out = str(tmp_path / "x.sdrec")
    assert (
        main(["record", "http://127.0.0.1:9", "--out", out, "--token-file", str(token_file), "--frames", "0"])
        == 2
    )
    assert "--frames" in capsys.readouterr().err
    assert main(["record", "http://127.0.0.1:9", "--out", out, "--max-age-s", "-5"]) == 2
    assert capsys.readouterr().err.startswith("stormdeck: --max-age-s: '-5'")  # as typed, not max_age_s
    assert (
        main(["record", "http://127.0.0.1:9", "--out", out, "--token-file", str(tmp_path / "missing")]) == 2
    )
    assert "--token-file" in capsys.readouterr().err
    assert (
        main(
            [
                "record",
                "http://127.0.0.1:9",
                "--out",
                out,
                "--token-file",
                str(token_file),
                "--max-size",
                "1K",
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.startswith("stormdeck: --max-size: 1024 is not allowed")


async def test_a_tap_records_what_the_console_is_fed(outage_ticks: list[Tick], recording_path: Path) -> None:
    from console.cli import build_parser
    from console.model.link import Received
    from console.protocol import Hello, Source
    from console.record.daemon import RecordingTap

    class Scripted:
        async def run(self, sink) -> None:  # type: ignore[no-untyped-def]
            sink(Received(Hello(fleet="tap-fleet", source=Source.SIMULATOR, epoch="sim", seq=0), 0.0))
            for tick in outage_ticks[:5]:
                sink(Received(tick.frame, 0.0))

    fed: list[object] = []
    await RecordingTap(Scripted(), StreamRecorder(recording_path, fsync=False)).run(fed.append)
    assert len(fed) == 6
    with RecordingReader(recording_path) as recording:  # closed by the tap when its source ends
        assert recording.header.fleet == "tap-fleet"
        assert list(recording.frames()) == [t.frame for t in outage_ticks[:5]]
    args = build_parser().parse_args(["attach", "http://h:1", "--record", str(recording_path)])
    assert args.record == recording_path


def test_a_restarted_source_is_recorded_from_its_first_frame(
    outage_ticks: list[Tick], recording_path: Path
) -> None:
    # The new run's hello set the writer's epoch but kept the old run's last seq, so the new run's frames
    # with seq up to it read as "already held" and were skipped: a fleet restarted after 20 s lost its
    # first 17 frames here (measured on `sim serve demo`); after hours at 1 Hz, hours of the new run.
    from console.protocol import Hello, Source

    recorder = StreamRecorder(recording_path, fsync=False)
    recorder.receive(Hello(fleet="f", source=Source.SIMULATOR, epoch="first", seq=0))
    for tick in outage_ticks[:20]:
        recorder.receive(tick.frame.model_copy(update={"epoch": "first"}))
    recorder.receive(Hello(fleet="f", source=Source.SIMULATOR, epoch="second", seq=0))
    assert recorder.resume_from == (None, "second")  # nothing of the new run held yet: no ?since=
    for tick in outage_ticks[:10]:
        recorder.receive(tick.frame.model_copy(update={"epoch": "second"}))
    recorder.close()
    assert recorder.frames_written == 30
    with RecordingReader(recording_path) as recording:
        kept = [(f.epoch, f.seq) for f in recording.frames()]
    assert kept == [("first", s) for s in range(1, 21)] + [("second", s) for s in range(1, 11)]


def test_the_recorder_says_what_it_records_and_into_which_file(
    outage_ticks: list[Tick], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """User pass: `stormdeck record URL --out session.sdrec` said "recording from the stream's next frame"
    — of what, into which file? — and "recording (resume from seq 3, epoch sim)" continuing a file."""
    import logging

    from console.model.link import LinkState, LinkStatus
    from console.record.writer import RecordingWriter
    from tests.record.conftest import header

    url, new, old = "http://127.0.0.1:8470", tmp_path / "new.sdrec", tmp_path / "old.sdrec"
    with RecordingWriter(old, header(), fsync=False) as writer:
        for tick in outage_ticks[:3]:
            writer.write(tick.frame)
    with caplog.at_level(logging.INFO, logger="console.record.daemon"):
        for out in (new, old):
            recorder = StreamRecorder(out, url=url, fsync=False)
            recorder.sink(LinkStatus(LinkState.LIVE))
            recorder.close()
    last = outage_ticks[2].frame
    assert caplog.messages == [
        f"recording {url} into {new}, from the stream's next frame on",
        f"recording {url} into {old}, continuing it after its last frame (seq {last.seq}, epoch {last.epoch})",
    ]
