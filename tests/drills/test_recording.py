"""A headless run's recording reads back whole: frames, actions, confirmations and the drill's outcome."""

from __future__ import annotations

from pathlib import Path

from console.drills.headless import run_headless
from console.drills.schema import build_drill
from console.drills.script import build_script
from console.record.reader import RecordingReader

DRILL = {
    "name": "tiny",
    "title": "A tiny drill",
    "seed_source": "interview seed (002)",
    "scenario": "demo",
    "duration_s": 20,
    "clock_start": "04:00",
    "briefing": "b",
    "timeline": [{"at": "04:00:02", "say": "window opens"}],
    "objectives": [{"name": "no override", "kind": "no_override", "points": 5}],
}
SCRIPT = {
    "actions": [
        {
            "at_s": 3,
            "action": "drain",
            "node": "gw-001",
            "rate_per_s": 500,
            "deadline_s": 60,
            "hint_ms": [1000, 5000],
            "typed": "gw-001",
        },
        {"at_s": 4, "action": "admission", "rate_per_s": 100, "burst": 100, "confirm": True},
    ]
}


def test_the_recording_holds_the_run(tmp_path: Path) -> None:
    drill = build_drill(DRILL)
    path = tmp_path / "run.rec"
    ran: list[float] = []  # the run measures its frames as they come and keeps only the last
    run = run_headless(
        drill, build_script(SCRIPT, drill), seed=3, record=path, on_frame=lambda f: ran.append(f.time_s)
    )
    assert [a.outcome for a in run.actions] == ["applied", "applied"]
    reader = RecordingReader(path)
    assert reader.header.drill is not None and reader.header.drill.name == "tiny"
    assert reader.header.drill.clock_start_s == 4 * 3600  # the replay reads the drill's clock from it
    assert reader.header.seed == 3
    frames = list(reader.frames())
    assert [f.time_s for f in frames] == ran
    assert run.last_frame is not None and frames[-1].totals == run.last_frame.totals
    assert len(frames[-1].nodes[0].model_dump()) > 4  # whole frames recorded, whatever the run keeps
    assert [a.action for a in reader.actions()] == ["drain", "admission"]
    assert [(c.action, c.answer, c.typed) for c in reader.confirmations()] == [
        ("drain", "confirmed", "gw-001")
    ]
    assert any(e.kind == "drill" and "window opens" in e.message for e in reader.events())
    outcome = reader.drill_outcome()
    assert outcome is not None and outcome.score == 5.0 and outcome.objectives[0].met


def test_the_drill_consoles_recording_says_which_drill_it_came_from(tmp_path: Path, monkeypatch) -> None:
    # `stormdeck drill NAME --record FILE` wrote a header with no drill, scenario or seed: the report's
    # Session read "drill —", and a recording cut before the end screen no longer said it was a drill's.
    import asyncio

    from console.cli import drill as drill_cli
    from console.drills.live import DrillProgress
    from console.model.link import Received
    from console.protocol import Hello, Source
    from console.ui.drill import DrillApp

    class HelloOnly:
        async def run(self, sink) -> None:  # type: ignore[no-untyped-def]
            sink(Received(Hello(fleet="tiny", source=Source.SIMULATOR, epoch="sim", seq=0), 0.0))

    def run_the_tap(app: DrillApp, **_: object) -> None:  # the console's stream, without a screen or a server
        app.source.source = HelloOnly()
        asyncio.run(app.source.run(lambda item: None))

    monkeypatch.setattr(DrillApp, "run", run_the_tap)
    drill = build_drill(DRILL)
    out = tmp_path / "console.sdrec"
    progress = DrillProgress(drill, end_s=20)
    drill_cli._run_drill_console("http://127.0.0.1:9", "t", progress, out, seed=11, speed=20.0)
    with RecordingReader(out) as recording:
        header = recording.header
    assert (header.scenario, header.seed) == ("demo", 11)
    assert header.drill is not None
    assert (header.drill.name, header.drill.title, header.drill.speed) == ("tiny", "A tiny drill", 20.0)
    assert header.drill.seed_source == "interview seed (002)"
    assert header.drill.clock_start_s == 4 * 3600  # "04:00": the replay shows the trainee's clock


