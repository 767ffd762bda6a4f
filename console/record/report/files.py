"""Writing a report: the recording read once, every file rendered first, then all of them written or none."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from console.errors import InputError
from console.guards.thresholds import Thresholds
from console.record import svg
from console.record.reader import RecordingReader
from console.record.report.charts import charts_of
from console.record.report.markdown import render_markdown
from console.record.review import review


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    charts: list[Path]


def write_report(
    recording_path: Path, out_dir: Path, thresholds: Thresholds | None = None, overwrite: bool = False
) -> ReportFiles:
    """Write report.md and its charts into `out_dir`: all of them or none. Each is rendered first, every
    target checked writable — and, unless `overwrite`, not there already (a report written before is not
    replaced silently) — then written beside itself and renamed into place."""
    with RecordingReader(recording_path) as recording:
        reviewed = review(recording, thresholds)
        source_name = recording_path.name
        damaged_at = recording.damaged_at
        damage = recording.damage
        size_bytes = recording_path.stat().st_size
    thresholds = thresholds or Thresholds()
    contents = {
        out_dir / f"{name}.svg": svg.render(chart) for name, chart in charts_of(reviewed, thresholds).items()
    }
    charts = list(contents)
    markdown = out_dir / "report.md"
    contents[markdown] = render_markdown(reviewed, source_name, charts, damaged_at, damage, size_bytes)
    _write_all(contents, out_dir, overwrite)
    return ReportFiles(markdown, charts)


def _write_all(contents: dict[Path, str], out_dir: Path, overwrite: bool = False) -> None:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(
            "--out", str(out_dir), f"a directory this user may write ({error.strerror})"
        ) from None
    for path in contents:
        if path.is_dir() or (path.exists() and not os.access(path, os.W_OK)):
            raise InputError("--out", str(out_dir), f"a directory where {path.name} may be written")
    there = [path.name for path in contents if path.exists()]
    if there and not overwrite:
        raise InputError(
            "--out",
            str(out_dir),
            f"a directory without a report in it: {', '.join(there)} already there, not replaced — give "
            "--overwrite to replace them, or another --out DIR",
        )
    staged = {path.with_name(f".{path.name}.partial"): path for path in contents}
    try:
        for partial, path in staged.items():
            partial.write_text(contents[path], encoding="utf-8")
    except OSError as error:
        for partial in staged:
            partial.unlink(missing_ok=True)
        raise InputError(
            "--out", str(out_dir), f"a directory this user may write ({error.strerror})"
        ) from None
    for partial, path in staged.items():
        os.replace(partial, path)
