"""`stormdeck bench server`: the fleet API server's stream fan-out and API latency under many clients.

Registered under `bench` by `console.cli.bench` calling `add_bench_server_parser(bench_subparsers)`.
"""

from __future__ import annotations

import argparse
import json

from console.cli.checks import COALESCE_EVENTS_RANGE, check_coalesce_events, typed_float, typed_int
from console.errors import FlagError, InputError
from console.server.clock import check_speed
from console.server.events import COALESCE_OVER

#: Issue #3, section 6: 50 stream clients on one server at 2000 nodes, fan-out p99 ≤ 100 ms.
TARGETS_MS = {"fanout_p99_ms": 100.0, "api_p99_ms": 100.0}


def add_bench_server_parser(bench_subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = bench_subparsers.add_parser(
        "server",
        help="stream fan-out delay and API latency of one fleet API server under many clients",
        description="Serve a synthetic fleet from a child process, attach CLIENTS stream clients and an "
        "API prober, and report publish→receive delay percentiles (target: fanout_p99_ms ≤ 100).",
        examples=(
            "stormdeck bench server --clients 50 --seconds 30 --storm-at 20",
            "stormdeck bench server --scenario thundering-herd --speed 10 --clients 5 --seconds 60",
        ),
    )
    parser.add_argument("--clients", type=typed_int, default=50, help="stream clients, 1 to 500 (default 50)")
    parser.add_argument(
        "--nodes",
        type=typed_int,
        default=2000,
        help="nodes in the synthetic fleet, 1 to 20000 (default 2000)",
    )
    parser.add_argument(
        "--seconds", type=typed_float, default=15.0, help="seconds to measure, 2 to 600 (default 15)"
    )
    parser.add_argument(
        "--scenario",
        help="serve this simulator scenario instead of the synthetic fleet (--nodes is then ignored)",
    )
    parser.add_argument(
        "--storm-at",
        type=typed_float,
        metavar="SECONDS",
        help="synthetic fleet only: an eighth of the nodes go down at this fleet second (one event each); a "
        "whole second from 1 to the run's last (3 s of warm-up + --seconds, × --speed)",
    )
    parser.add_argument(
        "--coalesce-events",
        type=typed_int,
        default=COALESCE_OVER,
        metavar="N",
        help="serve a second's events alike on more than N nodes as one event naming the nodes, as `sim "
        f"serve` does; {COALESCE_EVENTS_RANGE} (default {COALESCE_OVER})",
    )
    parser.add_argument(
        "--speed",
        type=typed_float,
        default=1.0,
        help="fleet seconds per wall second, in (0, 100] (default 1)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.set_defaults(handler=run_bench_server)
    return parser


def run_bench_server(args: argparse.Namespace) -> int:
    from console.server.bench import WARMUP_S, run_fanout

    if not 1 <= args.clients <= 500:
        raise InputError("--clients", args.clients, "1 to 500")
    if not 1 <= args.nodes <= 20_000:
        raise InputError("--nodes", args.nodes, "1 to 20000")
    if not 2 <= args.seconds <= 600:
        raise InputError("--seconds", args.seconds, "2 to 600")
    check_speed(args.speed, "--speed")
    check_coalesce_events(args.coalesce_events)
    if args.storm_at is not None:
        if args.scenario is not None:
            raise FlagError(
                "--storm-at",
                "cannot go with --scenario (the scenario's timeline brings its storm: leave --storm-at out)",
            )
        last = int((WARMUP_S + args.seconds) * args.speed)
        if not (args.storm_at.is_integer() and 1 <= args.storm_at <= last):
            # The synthetic fleet's clock counts whole seconds: 20.5 never came, and the run said nothing.
            raise InputError("--storm-at", args.storm_at, f"a whole fleet second in [1, {last}]")
    if args.scenario is not None:
        from console.sim.scenario_loader import load_scenario

        try:  # here, not in the child: its refusal was a traceback, and the parent waited for a timeout
            load_scenario(args.scenario)
        except InputError as error:
            field = "--scenario" if error.field == "scenario" else error.field
            raise InputError(field, error.value, error.allowed) from None
    figures = run_fanout(
        clients=args.clients,
        nodes=args.nodes,
        seconds=args.seconds,
        scenario=args.scenario,
        speed=args.speed,
        storm_at_s=args.storm_at,
        coalesce_events_over=args.coalesce_events or None,
    ).as_dict()
    if args.json:
        print(json.dumps(figures))
        return 0
    for name, value in figures.items():
        target = TARGETS_MS.get(name)
        verdict = (
            "" if target is None else f"  (target ≤ {target:g}: {'met' if value <= target else 'MISSED'})"
        )
        print(f"{name:>18}  {value}{verdict}")
    return 0
