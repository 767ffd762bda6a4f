"""`stormdeck bench console [--json]`: the console's own figures against issue #3's targets."""

from __future__ import annotations

import argparse
import asyncio
import json

from console.cli.checks import typed_float, typed_int


def register_bench(benches: argparse._SubParsersAction) -> None:
    parser = benches.add_parser(
        "console",
        help="headless console on a synthetic 2000-node stream at 1 Hz",
        description="Run the console headless against a synthetic NODES-node stream at RATE frames a "
        "second, after HISTORY-S fleet seconds of history. Prints the median frame time, CPU, p99 "
        "staleness, startup time and rss against issue #3's targets.",
        examples=(
            "stormdeck bench console",
            "stormdeck bench console --nodes 200 --frames 10 --json",
        ),
    )
    parser.add_argument(
        "--nodes",
        type=typed_int,
        default=2000,
        help="nodes in the synthetic fleet, 1 to 20000 (default 2000)",
    )
    parser.add_argument(
        "--frames", type=typed_int, default=30, help="frames streamed at --rate, at least 5 (default 30)"
    )
    parser.add_argument(
        "--rate", type=typed_float, default=1.0, help="frames per second, (0, 100] (default 1)"
    )
    parser.add_argument(
        "--history-s",
        metavar="HISTORY-S",
        type=typed_int,
        default=3600,
        help="fleet seconds of history applied before rss is read, at least 0 (default 3600)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from console.errors import InputError
    from console.ui.bench import TARGETS, run_console_bench

    for option, value, low in (
        ("--nodes", args.nodes, 1),
        ("--frames", args.frames, 5),
        ("--history-s", args.history_s, 0),
    ):
        if value < low:
            raise InputError(option, value, f"a whole number ≥ {low}")
    if args.nodes > 20_000:  # as `bench server --nodes`; 10 million ran until killed
        raise InputError("--nodes", args.nodes, "1 to 20000")
    if not 0 < args.rate <= 100:  # nan too: it ran as if no rate were set
        raise InputError("--rate", args.rate, "frames per second in (0, 100]")
    figures = asyncio.run(run_console_bench(args.nodes, args.frames, args.rate, args.history_s))
    if args.json:
        print(json.dumps({**figures, "targets": TARGETS}))
        return 0
    for key, value in figures.items():
        target = TARGETS.get(key)
        verdict = (
            "" if target is None else (f"  (target ≤ {target:g}: {'ok' if value <= target else 'MISSED'})")
        )
        print(f"{key:>18}  {value}{verdict}")
    return 0
