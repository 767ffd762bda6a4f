"""`stormdeck bench …`: benchmarks that print figures (targets live in the issues; figures in docs/)."""

from __future__ import annotations

import argparse
import importlib

#: Modules that contribute a benchmark; each has `register(bench_subparsers)`.
_BENCH_MODULES = ("console.cli.bench_gateway",)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bench", help="run a benchmark and print its figures")
    parser.set_defaults(handler=lambda args: (parser.print_help(), 0)[1])
    benches = parser.add_subparsers(dest="bench", metavar="BENCH")
    for name in _BENCH_MODULES:
        importlib.import_module(name).register(benches)
