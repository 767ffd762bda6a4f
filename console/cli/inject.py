"""`stormdeck inject URL EVENT [KEY=VALUE …]`: an instructor's event in a served drill (issue #5, §2).

Needs an admin token (`--token-file`, else STORMDECK_TOKEN). Exit codes as `stormdeck act`: 0 applied,
2 bad input (the server names the field and what is allowed), 1 transport or auth error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from console.cli.checks import check_fleet_url, fleet_url_argument
from console.client.inject import parse_params
from console.protocol import INJECTIONS


def register(subparsers: argparse._SubParsersAction) -> None:
    events = "; ".join(f"{name}: {what}" for name, what in INJECTIONS.items())
    parser = subparsers.add_parser(
        "inject",
        help="inject an event into a served drill or simulation (admin): restart, kill, disconnect, add "
        "capacity, change the client mix",
        description=f"Inject EVENT into the simulated fleet at URL, between two fleet seconds. Events — {events}. "
        'Values are JSON where they parse (3, 0.3, true, ["gw-001"]), a comma list (gw-001,gw-002), '
        "else text. The injection is audited and shown in the stream as an `injection` event. Exit 0 applied, 2 "
        "bad input (the server names the field and what is allowed; a missing token), 1 transport or auth (a "
        "token the fleet refuses, or not an admin's).",
        examples=(
            "stormdeck inject http://127.0.0.1:8470 restart_nodes nodes=3 --token-file ADMIN_FILE",
            "stormdeck inject http://127.0.0.1:8470 disconnect_fraction fraction=0.3 --token-file ADMIN_FILE",
        ),
    )
    parser.add_argument(
        "url",
        metavar="URL",
        # `inject restart_nodes nodes=gw-001` (the URL forgotten) named the event as a bad URL, and
        # `inject restart_nodes` said "required: EVENT": the URL is what is missing.
        type=fleet_url_argument("inject", "EVENT", INJECTIONS),
        help="the fleet API, e.g. http://127.0.0.1:8470",
    )
    parser.add_argument("event", metavar="EVENT", help="one of " + ", ".join(INJECTIONS))
    parser.add_argument("params", nargs="*", metavar="KEY=VALUE", help="the event's parameters")
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="an admin token file: its first token (default: the environment's STORMDECK_TOKEN)",
    )
    parser.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    parser.set_defaults(handler=run_inject)


def run_inject(args: argparse.Namespace) -> int:
    from console.cli.act import EXIT
    from console.client.actions import ActionAnswer, ActionClient
    from console.client.token import load_token

    check_fleet_url(args.url)
    body = {"event": args.event, "params": parse_params(args.params)}
    token = load_token(args.token_file)

    async def go() -> ActionAnswer:
        async with ActionClient(args.url, token) as client:
            return await client.send("POST", "/v1/sim/inject", body)

    answer = asyncio.run(go())
    if args.json:
        print(json.dumps({"status": answer.status, **answer.body}, indent=2))
    else:
        headline = answer.body.get("message") or answer.body.get("detail") or ""
        print(f"{answer.status} {answer.reply.value}: {headline}")
        if answer.body.get("audit_seq") is not None:
            print(f"audit: record {answer.body['audit_seq']} ({str(answer.body.get('audit_hash'))[:16]}…)")
    # act's codes: an injection is never blocked nor asks for confirmation, but one rule reads them all.
    return EXIT.get(answer.reply, 1)
