"""`stormdeck drill`: rehearse the seeds' incidents against the simulator (issue #5, sections 1–2).

Here: `list` (or `--list`), `NAME --headless [--actions FILE] [--json]`, instructor mode `NAME --serve`
(the drill over the fleet API, `sim serve`'s machinery; events come from `stormdeck inject` or an
instructor's console, `attach --instructor`), and, by default, the console in drill mode (`console.ui.drill`) on the
drill served by a child `NAME --serve`: the same `Drill`, scenario (`drill_scenario`) and `score_drill`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from rich.markup import escape

from console.cli.checks import check_output_file, check_recording_out, typed_float, typed_int
from console.cli.serve import DEFAULT_HOST, DEFAULT_PORT
from console.drills import LIST_WORD
from console.errors import FlagError, InputError, MissingInput
from console.stop_signals import OUTSIDE_STOP_SIGNALS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from console.drills.live import DrillProgress, LiveObjective, ScoreSoFar
    from console.drills.objectives import Score
    from console.drills.schema import Drill
    from console.drills.summary import NextStep, RunCommand
    from console.protocol import Frame
    from console.record.records import ActionRecord


#: A drill left before its end (Ctrl-C on a headless run, q q in the console, q on the briefing) is not
#: scored: exit 130, as an interrupted command does, so a script never reads it as a finished run.
NOT_SCORED = 130


def register(subparsers: argparse._SubParsersAction) -> None:
    from console.server.clock import MAX_SPEED  # pure: no FastAPI

    parser = subparsers.add_parser(
        "drill",
        help="rehearse a seed's incident against the simulator, scored on measured objectives",
        description="Run a drill. By default the console runs in drill mode: a briefing, then the live "
        "fleet with the objectives (met, at risk, failed), the drill clock, hints and pause (p), and an end "
        "screen with the score. --headless runs it to the end with a scripted operator (--actions FILE: "
        "a TOML list of timed actions sent through the guarded fleet API; without it the operator does "
        "nothing) and prints the objectives and the score. `stormdeck drill list` (or --list) lists the drills; "
        "`stormdeck drill list NAME` (or --list NAME) shows one — its briefing, objectives and time penalty — "
        "and runs nothing.",
        examples=(
            "stormdeck drill list",
            "stormdeck drill list thundering-herd   # its briefing and objectives; nothing runs",
            "stormdeck drill regional-outage   # the console in drill mode",
            "stormdeck drill thundering-herd --headless --actions docs/drills/examples/thundering-herd-seeds-fix.toml "
            "--json   # docs/: in stormdeck's source",
            "stormdeck drill thundering-herd --serve --port 8470 --paused   # an instructor's drill",
        ),
    )
    parser.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help=f"a packaged drill's name, or a path to a drill .toml; `{LIST_WORD}` lists the drills, as --list does",
    )
    # `drill list NAME`: the drill `list` shows (`--list NAME` has it as NAME).
    parser.add_argument("shown", nargs="?", metavar="NAME", help=argparse.SUPPRESS)
    parser.add_argument(
        "--list",
        action="store_true",
        help=f"list the packaged drills (as NAME `{LIST_WORD}`); with a NAME (`--list NAME`, `{LIST_WORD} "
        "NAME`), show that drill instead — its briefing, objectives and time penalty — and run nothing",
    )
    parser.add_argument("--headless", action="store_true", help="run without a screen, with a script")
    parser.add_argument(
        "--actions",
        type=Path,
        metavar="FILE",
        help="the scripted operator (TOML); needs --headless (default: the operator does nothing)",
    )
    parser.add_argument("--json", action="store_true", help="print the outcome (or --list) as JSON")
    parser.add_argument(
        "--seed",
        type=typed_int,
        help="a random seed, a whole number from 0 to 2**63 - 1, for the simulation (default: the scenario's)",
    )
    parser.add_argument(
        "--speed",
        type=typed_float,
        help=f"fleet seconds per wall second in (0, {MAX_SPEED:g}] (default 1; --headless: any speed above 0, "
        "default as fast as the simulator goes)",
    )
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="record the run (frames, events, alarms, actions, the outcome) into FILE, for `stormdeck replay` "
        "and `stormdeck report`; an existing recording is continued; its directory must exist (default: "
        "nothing recorded)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario value after the drill's own (e.g. nodes.count=480 for full scale); "
        "repeatable (default: the drill's values)",
    )
    parser.add_argument(
        "--audit-log",
        type=Path,
        metavar="FILE",
        help="append each attempt at an action, a clock change or an injection to FILE, a hash-chained "
        "JSONL log kept after the drill (`stormdeck audit verify FILE`); its directory must exist (default: "
        "a scratch log removed at the end (the console, --headless); --serve: stormdeck/audit/FLEET.jsonl "
        "in the user's XDG state dir)",
    )
    serving = parser.add_argument_group(
        "instructor (--serve)",
        "serve the drill over the fleet API: trainees attach with `stormdeck attach URL`, the instructor "
        "injects events with `stormdeck inject URL EVENT …` (admin token)",
    )
    serving.add_argument("--serve", action="store_true", help="serve the drill instead of running it here")
    serving.add_argument(
        "--paused",
        action="store_true",
        help="start with the fleet clock paused: the instructor console's palette starts it (\"Fleet clock: "
        'start / resume"), as does POST /v1/sim/clock {"paused": false}',
    )
    # No argparse defaults: a serving option given without --serve is refused (`_refuse_unread_options`).
    serving.add_argument("--host", help=f"address to bind (default {DEFAULT_HOST})")
    serving.add_argument(
        "--port", type=typed_int, help=f"port, in [0, 65535] (default {DEFAULT_PORT}; 0 picks a free one)"
    )
    serving.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="tokens, one a line: ROLE TOKEN [NAME] (an admin line for the instructor, operator lines for "
        "trainees) (default: two 0600 files are made — a trainee's (operator) and the instructor's "
        "(admin) — and the server binds to loopback only)",
    )
    # As `sim serve` has it: the interactive drill's child server stops when its parent's pipe closes.
    parser.add_argument("--stop-with-parent", action="store_true", help=argparse.SUPPRESS)
    parser.set_defaults(handler=run_drill)


def run_drill(args: argparse.Namespace) -> int:
    from console.drills.schema import list_drills, load_drill
    from console.server.clock import MAX_SPEED
    from console.sim.scenario_schema import check_seed

    listed_by_word = args.name == LIST_WORD  # the word, as `sim list` has it: `drill list` was refused
    if not listed_by_word and args.shown is not None:
        raise InputError(
            "NAME",
            args.shown,
            f"one drill (NAME is {args.name!r}); `stormdeck drill list NAME` shows a drill without running it",
        )
    if args.list or listed_by_word:
        shown = args.shown if listed_by_word else args.name
        shown = None if shown == LIST_WORD else shown
        _refuse_running_options(args, shown)
        if shown is not None:  # `--list NAME` listed every drill, NAME unread
            _show(load_drill(shown), args.json)
        else:
            _list(args.json)
        return 0
    if not args.name:
        names = ", ".join(name for name, _ in list_drills())
        raise MissingInput("NAME", f"one of {names}, or a path to a drill .toml (see `stormdeck drill list`)")
    if args.speed is not None and (not math.isfinite(args.speed) or args.speed <= 0):
        raise InputError("--speed", args.speed, "fleet seconds per wall second, above 0")
    if args.speed is not None and not args.headless and args.speed > MAX_SPEED:
        # A served drill's clock has a limit: say so here, not from a child server that already started.
        allowed = f"fleet seconds per wall second in (0, {MAX_SPEED:g}] (--headless has no limit)"
        raise InputError("--speed", args.speed, allowed)
    check_seed(args.seed)
    if args.serve and args.headless:
        raise FlagError(
            "--serve",
            "cannot go with --headless: give one (--serve serves the drill for trainees to attach to; "
            "--headless runs it here to the end with a script)",
        )
    if args.actions is not None and not args.headless:
        # The console (or a served drill's trainees) is the operator; the script would be ignored.
        raise FlagError(
            "--actions",
            "needs --headless (a drill run without the console, the script as its operator; in the console "
            "and in a served drill the trainee acts)",
        )
    _refuse_unread_options(args)
    if args.audit_log is not None:
        # Every mode writes it (the console's and --serve's server, --headless's in-process one): a path
        # that cannot be one is refused before a server starts or a drill runs, not made for a typo.
        check_output_file("--audit-log", args.audit_log, make_directory=False)
    if args.serve:
        return _serve(args)
    drill = load_drill(args.name)
    if args.record is not None:
        check_recording_out("--record", args.record)
    if not args.headless:
        return _interactive(args, drill)
    return _headless(args, drill)


def _list(as_json: bool) -> None:
    from console.drills.schema import list_drills, load_drill

    if as_json:
        print(json.dumps([_listing(load_drill(name)) for name, _ in list_drills()], indent=2))
        return
    for name, title in list_drills():
        print(f"{name:24} {title}")


def _refuse_running_options(args: argparse.Namespace, shown: str | None) -> None:
    """Listing (or showing one drill) runs none: an option of a run is refused, not ignored (`drill list
    --serve` listed the drills and served nothing)."""
    of_a_run = (
        "headless",
        "serve",
        "actions",
        "record",
        "seed",
        "speed",
        "set",
        "audit_log",
        *SERVING_OPTIONS,
    )
    given = next((name for name in of_a_run if getattr(args, name) not in (None, False, [])), None)
    if given is not None:
        what = f"shows {shown}" if shown is not None else "lists the drills"
        option = "--" + given.replace("_", "-")
        raise FlagError(
            option, f"cannot go with --list (it {what} and runs none: drop --list to run a drill)"
        )


#: The options only a served drill reads.
SERVING_OPTIONS = ("paused", "host", "port", "token_file")


def _refuse_unread_options(args: argparse.Namespace) -> None:
    """An option the chosen mode would not read is refused, as `--actions` without `--headless` is: a
    served drill wrote no `--record` (the instructor found no file after the session), and `--port 8470`
    without `--serve` ran the single-player console on a free port of its own."""
    if args.json and not args.headless:
        raise FlagError(
            "--json",
            "needs --headless or --list (the console prints its outcome as text when it ends; a served "
            "drill prints none)",
        )
    if args.serve and args.record is not None:
        raise FlagError(
            "--record",
            "is for the console or --headless (a served drill is recorded by whoever watches it: "
            "`stormdeck record URL --out FILE` or `stormdeck attach URL --record FILE`)",
        )
    if args.serve:
        return
    for name in SERVING_OPTIONS:
        value = getattr(args, name)
        if value is not None and value is not False:
            option = "--" + name.replace("_", "-")
            mode = (
                "--headless serves nothing"
                if args.headless
                else "the console serves its drill to itself, on a free loopback port with tokens of its own"
            )
            raise FlagError(option, f"is for --serve ({mode})")


def _show(drill: Drill, as_json: bool) -> None:
    """`drill list NAME`: the drill as its briefing opens it, in plain text (or JSON), and how to run it."""
    from rich.text import Text

    from console.drills.headless import drill_scenario
    from console.drills.objectives import penalty_rule
    from console.ui.screens.briefing import briefing_text

    if as_json:
        detail = {
            **_listing(drill),
            "teaches": drill.teaches,
            "briefing": drill.briefing,
            "objectives": [{"name": o.name, "points": o.points} for o in drill.objectives],
            "time_penalty": penalty_rule(drill.scoring),
        }
        print(json.dumps(detail, indent=2))
        return
    served = drill.served(drill_scenario(drill).duration_s)
    run = (
        f"run it: stormdeck drill {drill.name}  (the console; --headless runs it here with a script, "
        "--serve serves it for trainees)"
    )
    markup = briefing_text(served, closing=escape(run), scoring=penalty_rule(drill.scoring))
    print(Text.from_markup(markup).plain)


def _listing(drill: Drill) -> dict[str, object]:
    """A drill as `drill --list --json` lists it."""
    return {
        "name": drill.name,
        "title": drill.title,
        "scenario": drill.scenario,
        "seed_source": drill.seed_source,
        "duration_s": drill.duration_s,
    }


def _interactive(args: argparse.Namespace, drill: Drill) -> int:
    """The console in drill mode on the drill served by a child `drill NAME --serve` (as the embedded
    default serves `sim serve`): briefing, live objectives and hints, pause, the end screen."""
    import signal
    import sys

    from console.cli.embedded import EmbeddedServer, _exit_on_signal, ending_at_once_after_an_outside_stop
    from console.drills.headless import drill_scenario
    from console.drills.live import DrillProgress
    from console.drills.summary import next_steps

    scenario = drill_scenario(drill, args.set)  # checks the overrides before a server starts
    end_s = scenario.duration_s
    # The briefing is read paused; EmbeddedServer adds --stop-with-parent.
    serve = ["drill", args.name, "--serve", "--paused"]
    if args.seed is not None:
        serve += ["--seed", str(args.seed)]
    for override in args.set:
        serve += ["--set", override]
    for signum in OUTSIDE_STOP_SIGNALS:
        signal.signal(signum, _exit_on_signal)
    speed = 1.0 if args.speed is None else args.speed
    seed = scenario.seed if args.seed is None else args.seed
    record: Path | None = args.record
    while True:  # once, and again each time the trainee asks for another try on the end screen (r)
        print(f"stormdeck: serving the drill {drill.name} on 127.0.0.1…", file=sys.stderr, flush=True)
        run = run_command(args, record)
        fresh = fresh_recording(record if record is not None else Path(f"{drill.name}.sdrec"), record)
        # A served drill's clock is an admin's: this player's pause key gets its own admin token. The run
        # is one exercise: its audit log is its own (in the private directory, removed with it), so L shows
        # this run's actions only — or the user's --audit-log FILE, kept.
        with (
            ending_at_once_after_an_outside_stop(),
            EmbeddedServer(
                drill.scenario,
                speed=speed,
                serve=serve,
                clock_token=True,
                own_audit_log=True,
                audit_log=args.audit_log,
            ) as server,
        ):
            ended = _run_drill_console(
                server.url,
                server.token,
                DrillProgress(drill, end_s),
                record,
                seed=seed,
                speed=speed,
                clock_token=server.clock_token,
                next_steps=next_steps(run, str(fresh)),
                offers_retry=True,
            )
        if not ended.retry:
            return ended.status
        # The try shown as "try it again": recorded beside this one when this one was.
        record = fresh if record is not None else None
        where = f", recorded to {record}" if record is not None else ""
        print(f"stormdeck: trying the drill again{where}", file=sys.stderr, flush=True)


def run_command(args: argparse.Namespace, record: Path | None) -> RunCommand:
    """This run's command as the next steps repeat it (`record`: where this run records, if it does)."""
    from console.drills.summary import RunCommand

    return RunCommand(
        drill=args.name,
        seed=args.seed,
        sets=tuple(args.set),
        speed=args.speed,
        record=str(record) if record is not None else None,
        headless=bool(args.headless),
        actions=str(args.actions) if args.actions is not None else None,
    )


