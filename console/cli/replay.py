"""`stormdeck replay FILE`: the console, read-only, fed from a recording, with replay controls."""

from __future__ import annotations

import argparse
from pathlib import Path

from console.cli.checks import check_console_settings, typed_float
from console.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="replay a recording in the console",
        description="Replay a recording (stormdeck record, attach --record, drill --record) in the console, "
        "read-only: space pauses, , and . step a frame, g seeks to a fleet time (a drill's recording: a time on "
        "the drill's clock, e.g. 02:01:30), x cycles the speed "
        "(×1/×5/×20/×60) and 1–4 pick one, [ ] jump to the previous/next alarm, { } to the previous/next action, "
        "( ) to the previous/next event (an injection, a drill's story line or hint); L lists the recording's "
        "actions as the audit log does.",
        examples=(
            "stormdeck replay session.sdrec",
            "stormdeck replay session.sdrec --speed 20 --paused",
        ),
    )
    parser.add_argument("file", metavar="FILE", type=Path, help="the recording")
    parser.add_argument(
        "--speed", type=typed_float, default=1.0, help="fleet seconds per second, in (0, 600] (default 1)"
    )
    parser.add_argument("--paused", action="store_true", help="start paused on the first frame")
    parser.add_argument(
        "--theme",
        help="dark, light, high-contrast, colorblind, or one of yours (default: the theme last chosen, else "
        "dark)",
    )
    parser.set_defaults(handler=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    from console.cli.screen import run_app
    from console.guards.config import load_default_thresholds
    from console.record.reader import RecordingReader
    from console.record.replay import ReplaySource, check_speed
    from console.ui.replay import ReplayApp

    check_speed(args.speed, "--speed")
    check_console_settings(args.theme)
    reader = RecordingReader(args.file)
    if reader.frame_count == 0:
        raise InputError("FILE", str(args.file), "a recording holding at least one complete frame")
    thresholds = load_default_thresholds().thresholds
    replay = ReplaySource(reader, speed=args.speed, paused=args.paused)
    try:
        return run_app(ReplayApp(replay, thresholds, theme_name=args.theme))
    finally:
        reader.close()
