"""The report's 503s and handshake timeouts of a sped-up source that keeps running counts: exact.

A frame of a source run faster than real time stands for several fleet seconds but carries its last
second's rates only; the simulator backend's running counts (`totals.rejects_total`, `timeouts_total`)
hold every second, so the report counts them exactly — checked against the same fleet run one second at a
time, over the same fleet seconds — and says which seconds it could not count.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from console.protocol import Frame
from console.record.reader import RecordingReader
from console.record.report import write_report
from console.record.review import review
from console.record.writer import RecordingWriter
from console.server.simulator import SimulatorBackend
from tests.fleet_builders import STORMY_DEMO
from tests.record.conftest import header


def per_second_running_sums(seconds: int) -> tuple[list[int], list[int]]:
    """503s and timeouts of the same fleet run one second at a time, as running sums: [t] = seconds 1..t."""
    from console.sim.engine import Simulation
    from console.sim.scenario_loader import load_scenario

    simulation = Simulation(load_scenario("demo", STORMY_DEMO), seed=3)
    rejects, timeouts = [0], [0]
    for _ in range(seconds):
        totals = simulation.advance()[0].totals
        rejects.append(rejects[-1] + round(totals.rejects_per_s))
        timeouts.append(timeouts[-1] + round(totals.timeouts_per_s))
    return rejects, timeouts


def served_frames(epoch: str, ticks: int, every: int = 10) -> list[Frame]:
    """What the server publishes of the simulator at ×`every`: frame 1 the fleet as started (span 0),
    then one frame per `every` fleet seconds."""

    async def run() -> list[Frame]:
        backend = SimulatorBackend.from_scenario("demo", STORMY_DEMO, seed=3)
        snapshot = await backend.start()
        frames = [
            Frame(
                seq=1,
                epoch=epoch,
                time_s=snapshot.time_s,
                nodes=snapshot.nodes,
                totals=snapshot.totals,
                waves={"attempts": []},
                span_s=0.0,
            )
        ]
        for seq in range(2, ticks + 2):
            tick = await backend.tick(every, budget_s=60.0)
            frames.append(tick.frame.model_copy(update={"seq": seq, "epoch": epoch}))
        return frames

    return asyncio.run(run())


def reported(tmp_path: Path, name: str, frames: list[Frame]) -> tuple[str, object]:
    path = tmp_path / f"{name}.sdrec"
    with RecordingWriter(path, header(scenario="demo", seed=3), fsync=False) as writer:
        for frame in frames:
            writer.write(frame)
    markdown = write_report(path, tmp_path / name).markdown.read_text()
    row = re.search(r"^\| 503s / handshake timeouts \| (.*) \|$", markdown, re.MULTILINE)
    assert row
    with RecordingReader(path) as recording:
        return row.group(1), review(recording).figures


def test_a_sped_up_recording_from_the_fleets_start_counts_503s_and_timeouts_exactly(tmp_path: Path) -> None:
    frames = served_frames("e1", 6)
    assert [f.time_s for f in frames] == [1.0, 11.0, 21.0, 31.0, 41.0, 51.0, 61.0]
    rejects, timeouts = per_second_running_sums(61)
    # The frames stand for seconds 2..61 (frame 1, the fleet as started, for none).
    exact = (rejects[61] - rejects[1], timeouts[61] - timeouts[1])
    row, figures = reported(tmp_path, "fresh", frames)
    assert row == f"{exact[0]:,} / {exact[1]:,} (the source's running counts: exact for all 60 fleet seconds)"
    assert not figures.totals_estimated and figures.covered_s == 60  # type: ignore[attr-defined]
    # What the rates alone gave: each frame's last second taken for its ten (far off in a storm).
    by_rates = sum(10 * round(f.totals.timeouts_per_s) for f in frames)
    assert exact[1] > 0 and exact[0] > 0 and by_rates != exact[1]


def test_a_recording_joining_mid_run_counts_from_its_first_frames_last_second_and_says_so(
    tmp_path: Path,
) -> None:
    """Its first frame's running count holds everything since the fleet started, not just its span: the
    count starts at that frame's last second (its rate), and the nine before it are named as not counted."""
    frames = served_frames("e1", 6)[3:]  # from fleet time 31 (seconds 22..31) on
    rejects, timeouts = per_second_running_sums(61)
    exact = (rejects[61] - rejects[30], timeouts[61] - timeouts[30])
    row, figures = reported(tmp_path, "joined", frames)
    assert row.startswith(
        f"{exact[0]:,} / {exact[1]:,} (the source's running counts: exact for the 31 fleet "
    )
    assert "the 9 s before the last second of a first frame" in row and "≈" not in row
    assert figures.uncounted_s == 9 and figures.counted_s == 31  # type: ignore[attr-defined]


def test_running_counts_are_not_differenced_across_a_restart(tmp_path: Path) -> None:
    """A restarted source (a new epoch) counts from zero again: its first frame starts a new count, even
    when its running count happens to be above the one before the restart."""
    before = served_frames("e1", 2)  # fleet time 1..21
    after = served_frames("e2", 6)[4:]  # the restarted fleet, joined at fleet time 41
    assert after[0].totals.rejects_total > before[-1].totals.rejects_total  # type: ignore[operator]
    rejects, timeouts = per_second_running_sums(61)
    exact = (
        rejects[21] - rejects[1] + rejects[61] - rejects[40],
        timeouts[21] - timeouts[1] + timeouts[61] - timeouts[40],
    )
    row, figures = reported(tmp_path, "restarted", [*before, *after])
    assert row.startswith(
        f"{exact[0]:,} / {exact[1]:,} (the source's running counts: exact for the 41 fleet "
    )
    assert figures.uncounted_s == 9  # type: ignore[attr-defined]