def test_a_headless_recording_tells_the_drills_story_and_hints_as_the_drill_console_does(
    tmp_path: Path,
) -> None:
    """User pass: `drill regional-outage --headless --record FILE` replayed without "02:00:30 power fails":
    a timeline entry that injects something was applied but never told, and no hint was recorded. The
    recording holds what the drill's console is told (`DrillNarrator`, as `drill` and `drill --serve` send
    it): every story line at its time, with the injection it fires; each hint as it falls due, unless the
    operator already did what it suggests; and the drill's end."""
    from console.record.report import write_report

    drill = build_drill(
        {
            **DRILL,
            "timeline": [
                {"at": "04:00:02", "say": "window opens"},
                {
                    "at": "04:00:06",
                    "say": "power fails on two gateways",
                    "action": "restart_nodes",
                    "nodes": 2,
                },
            ],
            "hints": [
                {"after_s": 1, "text": "Watch the handshakes."},
                {"after_s": 10, "text": "Set admission.", "unless_done": "admission"},
                {"after_s": 12, "text": "Read the drain rate."},
            ],
        }
    )
    path = tmp_path / "run.sdrec"
    run_headless(drill, build_script(SCRIPT, drill), seed=3, record=path)
    with RecordingReader(path) as reader:
        told = [
            (e.time_s, e.kind, e.message, e.data.get("action"))
            for e in reader.events()
            if e.kind in ("drill", "hint")
        ]
    assert told == [
        (1.0, "hint", "Watch the handshakes.", None),
        (2.0, "drill", "04:00:02 window opens", None),
        (6.0, "drill", "04:00:06 power fails on two gateways", "restart_nodes"),
        (12.0, "hint", "Read the drain rate.", None),  # "Set admission." is moot: admission applied at 4 s
        (20.0, "drill", "04:00:20 the drill's time is up (A tiny drill)", None),
    ]
    markdown = write_report(path, tmp_path / "report").markdown.read_text()
    assert "| disconnect (injected by the drill's timeline) |" in markdown  # the restart is the incident's


def test_an_attempt_left_unconfirmed_is_recorded_without_its_confirmation_token(tmp_path: Path) -> None:
    """Found in review: a headless script's drain that needed a typed confirmation it did not give was
    recorded with the 409's verdict whole — its live confirm_token in the file, though a recording never
    holds one (docs/recording.md). The writer drops it from whatever records an attempt."""
    import gzip

    drill = build_drill(DRILL)
    unconfirmed = {"actions": [{**SCRIPT["actions"][0]}]}
    del unconfirmed["actions"][0]["typed"]
    path = tmp_path / "run.sdrec"
    run = run_headless(drill, build_script(unconfirmed, drill), seed=3, record=path)
    assert [a.outcome for a in run.actions] == ["needs_confirmation"]
    with RecordingReader(path) as reader:
        (action,) = reader.actions()
    assert action.verdict is not None and action.verdict.level.value == "typed"
    assert action.verdict.confirm_token is None
    with gzip.open(path, "rt") as text:
        assert '"confirm_token":"' not in text.read()


def test_the_recorded_outcome_says_each_objective_on_the_drills_clock_as_the_end_screen_does(
    tmp_path: Path,
) -> None:
    """The recording's `drill_outcome` explained its objectives in the scorer's fleet seconds ("1 applied
    admission by 10 s"; "… at 4 s") while the end screen said "applied 04:00:04": the report showed the
    scorer's words. Now `detail` holds the end screen's lines (`end_lines`, on the drill's clock) and `why`
    keeps the scorer's own, as `--json` prints them."""
    from console.drills.summary import end_lines

    drill = build_drill(
        {
            **DRILL,
            "objectives": [
                {
                    "name": "admission by 04:00:10",
                    "kind": "action_used",
                    "action": "admission",
                    "by_s": 10,
                    "points": 5,
                },
                {"name": "no override", "kind": "no_override", "points": 5},
            ],
        }
    )
    path = tmp_path / "run.sdrec"
    run = run_headless(drill, build_script(SCRIPT, drill), seed=3, record=path)
    with RecordingReader(path) as reader:
        outcome = reader.drill_outcome()
    assert outcome is not None
    admission, override = outcome.objectives
    assert admission.detail == "applied 04:00:04"
    assert admission.why == "1 applied admission by 10 s (needed 1)"  # the scorer's, fleet seconds
    said = ["; ".join(end_lines(o)) or None for o in run.objectives()]
    assert [o.detail for o in outcome.objectives] == said
    assert override.detail is None and override.why == "no admin override used"  # the name says it all
