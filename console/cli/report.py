"""`stormdeck report FILE --out DIR`: the after-action report of a recording (report.md and SVG charts)."""

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
        "should have been done.",
    )
    parser.add_argument(
        "file", type=Path, help="a recording (stormdeck record, attach --record, drill --record)"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="directory to write into")
    parser.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    from console.guards.config import load_default_thresholds
    from console.record.report import write_report

    out = check_output_dir("--out", Path(args.out)) if args.out.strip() else None
    if out is None:  # Path("") is the current directory: an empty --out must not write there
        raise InputError("--out", args.out, "a directory path")
    files = write_report(args.file, out, load_default_thresholds().thresholds)
    print(files.markdown)
    for chart in files.charts:
        print(chart)
    return 0