def fresh_recording(path: Path, taken: Path | None) -> Path:
    """Where the next run may record without continuing another recording (given again, a recording is
    continued): `path` while no file is there and it is not `taken` (this run's), else the first free
    STEM-N beside it — run.sdrec → run-2.sdrec, and a try after run-2.sdrec → run-3.sdrec."""
    if path != taken and not path.exists():
        return path
    numbered = re.fullmatch(r"(.*)-(\d+)", path.stem)
    stem, first = (numbered[1], int(numbered[2]) + 1) if numbered else (path.stem, 2)
    candidates = (path.with_name(f"{stem}-{n}{path.suffix}") for n in itertools.count(first))
    return next(candidate for candidate in candidates if candidate != taken and not candidate.exists())


class ConsoleEnd(NamedTuple):
    """How the drill console ended: the exit status, and whether the trainee asked for another try."""

    status: int
    retry: bool = False


def _run_drill_console(
    url: str,
    token: str,
    progress: DrillProgress,
    record: Path | None,
    *,
    seed: int | None = None,
    speed: float | None = None,
    clock_token: str | None = None,
    next_steps: Sequence[NextStep] | None = None,
    offers_retry: bool = False,
) -> ConsoleEnd:
    from console.cli.screen import run_app
    from console.client.actions import ActionClient
    from console.client.stream import StreamClient
    from console.guards.config import load_default_thresholds
    from console.model.alarm_source import console_model
    from console.ui.drill import DrillApp

    admin = ActionClient(url, token)
    # The drill's clock is an admin's (`clock_token`); the trainee acts with the operator `token`.
    clock = ActionClient(url, clock_token) if clock_token is not None else admin

    async def set_paused(paused: bool) -> None:
        await clock.send("POST", "/v1/sim/clock", {"paused": paused})

    source = StreamClient(url, token)
    action_recorder = None
    recorder = None
    if record is not None:
        from console.drills.headless import drill_info
        from console.record.daemon import RecordingTap, StreamRecorder

        drill = progress.drill  # the header says it is a drill's, as a headless run's does
        recorder = StreamRecorder(
            record,
            url=url,
            option="--record",
            scenario=drill.scenario,
            seed=seed,
            drill=drill_info(drill, speed),
        )
        source = RecordingTap(source, recorder)

        def action_recorder(item: object) -> None:
            if recorder.writer is not None:
                recorder.writer.write(item)

    app = DrillApp(
        progress,
        set_paused=set_paused,
        action_recorder=action_recorder,
        record_outcome=action_recorder,
        model=console_model(load_default_thresholds().thresholds),
        source=source,
        admin=admin,
        next_steps=next_steps,
        offers_retry=offers_retry,
    )
    try:
        status = run_app(app)
    finally:
        if recorder is not None:  # the tap closes it when its stream ends; this, if it never began
            recorder.close()
    if status != 0:
        return ConsoleEnd(status)
    if app.abandoned:
        _say_interrupted(progress.drill, progress.time_s, record, "abandoned", progress.so_far())
        return ConsoleEnd(NOT_SCORED)
    if progress.final is None:  # quit on the briefing: the fleet clock never ran
        _say_interrupted(progress.drill, None, record, "left")
        return ConsoleEnd(NOT_SCORED)
    _print_outcome(
        progress.drill,
        progress.final,
        progress.objectives(progress.final),
        seed,
        progress.actions,
        app.next_steps,
    )
    return ConsoleEnd(0, retry=app.retry_asked)


