"""Run a drill without a screen: the simulation in-process, a scripted operator through the REAL fleet API.

The fleet API app (`console.server.app.create_app`) is built over the simulator backend with its guarded
write side on, and the script's actions go to it over httpx's ASGI transport: the same routes, verdicts,
two-phase confirmation and audit log a trainee at the console meets. The app's own feed (which paces one
frame per wall second) is not started: this runner steps the backend itself, one fleet second at a time,
as fast as the simulator goes — or at `speed` fleet seconds per wall second when asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from console.alarms import AlarmEngine
from console.drills.countdown import DrillTime
from console.drills.live import LiveObjective, objectives_at
from console.drills.objectives import MeasuredRun, Score, first_applied
from console.drills.schema import Drill, hints_due
from console.drills.script import IDLE, Script, ScriptedAction
from console.drills.summary import outcome_at_end
from console.errors import InputError
from console.protocol import Event, Frame, Verdict
from console.record.records import ActionRecord, Confirmation, DrillInfo, Recorded, RecordingHeader
from console.sim.injection import check_timeline
from console.sim.scenario import Scenario, TimelineEvent
from console.sim.scenario_loader import fleet_at_start

if TYPE_CHECKING:
    from console.audit import AuditLog
    from console.client.actions import ActionClient
    from console.sim.engine import Simulation

#: The script's bearer token: it exists only inside this process (the app is never on a socket).
_SCRIPT_TOKEN = "drill-script-token"
_EPOCH = "drill"


@dataclass
class DrillRun(MeasuredRun):
    """What a headless run saw: its frames measured as they came (not kept: a run of hours at hundreds of
    nodes would not fit in memory), the last frame, and its events and action records."""

    scenario: Scenario
    seed: int
    events: list[Event] = field(default_factory=list)
    actions: list[ActionRecord] = field(default_factory=list)
    confirmations: list[Confirmation] = field(default_factory=list)
    score: Score | None = None
    wall_s: float = 0.0

    @property
    def duration_s(self) -> float:
        """The fleet time the run reached (its last frame's)."""
        return self.time_s

    def objectives(self) -> list[LiveObjective]:
        """Each objective met or failed, and what became of it on the drill's clock, as the console's end
        screen says it (`console.drills.live.objectives_at`)."""
        assert self.score is not None
        now = DrillTime(self.time_s, self.scenario.duration_s, self.drill.human_time, ended=True)
        return objectives_at(self.measures, self.score, self.actions, now)

    def as_dict(self) -> dict[str, Any]:
        assert self.score is not None
        scored = self.score.as_dict()
        # Each objective with the end screen's word for it: `met` alone said true for one never needed.
        for entry, live in zip(scored["objectives"], self.objectives(), strict=True):
            entry["standing"] = live.standing.value
        return {
            "drill": self.drill.name,
            "seed_source": self.drill.seed_source,
            "seed": self.seed,
            "duration_s": self.duration_s,
            **scored,
            "actions": [
                {
                    "time_s": a.time_s,
                    "clock": self.drill.human_time(a.time_s),
                    "action": a.action,
                    "target": a.target,
                    "outcome": a.outcome,
                    "status": a.status,
                    "verdict": a.verdict.level.value if a.verdict else None,
                    "detail": a.detail,
                }
                for a in self.actions
            ],
            "hints": [
                {"after_s": hint.after_s, "text": hint.said(None)}
                for hint in hints_due(self.drill, self.duration_s, first_applied(self.actions))
            ],
            "wall_s": round(self.wall_s, 2),
        }


def drill_scenario(drill: Drill, extra_overrides: Sequence[str] = ()) -> Scenario:
    """The drill's scenario: its overrides applied, and its timeline as the scenario's events (replacing
    the scenario's own unless `keep_scenario_events`: the seed's on-call moves are the trainee's to make).
    `extra_overrides` (`KEY=VALUE`, e.g. from `--set`) come last: a team can run a drill at full scale."""
    from console.sim.scenario_loader import load_scenario

    # Without the scenario's own events, a shorter duration must not trip over them.
    dropped = [] if drill.keep_scenario_events else ["events=[]"]
    overrides = [*dropped, *drill.scenario_overrides(), *extra_overrides]
    scenario = load_scenario(drill.scenario, overrides)
    for entry in drill.timeline:
        if entry.at_s > scenario.duration_s:
            end = scenario.duration_s
            allowed = f"a time within the drill's {end:g} s: {drill.human_time(0)}–{drill.human_time(end)}"
            raise InputError(f"{entry.path or 'timeline'}.at", drill.human_time(entry.at_s), allowed)
    kept = list(scenario.events) if drill.keep_scenario_events else []
    injected = [
        TimelineEvent(entry.at_s, entry.action, dict(entry.params))
        for entry in drill.timeline
        if entry.action is not None
    ]
    events = tuple(sorted([*kept, *injected], key=lambda event: event.at_s))
    drilled = dataclasses.replace(scenario, events=events)
    try:
        _check_drilled_timeline(drill, scenario, drilled, kept)
    except InputError as error:
        if not extra_overrides or not error.field.startswith("timeline"):
            raise
        # The trainee's --set moved the fleet under the drill's timeline, which --set cannot reach.
        raise InputError(
            error.field,
            error.value,
            f"{error.allowed} — the drill's timeline is its file's, not --set's: for this fleet run a copy of "
            "the drill file with its timeline changed (docs/drills.md, The drill file)",
        ) from None
    return drilled


def _check_drilled_timeline(
    drill: Drill, scenario: Scenario, drilled: Scenario, kept: list[TimelineEvent]
) -> None:
    check_timeline(
        [
            *((f"events.{i}", event.at_s, event.action, event.params) for i, event in enumerate(kept)),
            *(
                (entry.path, entry.at_s, entry.action, entry.params)
                for entry in drill.timeline
                if entry.action
            ),
        ],
        fleet_at_start(scenario.raw),
        [population.name for population in scenario.clients.populations],
        drilled.node_id_digits,  # the ids the drill's own fleet will have, its added nodes counted
    )


def run_headless(
    drill: Drill,
    script: Script = IDLE,
    *,
    seed: int | None = None,
    speed: float | None = None,
    overrides: Sequence[str] = (),
    record: Path | None = None,
    on_frame: Callable[[Frame], None] | None = None,
    load: Callable[[Simulation], None] | None = None,
    audit_log: Path | None = None,
) -> DrillRun:
    """Run `drill` to its end with `script` as the operator and score it; with `record`, write the run as
    it goes (frames, events, actions, confirmations, then the drill's outcome) for replay and report.
    `load(simulation)` loads the simulator's kernel before the run's clock starts (default
    `Simulation.load_kernel`; the command's says so when it compiles). The server audits each attempt to
    `audit_log` (appended to, its chain continued), or to a scratch file removed at the end."""
    return asyncio.run(_run(drill, script, seed, speed, overrides, record, on_frame, load, audit_log))


async def _run(
    drill: Drill,
    script: Script,
    seed: int | None,
    speed: float | None,
    overrides: Sequence[str],
    record: Path | None,
    on_frame: Callable[[Frame], None] | None,
    load: Callable[[Simulation], None] | None,
    audit_log: Path | None,
) -> DrillRun:
    from console.client.actions import ActionClient
    from console.drills.served import DrillNarrator
    from console.guards import Thresholds
    from console.server.app import create_app
    from console.server.simulator import SimulatorBackend
    from console.server.tokens import Principal, Role, TokenRegistry
    from console.sim.engine import Simulation

    scenario = drill_scenario(drill, overrides)
    # Opened before the simulation is built: a log another server is writing, or a file that is no audit
    # log, is refused before the drill runs (and before its recording is begun).
    with _audit_log(audit_log) as audit:
        simulation = Simulation(scenario, seed=seed)
        # Before the clock starts: a first run's compile (tens of seconds) would be rushed through at --speed.
        (load or Simulation.load_kernel)(simulation)
        started = time.perf_counter()
        run = DrillRun(drill, scenario, simulation.seed)
        # Admin, so an override is possible — and measured (`no_override`): a trainee may reach for it too.
        tokens = TokenRegistry({_SCRIPT_TOKEN: Principal(Role.ADMIN, script.actor)})
        backend = SimulatorBackend(simulation, forecast_horizon_s=30)
        alarms = AlarmEngine(capacity=backend.capacity())
        pending = list(script.actions)
        # What the drill's console is told (its story lines, injections included; its hints; its end), as
        # `drill` and `drill --serve` tell it: recorded before the frame of the second it belongs to.
        narrator = DrillNarrator(drill, scenario.duration_s)
        header = recording_header(run, speed, overrides) if record is not None else None
        writer = _Recorder(record, header)
        try:
            app = create_app(backend, tokens, audit_log=audit, thresholds=Thresholds())
            transport = httpx.ASGITransport(app=app)
            async with ActionClient("http://drill", _SCRIPT_TOKEN, transport=transport) as client:
                seq = 0
                while simulation.time_s < scenario.duration_s:
                    now_s = simulation.time_s
                    while pending and pending[0].at_s <= now_s:
                        acted = len(run.actions), len(run.confirmations)
                        await _perform(client, pending.pop(0), now_s, script.actor, run)
                        writer.write(*run.confirmations[acted[1] :], *run.actions[acted[0] :])
                    tick = await backend.tick(1, 60.0)
                    seq += 1
                    frame = tick.frame.model_copy(update={"seq": seq, "epoch": _EPOCH})
                    told = narrator.due(frame.time_s, first_applied(run.actions))
                    events = [
                        *told,
                        *tick.events,
                        *alarms.update(frame),
                    ]  # a second's events before its frame
                    run.events.extend(events)
                    writer.write(*events, frame)
                    run.measures.add(frame)
                    if on_frame is not None:
                        on_frame(frame)
                    if speed is not None:
                        await asyncio.sleep(max(0.0, started + frame.time_s / speed - time.perf_counter()))
                while pending and pending[0].at_s <= scenario.duration_s:  # due in the last second: after it
                    acted = len(run.actions), len(run.confirmations)
                    await _perform(client, pending.pop(0), simulation.time_s, script.actor, run)
                    writer.write(*run.confirmations[acted[1] :], *run.actions[acted[0] :])
            run.score = run.measures.score(run.actions)
            writer.write(outcome_at_end(run.score, run.duration_s, run.objectives()))
        finally:
            writer.close()
    run.wall_s = time.perf_counter() - started
    return run


@contextlib.contextmanager
def _audit_log(path: Path | None) -> Iterator[AuditLog]:
    """The audit log the run's server writes: `path` (the user's, kept), or a scratch file removed after."""
    from console.audit import AuditLog

    with tempfile.TemporaryDirectory(prefix="stormdeck-drill-") as scratch:
        audit = AuditLog(path if path is not None else Path(scratch) / "audit.jsonl")
        try:
            yield audit
        finally:
            audit.close()


class _Recorder:
    """The run's recording as it goes, or nothing when no file was asked for."""

    def __init__(self, path: Path | None, header: RecordingHeader | None) -> None:
        from console.record.writer import RecordingWriter

        self._writer = None
        if path is not None and header is not None:
            self._writer = RecordingWriter(path, header, fsync=False)

    def write(self, *records: Recorded) -> None:
        if self._writer is not None:
            for record in records:
                self._writer.write(record)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


async def _perform(
    client: ActionClient, step: ScriptedAction, now_s: float, actor: str, run: DrillRun
) -> None:
    """One scripted action through the guarded API; its answer becomes an action record (and, when the
    script answered a confirmation, a confirmation record)."""
    from console.client.actions import Reply

    answer = await client.perform(
        step.action, dict(step.body), step.node, confirm=step.confirm, typed=step.typed
    )
    reply = answer.reply
    if reply is Reply.APPLIED:
        outcome = "overridden" if answer.body.get("overridden") else "applied"
    else:
        outcome = {
            Reply.DRY_RUN: "dry_run",
            Reply.NEEDS_CONFIRMATION: "needs_confirmation",
            Reply.BLOCKED: "blocked",
        }.get(reply, "failed")
    verdict = Verdict.model_validate(answer.verdict) if answer.verdict else None
    level = verdict.level.value if verdict else None
    if level in ("confirm", "typed"):
        # Still asking after the script's turn: the script gave no answer the verdict accepts.
        answered = "cancelled" if reply is Reply.NEEDS_CONFIRMATION else "confirmed"
        run.confirmations.append(
            Confirmation(
                time_s=now_s,
                actor=actor,
                action=step.action,
                target=step.node,
                answer=answered,
                typed=step.typed,
            )
        )
    run.actions.append(
        ActionRecord(
            time_s=now_s,
            actor=actor,
            action=step.action,
            target=step.node,
            request=dict(step.body),
            verdict=verdict,
            outcome=outcome,
            status=answer.status,
            detail=str(answer.body.get("message") or answer.body.get("detail") or "") or None,
            audit_seq=seq if isinstance(seq := answer.body.get("audit_seq"), int) else None,
        )
    )


def recording_header(run: DrillRun, speed: float | None, overrides: Sequence[str] = ()) -> RecordingHeader:
    """`overrides`: the run's `--set`s beyond the drill's own, as the header keeps them to run it again."""
    from console import __version__
    from console.protocol import Source

    drill = run.drill
    return RecordingHeader(
        stormdeck_version=__version__,
        fleet=run.scenario.name,
        source=Source.SIMULATOR,
        started_unix_s=time.time(),
        scenario=drill.scenario,
        seed=run.seed,
        overrides=list(overrides),
        drill=drill_info(drill, speed),
    )


def drill_info(drill: Drill, speed: float | None) -> DrillInfo:
    """What a recording's header says of the drill it came from: enough for the report's Session and
    Objectives, and for a replay to show the drill's clock."""
    return DrillInfo(
        name=drill.name,
        title=drill.title,
        seed_source=drill.seed_source,
        speed=speed,
        clock_start_s=drill.clock_start_s,
    )
