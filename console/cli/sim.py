"""`stormdeck sim …`: list and run simulator scenarios."""

from __future__ import annotations

import argparse

from console.cli.serve import add_serve_parser


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("sim", help="the fleet simulator: list and run scenarios")
    parser.set_defaults(handler=lambda args: (parser.print_help(), 0)[1])
    sim_subparsers = parser.add_subparsers(dest="sim_command", metavar="SUBCOMMAND")
    add_serve_parser(sim_subparsers)