def _serve(args: argparse.Namespace) -> int:
    """Serve the drill with `sim serve`'s machinery; the trainee's token is announced as `token:`."""
    from console.cli.serve import LocalToken, check_serve_arguments, serve_backend
    from console.drills.schema import load_drill
    from console.drills.served import DrillBackend
    from console.protocol import UNNAMED_INSTRUCTOR
    from console.server.clock import check_speed
    from console.server.tokens import Role

    speed = check_speed(1.0 if args.speed is None else args.speed, "--speed")
    host = DEFAULT_HOST if args.host is None else args.host
    port = DEFAULT_PORT if args.port is None else args.port  # (0: a free one)
    args = argparse.Namespace(**{**vars(args), "host": host, "port": port})
    check_serve_arguments(args)
    drill = load_drill(args.name)
    backend = DrillBackend.from_drill(drill, args.set, seed=args.seed)
    backend.on_ended = lambda event: print(drill_ended_line(drill, event.time_s), flush=True)
    local = (
        LocalToken("token", Role.OPERATOR, "trainee"),
        LocalToken("admin", Role.ADMIN, UNNAMED_INSTRUCTOR),
    )

    def notes(url: str, paths: dict[str, Path]) -> list[str]:
        return [
            served_drill_line(drill, backend.simulation.scenario.duration_s),
            f"inject: stormdeck inject {url} EVENT [KEY=VALUE …] --token-file {paths['admin']}",
            f"        or the palette of stormdeck attach {url} --token-file {paths['admin']} --instructor",
        ]

    # The clock is the instructor's: a trainee's operator token may not pause the drill or run it at 100×.
    return serve_backend(
        backend,
        args,
        speed,
        what=f"drill {drill.name}",
        local_tokens=local,
        notes=notes,
        clock_role=Role.ADMIN,
        first_second=(drill.human_time(1), "the drill's first second"),
    )


