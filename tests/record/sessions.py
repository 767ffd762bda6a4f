"""A scripted session to report on: a small thundering-herd rollout, an operator who acts on the abort alarm.

The operator tries a drain the guards block, halts the rollout 15 s after cpu_abort fires, then tightens
admission through a typed confirmation — the shape of the seeds' fix (outage seed: halt at the abort
criterion; interview seed: admission with a randomized Retry-After).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from console.alarms import AlarmEngine
from console.protocol import AdmissionSettings, Check, Verdict, VerdictLevel
from console.record.records import ActionRecord, Confirmation, DrillInfo, DrillOutcome, ObjectiveOutcome
from console.record.writer import RecordingWriter
from tests.record.conftest import header

HERD_OVERRIDES = [
    "nodes.count=48",
    "clients.count=1296000",
    "rollout.batch_size=3",
    "rollout.interval_s=20",
    "events.0.at_s=1499",  # the scenario's own 04:11 halt: the scripted operator halts instead
]
HERD_SECONDS = 420


@dataclass(frozen=True)
class HerdSession:
    path: Path
    summary: dict[str, Any]  # the simulator's own summary of the same run
    abort_s: float
    halted_s: float


def record_herd(path: Path, drill: bool = False) -> HerdSession:
    from console.sim.engine import Simulation
    from console.sim.scenario_loader import load_scenario
    from console.sim.summary import RunRecorder

    sim = Simulation(load_scenario("thundering-herd", HERD_OVERRIDES))
    run = RunRecorder(sim)
    abort_s: float | None = None
    halted_s: float | None = None
    # The drill's clock starts at 04:00, as thundering-herd.toml's `clock_start`.
    info = DrillInfo(name="thundering-herd", seed_source="outage seed (000)", clock_start_s=4 * 3600)
    info = info if drill else None
    with RecordingWriter(
        path, header(scenario="thundering-herd", seed=sim.seed, drill=info), alarms=AlarmEngine(), fsync=False
    ) as writer:
        assert writer.alarms is not None
        for _ in range(HERD_SECONDS):
            result = sim.step()
            run.record(result)
            frame = sim.frame(result)
            for event in result.events:
                writer.write(event)
            writer.write(frame)
            now = frame.time_s
            if abort_s is None and any(a.name == "cpu_abort" for a in writer.alarms.active):
                abort_s = now
                writer.write(_blocked_drain(now))
            elif abort_s is not None and now == abort_s + 15:
                sim.rollout.halt("trainee")
                halted_s = now
                ok = Verdict(level=VerdictLevel.OK, action="rollout_halt")
                writer.write(
                    ActionRecord(
                        time_s=now,
                        actor="trainee",
                        action="rollout_halt",
                        verdict=ok,
                        outcome="applied",
                        status=200,
                    )
                )
            elif abort_s is not None and now == abort_s + 25:
                _tighten_admission(sim, writer, now)
        if drill:
            objectives = [
                ObjectiveOutcome(
                    name="rollout halted within 90 s of the abort criterion", met=True, points=50
                ),
                ObjectiveOutcome(name="connections never below 90 %", met=False, detail="61 % at 1:58"),
            ]
            writer.write(DrillOutcome(time_s=float(HERD_SECONDS), score=50, objectives=objectives))
    assert abort_s is not None and halted_s is not None, "the herd must trip the abort criterion"
    return HerdSession(path, run.summary(0.0), abort_s, halted_s)


def _blocked_drain(now: float) -> ActionRecord:
    check = Check(name="headroom_pct", value=12.0, limit=35.0, ok=False, why="outage seed", bound="min")
    return ActionRecord(
        time_s=now,
        actor="trainee",
        action="drain",
        target="gw-001",
        request={"rate_per_s": 833, "deadline_s": 600, "hint_ms": [1000, 30000]},
        verdict=Verdict(level=VerdictLevel.BLOCKED, action="drain", checks=[check]),
        outcome="blocked",
        status=422,
    )


def _tighten_admission(sim: Any, writer: RecordingWriter, now: float) -> None:
    request = {"rate_per_s": 200, "burst": 200, "retry_after_s": [2, 20]}
    typed = Verdict(level=VerdictLevel.TYPED, action="admission", typed_expected="test-fleet")
    writer.write(
        ActionRecord(
            time_s=now,
            actor="trainee",
            action="admission",
            request=request,
            verdict=typed,
            outcome="needs_confirmation",
            status=409,
        )
    )
    writer.write(
        Confirmation(
            time_s=now + 0.5, actor="trainee", action="admission", answer="confirmed", typed="test-fleet"
        )
    )
    sim.set_admission(
        AdmissionSettings(rate_per_s=200, burst=200, max_connections=None, retry_after_s=(2, 20))
    )
    writer.write(
        ActionRecord(
            time_s=now + 0.5,
            actor="trainee",
            action="admission",
            request=request,
            verdict=typed,
            outcome="applied",
            status=200,
        )
    )
