"""`stormdeck bench actions`: verdict and forecast times at full thundering-herd scale."""

from __future__ import annotations

import argparse

from console.cli.checks import typed_int
from console.errors import InputError


def register_bench(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "actions",
        help="guarded actions: verdict and forecast times at full thundering-herd scale",
        description="Run thundering-herd (13 M clients, 480 nodes) through its storms; at SAMPLES moments "
        "judge and forecast a drain. Prints verdict_ms_p50 and forecast_ms_p50/_p99 (target ≤ 500 ms).",
        examples=(
            "stormdeck bench actions",
            "stormdeck bench actions --samples 5 --until 300 --json",
        ),
    )
    parser.add_argument(
        "--samples", type=typed_int, default=30, help="moments measured, 1 to 500 (default 30)"
    )
    parser.add_argument(
        "--until", type=typed_int, default=690, help="last fleet second, 15 to 1500 (default 690, the halt)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from console.bench.actions import bench_actions
    from console.cli.bench import print_figures

    if not 1 <= args.samples <= 500:
        raise InputError("--samples", args.samples, "1 to 500")
    if not 15 <= args.until <= 1500:
        raise InputError("--until", args.until, "fleet seconds in [15, 1500]")
    print_figures(bench_actions(args.samples, args.until), args.json)
    return 0
