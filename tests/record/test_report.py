"""The after-action report: its sections, figures that match the simulator's own summary, charts, seeds."""

from __future__ import annotations

import gzip
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from console.cli import main
from console.record.reader import RecordingReader
from console.record.report import SECTIONS, write_report
from tests.record.sessions import HerdSession, record_herd

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> HerdSession:
    return record_herd(tmp_path_factory.mktemp("herd") / "herd.sdrec", drill=True)


@pytest.fixture(scope="module")
def report(herd: HerdSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    out = tmp_path_factory.mktemp("report")
    files = write_report(herd.path, out)
    return files.markdown.read_text(), out


def _row(markdown: str, figure: str) -> str:
    match = re.search(rf"^\| {re.escape(figure)} \| (.*) \|$", markdown, re.MULTILINE)
    assert match, figure
    return match.group(1)


def test_sections_come_in_order(report: tuple[str, Path]) -> None:
    markdown, _ = report
    headings = re.findall(r"^## (.+)$", markdown, re.MULTILINE)
    assert headings == list(SECTIONS)


def test_key_figures_match_the_simulators_summary_of_the_same_run(
    report: tuple[str, Path], herd: HerdSession
) -> None:
    markdown, _ = report
    s = herd.summary
    assert _row(markdown, "minimum connections").startswith(f"{s['min_connections']:,} at ")
    assert _row(markdown, "peak attempts per 100 ms").startswith(f"{s['peak_attempts_per_100ms']:,} at ")
    assert _row(markdown, "recovery time").startswith(f"{s['recovery_s']:.0f} s")
    assert _row(markdown, "max node CPU").startswith(f"{s['max_node_cpu_pct']:.1f} %")
    assert _row(markdown, "lockstep index").startswith(f"{s['lockstep_index']:.2f}")
    assert _row(markdown, "action attempts") == "4 (1 blocked, 2 applied, 1 needs_confirmation)"
    # A share as every other in the report writes it, "95 %" (it read "(61% of the start)"); a drill's
    # time on its clock (tests/record/test_drill_report_clock.py).
    assert re.search(r" at 04:\d\d:\d\d \(\d+ % of the start\)$", _row(markdown, "minimum connections"))


def test_timeline_holds_events_alarms_actions_verdicts_and_confirmations(
    report: tuple[str, Path], herd: HerdSession
) -> None:
    markdown, _ = report
    timeline = markdown.split("## Timeline")[1].split("## What the seeds say")[0]
    assert "| drain gw-001 → blocked | blocked: headroom_pct 12.0 (limit 35.0) |" in timeline
    assert "rollout_halt → applied | ok |" in timeline
    assert "admission: confirmed (typed 'test-fleet')" in timeline
    assert "cpu_abort raised" in timeline and "alarm cleared" in timeline
    assert re.search(r"\| node_state \| ×3: ", timeline)  # a batch of restarts is one row, not three
    times = [m for m in re.findall(r"^\| (\d+:\d\d) \|", timeline, re.MULTILINE)]
    seconds = [int(m.split(":")[0]) * 60 + int(m.split(":")[1]) for m in times]
    assert seconds == sorted(seconds)


def test_a_drills_timeline_reads_the_drills_clock_beside_fleet_time(report: tuple[str, Path]) -> None:
    """User pass: a drill's report names its objectives on the drill's clock ("admission set by 02:00:40")
    and its timeline read fleet time only ("0:40"): a trainer matched them by hand. A recording that
    carries the drill's clock gets it beside each row's time, and the Session says where it starts."""
    markdown, _ = report
    assert _row(markdown, "drill") == "thundering-herd (drill clock 04:00:00 at fleet time 0:00)"
    timeline = markdown.split("## Timeline")[1].split("## What the seeds say")[0]
    assert "| time | drill clock | kind | what | verdict |" in timeline
    rows = re.findall(r"^\| (\d+):(\d\d) \| (\d\d:\d\d:\d\d) \|", timeline, re.MULTILINE)
    assert len(rows) > 5
    for minutes, seconds, drill_clock in rows:
        assert drill_clock == f"04:{int(minutes):02d}:{seconds}", (minutes, seconds, drill_clock)


def test_objectives_of_a_drill_are_shown(report: tuple[str, Path]) -> None:
    markdown, _ = report
    objectives = markdown.split("## Objectives")[1].split("## Timeline")[0]
    assert "Score: **50**" in objectives
    assert "| connections never below 90 % | no | — | 61 % at 1:58 |" in objectives  # no points recorded


def test_the_seeds_say_what_should_have_been_done_and_whether_it_was(
    report: tuple[str, Path], herd: HerdSession
) -> None:
    markdown, _ = report
    seeds = markdown.split("## What the seeds say")[1]
    abort = seeds.split("### Abort criterion: halt the restart")[1].split("###")[0]
    assert "outage seed (000" in abort
    assert (
        # on the drill's clock, as the rest of a drill's report (tests/record/test_drill_report_clock.py)
        f"done — rollout halted at 04:{int(herd.halted_s // 60):02d}:{int(herd.halted_s % 60):02d}, +15 s"
        in abort
    )
    assert "### Reconnects came in lockstep waves: decorrelate the clients" in seeds
    assert "random(base, min(max, last_delay × 3))" in seeds
    retry = seeds.split("### Turn the surge away cheaply")[1].split("###")[0]
    assert "interview seed (002" in retry and "with a randomized Retry-After window" in retry
    # Every cut is the scenario's own rollout's (the trainee only halts it): none counted against them.
    assert "### Drain, don't disconnect" not in seeds
    assert "(4 scripted: 04:00:30 rollout by the scenario; 04:00:50 rollout by the scenario;" in markdown
    losing = seeds.split("### Drain ÷ inflow below 1: the storm is winning")[1].split("###")[0]
    assert "**In this session:** done — admission tightened at " in losing  # the session's own admission


def test_charts_are_svg_with_the_series_and_the_markers(report: tuple[str, Path], herd: HerdSession) -> None:
    markdown, out = report
    for name in ("connections", "waves", "cpu"):
        assert f"![{name}]({name}.svg)" in markdown
        root = ET.parse(out / f"{name}.svg").getroot()
        assert root.tag == f"{SVG}svg"
        points = root.find(f"{SVG}polyline").get("points").split()  # type: ignore[union-attr]
        assert len(points) > 100
        actions = [e for e in root.iter(f"{SVG}line") if "action" in (e.get("class") or "")]
        assert len(actions) == 4
    with RecordingReader(herd.path) as recording:
        frames = recording.frame_count
    assert (
        len(ET.parse(out / "connections.svg").getroot().find(f"{SVG}polyline").get("points").split())
        == frames
    )  # type: ignore[union-attr]


def test_a_plain_recording_has_no_objectives_and_the_cli_writes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.record.test_roundtrip import write_session  # noqa: F401  (keeps the fixtures' shapes in one place)

    session = record_herd(tmp_path / "plain.sdrec")
    assert main(["report", str(session.path), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out.split()
    assert printed[0].endswith("report.md") and len(printed) == 4
    written = (tmp_path / "out" / "report.md").read_text()
    assert "Not a drill recording" in written
    assert "| time | kind | what | verdict |" in written  # no drill clock to show beside fleet time


def test_the_cli_refuses_a_file_that_is_not_a_recording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("not a recording\n")
    assert main(["report", str(bogus), "--out", str(tmp_path / "out")]) == 2
    assert "a stormdeck recording" in capsys.readouterr().err


def test_a_recording_saved_as_zcat_printed_it_is_named_for_what_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It read "expected a stormdeck recording (its first record is a header)" — and its first line is one.
    session = record_herd(tmp_path / "herd.sdrec")
    plain = tmp_path / "herd.jsonl"
    with gzip.open(session.path, "rb") as members:  # reads every member: what `zcat` prints
        plain.write_bytes(members.read())
    assert plain.read_text().startswith('{"type":"recording"')  # the header, in plain text
    assert main(["report", str(plain), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "plain JSON lines (as `zcat` prints a recording)" in err and "give the .sdrec file itself" in err


def test_a_recording_without_frames_still_reports(tmp_path: Path) -> None:
    from console.record.writer import RecordingWriter
    from tests.record.conftest import header

    path = tmp_path / "empty.sdrec"
    RecordingWriter(path, header(), fsync=False).close()
    files = write_report(path, tmp_path / "out")
    markdown = files.markdown.read_text()
    assert files.charts == [] and "No frames were recorded." in markdown
    assert re.findall(r"^## (.+)$", markdown, re.MULTILINE) == list(SECTIONS)


def test_each_alarm_says_what_it_said_when_raised(herd: HerdSession) -> None:
    """The report judges alarms afresh from the frames; a raised row carries the alarm's words at that
    moment (the recorder's own alarm event then), not its last reading before it cleared."""
    from console.protocol import Event
    from console.record.review import review

    with RecordingReader(herd.path) as recording:
        raised = {
            (r.data["name"], r.node, r.time_s): r.message.split(": ", 1)[1]
            for r in recording.records()
            if isinstance(r, Event) and r.kind == "alarm" and r.data.get("change") == "raised"
        }
        spans = review(recording).alarms
    assert spans and len(spans) == len(raised)
    assert {(a.name, a.node, a.since_s): a.message for a in spans} == raised
    assert any(a.cleared_s is not None for a in spans)


def test_recovery_reads_as_what_happened(herd: HerdSession) -> None:
    from dataclasses import replace

    from console.record.clock import clock
    from console.record.report.figures import _recovery_text
    from console.record.review import review

    with RecordingReader(herd.path) as recording:
        figures = review(recording).figures
    assert figures is not None and figures.first_disconnect_s is not None
    assert _recovery_text(replace(figures, recovery_s=0.0), clock).startswith("never below 95 % of before")
    assert _recovery_text(replace(figures, recovery_s=None), clock).startswith("not recovered by the end")
    assert _recovery_text(replace(figures, first_disconnect_s=None), clock) == "no mass disconnect"


def test_report_out_is_checked_and_written_all_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    session = record_herd(tmp_path / "plain.sdrec")
    a_file = tmp_path / "a-file"
    a_file.write_text("mine\n")
    for out in ("", str(a_file)):  # "" was the current directory; a file gave FileExistsError
        assert main(["report", str(session.path), "--out", out]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"stormdeck: --out: {out!r} is not allowed") and "Traceback" not in err
    assert a_file.read_text() == "mine\n"

    out = tmp_path / "out"
    (out / "report.md").mkdir(parents=True)  # not writable as report.md: refused before any chart
    assert main(["report", str(session.path), "--out", str(out)]) == 2
    assert "report.md" in capsys.readouterr().err and sorted(p.name for p in out.iterdir()) == ["report.md"]
    (out / "report.md").rmdir()

    real_write_text = Path.write_text

    def failing(self: Path, *args: object, **kwargs: object) -> int:
        if self.name == ".report.md.partial":
            raise PermissionError(13, "Permission denied")
        return real_write_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", failing)
    assert main(["report", str(session.path), "--out", str(out)]) == 2
    assert "Permission denied" in capsys.readouterr().err
    assert list(out.iterdir()) == []  # no chart written without its report, no partial left


def test_recording_outputs_name_their_option_and_refuse_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STORMDECK_TOKEN", "t")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a recording\n")
    for argv, option in (
        (["record", "http://127.0.0.1:9", "--out", str(tmp_path)], "--out"),
        (["drill", "graceful-drain", "--headless", "--record", str(tmp_path)], "--record"),
        (["drill", "graceful-drain", "--headless", "--record", str(notes)], "--record"),
        (["attach", "http://127.0.0.1:9", "--record", str(tmp_path)], "--record"),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"stormdeck: {option}: ") and "Traceback" not in err, argv
    assert notes.read_text() == "not a recording\n"


def test_503s_and_timeouts_of_a_sped_up_recording_are_marked_as_estimates(
    outage_ticks: list, tmp_path: Path
) -> None:
    """Found in review: a recording made at ×10 reported 9.9 M timeouts for a span the simulator counted
    1.9 M in — each frame's last-second rate was multiplied by its 10 s span as if it were the mean. The
    frames carry no running counts, so such a total is an estimate and says so (≈, and how), beside the
    exact count of the seconds the frames do carry; at real time the sum is a count and has no ≈."""
    from console.record.review import review
    from console.record.writer import RecordingWriter
    from tests.record.conftest import header

    def recorded(name: str, every: int) -> tuple[str, list]:
        frames = []
        for i, tick in enumerate(outage_ticks[every - 1 :: every]):
            totals = tick.frame.totals.model_copy(
                update={"timeouts_per_s": 100.0 * (i + 1), "rejects_per_s": 3.0}
            )
            frames.append(tick.frame.model_copy(update={"totals": totals, "span_s": float(every)}))
        path = tmp_path / f"{name}.sdrec"
        with RecordingWriter(path, header(), fsync=False) as writer:
            for frame in frames:
                writer.write(frame)
        return write_report(path, tmp_path / name).markdown.read_text(), frames

    fast, frames = recorded("fast", 10)
    counted = sum(f.totals.timeouts_per_s for f in frames)
    row = _row(fast, "503s / handshake timeouts")
    assert row.startswith(f"≈ {30 * len(frames):,} / ≈ {10 * counted:,.0f} (estimated: ")
    assert f"Exact for the {len(frames)} of {10 * len(frames)} fleet seconds" in row
    assert row.endswith(f"the frames carry: {3 * len(frames):,} / {counted:,.0f})")
    with RecordingReader(tmp_path / "fast.sdrec") as recording:
        assert review(recording).figures.totals_estimated  # type: ignore[union-attr]

    real, frames = recorded("real", 1)
    counted = sum(f.totals.timeouts_per_s for f in frames)
    assert _row(real, "503s / handshake timeouts") == f"{3 * len(frames):,} / {counted:,.0f}"
    assert "≈" not in real


def test_objectives_show_each_objectives_points_and_how_the_score_comes_from_them(
    outage_ticks: list, tmp_path: Path
) -> None:
    """Found in review: "Score: 99.3" with every objective met and nothing saying where 0.7 went. The drill's
    outcome now carries each objective's points of its maximum and the time penalty; the report shows both."""
    from console.drills.objectives import Measured, Score
    from console.record.writer import RecordingWriter
    from tests.record.conftest import header

    def measured(name: str, met: bool, worth: float) -> Measured:
        return Measured(name, "no_override", met, None, None, "why", worth if met else 0.0, worth)

    score = Score(
        score=59.3,
        max_score=100.0,
        penalty=0.7,
        minutes_below=0.33,
        objectives=[measured("halted", True, 60.0), measured("floor", False, 40.0)],
        penalty_below_pct=97.0,
    )
    path = tmp_path / "drill.sdrec"
    with RecordingWriter(path, header(), fsync=False) as writer:
        writer.write(outage_ticks[0].frame)
        writer.write(score.outcome(1.0, ["why", "why"]))
    markdown = write_report(path, tmp_path / "out").markdown.read_text()
    objectives = markdown.split("## Objectives")[1].split("## Timeline")[0]
    assert (
        "Score: **59.3** / 100 — the points of the objectives met (60) − a time penalty of 0.7 "
        "(20 s below 97 % of the starting connections)"  # as the end screen says it, not "0.33 fleet min"
    ) in objectives
    assert "| halted | yes | 60 / 60 | why |" in objectives
    assert "| floor | no | 0 / 40 | why |" in objectives


def test_a_second_of_node_events_folds_each_change_apart() -> None:
    # Found on a demo recording (48 nodes, batches of 6, below the server's coalescing): at 0:40 six nodes
    # came back and the next six went down; the timeline read "×12: gw-000 back in rotation: restarting →
    # ready — and 11 more", so the batch that went down was not in the report at all.
    from console.protocol import Event
    from console.record.report.timeline import timeline_section
    from console.record.review import Review
    from console.record.series import Series
    from tests.record.conftest import header

    def change(node: str, what: str, before: str, after: str) -> Event:
        data = {"from": before, "to": after}
        return Event(time_s=40.0, kind="node_state", node=node, message=f"{node} {what}", data=data)

    back = [
        change(f"gw-{i:03d}", "back in rotation: restarting → ready", "restarting", "ready") for i in range(6)
    ]
    down = [
        change(f"gw-{i:03d}", "rollout batch 2: ready → restarting", "ready", "restarting")
        for i in range(6, 12)
    ]
    reviewed = Review(header(), Series(), None, [], [*back, *down], [], [], None, [])
    rows = [row for row in timeline_section(reviewed) if "| node_state |" in row]
    assert rows == [
        "| 0:40 | node_state | ×6: gw-000 back in rotation: restarting → ready — and 5 more (gw-001, gw-002, "
        "gw-003, …) |  |",
        "| 0:40 | node_state | ×6: gw-006 rollout batch 2: ready → restarting — and 5 more (gw-007, gw-008, "
        "gw-009, …) |  |",
    ]  # the more are the others: the first node is in its own message (it was named twice)


def test_a_restarted_source_is_reported_after_the_run_before_it(outage_ticks: list, tmp_path: Path) -> None:
    # A restarted source's fleet time starts from 1 again. The report took it as it came: its charts drew
    # the new run back over the old one (a line from 15:00 back to 2:01), the wave bins of the old run past
    # the new run's start were deleted, and figures named times of either run. It now goes on along the
    # recording's timeline, as the replay does, and says where the source restarted.
    from console.record.review import review
    from tests.record.conftest import record_a_restart

    path = tmp_path / "restarted.sdrec"
    record_a_restart(path, outage_ticks, 60, 30, "second")
    with RecordingReader(path) as recording:
        reviewed = review(recording)
        timeline = recording.frame_times_s
    times = reviewed.series.times_s
    assert times == timeline and times == sorted(times) and times[-1] == 90.0
    assert len(reviewed.series.bins) == 90 * 10  # both runs' waves, one after the other
    assert reviewed.figures is not None and reviewed.figures.end_s == 90.0
    markdown = write_report(path, tmp_path / "out").markdown.read_text()
    assert "| source restarts | 1: at 1:01 (its fleet clock back to 0:01) |" in markdown


def test_a_session_too_quiet_for_a_lockstep_index_says_so_not_zero() -> None:
    """User pass: a quiet loopback session's report read "lockstep index 0.00 (1 = smooth smear, ≥ 4 =
    waves)" — a number below a smooth smear — where the console said "lockstep — (too quiet to judge)"."""
    from console.waves import lockstep_text

    quiet = lockstep_text(None)
    assert "0.00" not in quiet and "too quiet to judge" in quiet, quiet
    assert lockstep_text(4.62).startswith("4.62 (1 = smooth smear, ≥ 4 = waves)")


def test_a_session_without_reconnect_attempts_gives_its_peak_no_time(outage_ticks: list) -> None:
    """User pass: a quiet session's report read "peak attempts per 100 ms | 0 at 3:56", a second before its
    first frame (3:57): with no attempts every bin ties, and the first bin's start (the second the first
    frame's waves look back over) was named as the peak's time. A peak of 0 has no time."""
    from console.protocol import Waves
    from console.record.key_figures import key_figures
    from console.record.report.figures import figures_section
    from console.record.review import Review
    from console.record.series import Series
    from tests.record.conftest import header

    series = Series()
    for k in range(5):
        series.add(
            outage_ticks[0].frame.model_copy(update={"time_s": 237.0 + k, "waves": Waves(attempts=[0] * 10)})
        )
    figures = key_figures(series, [])
    assert figures is not None and figures.peak_attempts_per_100ms == 0 and figures.peak_attempts_at_s is None
    rows = "\n".join(figures_section(Review(header(), series, figures, [], [], [], [], None, [])))
    peak = _row(rows, "peak attempts per 100 ms")
    assert " at " not in peak and "no reconnect attempts" in peak, peak


def record_served_drill(
    path: Path, operator_restart_at_s: float | None, instructor: str | None = None
) -> None:
    """What `stormdeck drill regional-outage` (or `record` of a served drill) records: the drill's backend
    tells its timeline (02:00:30 "power fails: every gateway restarts": restart_nodes, 20 nodes); the
    instructor injects a 30 % disconnect at 1:30 — named in its event (`actor`, as the server's injection
    path says it) when `instructor` is given, unnamed as an older server's was; and, when asked, the
    operator starts an abrupt rollout — the operator's own choice, whose restarts cut connections too."""
    import asyncio

    from console.drills.schema import load_drill
    from console.drills.served import DrillBackend
    from console.protocol import RolloutMode, Verdict, VerdictLevel
    from console.record.records import ActionRecord
    from console.record.writer import RecordingWriter
    from tests.record.conftest import header

    told_by = None if instructor is None else {"actor": instructor, "role": "admin", "audit_seq": 7}

    async def run() -> None:
        drill = load_drill("regional-outage")
        backend = DrillBackend.from_drill(drill, ["clients.count=20000", "duration_s=150"], seed=3)
        with RecordingWriter(path, header(scenario="regional-outage"), fsync=False) as writer:
            for _ in range(150):
                tick = await backend.tick(1, 60.0)
                for event in tick.events:
                    writer.write(event)
                writer.write(tick.frame)
                if tick.frame.time_s == 90.0:
                    await backend.inject("disconnect_fraction", {"fraction": 0.3}, lambda _: told_by)
                if tick.frame.time_s == operator_restart_at_s:
                    backend.simulation.rollout.start(
                        batch_size=2, interval_s=30, mode=RolloutMode.ABRUPT, pause_cpu_pct=0
                    )
                    ok = Verdict(level=VerdictLevel.OK, action="rollout_start")
                    writer.write(
                        ActionRecord(
                            time_s=tick.frame.time_s,
                            actor="trainee",
                            action="rollout_start",
                            verdict=ok,
                            outcome="applied",
                            status=200,
                        )
                    )

    asyncio.run(run())


def _seed(markdown: str, title: str) -> str | None:
    seeds = markdown.split("## What the seeds say")[1]
    return seeds.split(f"### {title}")[1].split("###")[0] if f"### {title}" in seeds else None


def test_injected_disconnects_are_the_incident_not_the_operators_to_drain(tmp_path: Path) -> None:
    """User pass on a served drill: "Drain, don't disconnect" counted the drill's power failure (its
    timeline's restart_nodes) and the instructor's injected disconnect against the trainee, who chose
    neither. The recording says which is which (the drill's line and the `injection` event, in the same
    second as the disconnect they caused): the finding counts only the rest, and the report says which
    were injected."""
    path = tmp_path / "drill.sdrec"
    record_served_drill(path, operator_restart_at_s=None)
    markdown = write_report(path, tmp_path / "report").markdown.read_text()
    assert _seed(markdown, "Drain, don't disconnect") is None, markdown  # nothing the trainee cut
    timeline = markdown.split("## Timeline")[1].split("## What the seeds say")[0]
    injected = [line for line in timeline.splitlines() if "| disconnect (injected by " in line]
    assert len(injected) == 2, timeline
    assert any("0:30" in line and "drill's timeline" in line for line in injected), injected
    assert any("1:30" in line and "by the instructor)" in line for line in injected), injected
    assert "2 injected" in _row(markdown, "mass disconnects"), _row(markdown, "mass disconnects")
    assert "1:30 disconnect_fraction by the instructor" in _row(markdown, "mass disconnects")

    path = tmp_path / "rollout.sdrec"
    record_served_drill(path, operator_restart_at_s=120.0)
    markdown = write_report(path, tmp_path / "report2").markdown.read_text()
    drain = _seed(markdown, "Drain, don't disconnect")
    assert drain is not None, markdown
    with RecordingReader(path) as reader:
        cut = [e for e in reader.events() if e.data.get("mass")]
    operators = [e for e in cut if e.time_s >= 120.0]
    assert operators and len(cut) > len(operators)
    dropped = sum(int(e.data["dropped"]) for e in operators)
    assert f"{dropped:,} connections cut abruptly (not drained)" in drain, drain
    assert "not counted" in drain and "injected" in drain and "0:30" in drain and "1:30" in drain, drain


def test_an_injected_disconnect_names_its_instructor_where_the_recording_does(tmp_path: Path) -> None:
    """The report said "by the instructor" of every injected disconnect, though the stream's `injection`
    event names who injected it (`actor`, as the audit log does): in a session with two instructors, which
    one cut the fleet at 1:30 was in the recording and not in the report. An older recording's event names
    nobody: "by the instructor", as before (test above); nor, in its words, does one whose instructor is
    `drill --serve`'s own admin token, named "instructor" ("by instructor instructor" says nothing more)."""
    path = tmp_path / "drill.sdrec"
    record_served_drill(path, operator_restart_at_s=120.0, instructor="dana")
    markdown = write_report(path, tmp_path / "report").markdown.read_text()
    timeline = markdown.split("## Timeline")[1].split("## What the seeds say")[0]
    injected = [line for line in timeline.splitlines() if "| disconnect (injected by " in line]
    assert any("1:30" in line and "(injected by instructor dana)" in line for line in injected), injected
    assert any("0:30" in line and "drill's timeline" in line for line in injected), injected
    disconnects = _row(markdown, "mass disconnects")
    assert "1:30 disconnect_fraction by instructor dana" in disconnects, disconnects
    drain = _seed(markdown, "Drain, don't disconnect")
    assert drain is not None and "1:30 disconnect_fraction by instructor dana" in drain, drain
    assert "the instructor" not in markdown, markdown

    path = tmp_path / "default.sdrec"
    record_served_drill(path, operator_restart_at_s=None, instructor="instructor")
    markdown = write_report(path, tmp_path / "report2").markdown.read_text()
    disconnects = _row(markdown, "mass disconnects")
    assert "1:30 disconnect_fraction by the instructor" in disconnects, disconnects
    assert "by instructor instructor" not in markdown, markdown


def test_report_writes_beside_the_recording_by_default_and_never_replaces_a_report_unasked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """User pass: `stormdeck report session.sdrec` exited 2, "--out is required". Left out, the report goes
    beside the recording, named after it (session-report/report.md and its charts; --help says so). A
    report already there — run twice, or an --out used before — is not replaced silently: exit 2 naming
    the files and what to do; --overwrite replaces them."""
    from console.cli import build_parser
    from tests.test_cli_help import commands

    session = record_herd(tmp_path / "session.sdrec")
    out = tmp_path / "session-report"
    assert main(["report", str(session.path)]) == 0
    printed = capsys.readouterr().out.split()
    assert printed[0] == str(out / "report.md") and (out / "report.md").is_file()
    assert {p.name for p in out.iterdir()} == {"report.md", "connections.svg", "waves.svg", "cpu.svg"}

    (out / "report.md").write_text("my notes on the report\n")
    for argv in (["report", str(session.path)], ["report", str(session.path), "--out", str(out)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("stormdeck: --out: ") and "report.md" in err and "--overwrite" in err, err
    assert (out / "report.md").read_text() == "my notes on the report\n"  # nothing replaced

    assert main(["report", str(session.path), "--overwrite"]) == 0
    assert (out / "report.md").read_text().startswith("# After-action report")

    parser = dict(commands(build_parser()))[("report",)]
    helps = {action.option_strings[-1]: action.help for action in parser._actions if action.option_strings}
    assert "default" in helps["--out"] and "-report" in helps["--out"], helps["--out"]
    assert "--overwrite" in helps


def _record(path: Path, ticks: list, every: int = 1) -> Path:
    """The ticks as a source sped up by `every` sends them: one frame per `every` fleet seconds
    (`fold_frames`), each second's events before the frame that ends it."""
    from console.record.writer import RecordingWriter
    from console.server.backend import fold_frames
    from tests.record.conftest import header

    with RecordingWriter(path, header(), fsync=False) as writer:
        for start in range(0, len(ticks) - every + 1, every):
            group = ticks[start : start + every]
            for tick in group:
                for event in tick.events:
                    writer.write(event)
            writer.write(fold_frames([tick.frame for tick in group]))
    return path


@pytest.mark.parametrize("every", [1, 3, 4, 7])
def test_recovery_of_a_sped_up_recording_is_from_the_level_before_the_disconnect(
    outage_ticks: list, tmp_path: Path, every: int
) -> None:
    """Reviewer: `drill regional-outage --serve --speed 4` recorded with `stormdeck record` reported
    "recovery time | never below 95 % of before" with connections at 0: at ×4 the frame taken as "before"
    (the first at or after the event) already held the collapse. The same run at ×1 and sped up reports the
    same recovery, to within a frame."""
    markdown = write_report(_record(tmp_path / "run.sdrec", outage_ticks, every), tmp_path / "rep").markdown
    text = markdown.read_text()
    assert _row(text, "minimum connections").startswith("0 at ")
    row = _row(text, "recovery time")
    assert not row.startswith("never below"), row
    real = write_report(_record(tmp_path / "real.sdrec", outage_ticks), tmp_path / "real").markdown
    real_s = float(_row(real.read_text(), "recovery time").split(" s ")[0])
    assert re.fullmatch(r"\d+ s \(first mass disconnect at 0:30 → back to ≥ 95 % for good\)", row), row
    assert 0 <= float(row.split(" s ")[0]) - real_s < every


_NEGATIVE_SECONDS = re.compile(r"[-−]\d+(?:\.\d+)? s\b")


def test_a_recording_begun_after_the_outage_says_it_starts_during_the_incident(
    outage_ticks: list, tmp_path: Path
) -> None:
    """Reviewer: a recording begun after the first disconnect called its first frame "the start" (the
    minimum "60 % of the start", the start already the collapse) and measured nothing against the fleet
    before. Its first frame is below 95 % of the clients wanting a connection: it says it starts during
    the incident, and measures against those clients, not against that frame."""
    late = [tick for tick in outage_ticks if tick.frame.time_s > 35]  # every node restarted at 0:30
    text = write_report(_record(tmp_path / "late.sdrec", late), tmp_path / "rep").markdown.read_text()
    first = late[0].frame.totals
    wanting = first.connections + first.offline_clients
    figures = text.split("## Key figures")[1].split("## Charts")[0]
    assert (
        "The recording starts during the incident: at its first frame, 0:36, connections were already at "
        f"{first.connections / wanting * 100:.0f} % of the {wanting:,} clients wanting one." in figures
    )
    minimum = _row(text, "minimum connections")
    assert "of the start" not in minimum and f"of the {wanting:,} clients wanting a connection" in minimum
    recovery = _row(text, "recovery time")
    assert recovery.startswith(f"back to ≥ 95 % of the {wanting:,} clients wanting a connection for good at ")
    assert "into the recording" in recovery, recovery
    timeline = text.split("## Timeline")[1].split("## What the seeds say")[0]
    first_row = next(row for row in timeline.splitlines() if row.startswith("| ") and "| time |" not in row)
    assert first_row.startswith("| 0:36 | recording | starts during the incident: "), first_row
    assert not _NEGATIVE_SECONDS.search(text), _NEGATIVE_SECONDS.findall(text)


def test_a_recording_begun_inside_a_rollout_names_the_batches_before_it(tmp_path: Path) -> None:
    """Reviewer: a recording begun during an abrupt rollout, after its first batch, reported its first mass
    disconnect as the incident's ("fired at 0:41, -29 s after the first mass disconnect at 1:10") and never
    mentioned the batches before it. It says which batches the rollout had restarted before its first
    frame, calls the first disconnect it holds the first in the recording, and prints no negative time."""
    from console.alarms import AlarmEngine
    from console.record.writer import RecordingWriter
    from console.sim.engine import Simulation
    from console.sim.scenario_loader import load_scenario
    from tests.record.conftest import header
    from tests.record.sessions import HERD_OVERRIDES

    sim = Simulation(load_scenario("thundering-herd", HERD_OVERRIDES))  # batches at 0:30, 0:50, 1:10, …
    path = tmp_path / "herd.sdrec"
    with RecordingWriter(path, header(), alarms=AlarmEngine(), fsync=False) as writer:
        for _ in range(100):
            frame, events = sim.advance()
            if frame.time_s >= 36:  # begun after batch 1
                for record in [*events, frame]:
                    writer.write(record)
    text = write_report(path, tmp_path / "rep").markdown.read_text()
    figures = text.split("## Key figures")[1].split("## Charts")[0]
    assert "The recording starts during the incident: at its first frame, 0:36, " in figures
    assert "the rollout had restarted batch 1 of 16 (abrupt, from 0:30)" in figures
    assert "of the start" not in _row(text, "minimum connections")
    assert "first mass disconnect in the recording at 0:50" in text
    assert not _NEGATIVE_SECONDS.search(text), _NEGATIVE_SECONDS.findall(text)


def test_an_admission_limit_set_before_the_alarm_is_done_before_it(tmp_path: Path) -> None:
    """Reviewer: `drill regional-outage --headless --actions …/regional-outage-admission.toml` sets
    admission at 0:10, before the 0:30 power cut; the report said the drain ÷ inflow finding was "not done
    — no admission change was applied after it fired", and the connections alarm "not done" too. A limit
    set before the alarm and in force when it fired is the seed's move made early."""
    from console.drills.headless import run_headless
    from console.drills.schema import load_drill
    from console.drills.script import load_script

    drill = load_drill("regional-outage")
    examples = Path(__file__).resolve().parents[2] / "docs" / "drills" / "examples"
    script = load_script(examples / "regional-outage-admission.toml", drill)
    path = tmp_path / "run.sdrec"
    run_headless(drill, script, overrides=["clients.count=100000"], record=path)
    text = write_report(path, tmp_path / "rep").markdown.read_text()
    losing = _seed(text, "Drain ÷ inflow below 1: the storm is winning")
    assert losing is not None
    # (the drill's clock, as the rest of its report: fleet second 10)
    done = "- **In this session:** done before the alarm, at 02:00:10 — the admission limit set then was still in force"
    assert done in losing, losing
    emergency = _seed(text, "Total connections fell: treat it as an emergency")
    assert emergency is not None
    assert done in emergency, emergency


def test_the_regional_outage_report_asks_for_no_capacity_the_drill_never_needed(tmp_path: Path) -> None:
    """Reviewer: the regional-outage report asked for capacity — "Headroom below 35 %: add capacity … not
    done — no capacity action recorded" — for a headroom_low that held 14 s while the 20 gateways were down
    (0 in rotation) and cleared when they came back; with every client back the region's own nodes held
    37.5 % headroom at the least, over the budget, and the seeds' fix (admission alone) scores 93.4. At the
    drill's own size (1 M clients), as the reviewer ran it."""
    from console.drills.headless import run_headless
    from console.drills.schema import load_drill
    from console.drills.script import load_script

    drill = load_drill("regional-outage")
    examples = Path(__file__).resolve().parents[2] / "docs" / "drills" / "examples"
    script = load_script(examples / "regional-outage-admission.toml", drill)
    path = tmp_path / "run.sdrec"
    run_headless(drill, script, record=path)
    text = write_report(path, tmp_path / "rep").markdown.read_text()
    headroom = _seed(text, "Headroom below 35 %: add capacity, do not restart")
    assert headroom is not None
    assert "- **In this session:** not needed — headroom_low held only 02:00:31–02:00:45" in headroom, (
        headroom
    )
    assert "no capacity action recorded" not in headroom and "not done" not in headroom


#: A `drill_outcome` as stormdeck wrote it before `why`: each `detail` the scorer's words, in fleet seconds.
_OLDER_OUTCOME = {
    "type": "drill_outcome",
    "time_s": 1500.0,
    "score": 40.0,
    "objectives": [
        {"name": "halt", "met": True, "detail": "abort criterion at 161 s (gw-024); halted at 200 s"},
        {"name": "dips", "met": True, "detail": "longest stretch below 97 %: 10 s from 31 s"},
        {
            "name": "admission",
            "met": False,
            "detail": "0 applied admission by 40 s (needed 1); 1 later (the first at 52 s)",
        },
        {"name": "timeouts", "met": False, "detail": "timeouts above 2,000/s for 6 min 19 s, allowed 20 s"},
    ],
}


def _objective_details(outage_ticks: list, path: Path, outcome: str, **header_fields: object) -> list[str]:
    from console.record.records import DrillOutcome
    from console.record.writer import RecordingWriter
    from tests.record.conftest import header

    with RecordingWriter(path, header(**header_fields), fsync=False) as writer:
        writer.write(outage_ticks[0].frame)
        writer.write(
            DrillOutcome.model_validate_json(outcome), raw=outcome
        )  # verbatim, as that writer wrote it
    assert main(["report", str(path), "--out", str(path.parent / "out")]) == 0
    markdown = (path.parent / "out" / "report.md").read_text()
    objectives = markdown.split("## Objectives")[1].split("## Timeline")[0]
    return re.findall(r"^\| \w+ \| (?:yes|no) \| [^|]+ \| (.*) \|$", objectives, re.MULTILINE)


def test_an_older_drills_objectives_read_the_drills_clock_in_the_report(
    outage_ticks: list, tmp_path: Path
) -> None:
    """A drill's report explained its objectives in the scorer's fleet seconds ("abort criterion at 161 s")
    beside a drill screen, end screen and timeline on the drill's clock (04:02:41). A recording written
    before the outcome carried the end screen's words still reports, its times put on the drill's clock;
    its spans ("for 6 min 19 s", "10 s from") stay spans."""
    import json

    from console.record.records import DrillInfo

    details = _objective_details(
        outage_ticks,
        tmp_path / "older.sdrec",
        json.dumps(_OLDER_OUTCOME),
        drill=DrillInfo(name="thundering-herd", clock_start_s=4 * 3600),
    )
    assert details == [
        "abort criterion at 04:02:41 (gw-024); halted at 04:03:20",
        "longest stretch below 97 %: 10 s from 04:00:31",
        "0 applied admission by 04:00:40 (needed 1); 1 later (the first at 04:00:52)",
        "timeouts above 2,000/s for 6 min 19 s, allowed 20 s",
    ]


def test_an_older_drill_without_its_clock_reads_the_reports_fleet_clock(
    outage_ticks: list, tmp_path: Path
) -> None:
    """Older still, the header does not say where the drill's clock starts: the report's times are the
    fleet clock's (m:ss, as its timeline), and so are the objectives' — not "161 s" beside "2:41"."""
    import json

    from console.record.records import DrillInfo

    details = _objective_details(
        outage_ticks,
        tmp_path / "oldest.sdrec",
        json.dumps(_OLDER_OUTCOME),
        drill=DrillInfo(name="thundering-herd"),
    )
    assert details[0] == "abort criterion at 2:41 (gw-024); halted at 3:20"
    assert details[1] == "longest stretch below 97 %: 10 s from 0:31"


def test_a_drills_objectives_read_as_the_end_screen_said_them(outage_ticks: list, tmp_path: Path) -> None:
    """A recording that carries the end screen's words (`why` beside them) reports them as they are."""
    import json

    from console.record.records import DrillInfo

    said = {
        **_OLDER_OUTCOME,
        "objectives": [
            {
                "name": "halt",
                "met": True,
                "detail": "halted 04:03:20, 39 s after the abort criterion (04:02:41, gw-024)",
                "why": "abort criterion at 161 s (gw-024); halted at 200 s",
            }
        ],
    }
    details = _objective_details(
        outage_ticks,
        tmp_path / "said.sdrec",
        json.dumps(said),
        drill=DrillInfo(name="thundering-herd", clock_start_s=4 * 3600),
    )
    assert details == ["halted 04:03:20, 39 s after the abort criterion (04:02:41, gw-024)"]
