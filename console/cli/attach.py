"""`stormdeck attach URL`: the live console on a fleet API (the simulator's, or a controller's)."""

from __future__ import annotations

import argparse
from pathlib import Path

from console.cli.checks import check_console_settings, check_fleet_url, check_recording_out


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "attach",
        help="attach the console to a fleet API",
        description="Attach the live console to a fleet API. The token comes from --token-file or the "
        "STORMDECK_TOKEN environment variable, never from the command line. A fleet API not reached yet is "
        "waited for; a token it refuses is shown in the header. Exit 0 when quit, 2 bad input (an option, the "
        "URL, a missing token: nothing starts), 1 an error in the console.",
        examples=(
            "stormdeck attach http://127.0.0.1:8470 --token-file FILE   # the token file sim serve printed",
            "stormdeck attach http://127.0.0.1:8470 --token-file FILE --theme high-contrast --record session.sdrec",
        ),
    )
    parser.add_argument("url", metavar="URL", help="the fleet API's base URL, e.g. http://127.0.0.1:8470")
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="a file holding the token, or ROLE TOKEN [NAME] lines: the first line's (default: the "
        "environment's STORMDECK_TOKEN)",
    )
    parser.add_argument(
        "--theme",
        help="dark, light, high-contrast, colorblind, or one of yours; remembered for the next run (default: "
        "the theme last chosen, else dark)",
    )
    parser.add_argument("--read-only", action="store_true", help="watch only; never offer actions")
    parser.add_argument(
        "--instructor",
        action="store_true",
        help="an instructor's console on a served drill: the palette (Ctrl-P) injects events (admin token)",
    )
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="record the session (frames, events, alarms) into FILE; an existing recording is continued "
        "(default: nothing recorded)",
    )
    parser.set_defaults(handler=run_attach)


def run_attach(args: argparse.Namespace) -> int:
    from console.cli.screen import run_app
    from console.client.actions import ActionClient
    from console.client.stream import StreamClient
    from console.client.token import load_token
    from console.guards.config import load_default_thresholds
    from console.model.alarm_source import console_model
    from console.ui.app import ConsoleApp

    check_fleet_url(args.url)  # the stream client would retry a typo forever
    token = load_token(args.token_file)
    thresholds = load_default_thresholds().thresholds  # ./stormdeck.toml, user config, STORMDECK_* env
    check_console_settings(args.theme)
    if args.record is not None:
        check_recording_out("--record", args.record)
    source = StreamClient(args.url, token)
    action_recorder = None
    recorder = None
    if args.record is not None:
        from console.record.daemon import RecordingTap, StreamRecorder

        recorder = StreamRecorder(args.record, url=args.url, option="--record")
        source = RecordingTap(source, recorder)

        def action_recorder(record: object) -> None:  # the console's attempts and confirmations, too
            if recorder.writer is not None:
                recorder.writer.write(record)

    app = ConsoleApp(
        model=console_model(thresholds),
        source=source,
        theme_name=args.theme,
        read_only=args.read_only,
        admin=ActionClient(args.url, token),  # reads (node history) and the guarded actions
        guard_thresholds=thresholds,  # the forms' lines where the server does not say its own
        action_recorder=action_recorder,
        instructor=args.instructor,
    )
    try:
        return run_app(app)
    finally:
        if recorder is not None:  # the tap closes it when its stream ends; this, if it never began
            recorder.close()