def served_drill_line(drill: Drill, duration_s: float) -> str:
    """The served drill's line of the announcement: its name, title, clock span and timeline."""
    events = len(drill.timeline)
    return (
        f"drill:  {drill.name} — {drill.title} ({drill.human_time(0)} to {drill.human_time(duration_s)}, "
        f"{events} timeline event{'' if events == 1 else 's'})"
    )


def drill_ended_line(drill: Drill, duration_s: float) -> str:
    """What a served drill's terminal says at its end (once): the drill is over, nothing stops, and its
    fleet API refuses actions from then on (`console.server.desk.drill_over`)."""
    return (
        f"stormdeck: drill {drill.name} ended at {drill.human_time(duration_s)} (fleet second "
        f"{duration_s:g}): the simulation keeps running and the consoles stay attached, but actions are "
        "refused (nothing is scored here); Ctrl-C stops the server."
    )


def _headless(args: argparse.Namespace, drill: Drill) -> int:
    from console.cli.kernel_load import load_simulator
    from console.drills.headless import run_headless
    from console.drills.script import IDLE, load_script

    if args.actions is not None and not args.actions.exists():
        # --help's example names one of the scripts in the source's docs/, which an install does not have.
        raise InputError(
            "--actions",
            str(args.actions),
            "a readable file (No such file or directory): a drill script (TOML); each packaged drill has "
            "examples in docs/drills/examples/ in stormdeck's source",
        )
    script = load_script(args.actions, drill, args.set) if args.actions is not None else IDLE
    reached: list[float] = []  # the last fleet second run, for a Ctrl-C's message

    def on_frame(frame: Frame) -> None:
        reached[:] = [frame.time_s]

    try:
        run = run_headless(
            drill,
            script,
            seed=args.seed,
            speed=args.speed,
            overrides=args.set,
            record=args.record,
            on_frame=on_frame,
            load=load_simulator,
            audit_log=args.audit_log,
        )
    except KeyboardInterrupt:
        _say_interrupted(drill, reached[0] if reached else None, args.record)
        return NOT_SCORED
    if args.json:
        print(json.dumps(run.as_dict(), indent=2))
        return 0
    assert run.score is not None
    from console.drills.summary import next_steps

    fresh = fresh_recording(args.record or Path(f"{drill.name}.sdrec"), args.record)
    steps = next_steps(run_command(args, args.record), str(fresh))
    _print_outcome(drill, run.score, run.objectives(), run.seed, run.actions, steps, run.wall_s)
    return 0


