"""`stormdeck config check`: validate the thresholds config and say which file supplied each value."""

from __future__ import annotations

import argparse
import dataclasses
import json

from console.cli.groups import add_subcommands
from console.guards.config import DEFAULT_SOURCE, load_default_thresholds


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "config", help="the thresholds config: validate it, see where values come from"
    )
    commands = add_subcommands(parser, dest="config_command", metavar="SUBCOMMAND")
    check = commands.add_parser(
        "check",
        help="validate ./stormdeck.toml, the user's config and STORMDECK_* env; show each value's source",
        examples=(
            "stormdeck config check",
            "stormdeck config check --json",
        ),
    )
    check.add_argument(
        "--json",
        action="store_true",
        help='print {"files": {"read", "searched"}, "thresholds": {field: {"value", "source"}}} as JSON',
    )
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    loaded = load_default_thresholds()  # InputError → exit 2 with the field, value, range and file
    values = dataclasses.asdict(loaded.thresholds)
    if args.json:
        report = loaded.report()
        files = {"read": [str(p) for p in loaded.files], "searched": [str(p) for p in loaded.searched]}
        print(json.dumps({"files": files, "thresholds": report}, indent=2))
        return 0
    print("config files, weakest first (later ones override earlier ones, STORMDECK_* env overrides both):")
    for path in loaded.searched:
        print(f"  {path}  {'(read)' if path in loaded.files else '(not found)'}")
    width = max(len(name) for name in values)
    for name, value in values.items():
        source = loaded.sources[name]
        marker = "" if source == DEFAULT_SOURCE else "  *"
        print(f"  {name:<{width}}  {value:>10g}  {source}{marker}")
    print("config ok")
    return 0
