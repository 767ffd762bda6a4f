"""`stormdeck sim …`: list and run simulator scenarios."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from console.cli.checks import typed_int
from console.cli.groups import add_subcommands
from console.errors import InputError, MissingInput


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("sim", help="the fleet simulator: list, run and serve scenarios")
    sim = add_subcommands(parser, dest="sim_command", metavar="SUBCOMMAND")

    listing = sim.add_parser(
        "list",
        help="list the packaged scenarios, one a line, name first",
        examples=(
            "stormdeck sim list",
            "stormdeck sim list --json",
        ),
    )
    listing.add_argument(
        "--json",
        action="store_true",
        help="print one JSON list of the scenarios (name, title, seed_source, teaches, clients, nodes, duration_s)",
    )
    listing.set_defaults(handler=_list)

    run = sim.add_parser(
        "run",
        help="run a scenario headless and print what it shows",
        description="Run a scenario (a packaged name or a .toml path) and print its summary figures.",
        examples=(
            "stormdeck sim run thundering-herd",
            "stormdeck sim run thundering-herd --set clients.policy=decorrelated --json",
            "stormdeck sim run regional-outage --until 300 --frames frames.jsonl",
        ),
    )
    run.add_argument(
        "scenario",
        nargs="?",
        metavar="SCENARIO",
        help="scenario name (see `stormdeck sim list`) or path to a .toml file",
    )
    add_override_arguments(run)
    run.add_argument(
        "--until",
        # Read as typed and checked once the scenario is loaded: argparse's "invalid float value: 'abc'"
        # could not say the range, which is the scenario's (`until_seconds`).
        metavar="SECONDS",
        help="stop at this simulated time: whole seconds (the simulator runs whole fleet seconds), 1 to 100 × "
        "the scenario's duration_s (default: its duration_s)",
    )
    run.add_argument(
        "--frames",
        type=Path,
        metavar="FILE.jsonl",
        help="write every simulated second's events, then its frame, then the alarms judged on it, as JSON "
        "lines to FILE (replaced if it exists; its directory must exist; the records: docs/scenarios.md)",
    )
    run.add_argument(
        "--json",
        action="store_true",
        help="print the summary as one JSON object instead of the text (its keys: docs/scenarios.md)",
    )
    run.set_defaults(handler=_run)

    try:
        from console.cli.serve import add_serve_parser
    except ImportError:  # the server is optional until it lands
        return
    add_serve_parser(sim)


def add_override_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario value by dotted path, e.g. nodes.count=40 or clients.policy=full_jitter; "
        "repeatable (the keys: docs/scenarios.md; a wrong one is named with those beside it)",
    )
    parser.add_argument(
        "--seed",
        type=typed_int,
        help="a random seed, a whole number from 0 to 2**63 - 1 (default: the scenario's)",
    )


def _list(args: argparse.Namespace) -> int:
    from console.sim.scenario_loader import list_scenarios, load_scenario

    if args.json:
        # As `drill --list --json`: the plain listing stays one a line, name first (a fixed contract).
        listed = [_listing(load_scenario(name)) for name, _ in list_scenarios()]
        print(json.dumps(listed, indent=2))
        return 0
    for name, title in list_scenarios():
        print(f"{name}\t{title}")
    return 0


def _listing(scenario: Any) -> dict[str, object]:
    """A scenario as `sim list --json` lists it."""
    return {
        "name": scenario.name,
        "title": scenario.title,
        "seed_source": scenario.seed_source,
        "teaches": scenario.teaches,
        "clients": scenario.clients.count,
        "nodes": scenario.nodes.count,
        "duration_s": scenario.duration_s,
    }


def run_scenario(
    name: str,
    overrides: list[str],
    seed: int | None,
    until: float | str | None,
    frames_path: Path | None = None,
) -> dict[str, Any]:
    """Run headless and return the summary (the `sim run --json` object); `until` as a number or as typed."""
    from console.cli.kernel_load import load_simulator
    from console.sim.engine import Simulation
    from console.sim.scenario_loader import load_scenario
    from console.sim.scenario_schema import check_seed
    from console.sim.summary import RunRecorder

    check_seed(seed)
    scenario = load_scenario(name, overrides)
    duration = until_seconds(until, scenario.duration_s)
    # Opened once every other input is checked, before the run: a bad path costs no simulated time.
    frames_file = _open_frames(frames_path) if frames_path else None
    try:
        sim = Simulation(scenario, seed=seed, keep_history=False)
        load_simulator(sim)  # not timed: a first run's compile is no part of the run's wall time
        recorder = RunRecorder(sim)
        alarms = _alarm_engine()
        started = time.perf_counter()
        for result in sim.run(duration):
            recorder.record(result)
            if alarms is not None or frames_file is not None:
                # The node records only when they are written: the alarms read the nodes as columns.
                frame = sim.frame(result, with_nodes=frames_file is not None)
                alarm_events = (
                    alarms.update(frame, _fleet_view(sim, result, alarms)) if alarms is not None else []
                )
                if frames_file is not None:
                    # As `sim serve` streams a second: its events (stamped with its start) before its frame,
                    # the alarms judged on the frame after it. Written after the frame, a batch's event at 30
                    # came after frame 31, which already showed the batch: effects before their cause.
                    records = [*result.events, frame, *alarm_events]
                    frames_file.writelines(record.model_dump_json() + "\n" for record in records)
    finally:
        if frames_file is not None:
            frames_file.close()
    wall_s = time.perf_counter() - started
    fired = _first_fired(alarms)
    return recorder.summary(wall_s, fired)


#: `--until` runs at most this many times the scenario's own duration_s.
UNTIL_TIMES_DURATION = 100


def until_seconds(until: float | str | None, duration_s: float) -> int:
    """The fleet seconds `--until` runs (None: the scenario's `duration_s`). The simulator runs whole fleet
    seconds and cannot stop within one: 0.5 ran none (a summary of zeros) and 1.7 ran one, silently, so a
    fraction is refused, naming the two whole seconds either side of it."""
    if until is None:
        return int(duration_s)
    high = duration_s * UNTIL_TIMES_DURATION
    allowed = f"whole seconds in [1, {high:g}]"
    why = f"simulated seconds, at most {UNTIL_TIMES_DURATION} × the scenario's duration_s, {duration_s:g}"
    try:
        seconds = float(until)
    except ValueError:
        raise InputError("--until", until, f"{allowed} ({why})") from None
    # As typed: -5, not -5.0 (and 1e30 stays 1e+30).
    shown = int(seconds) if seconds.is_integer() and abs(seconds) < 1e15 else seconds
    if not 1 <= seconds <= high:
        raise InputError("--until", shown, f"{allowed} ({why})")
    if not seconds.is_integer():
        nearest = f"{math.floor(seconds)} or {math.ceil(seconds)}"
        raise InputError("--until", shown, f"{allowed} (the simulator runs whole fleet seconds: {nearest})")
    return int(seconds)


def _open_frames(path: Path) -> TextIO:
    if str(path) == "-":  # stdout carries the summary; a file named '-' would surprise everyone
        raise InputError("--frames", "-", "a file path ('-' is not stdout here: the summary goes there)")
    try:
        return path.open("w", encoding="utf-8")
    except OSError as error:
        raise InputError("--frames", str(path), f"a writable file ({error.strerror})") from None


def _fleet_view(sim: Any, result: Any, alarms: Any) -> Any:
    from console.alarms import FleetView
    from console.sim.records import node_columns

    in_force = sim.admission_in_force()
    return FleetView.of_columns(*node_columns(sim, result), in_force, alarms.thresholds, alarms.capacity)


def _alarm_engine() -> Any:
    try:
        from console.alarms import AlarmEngine
    except ImportError:
        return None
    return AlarmEngine()


def _first_fired(alarms: Any) -> dict[str, float]:
    if alarms is None:
        return {}
    fired: dict[str, float] = {}
    for alarm in [*alarms.history, *alarms.active]:
        key = alarm.name
        if key not in fired or alarm.since_s < fired[key]:
            fired[key] = alarm.since_s
    return dict(sorted(fired.items(), key=lambda kv: kv[1]))


def require_scenario(name: str | None) -> str:
    """The SCENARIO argument, or what it may be: argparse's "required: scenario" named none to choose."""
    if name:
        return name
    from console.sim.scenario_loader import list_scenarios

    names = ", ".join(scenario for scenario, _ in list_scenarios())
    raise MissingInput("SCENARIO", f"one of {names}, or a path to a .toml file (see `stormdeck sim list`)")


def _run(args: argparse.Namespace) -> int:
    args.scenario = require_scenario(args.scenario)
    summary = run_scenario(args.scenario, args.overrides, args.seed, args.until, args.frames)
    if args.json:
        print(json.dumps(summary))
        return 0
    _print_summary(summary)
    return 0


def _print_summary(s: dict[str, Any]) -> None:
    from console.waves import lockstep_text  # (numpy: only when a run is summed up)

    def show(value: Any, unit: str = "") -> str:
        if value is None:
            return "—"
        if isinstance(value, float):
            return f"{value:,.1f}{unit}"
        if isinstance(value, int):
            return f"{value:,}{unit}"
        return f"{value}{unit}"

    rows = [
        (
            "scenario",
            f"{s['scenario']} (seed {s['seed']}, {s['clients']:,} clients, {_nodes_text(s)}, "
            f"{s['simulated_s']:.0f} s simulated)",
        ),
        ("peak attempts / 100 ms", show(s["peak_attempts_per_100ms"])),
        ("lockstep index", lockstep_text(s["lockstep_index"], s["lockstep_note"] or "")),
        ("min connections", f"{show(s['min_connections'])} at {s['min_connections_at_s']:.0f} s"),
        ("recovery", _recovery_text(s["recovery_s"])),
        ("max node CPU", show(s["max_node_cpu_pct"], " %")),
        ("503s / timeouts", f"{show(s['rejects_total'])} / {show(s['timeouts_total'])}"),
        ("full resyncs", f"{show(s['full_resyncs_total'])} (peak backlog {show(s['peak_resync_backlog'])})"),
        ("drain close rate", show(s["drain_close_rate_per_s"], " /s per draining node")),
        ("rollout completed", _rollout_text(s)),
        (
            "alarms fired",
            ", ".join(f"{name} at {t:.0f} s" for name, t in s["alarms_fired"].items()) or "none",
        ),
        ("wall time", show(s["wall_s"], " s")),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}", file=sys.stdout)


def _recovery_text(recovery_s: float | None) -> str:
    """As the after-action report says it: 0 means the fleet never fell below the line after the first
    disconnect — there was nothing to recover from, not a recovery that took no time."""
    if recovery_s == 0:
        return "never below 95 % of before  (after the first disconnect)"
    shown = "—" if recovery_s is None else f"{recovery_s:,.1f} s"
    return f"{shown}  (first disconnect → back to ≥ 95 %)"


def _nodes_text(s: dict) -> str:
    start, end = s["nodes_at_start"], s["nodes"]
    return f"{start} nodes" if start == end else f"{start} nodes, {end} at the end"


def _rollout_text(s: dict) -> str:
    """When it completed and how long it took: "completed 240.0 s" read as either."""
    from console.model.units import duration

    if s["rollout_completed_s"] is not None:
        return (
            f"at {s['rollout_completed_at_s']:,.0f} s (took {duration(s['rollout_completed_s'])} from its start "
            f"at {s['rollout_started_at_s']:,.0f} s)"
        )
    state = s["rollout_state"]
    if state == "idle":
        return "— (no rollout)"
    return f"— ({s['rollout_note'] or state})"
