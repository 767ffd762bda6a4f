"""`stormdeck audit verify FILE`: an audit log's hash chain checked."""

from __future__ import annotations

import argparse
import sys


def _run_verify(args: argparse.Namespace) -> int:
    from console.audit import verify_file
    from console.model.units import counted

    report = verify_file(args.file)
    if report.intact:
        print(f"{args.file}: intact, {counted(report.records, 'record')}, last hash {report.last_hash[:16]}…")
        return 0
    print(
        f"{args.file}: line {report.broken_line}: {report.reason} ({counted(report.records, 'record')} verified before it)",
        file=sys.stderr,
    )
    return 1