def _say_interrupted(
    drill: Drill,
    time_s: float | None,
    record: Path | None,
    how: str = "interrupted",
    so_far: ScoreSoFar | None = None,
) -> None:
    import sys

    where = (
        f"at {drill.human_time(time_s)} (fleet second {time_s:g})"
        if time_s is not None
        else "before it began"
    )
    scored = f" ({so_far.text})" if so_far is not None else ""
    print(f"stormdeck: drill {drill.name} {how} {where}: not scored{scored}", file=sys.stderr)
    if record is not None and record.exists():
        print(
            f"stormdeck: the recording {record} holds the run up to there, without a score "
            f"(stormdeck replay / report read it)",
            file=sys.stderr,
        )


def _print_outcome(
    drill: Drill,
    score: Score,
    objectives: Sequence[LiveObjective],
    seed: int | None,
    actions: list[ActionRecord],
    steps: Sequence[NextStep] = (),
    wall_s: float | None = None,
) -> None:
    """The outcome as the end screen gives it, on the terminal: a headless run's, or the drill console's
    once the trainee leaves its end screen (so the score outlives the screen), and what to do next.
    `objectives`: each as the end screen reads it, on the drill's clock (`DrillProgress.objectives` once
    scored, `DrillRun.objectives`)."""
    from console.drills.objectives import penalty_text
    from console.drills.summary import end_lines, next_steps_text
    from console.record.reader import describe_action

    print(f"{drill.title}  ({drill.name}{f', seed {seed}' if seed is not None else ''})")
    print(f"  rehearses: {drill.seed_source}")
    for action in actions:  # ("rollout_halt  → applied": a fleet action's missing target left two spaces)
        print(f"  {drill.human_time(action.time_s)}  {describe_action(action)}")
    # As the end screen's marks: met, failed, or not needed (met only because what it answers never came);
    # the column widens only where "not needed" is shown.
    marks = [objective.standing.value for objective in objectives]
    width = max(len("failed"), *(len(mark) for mark in marks))
    for objective, mark in zip(objectives, marks, strict=True):
        item = objective.measured
        print(f"  [{mark:<{width}}] {item.points:>5g}/{item.max_points:<4g} {item.name}")
        for line in end_lines(objective):  # the figure it turned on, then what became of it, when
            print(f"{'':{width + 5}}{line}")
    print(f"  {penalty_text(score, drill.scoring)}")
    wall = f"   ({wall_s:.1f} s wall)" if wall_s is not None else ""
    print(f"  score {score.score:g} / {score.max_score:g}{wall}")
    if steps:
        print()
        for line in next_steps_text(list(steps)):
            print(line)
