"""The after-action report: `report.md` and its SVG charts, from one recording.

Sections, in order: the session (header), key figures, charts, objectives (for a drill), timeline (events
grouped, alarms, actions with their verdicts, confirmations), and what the seeds say should have been done.
The content comes from `review.review` and `advice.findings`; this package only lays it out: one module a
section (`session`, `figures`, `charts`, `objectives`, `timeline`), `markdown` putting them in order, and
`files`, the only one that touches the disk, writing them all or none.
"""

from __future__ import annotations

from console.record.report.files import ReportFiles, write_report
from console.record.report.markdown import SECTIONS, render_markdown

__all__ = ["SECTIONS", "ReportFiles", "render_markdown", "write_report"]
