"""A drill scored from a sped-up source's frames (one per wall second, each folding several fleet seconds:
`fold_frames`, the simulator backend's tick) scores as one frame a second does.

Found by a probe: every packaged drill's totals-based objectives read each ×N frame's last second only and
credited it the frame's whole span — at ×60 socketio-lockstep's idle operator scored 39.0 (4.0 at 1 fps),
graceful-drain's 75.0 (27.9), and the seeds' fix for thundering-herd 100.0 (99.3). A folded frame carries
each earlier second's totals (`Frame.folded_totals`), and `RunMeasures` now reads every one of them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from console.drills.headless import run_headless
from console.drills.live import DrillProgress
from console.drills.objectives import RunMeasures, score_drill
from console.drills.schema import build_drill, load_drill
from console.drills.script import IDLE, load_script
from console.drills.served import DrillBackend
from console.protocol import Frame, RolloutState, RolloutStatus
from console.server.backend import fold_frames
from tests.fleet_builders import frame, series

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "drills" / "examples"


def folded(frames: list[Frame], every: int) -> list[Frame]:
    """What a source at ×`every` sends for these one-second frames: one frame per `every` fleet seconds."""
    return [fold_frames(frames[i : i + every]) for i in range(0, len(frames), every)]


@pytest.mark.parametrize(
    ("name", "script", "every"),
    [
        # recovery, totals_max, the time penalty (93.4; at ×60 it scored 100.0: no dip seen)
        ("regional-outage", "regional-outage-admission.toml", 10),
        ("regional-outage", "regional-outage-admission.toml", 60),
        # connections_floor, totals_max on abnormal closes, rollout_completed (27.9; at ×60 75.0)
        ("graceful-drain", None, 60),
    ],
)
def test_a_drill_scores_the_same_from_sped_up_frames(name: str, script: str | None, every: int) -> None:
    drill = load_drill(name)
    actions = load_script(EXAMPLES / script, drill) if script else IDLE
    frames: list[Frame] = []
    run = run_headless(drill, actions, on_frame=frames.append)
    assert run.score is not None
    sped_up = RunMeasures.of(drill, folded(frames, every)).score(run.actions)
    assert sped_up == run.score  # the score, the penalty and every objective's value and why


def test_the_drill_screen_scores_the_servers_sped_up_frames_as_one_a_second() -> None:
    """The served drill's own ticks at ×60 (what `stormdeck drill NAME --speed 60` receives: the server's
    first frame is second 1, then frames end at 61, 121, 181 and 241 s), read by the drill screen's
    `DrillProgress`: the same score as the headless run (4.0; it read 33.0), second 241 — after the drill's
    240 s — not measured (it made the longest dip 220 s, not 219 s)."""
    drill = load_drill("socketio-lockstep")
    one_a_second = run_headless(drill).score
    backend = DrillBackend.from_drill(drill)
    live = DrillProgress(drill, end_s=backend.simulation.scenario.duration_s)

    async def serve() -> list[float]:
        ends = []
        for seconds in (1, 60, 60, 60, 60):
            tick = await backend.tick(seconds, 60.0)
            assert len(tick.frame.folded_totals or []) == seconds - 1
            ends.append(tick.frame.time_s)
            for event in tick.events:
                live.add_event(event)
            live.add_frame(tick.frame)
        return ends

    assert asyncio.run(serve()) == [1.0, 61.0, 121.0, 181.0, 241.0]
    assert live.ended and live.finish() == one_a_second
    assert live.time_s == 240.0  # what the end screen's clock and the recorded outcome say


TINY = {
    "name": "tiny",
    "title": "A tiny drill",
    "seed_source": "outage seed (000)",
    "scenario": "demo",
    "briefing": "Hold the floor.",
    "objectives": [{"name": "floor", "kind": "connections_floor", "min_pct": 90, "points": 50}],
    "scoring": {"penalty_per_min": 60, "penalty_below_pct": 95},
}


def test_a_one_second_dip_inside_a_frame_is_read_at_its_second_and_old_frames_as_before() -> None:
    drill = build_drill(TINY)
    seconds = series(1, 6, connections=lambda t: 80_000 if t == 2 else 100_000)  # 100 % … 80 % at 2 s
    sped_up = [fold_frames(seconds[:3]), fold_frames(seconds[3:])]  # 1–3 s, 4–6 s

    score = score_drill(drill, sped_up, [], [])
    assert score == score_drill(drill, seconds, [], [])
    assert not score.objectives[0].met and score.objectives[0].why == "connections fell to 80.0 % at 2 s"
    assert score.minutes_below == round(1 / 60, 2) and score.penalty == 1.0

    # A frame from an older server or recording, without the field: read as its last second, as before.
    old = [frame.model_copy(update={"folded_totals": None}) for frame in sped_up]
    score = score_drill(drill, old, [], [])
    assert score.objectives[0].met and score.minutes_below == 0.0


def test_a_rollout_completed_after_the_drill_is_not_credited_from_the_frame_cut_at_its_end() -> None:
    """The frame that ends a 240 s drill at ×60 folds 182–241 s and is cut at 240 s (`live.through`), but its
    rollout is second 241's: a completion in second 241 was credited at 240 s (met), where one frame a
    second never shows it within the drill (not met)."""
    drill = build_drill(
        {
            **TINY,
            "objectives": [{"name": "done", "kind": "rollout_completed", "within_s": 240, "points": 50}],
        }
    )
    running = RolloutStatus(state=RolloutState.RUNNING, batch=1, batches=2, started_at_s=10.0)
    completed = running.model_copy(
        update={"state": RolloutState.COMPLETED, "batch": 2, "completed_at_s": 240.0}  # in second 241
    )
    seconds = [frame(float(t), rollout=running if t < 241 else completed) for t in range(1, 242)]
    outcomes = []
    for every in (1, 60):
        live = DrillProgress(drill, end_s=240.0)
        for start in [0, *range(1, len(seconds), every)]:
            live.add_frame(fold_frames(seconds[start : start + every] if start else seconds[:1]))
        outcomes.append(live.finish().objectives[0])
    one_a_second, sped_up = outcomes
    assert not one_a_second.met and one_a_second.why == "the rollout did not complete (last state: running)"
    assert (sped_up.met, sped_up.value, sped_up.points) == (False, None, 0.0)
    assert sped_up.why == "the rollout did not complete within the drill (it completed just after)"
