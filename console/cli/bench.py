"""`stormdeck bench …`: benchmarks that print figures (targets live in the issues; figures in docs/)."""

from __future__ import annotations

import argparse

from console.cli.bench_server import add_bench_server_parser


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bench", help="run a benchmark and print its figures")
    parser.set_defaults(handler=lambda args: (parser.print_help(), 0)[1])
    bench_subparsers = parser.add_subparsers(dest="bench", metavar="BENCH")
    add_bench_server_parser(bench_subparsers)
