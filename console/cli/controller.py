"""`stormdeck controller --nodes FILE`: the fleet API v1 over real gateway nodes' admin APIs."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from console.cli.checks import check_output_file, check_port, typed_int
from console.errors import InputError
from console.server.route_table import Server, routes_section

if TYPE_CHECKING:
    from console.gateway.acting import CapacityConfig
    from console.gateway.nodes_file import NodeEntry
    from console.gateway.provision import NodeProvisioner

DEFAULT_PORT = 8471


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "controller",
        help="serve the fleet API over real gateway nodes",
        description="Follow each node's admin API and serve the fleet as the fleet API v1 (the same server "
        "as `sim serve`; the routes below), forwarding the operator's actions to the nodes with the node "
        "token. Nodes that stop answering show as down.",
        sections=[routes_section(Server.CONTROLLER)],
        examples=(
            "stormdeck controller --nodes nodes.toml --node-token-file controller.token",
            "stormdeck controller --nodes nodes.toml --node-token-file controller.token --port 8471 --token-file FILE",
        ),
    )
    parser.add_argument(
        "--nodes",
        type=Path,
        required=True,
        help="TOML: one [[nodes]] table a node: id, admin (http://127.0.0.1:PORT), optionally client and "
        "restart (a command with {node}; a rollout needs one for every node); optionally one [capacity] "
        "table (handshakes_per_s, connections_per_node, steady_inflow_per_s) for the guards (docs/gateway.md)",
    )
    parser.add_argument(
        "--node-token-file", metavar="FILE", type=Path, required=True, help="the token the nodes trust"
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; others need --token-file)"
    )
    parser.add_argument(
        "--port",
        type=typed_int,
        default=DEFAULT_PORT,
        help=f"the fleet API's port, in [0, 65535] (default {DEFAULT_PORT}; 0: any free)",
    )
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        type=Path,
        help="fleet API tokens, as for `sim serve`: ROLE TOKEN [NAME]",
    )
    parser.add_argument("--fleet", default="loopback", help="the fleet's name (default loopback)")
    parser.add_argument(
        "--audit-log",
        metavar="FILE",
        type=Path,
        help="the audit log of actions, hash-chained JSONL (default: the user's XDG state dir, "
        "stormdeck/audit/FLEET.jsonl); check it with `stormdeck audit verify FILE`. The rollout under way "
        "is kept beside it (FLEET.rollout.json), so a restarted controller shows it, halted; the fleet "
        "clock's origin (FLEET.clock.json), so its clock goes on; and the admission the operator set "
        "(FLEET.admission.json), so each node's new process is given it again",
    )
    parser.set_defaults(handler=run_controller)


def run_controller(args: argparse.Namespace) -> int:
    from console.gateway.acting import load_capacity
    from console.gateway.nodes_file import load_nodes
    from console.gateway.serve import read_token_file

    check_port("--port", args.port)
    if args.audit_log is not None:
        check_output_file("--audit-log", args.audit_log)
    nodes = load_nodes(str(args.nodes))
    capacity = load_capacity(str(args.nodes))
    node_token = read_token_file(str(args.node_token_file), "--node-token-file")
    return serve_controller(
        nodes,
        node_token,
        args.host,
        args.port,
        args.token_file,
        args.fleet,
        audit_path=args.audit_log,
        capacity=capacity,
    )


def serve_controller(
    nodes: list[NodeEntry],
    node_token: str,
    host: str,
    port: int,
    token_file: Path | None,
    fleet: str,
    announce_more: Callable[[str, Path], None] = lambda url, token_path: None,
    audit_path: Path | None = None,
    capacity: CapacityConfig | None = None,
    provisioner: NodeProvisioner | None = None,
    watch: Callable[[Callable[[], bool]], Awaitable[bool]] | None = None,
) -> int:
    """Serve the fleet API over `nodes` until SIGINT/SIGTERM/SIGHUP (`sim serve`'s runner and token handling),
    its actions guarded and audited as over the simulator: one desk, one hash-chained audit log. With a
    `provisioner` (`fleet up`'s), the fleet can add capacity; without one, an add is refused. `watch` runs
    beside the server (`serve_foreground`): `fleet up` watches its children there."""
    from console.audit import open_audit_log
    from console.gateway.admission_state import AdmissionStateFile
    from console.gateway.controller import Controller
    from console.gateway.fleet_clock import FleetClockFile
    from console.gateway.rollout_state import RolloutStateFile, left_untouched_note
    from console.guards.config import load_default_thresholds
    from console.server.app import create_app
    from console.server.runner import base_url, bind_socket, is_loopback, serve_foreground
    from console.server.tokens import attach_note, load_token_file, make_local_operator_token

    if token_file is None and not is_loopback(host):
        raise InputError("--host", host, "a loopback address unless --token-file is given")
    given = load_token_file(token_file) if token_file is not None else None
    try:
        sock = bind_socket(host, port)
    except OSError as error:
        raise InputError("--port", port, f"a free port on {host} ({error.strerror})") from None
    loaded = load_default_thresholds()  # with each value's source, for GET /v1/thresholds
    thresholds = loaded.thresholds
    audit_log = open_audit_log(audit_path, fleet)
    made: Path | None = None
    try:
        if given is None:
            tokens, made = make_local_operator_token()
            token_path, note = made, "operator, mode 0600, removed on exit"
        else:
            tokens, token_path, note = given, token_file, "given"
        # Beside the audit log, whose lock makes this server its only writer (docs/gateway.md). The nodes
        # outlive a controller: its rollout and its fleet's clock go on across its restarts. `fleet up`'s
        # (the provisioner's) are its children, a new fleet each time, with no restart command: its clock
        # starts with it, and it keeps no rollout — a state file there is another controller's (the fleet
        # name's default audit log is shared), left as it is.
        rollout_state = RolloutStateFile.beside(audit_log.path) if provisioner is None else None
        rollout_said = (
            f"rollout state: {rollout_state.path}"
            if rollout_state is not None
            else left_untouched_note(RolloutStateFile.beside(audit_log.path))
        )
        fleet_clock = FleetClockFile.beside(audit_log.path) if provisioner is None else None
        # The admission the operator set goes on too, given again to each node's new process; `fleet up`'s
        # nodes are new each time, started on its own arguments, so it keeps none (another controller's file
        # beside its audit log is left as it is).
        admission_state = AdmissionStateFile.beside(audit_log.path) if provisioner is None else None
        controller = Controller(
            nodes,
            node_token,
            fleet_name=fleet,
            capacity_config=capacity,
            provisioner=provisioner,
            thresholds=thresholds,
            rollout_state=rollout_state,
            fleet_clock=fleet_clock,
            admission_state=admission_state,
        )
        app = create_app(controller, tokens, audit_log=audit_log, thresholds=loaded)
        url = base_url(sock)

        def announce() -> None:
            print(f"stormdeck: serving fleet {fleet!r} (controller over {len(nodes)} nodes)")
            print(f"url:    {url}")
            print(f"token:  {token_path} ({note})")
            as_whom = attach_note(given) if given is not None else ""
            print(f"attach: stormdeck attach {url} --token-file {token_path}{as_whom}")
            print(f"audit:  {audit_log.path}")
            if rollout_said is not None:
                print(rollout_said)
            if fleet_clock is not None:
                print(f"fleet clock: {fleet_clock.path} (time {controller.fleet_time():g} s)")
            if admission_state is not None:
                kept = controller.admission_restored
                said = f"restored: {kept}" if kept is not None else "nothing set yet"
                print(f"admission state: {admission_state.path} ({said})")
            restored = controller.rollout_status()
            if restored.pause_reason and controller.rollout is not None:
                print(f"rollout: {restored.state.value}: {restored.pause_reason}")
            announce_more(url, token_path)
            print("Ctrl-C stops it.", flush=True)

        return serve_foreground(app, sock, announce, watch)
    finally:
        sock.close()
        audit_log.close()
        if made is not None:
            with contextlib.suppress(FileNotFoundError):
                made.unlink()
