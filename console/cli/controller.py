"""`stormdeck controller --nodes FILE`: the fleet API v1 over real gateway nodes' admin APIs."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from console.errors import InputError

DEFAULT_PORT = 8471


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "controller",
        help="serve the fleet API over real gateway nodes",
        description="Follow each node's admin API and serve the fleet as the fleet API v1 (the same server "
        "as `sim serve`). Nodes that stop answering show as down.",
    )
    parser.add_argument("--nodes", type=Path, required=True, help="TOML: [[nodes]] id, admin (and client)")
    parser.add_argument("--node-token-file", type=Path, required=True, help="the token the nodes trust")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}; 0: any free")
    parser.add_argument(
        "--token-file", type=Path, help="fleet API tokens, as for `sim serve`: ROLE TOKEN [NAME]"
    )
    parser.add_argument("--fleet", default="loopback", help="the fleet's name")
    parser.set_defaults(handler=run_controller)


def run_controller(args: argparse.Namespace) -> int:
    from console.gateway.controller import Controller, load_nodes
    from console.gateway.serve import read_token_file
    from console.server.app import create_app
    from console.server.runner import base_url, bind_socket, is_loopback, serve_foreground
    from console.server.tokens import load_token_file, make_local_operator_token

    if args.token_file is None and not is_loopback(args.host):
        raise InputError("--host", args.host, "a loopback address unless --token-file is given")
    nodes = load_nodes(str(args.nodes))
    node_token = read_token_file(str(args.node_token_file))
    given = load_token_file(args.token_file) if args.token_file is not None else None
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as error:
        raise InputError("--port", args.port, f"a free port on {args.host} ({error.strerror})") from None
    made: Path | None = None
    try:
        if given is None:
            tokens, made = make_local_operator_token()
            token_path, note = made, "operator, mode 0600, removed on exit"
        else:
            tokens, token_path, note = given, args.token_file, "given"
        controller = Controller(nodes, node_token, fleet_name=args.fleet)
        app = create_app(controller, tokens)
        url = base_url(sock)

        def announce() -> None:
            print(f"stormdeck: serving fleet {args.fleet!r} (controller over {len(nodes)} nodes)")
            print(f"url:    {url}")
            print(f"token:  {token_path} ({note})")
            print(f"attach: stormdeck attach {url} --token-file {token_path}", flush=True)

        return serve_foreground(app, sock, announce)
    finally:
        sock.close()
        if made is not None:
            with contextlib.suppress(FileNotFoundError):
                made.unlink()
