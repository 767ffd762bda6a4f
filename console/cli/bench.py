"""`stormdeck bench …`: benchmarks that print figures (targets live in the issues; figures in docs/)."""

from __future__ import annotations

import argparse
import importlib.util
import json
from typing import Any

from console.cli.bench_server import add_bench_server_parser
from console.cli.checks import typed_int
from console.cli.groups import add_subcommands
from console.errors import InputError, StormdeckError

#: Modules that contribute benchmarks; each has `register_bench(bench_subparsers)`.
_BENCH_MODULES = ("console.cli.bench_console", "console.cli.bench_gateway", "console.cli.bench_actions")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bench", help="run a benchmark and print its figures")
    benches = add_subcommands(parser, dest="bench", metavar="BENCH")
    add_bench_server_parser(benches)

    for name in _BENCH_MODULES:
        importlib.import_module(name).register_bench(benches)

    sim = benches.add_parser(
        "sim",
        help="simulator speed, memory, scaling and the per-client SimPy baseline",
        description="Full-scale thundering-herd wall time and RSS, wall time at 1 M / 10 M / 100 M clients, "
        "and the speed-up over a per-client SimPy model at 100 k clients. About a minute with --repeats 3 "
        "on 2 cores (the SimPy run alone takes ~10 s).",
        examples=(
            "stormdeck bench sim --repeats 3   # about a minute on 2 cores",
            "stormdeck bench sim --no-simpy --no-scaling --json",
        ),
    )
    sim.add_argument("--json", action="store_true", help="print one JSON object")
    sim.add_argument("--no-simpy", action="store_true", help="skip the SimPy baseline")
    sim.add_argument("--no-scaling", action="store_true", help="skip the 1 M / 10 M / 100 M runs")
    sim.add_argument(
        "--repeats",
        type=typed_int,
        default=2,
        help="runs per figure, 1 to 10; the fastest counts (default 2)",
    )
    sim.set_defaults(handler=_bench_sim)


def _bench_sim(args: argparse.Namespace) -> int:
    from console.bench.sim import bench_sim

    if not 1 <= args.repeats <= 10:
        raise InputError("--repeats", args.repeats, "an integer in [1, 10]")
    if not args.no_simpy and not simpy_installed():  # say so now, not minutes in
        raise StormdeckError(
            "the SimPy baseline needs SimPy, in the bench extra: pip install '.[bench]' from a clone "
            "(or 'stormdeck[bench]'), or pass --no-simpy"
        )
    figures = bench_sim(
        include_simpy=not args.no_simpy, include_scaling=not args.no_scaling, repeats=args.repeats
    )
    print_figures(figures, args.json)
    if not args.json:
        for name, (sense, bound, unit) in SIM_TARGETS.items():
            if name in figures:
                met = figures[name] <= bound if sense == "<=" else figures[name] >= bound
                print(
                    f"{name}: {figures[name]}{unit}, target {sense} {bound:g}{unit} — {'met' if met else 'NOT met'}"
                )
    return 0


def simpy_installed() -> bool:
    return importlib.util.find_spec("simpy") is not None


#: Issue #2's targets for `bench sim` (section 6): figure → (sense, bound, unit).
SIM_TARGETS: dict[str, tuple[str, float, str]] = {
    "thundering_herd_wall_s": ("<=", 20.0, " s"),
    "thundering_herd_rss_mb": ("<=", 1024.0, " MB"),
    "scaling_100m_over_1m": ("<=", 1.3, "×"),
    "vs_simpy_speedup": (">=", 100.0, "×"),
}


def print_figures(figures: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(figures))
        return
    width = max(len(name) for name in figures)
    for name, value in figures.items():
        print(f"{name:<{width}}  {value}")
