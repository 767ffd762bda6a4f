"""A drill's report speaks the drill's clock: its key figures and its charts' time axes, as the drill panel,
its hints and its objectives said them. A recording that is not a drill's, or a drill's too old to say where
its clock starts, keeps fleet time (m:ss)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from console.drills.headless import run_headless
from console.drills.schema import build_drill
from console.drills.script import IDLE
from console.record.reader import RecordingReader
from console.record.report import write_report

SVG = "{http://www.w3.org/2000/svg}"

#: A short drill whose clock starts at 04:00, half of every connection reset at 04:00:05: a minimum, a
#: mass disconnect and a recovery to report on.
SHORT_DRILL = {
    "name": "short-cut",
    "title": "Half the connections cut",
    "seed_source": "outage seed (000)",
    "scenario": "demo",
    "duration_s": 40,
    "clock_start": "04:00",
    "briefing": "b",
    "timeline": [
        {
            "at": "04:00:05",
            "say": "half the connections cut",
            "action": "disconnect_fraction",
            "fraction": 0.5,
        }
    ],
    "objectives": [{"name": "no override", "kind": "no_override", "points": 5}],
}


@pytest.fixture(scope="module")
def drill_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    drill = build_drill(SHORT_DRILL)
    path = tmp_path_factory.mktemp("drill") / "short.sdrec"
    run_headless(drill, IDLE, seed=3, record=path)
    return path


def _row(markdown: str, figure: str) -> str:
    match = re.search(rf"^\| {re.escape(figure)} \| (.*) \|$", markdown, re.MULTILINE)
    assert match, figure
    return match.group(1)


def _x_axis(svg_path: Path) -> tuple[list[str], str]:
    """The chart's time ticks and its axis label (the texts under the plot)."""
    root = ET.parse(svg_path).getroot()
    under = [
        t for t in root.iter(f"{SVG}text") if float(t.get("y", 0)) > 275
    ]  # below the y axis's lowest tick
    *ticks, label = [t.text or "" for t in under]
    return ticks, label


def test_a_drills_key_figures_and_chart_axes_read_the_drills_clock(
    drill_recording: Path, tmp_path: Path
) -> None:
    """User pass: a trainee read "minimum connections at 0:06" and a chart axis in m:ss beside a drill panel,
    hints and objectives at 04:00:06 — and could not find it in what they saw."""
    files = write_report(drill_recording, tmp_path / "report")
    markdown = files.markdown.read_text(encoding="utf-8")
    figures = markdown.split("## Key figures")[1].split("## Charts")[0]
    assert "on the drill clock" in figures  # says which clock, once
    assert re.search(r" at 04:00:\d\d \(\d+ % of the start\)$", _row(markdown, "minimum connections"))
    assert re.search(r" at 04:00:\d\d$", _row(markdown, "max node CPU"))
    assert "first mass disconnect at 04:00:05" in _row(markdown, "recovery time")
    assert "04:00:05 disconnect_fraction by the drill's timeline" in _row(markdown, "mass disconnects")
    assert not re.search(r"\b\d+:\d\d\b(?!:)", figures.replace("04:00:", "")), figures  # no fleet m:ss left
    for chart in files.charts:
        ticks, label = _x_axis(chart)
        assert label == "drill clock (hh:mm:ss)", chart.name
        assert ticks and all(re.fullmatch(r"04:00:\d\d", t) for t in ticks), (chart.name, ticks)
        root = ET.parse(chart).getroot()
        titles = [t.text or "" for line in root.iter(f"{SVG}line") for t in line.iter(f"{SVG}title")]
        assert all(t.startswith("04:00:") for t in titles), titles  # the markers' times too


def test_a_drills_chart_ticks_fall_on_round_drill_times(tmp_path: Path) -> None:
    """A drill clock starting off the minute (04:00:17) ticks at whole drill-clock steps, not at whole
    fleet steps shifted by 17 s."""
    from console.model.units import drill_clock
    from console.record import svg

    chart = svg.Chart("c", "y", [svg.Line("l", [0.0, 100.0], [1.0, 2.0])], clock=drill_clock(4 * 3600 + 17))
    path = tmp_path / "c.svg"
    path.write_text(svg.render(chart), encoding="utf-8")
    ticks, _ = _x_axis(path)
    assert ticks[0] == "04:00:30" and all(int(t[-2:]) % 15 == 0 for t in ticks), ticks


def test_a_plain_recording_keeps_fleet_time(tmp_path: Path) -> None:
    from tests.record.sessions import record_herd

    session = record_herd(tmp_path / "plain.sdrec")
    files = write_report(session.path, tmp_path / "report")
    markdown = files.markdown.read_text(encoding="utf-8")
    assert "drill clock" not in markdown.split("## Key figures")[1].split("## Charts")[0]
    assert re.search(r" at \d+:\d\d \(\d+ % of the start\)$", _row(markdown, "minimum connections"))
    for chart in files.charts:
        ticks, label = _x_axis(chart)
        assert label == "fleet time (m:ss)" and all(re.fullmatch(r"\d+:\d\d", t) for t in ticks), ticks


def test_an_older_drill_recording_without_its_clock_keeps_fleet_time(
    drill_recording: Path, tmp_path: Path
) -> None:
    """A header written before it said where the drill's clock starts still reads: fleet time, as its
    timeline."""
    from console.record.writer import RecordingWriter

    older = tmp_path / "older.sdrec"
    with RecordingReader(drill_recording) as recording:
        drill = recording.header.drill
        assert drill is not None and drill.clock_start_s == 4 * 3600
        header = recording.header.model_copy(
            update={"drill": drill.model_copy(update={"clock_start_s": None})}
        )
        with RecordingWriter(older, header, fsync=False) as writer:
            # each second's events before its frame, as the run wrote them
            records = sorted([*recording.events(), *recording.frames()], key=lambda r: (r.time_s, r.type))
            for record in records:
                writer.write(record)
    with RecordingReader(older) as recording:
        assert recording.header.drill is not None and recording.header.drill.clock_start_s is None
    files = write_report(older, tmp_path / "report")
    markdown = files.markdown.read_text(encoding="utf-8")
    assert "first mass disconnect at 0:05" in _row(markdown, "recovery time")
    assert _x_axis(files.charts[0])[1] == "fleet time (m:ss)"
