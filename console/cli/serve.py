"""`stormdeck sim serve SCENARIO`: the fleet API v1 over a running simulation.

Registered under `sim` by `console.cli.sim` calling `add_serve_parser(sim_subparsers)`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from pathlib import Path

from console.cli.sim import add_override_arguments
from console.errors import InputError
from console.server.clock import MAX_SPEED, check_speed
from console.server.runner import base_url, bind_socket, is_loopback
from console.server.tokens import load_token_file, make_local_operator_token

DEFAULT_HOST = "127.0.0.1"
#: A fixed default port so `curl` and runbooks can name it; `--port 0` takes any free one.
DEFAULT_PORT = 8470


def add_serve_parser(sim_subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sim_subparsers.add_parser(
        "serve",
        help="serve a scenario's fleet over the fleet API (HTTP + WebSocket stream)",
        description="Run SCENARIO and serve it as the fleet API v1: GET /v1/fleet, GET /v1/nodes/{id}, "
        "the /v1/stream WebSocket, POST /v1/sim/clock, and /openapi.json.",
    )
    parser.add_argument(
        "scenario", metavar="SCENARIO", help="a scenario name (see `sim list`) or a TOML path"
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)"
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=1.0,
        help=f"fleet seconds per wall second, in (0, {MAX_SPEED:g}] (default 1); frames still leave at 1/s",
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        help="tokens, one a line: ROLE TOKEN [NAME] (roles viewer, operator, admin); without it the server "
        "makes an operator token, writes it to a 0600 file, and binds to loopback only",
    )
    parser.add_argument(
        "--audit-log",
        type=Path,
        metavar="FILE",
        help="the audit log of actions, hash-chained JSONL (default: the user's XDG state dir, "
        "stormdeck/audit/FLEET.jsonl); check it with `stormdeck audit verify FILE`",
    )
    parser.add_argument(
        "--coalesce-events",
        type=int,
        metavar="N",
        help="send more than N alike events of one second (e.g. 250 × 'ready → down') as one event naming "
        "the nodes in data.nodes (default: every event on its own)",
    )
    add_override_arguments(parser)  # --set KEY=VALUE and --seed, as `sim run` has them
    # For the embedded default: stop when the parent's end of our stdin closes, so a parent that dies
    # without stopping us leaves no server behind.
    parser.add_argument("--stop-with-parent", action="store_true", help=argparse.SUPPRESS)
    parser.set_defaults(handler=run_serve)
    return parser


def _check_host(args: argparse.Namespace) -> None:
    if args.token_file is None and not is_loopback(args.host):
        raise InputError(
            "--host",
            args.host,
            "a loopback address (127.0.0.1, ::1, localhost) unless --token-file is given: without a token "
            "file the server makes a local token and serves this machine only",
        )


def run_serve(args: argparse.Namespace) -> int:
    from console.audit import open_audit_log
    from console.guards.config import load_default_thresholds
    from console.server.app import create_app
    from console.server.runner import serve_foreground
    from console.server.simulator import SimulatorBackend

    # Cheap checks first, so a typo does not wait for the simulation to be built.
    speed = check_speed(args.speed)
    if args.coalesce_events is not None and args.coalesce_events < 1:
        raise InputError("--coalesce-events", args.coalesce_events, "a count of at least 1")
    _check_host(args)
    given_tokens = load_token_file(args.token_file) if args.token_file is not None else None
    thresholds = load_default_thresholds().thresholds
    backend = SimulatorBackend.from_scenario(args.scenario, list(args.overrides), seed=args.seed)
    audit_log = open_audit_log(args.audit_log, backend.fleet_name)
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as error:
        raise InputError("--port", args.port, f"a free port on {args.host} ({error.strerror})") from None
    made_token_path: Path | None = None
    try:
        if given_tokens is None:
            tokens, made_token_path = make_local_operator_token()
            token_path, token_note = made_token_path, "operator, mode 0600, removed on exit"
        else:
            tokens, token_path, token_note = given_tokens, args.token_file, "given"
        app = create_app(
            backend,
            tokens,
            speed=speed,
            coalesce_events_over=args.coalesce_events,
            audit_log=audit_log,
            thresholds=thresholds,
        )
        url = base_url(sock)

        def announce() -> None:
            # `url:` is the line the embedded default (console.cli.embedded) waits for.
            print(f"stormdeck: serving fleet {backend.fleet_name!r} (simulator) at {speed:g}× speed")
            print(f"url:    {url}")
            print(f"stream: {url.replace('http', 'ws', 1)}/v1/stream")
            print(f"token:  {token_path} ({token_note})")
            print(f"attach: stormdeck attach {url} --token-file {token_path}")
            print(f"audit:  {audit_log.path}")
            print("Ctrl-C stops the server.", flush=True)

        if args.stop_with_parent:
            _stop_when_stdin_closes()
        return serve_foreground(app, sock, announce)
    finally:
        sock.close()
        audit_log.close()
        if made_token_path is not None:
            with contextlib.suppress(FileNotFoundError):
                made_token_path.unlink()


def _stop_when_stdin_closes() -> None:
    def watch() -> None:
        with contextlib.suppress(OSError, ValueError):
            while sys.stdin.buffer.read(1024):
                pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="stormdeck-parent-watch", daemon=True).start()
