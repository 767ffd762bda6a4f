"""`stormdeck record URL --out FILE`: the headless recorder, a daemon that keeps recording a fleet's stream."""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
from pathlib import Path

from console.cli.checks import (
    check_fleet_url,
    check_in_range,
    check_recording_out,
    range_text,
    typed_float,
    typed_int,
)
from console.errors import InputError
from console.protocol.limits import WEEK_S
from console.stop_signals import answering_stop_signals, soon

#: How long `record` tries a fleet API it never reached: long enough for a server started alongside it,
#: short enough that a script's `record --frames N` at a stopped server does not hang.
DEFAULT_WAIT_S = 30.0
WAIT_S_RANGE = (0.0, float(WEEK_S))

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]?)i?B?\s*$", re.IGNORECASE)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "record",
        help="record a fleet API's stream to a file, headless, until stopped",
        description="Record every frame and event of a fleet API's stream (with the alarms they raise) into "
        "a crash-safe recording, reconnecting and resuming across disconnects. A fleet API never reached "
        "(nothing listening) is retried for --wait-s seconds, then given up. Recording into an existing "
        "file continues it. The token comes from --token-file or STORMDECK_TOKEN, never from argv. Exit 0 "
        "stopped (--frames reached, Ctrl-C or SIGTERM), 2 bad input (an option, the file, a missing token), "
        "1 transport or auth (the fleet never reached within --wait-s, a token the fleet refuses).",
        examples=(
            "stormdeck record http://127.0.0.1:8470 --out session.sdrec --token-file FILE",
            "stormdeck record http://127.0.0.1:8470 --out session.sdrec --max-size 500M --max-age-s 86400",
        ),
    )
    parser.add_argument("url", metavar="URL", help="the fleet API's base URL, e.g. http://127.0.0.1:8470")
    parser.add_argument("--out", type=Path, required=True, metavar="FILE", help="the recording to write")
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="a file holding the token, or ROLE TOKEN [NAME] lines: the first line's (default: the "
        "environment's STORMDECK_TOKEN)",
    )
    parser.add_argument(
        "--max-size",
        type=parse_size,
        metavar="SIZE",
        help="retention: keep the file under SIZE, in bytes or with K, M or G (e.g. 500M), at least 16K "
        "(default: no limit)",
    )
    parser.add_argument(
        "--max-age-s",
        type=typed_float,
        metavar="SECONDS",
        help="retention: keep this many seconds of fleet time, above 0 (default: no limit)",
    )
    parser.add_argument(
        "--frames",
        type=typed_int,
        metavar="N",
        help="stop after N frames, at least 1 (default: run until stopped)",
    )
    parser.add_argument(
        "--wait-s",
        type=typed_float,
        default=DEFAULT_WAIT_S,
        metavar="SECONDS",
        help="how long to keep trying a fleet API never reached before giving up (exit 1), in "
        f"{range_text(WAIT_S_RANGE)}; once reached, a lost stream is followed until stopped "
        f"(default {DEFAULT_WAIT_S:g})",
    )
    parser.add_argument(
        "--no-fsync", action="store_true", help="flush only: survives a killed recorder, not a lost machine"
    )
    parser.set_defaults(handler=run_record)


def parse_size(text: str) -> int:
    match = _SIZE.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size; expected e.g. 200000000, 500M or 2G")
    number, unit = float(match.group(1)), match.group(2).upper()
    return int(number * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[unit])


def run_record(args: argparse.Namespace) -> int:
    from console.client.token import load_token
    from console.record.daemon import StreamRecorder, record_stream
    from console.record.writer import Retention

    check_fleet_url(args.url)  # the recorder would retry a typo until stopped
    if args.frames is not None and args.frames <= 0:
        raise InputError("--frames", args.frames, "a whole number of frames, at least 1")
    check_in_range("--wait-s", args.wait_s, WAIT_S_RANGE, "a number of seconds")
    try:
        retention = Retention(max_bytes=args.max_size, max_age_s=args.max_age_s)
    except InputError as error:  # named as typed: Retention names its own fields
        option = {"max_bytes": "--max-size", "max_age_s": "--max-age-s"}.get(error.field, error.field)
        raise InputError(option, error.value, error.allowed) from None
    token = load_token(args.token_file)
    check_recording_out("--out", args.out)
    continued = args.out.exists() and args.out.stat().st_size > 0
    recorder = StreamRecorder(
        args.out,
        url=args.url,
        retention=retention,
        fsync=not args.no_fsync,
        max_frames=args.frames,
        wait_s=args.wait_s,
    )
    logging.basicConfig(level=logging.INFO, format="stormdeck record: %(message)s")

    async def until_stopped() -> int:
        task = asyncio.ensure_future(record_stream(recorder, args.url, token))
        with answering_stop_signals(soon(asyncio.get_running_loop(), task.cancel)):
            try:
                return await task
            except asyncio.CancelledError:
                return recorder.frames_written

    try:
        written = asyncio.run(until_stopped())
    finally:
        recorder.close()
    logging.getLogger(__name__).info("%s", what_was_recorded(written, args.out, args.url, continued))
    return 0


def what_was_recorded(written: int, out: Path, url: str, continued: bool) -> str:
    """The recorder's last line. Stopped before the first frame it has made no file (one is opened at the
    stream's hello): it said "0 frames recorded into FILE" of a file that was not there."""
    from console.model.units import counted

    if written == 0:
        if continued:
            return f"no frame came from {url}: no frames added to {out}"
        if not out.exists():
            return f"nothing recorded: no frame came from {url}; {out} was not created"
    frames = counted(written, "frame")
    return f"{frames} added to {out}" if continued else f"{frames} recorded into {out}"
