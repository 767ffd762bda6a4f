"""The `stormdeck` command.

Each area registers its own subcommands from a module here (`sim.py`, `bench.py`, ...), so adding a command
is an addition to this package, not an edit of one big file. Errors a user can cause exit with status 2
and a message naming the field, the value and the allowed range; never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from console import __version__
from console.cli.groups import CommandParser
from console.errors import StormdeckError

#: Modules that contribute subcommands; each has `register(subparsers)`.
_COMMAND_MODULES = (
    "console.cli.sim",
    "console.cli.bench",
    "console.cli.config",
    "console.cli.attach",
    "console.cli.record",
    "console.cli.report",
    "console.cli.replay",
    "console.cli.act",
    "console.cli.gateway",
    "console.cli.loadgen",
    "console.cli.controller",
    "console.cli.fleet",
    "console.cli.drill",
    "console.cli.inject",
    "console.cli.local_console",
)


def build_parser() -> argparse.ArgumentParser:
    # A CommandParser like every group, so an option given before the command is named with the command
    # that takes it (`stormdeck --json sim list`), not argparse's "unrecognized arguments: --json".
    parser = CommandParser(
        prog="stormdeck",
        description="See a WebSocket gateway fleet's reconnect storm coming, and act on it safely.",
    )
    parser.add_argument("--version", action="version", version=f"stormdeck {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    import importlib

    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def _embedded_default(args: argparse.Namespace) -> int:
    """No command at all: a simulated fleet on loopback with the console attached (issue #3)."""
    from console.cli.embedded import run_embedded

    return run_embedded()


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()  # (imports every command's module: a second, in which Ctrl-C is likely)
    except KeyboardInterrupt:
        return 130
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None and getattr(args, "command", None) is None:  # (main([]): no words, no namespace)
        handler = _embedded_default
    if handler is None:
        parser.print_help()
        return 0
    try:
        return handler(args)
    except StormdeckError as error:
        print(f"stormdeck: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`stormdeck config check | head -1`): stop quietly, as a Unix filter does.
        # Python would flush stdout again at exit and fail again, so point it at /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a writer killed by the pipe
