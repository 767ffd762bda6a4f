"""`stormdeck sim serve SCENARIO`: the fleet API v1 over a running simulation.

Registered under `sim` by `console.cli.sim` calling `add_serve_parser(sim_subparsers)`.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from console.cli.checks import (
    COALESCE_EVENTS_RANGE,
    check_coalesce_events,
    check_output_file,
    check_port,
    typed_float,
    typed_int,
)
from console.cli.sim import add_override_arguments
from console.errors import InputError
from console.server.clock import MAX_SPEED, check_speed
from console.server.events import COALESCE_OVER
from console.server.route_table import Server, routes_section
from console.server.runner import base_url, bind_socket, is_loopback
from console.server.tokens import (
    Principal,
    Role,
    TokenRegistry,
    attach_note,
    load_token_file,
    make_local_token,
)
from console.stop_signals import stop_when_stdin_closes

if TYPE_CHECKING:
    from console.server.simulator import SimulatorBackend

DEFAULT_HOST = "127.0.0.1"
#: A fixed default port so `curl` and runbooks can name it; `--port 0` takes any free one.
DEFAULT_PORT = 8470


@dataclass(frozen=True)
class LocalToken:
    """A token a server makes for itself without --token-file: announced as `label:` (e.g. `token`)."""

    label: str
    role: Role
    name: str


def add_serve_parser(sim_subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sim_subparsers.add_parser(
        "serve",
        help="serve a scenario's fleet over the fleet API (HTTP + WebSocket stream)",
        description="Run SCENARIO and serve it as the fleet API v1 (the routes below): the reads and the "
        "stream, and the actions an operator takes — drain, undrain, rollout, admission, add capacity — "
        "judged by the guards and audited.",
        sections=[routes_section(Server.SIMULATOR)],
        examples=(
            "stormdeck sim serve thundering-herd --port 8470 --speed 10",
            "stormdeck sim serve demo --port 0 --paused   # a free port; the clock starts on POST /v1/sim/clock",
        ),
    )
    parser.add_argument(
        "scenario",
        nargs="?",
        metavar="SCENARIO",
        help="a scenario name (see `stormdeck sim list`) or a TOML path",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})")
    parser.add_argument(
        "--port",
        type=typed_int,
        default=DEFAULT_PORT,
        help=f"port, in [0, 65535] (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--speed",
        type=typed_float,
        default=1.0,
        help=f"fleet seconds per wall second, in (0, {MAX_SPEED:g}] (default 1); frames still leave at 1/s",
    )
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        type=Path,
        help="tokens, one a line: ROLE TOKEN [NAME] (roles viewer, operator, admin); without it the server "
        "makes an operator token, writes it to a 0600 file, and binds to loopback only",
    )
    parser.add_argument(
        "--audit-log",
        type=Path,
        metavar="FILE",
        help="the audit log of actions, hash-chained JSONL (default: the user's XDG state dir, "
        "stormdeck/audit/FLEET.jsonl, or FLEET-PID.jsonl when another server is writing that one; the "
        "announcement's audit: line says which); its directory must exist; check it with `stormdeck audit "
        "verify FILE`",
    )
    parser.add_argument(
        "--coalesce-events",
        type=typed_int,
        default=COALESCE_OVER,
        metavar="N",
        help="send a second's events alike on more than N nodes (e.g. 200 × 'restarted: ready → restarting') "
        f"as one event naming the nodes in data.nodes; {COALESCE_EVENTS_RANGE} (default {COALESCE_OVER})",
    )
    parser.add_argument(
        "--paused",
        action="store_true",
        help='start with the fleet clock paused (POST /v1/sim/clock {"paused": false} starts it)',
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
    from console.cli.sim import require_scenario
    from console.server.simulator import SimulatorBackend
    from console.sim.scenario_schema import check_seed

    # Cheap checks first, so a typo does not wait for the simulation to be built.
    scenario = require_scenario(args.scenario)
    speed = check_speed(args.speed, "--speed")
    check_seed(args.seed)
    check_serve_arguments(args)
    backend = SimulatorBackend.from_scenario(scenario, list(args.overrides), seed=args.seed)
    return serve_backend(backend, args, speed, what="simulator")


#: Without --token-file, `sim serve` makes one operator token (announced as `token:`).
OPERATOR_ONLY: tuple[LocalToken, ...] = (LocalToken("token", Role.OPERATOR, "local-operator"),)


def check_serve_arguments(args: argparse.Namespace) -> None:
    """The checks that need no simulation: --port, --coalesce-events, --host without a token file, the file."""
    check_port("--port", args.port)
    check_coalesce_events(getattr(args, "coalesce_events", COALESCE_OVER))
    _check_host(args)
    if args.token_file is not None:
        load_token_file(args.token_file)
    if getattr(args, "audit_log", None) is not None:
        # As `drill` and `sim run --frames` have it: a typo in the directory is refused, not made.
        check_output_file("--audit-log", args.audit_log, make_directory=False)


def serve_backend(
    backend: SimulatorBackend,
    args: argparse.Namespace,
    speed: float,
    *,
    what: str,
    local_tokens: Sequence[LocalToken] = OPERATOR_ONLY,
    notes: Callable[[str, dict[str, Path]], list[str]] | None = None,
    clock_role: Role = Role.OPERATOR,
    first_second: tuple[str, str] = ("0:00:01", "the first fleet second"),
) -> int:
    """Serve `backend` as the fleet API in the foreground until Ctrl-C (or SIGTERM, or SIGHUP): the audit log, the
    socket, the tokens (`--token-file`, else `local_tokens` made in 0600 files removed on exit) and the
    announcement whose `url:` line the embedded default waits for. `notes(url, token paths)` adds lines
    to the announcement (a served drill tells the instructor how to inject). `clock_role`: who may pause the
    fleet clock or change its speed (a served drill's clock is the instructor's: admin). `first_second`:
    what a paused clock reads, and what that is (a drill's: on the drill's clock)."""
    from console.audit import open_audit_log
    from console.cli.kernel_load import load_simulator
    from console.guards.config import load_default_thresholds
    from console.server.app import create_app
    from console.server.runner import serve_foreground

    given_tokens = load_token_file(args.token_file) if args.token_file is not None else None
    loaded = load_default_thresholds()  # with each value's source, for GET /v1/thresholds
    thresholds = loaded.thresholds
    load_simulator(backend.simulation)  # before the ready lines, saying so when it compiles
    backend.watch_cpu_line(thresholds.cpu_abort_pct)  # the abort line a console here reads from these files
    audit_log = open_audit_log(args.audit_log, backend.fleet_name)
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as error:
        audit_log.close()
        raise InputError("--port", args.port, f"a free port on {args.host} ({error.strerror})") from None
    made: dict[str, Path] = {}
    try:
        if given_tokens is None:
            entries: dict[str, Principal] = {}
            for local in local_tokens:
                token, made[local.label] = make_local_token(local.role, local.name)
                entries[token] = Principal(local.role, local.name)
            tokens = TokenRegistry(entries)
            token_lines = [
                f"{local.label + ':':7} {made[local.label]} ({local.role.label}, mode 0600, removed on exit)"
                for local in local_tokens
            ]
            paths = dict(made)
        else:
            tokens = given_tokens
            token_lines = [f"token:  {args.token_file} (given)"]
            paths = {local.label: args.token_file for local in local_tokens}
        app = create_app(
            backend,
            tokens,
            speed=speed,
            coalesce_events_over=getattr(args, "coalesce_events", COALESCE_OVER) or None,
            paused=getattr(args, "paused", False),
            clock_role=clock_role,
            audit_log=audit_log,
            thresholds=loaded,
        )
        url = base_url(sock)
        attach_path = paths.get("token") or next(iter(paths.values()))

        whose_clock = "the instructor's admin token" if clock_role is Role.ADMIN else "an operator token"

        def announce() -> None:
            # `url:` is the line the embedded default (console.cli.embedded) waits for.
            print(f"stormdeck: serving fleet {backend.fleet_name!r} ({what}) at {speed:g}× speed")
            print(f"url:    {url}")
            print(f"stream: {url.replace('http', 'ws', 1)}/v1/stream")
            for line in token_lines:
                print(line)
            as_whom = attach_note(given_tokens) if given_tokens is not None else ""
            print(f"attach: stormdeck attach {url} --token-file {attach_path}{as_whom}")
            print(f"audit:  {audit_log.path}")
            for line in notes(url, paths) if notes is not None else []:
                print(line)
            if getattr(args, "paused", False):
                print(
                    f"clock:  paused at {first_second[0]} ({first_second[1]}, run to show the fleet as started) "
                    "— start it from an instructor console's palette (\"Fleet "
                    f'clock: start / resume") or POST /v1/sim/clock {{"paused": false}} with {whose_clock}'
                )
            print("Ctrl-C stops the server.", flush=True)

        if getattr(args, "stop_with_parent", False):
            stop_when_stdin_closes()
        return serve_foreground(app, sock, announce)
    finally:
        sock.close()
        audit_log.close()
        for path in made.values():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
