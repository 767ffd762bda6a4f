"""`stormdeck loadgen URL... --clients N --policy P`: real clients against a loopback fleet."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict

from console.cli.checks import MAX_WORK_FACTOR, check_policy, check_work_factor, typed_float, typed_int
from console.gateway.tokens import DEFAULT_WORK_FACTOR
from console.policies import POLICIES

#: The first connects are spread over a second unless asked otherwise (a shorter run: over all of it).
DEFAULT_RAMP_S = 1.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "loadgen",
        help="run SDK clients against loopback gateway nodes",
        description="Connect --clients SDK clients to the gateway nodes at URL (spread over them), each with "
        "the --policy backoff, for --duration seconds; then print what they saw: connects, 503s, drops, "
        "resumes, message gaps, connect latency and the lockstep index of their attempts.",
        examples=(
            "stormdeck loadgen ws://127.0.0.1:9001/channel/fleet ws://127.0.0.1:9002/channel/fleet "
            "--clients 2000 --policy full_jitter --duration 30",
            "stormdeck loadgen ws://127.0.0.1:9001/channel/fleet --clients 300 --policy fixed --duration 10 "
            "--json",
        ),
    )
    parser.add_argument(
        "urls", nargs="+", metavar="URL", help="ws://127.0.0.1:PORT/channel/NAME (loopback only)"
    )
    parser.add_argument(
        "--clients", type=typed_int, required=True, help="how many clients to connect, 1 to 20,000 per worker"
    )
    parser.add_argument("--policy", required=True, help="one of " + ", ".join(sorted(POLICIES)))
    parser.add_argument(
        "--duration",
        type=typed_float,
        default=10.0,
        help="seconds, at most 86400 (24 h); default 10; 0: until SIGTERM or Ctrl-C, then the report. Past "
        "600 s the report's waves and connect percentiles cover the newest 100,000 attempts, its counters "
        "the whole run",
    )
    parser.add_argument(
        "--nodes-file",
        metavar="FILE",
        help="also follow this file of client URLs (one a line) as it grows: clients that reconnect spread "
        "over nodes added since (`fleet up` keeps one)",
    )
    parser.add_argument(
        "--ramp-s",
        metavar="S",
        type=typed_float,
        help=f"spread the first connects over this many seconds, at most --duration (default {DEFAULT_RAMP_S:g}, "
        "or the whole --duration when shorter)",
    )
    parser.add_argument(
        "--workers",
        type=typed_int,
        help="worker processes, 1 to 64 (default: one per core above 2,000 clients)",
    )
    parser.add_argument(
        "--seed",
        type=typed_int,
        default=0,
        help="seed of the clients' backoff draws, 0 to 2**63 - 1 (default 0; worker k uses SEED + k)",
    )
    parser.add_argument(
        "--work-factor",
        metavar="N",
        type=typed_int,
        default=DEFAULT_WORK_FACTOR,
        help=f"the nodes' --work-factor (for tokens), 1 to {MAX_WORK_FACTOR} (default {DEFAULT_WORK_FACTOR}, "
        "as `gateway serve`'s)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    # `fleet up`'s load: stop when its end of our stdin closes (console.stop_signals).
    parser.add_argument("--stop-with-parent", action="store_true", help=argparse.SUPPRESS)
    parser.set_defaults(handler=_loadgen)


def _loadgen(args: argparse.Namespace) -> int:
    from console.gateway.loadgen import LoadSpec, run_load
    from console.sim.scenario_schema import check_seed

    check_policy("--policy", args.policy)
    check_work_factor("--work-factor", args.work_factor)  # else each client fails in hashlib
    check_seed(args.seed)  # the range every command's --seed has
    workers = args.workers if args.workers is not None else default_workers(args.clients, args.duration)
    ramp_s = args.ramp_s if args.ramp_s is not None else min(DEFAULT_RAMP_S, args.duration or DEFAULT_RAMP_S)
    spec = LoadSpec(
        args.urls,
        args.clients,
        args.policy,
        args.duration,
        ramp_s,
        args.seed,
        args.work_factor,
        args.nodes_file,
    )
    if args.stop_with_parent:
        from console.stop_signals import stop_when_stdin_closes

        stop_when_stdin_closes()
    result = run_load(spec, workers)
    print(json.dumps(asdict(result)) if args.json else result.summary())
    if result.connects == 0:  # nothing measured: say so, and fail a script that relies on the figures
        if result.unauthorized:
            why = (
                f"the nodes refused {result.unauthorized} clients' tokens (401): is --work-factor "
                f"{args.work_factor} the nodes'? (`fleet up` starts its nodes with 1000, `gateway serve` "
                f"with {DEFAULT_WORK_FACTOR})"
            )
        else:
            why = f"is a gateway node listening at {', '.join(args.urls)}?"
        print(f"stormdeck loadgen: no client connected in {result.attempts} attempts: {why}", file=sys.stderr)
        return 1
    return 0


def default_workers(clients: int, duration_s: float) -> int:
    """One process up to 2,000 clients, else one per core — but one for a load until stopped (duration 0),
    so a signal stops every client; more only when --workers asks."""
    return 1 if clients <= 2000 or duration_s == 0 else os.cpu_count() or 1
