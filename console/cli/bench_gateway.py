"""`stormdeck bench gateway`: idle density, handshake and rejection cost, drain pacing of one node."""

from __future__ import annotations

import argparse
import asyncio

from console.cli.checks import typed_int
from console.errors import InputError


def register_bench(benches: argparse._SubParsersAction) -> None:
    parser = benches.add_parser(
        "gateway",
        help="figures of one reference gateway node on loopback",
        description="Start one reference gateway node on loopback and measure it: the memory of IDLE-CLIENTS "
        "idle connections, the cost of a handshake and of a rejection (COST-ATTEMPTS each), and how a "
        "drain is paced.",
        examples=(
            "stormdeck bench gateway",
            "stormdeck bench gateway --idle-clients 2000 --cost-attempts 500 --json",
        ),
    )
    parser.add_argument(
        "--idle-clients",
        metavar="IDLE-CLIENTS",
        type=typed_int,
        default=10_000,
        help="idle connections to hold, 1 to 18,000 (default 10,000)",
    )
    parser.add_argument(
        "--cost-attempts",
        metavar="COST-ATTEMPTS",
        type=typed_int,
        default=2000,
        help="attempts per cost measurement, 100 to 20,000 (default 2000)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(handler=_bench)


def _bench(args: argparse.Namespace) -> int:
    if not 1 <= args.idle_clients <= 18_000:
        raise InputError("--idle-clients", args.idle_clients, "1 to 18,000 (one descriptor each, 20,000 max)")
    if not 100 <= args.cost_attempts <= 20_000:
        raise InputError("--cost-attempts", args.cost_attempts, "100 to 20,000")
    from console.gateway.bench import bench_gateway, render

    print(render(asyncio.run(bench_gateway(args.idle_clients, args.cost_attempts)), args.json))
    return 0
