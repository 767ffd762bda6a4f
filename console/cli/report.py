"""`stormdeck report FILE [--out DIR]`: the after-action report of a recording (report.md and SVG charts)."""

from __future__ import annotations

import argparse
from pathlib import Path

from console.cli.checks import check_output_dir
from console.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write the after-action report of a recording",
        description="Write DIR/report.md and its SVG charts: the session, key figures, objectives (for a "
        "drill), the timeline of events, alarms and actions with their verdicts, and what the seeds say "
        "should have been done. A report already in DIR is not replaced unless --overwrite is given.",
        examples=(
            "stormdeck report session.sdrec   # session-report/report.md and its charts",
            "stormdeck report session.sdrec --out rep/ --overwrite",
        ),
    )
    parser.add_argument(
        "file",
        metavar="FILE",
        type=Path,
        help="a recording (stormdeck record, attach --record, drill --record)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="directory to write report.md and its charts into, made if missing (default: beside the "
        "recording, named after it: session.sdrec → session-report/)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the report.md and charts a report already wrote in DIR (without it: exit 2, nothing "
        "written)",
    )
    parser.set_defaults(handler=run_report)


def default_out(recording: Path) -> Path:
    """Where a report goes when --out is left out: beside the recording, named after it."""
    return recording.with_name(f"{recording.stem}-report")


def run_report(args: argparse.Namespace) -> int:
    from console.guards.config import load_default_thresholds
    from console.record.report import write_report

    if args.out is not None and not args.out.strip():  # Path("") is the current directory: not there
        raise InputError("--out", args.out, "a directory path")
    out = check_output_dir("--out", Path(args.out) if args.out is not None else default_out(args.file))
    files = write_report(args.file, out, load_default_thresholds().thresholds, overwrite=args.overwrite)
    print(files.markdown)
    for chart in files.charts:
        print(chart)
    return 0
