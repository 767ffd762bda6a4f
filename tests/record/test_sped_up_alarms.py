"""A recording of a sped-up source (one frame per 60 fleet seconds) judged on review and replay as its
fleet was at one frame a second: the frames keep each folded second's totals (`Frame.folded_totals`)."""

from __future__ import annotations

from pathlib import Path

from console.alarms import AlarmEngine
from console.protocol import Frame
from console.record.reader import RecordingReader
from console.record.review import AlarmSpans, review
from console.record.writer import RecordingWriter
from console.server.backend import fold_frames
from tests.alarms.test_folded_seconds import LAST_SECOND_ONLY
from tests.record.conftest import header


def test_a_recording_made_at_x60_reviews_to_the_alarms_of_one_frame_a_second(tmp_path: Path) -> None:
    from console.sim.engine import Simulation
    from console.sim.scenario_loader import load_scenario

    scenario = load_scenario("gitlab-reset-burst")
    sim = Simulation(scenario, keep_history=False)
    seconds = [sim.frame(result, with_nodes=False) for result in sim.run(int(scenario.duration_s))]
    engine, every_second = AlarmEngine(), AlarmSpans()
    for second in seconds:
        every_second.take(engine.update(second))
    path = tmp_path / "x60.sdrec"
    with RecordingWriter(path, header(scenario="gitlab-reset-burst"), fsync=False) as writer:
        for start in range(0, len(seconds), 60):
            writer.write(fold_frames(seconds[start : start + 60]))
    with RecordingReader(path) as recording:
        frames = [f for _, f in recording.records_on_timeline() if isinstance(f, Frame)]
        reviewed = review(recording)
    assert len(frames) == len(seconds) // 60 and all(f.folded_totals for f in frames)
    spans = [s for s in reviewed.alarms if s.name not in LAST_SECOND_ONLY]
    assert any(s.name == "drain_inflow_losing" for s in spans)
    assert spans == [s for s in every_second.spans if s.name not in LAST_SECOND_ONLY]
