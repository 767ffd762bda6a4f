"""A recording of a sped-up source (one frame per 60 fleet seconds) judged on review and replay as its
fleet was at one frame a second: the frames keep each folded second's totals (`Frame.folded_totals`)."""

from __future__ import annotations

from pathlib import Path

from console.alarms import AlarmEngine
from console.protocol import Frame
from console.record.alarm_spans import AlarmSpans
from console.record.reader import RecordingReader
from console.record.review import review
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


def test_an_alarm_raised_and_cleared_inside_recorded_sped_up_frames_is_reviewed_and_replayed_with_its_times(
    tmp_path: Path,
) -> None:
    """Two frames folding 1–24 s and 25–60 s: drain_pacing_exceeded raised at 20 s, cleared at 27 s, raised
    at 40 s and cleared at 47 s. The report had both spells (it reads the engine's changes); a replay's
    console, whose alarm log took the alarms active after each frame, showed one, cleared at 60 s."""
    from console.model import Received
    from console.model.alarm_source import console_model
    from console.record.replay import ReplaySource
    from console.ui.replay import recorded_raise_times
    from tests.alarms.test_folded_seconds import PACING_ADMISSION, pacing_accepts, pacing_fleet
    from tests.fleet_builders import series

    def accepts_per_s(time_s: float) -> float:
        return 2200.0 if 40 <= time_s <= 42 else pacing_accepts(time_s)

    seconds = series(1, 60, fleet=pacing_fleet, admission=PACING_ADMISSION, accepts_per_s=accepts_per_s)
    path = tmp_path / "x30.sdrec"
    with RecordingWriter(path, header(), alarms=AlarmEngine(), fsync=False) as writer:
        writer.write(fold_frames(seconds[:24]))
        writer.write(fold_frames(seconds[24:]))
    spells = [(20.0, 27.0), (40.0, 47.0)]
    with RecordingReader(path) as recording:
        assert [(s.name, s.since_s, s.cleared_s) for s in review(recording).alarms] == [
            ("drain_pacing_exceeded", *spell) for spell in spells
        ]
        replay = ReplaySource(recording, paused=True, clock=lambda: 0.0)
        replay.seek(60.0)
        model = console_model()
        assert model.alarm_source is not None
        model.alarm_source = recorded_raise_times(model.alarm_source, recording)
        for item in replay.take(0.0):
            if isinstance(item, Frame):
                model.apply(Received(item, 0.0))
    assert model.alarms.active() == []
    assert [(e.alarm.name, e.raised_at_s, e.cleared_at_s) for e in reversed(model.alarms.past())] == [
        ("drain_pacing_exceeded", *spell) for spell in spells
    ]
