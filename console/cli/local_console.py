"""`stormdeck console [SCENARIO]`: the console on the embedded simulator running any scenario — what bare
`stormdeck` does with the demo, with the scenario, its overrides, seed and speed chosen."""

from __future__ import annotations

import argparse

from console.cli.checks import typed_float


def register(subparsers: argparse._SubParsersAction) -> None:
    from console.cli.sim import add_override_arguments
    from console.server.clock import MAX_SPEED

    parser = subparsers.add_parser(
        "console",
        help="the console on a simulated fleet running SCENARIO (bare `stormdeck`: the demo)",
        description="Start SCENARIO's simulated fleet on 127.0.0.1 (a free port, a fresh token, an audit log "
        "of this run's own) and attach the console to it; q stops both. Bare `stormdeck` is `stormdeck "
        "console demo`. To serve a fleet for other consoles, use `stormdeck sim serve`. Exit 0 when quit, 2 "
        "bad input (nothing starts), 1 an error.",
        examples=(
            "stormdeck console graceful-drain",
            "stormdeck console thundering-herd --set clients.policy=decorrelated --speed 5",
            "stormdeck console regional-outage --seed 7",
        ),
    )
    parser.add_argument(
        "scenario",
        nargs="?",
        metavar="SCENARIO",
        help="a scenario name (see `stormdeck sim list`) or a TOML path (default: demo)",
    )
    parser.add_argument(
        "--speed",
        type=typed_float,
        default=1.0,
        help=f"fleet seconds per wall second, in (0, {MAX_SPEED:g}] (default 1)",
    )
    add_override_arguments(parser)  # --set KEY=VALUE and --seed, as `sim serve` has them
    parser.set_defaults(handler=run_console)


def run_console(args: argparse.Namespace) -> int:
    from console.cli.embedded import default_scenario, run_embedded
    from console.server.clock import check_speed
    from console.sim.scenario_loader import load_scenario
    from console.sim.scenario_schema import check_seed

    # Checked here, before a server starts: the child's refusal came back as a start failure and a log tail.
    scenario = args.scenario or default_scenario()
    speed = check_speed(args.speed, "--speed")
    check_seed(args.seed)
    load_scenario(scenario, args.overrides)  # an unknown name or override: InputError, exit 2
    return run_embedded(scenario, list(args.overrides), args.seed, speed)
