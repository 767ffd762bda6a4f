"""`report.md`: the sections in order, and the last of them, what the seeds say. Pure: a `Review` in, text out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from console.record.advice import Finding, findings
from console.record.clock import clock, report_clock
from console.record.report.figures import figures_section
from console.record.report.objectives import objectives_section
from console.record.report.session import session_section
from console.record.report.timeline import timeline_section
from console.record.review import Review

SECTIONS = ("Session", "Key figures", "Charts", "Objectives", "Timeline", "What the seeds say")


def render_markdown(
    reviewed: Review,
    source_name: str,
    charts: list[Path],
    damaged_at: int | None = None,
    damage: str | None = None,
    size_bytes: int | None = None,
) -> str:
    lines = [f"# After-action report: {reviewed.header.fleet or source_name}", ""]
    lines += session_section(reviewed, source_name, damaged_at, damage, size_bytes)
    lines += figures_section(reviewed)
    lines += ["## Charts", ""]
    lines += [f"![{path.stem}]({path.name})" for path in charts] or ["No frames were recorded."]
    lines += [
        "",
        *objectives_section(reviewed),
        *timeline_section(reviewed),
        *seeds_section(findings(reviewed), report_clock(reviewed.header)),
    ]
    return "\n".join(lines).rstrip() + "\n"


def seeds_section(found: list[Finding], at: Callable[[float], str] = clock) -> list[str]:
    lines = ["## What the seeds say", ""]
    if not found:
        return [*lines, "Nothing in this recording matches a situation the seeds prescribe for.", ""]
    for finding in found:
        done = {True: "done", False: "not done", None: "not visible in the recording"}[finding.done]
        if not finding.needed:
            done = "not needed"  # (what_was_done says what shows it)
        elif finding.done and finding.done_before_s is not None:
            done = f"done before the alarm, at {at(finding.done_before_s)}"
        elif not finding.done and finding.done_late_s is not None:
            done = "not in time"  # (what_was_done says when, and how long after it had passed)
        lines += [
            f"### {finding.title}",
            "",
            f"- **Seen:** {finding.evidence}.",
            f"- **The seed says:** {finding.prescription}",
            f"- **Source:** {finding.seed}.",
            f"- **In this session:** {done} — {finding.what_was_done}.",
            "",
        ]
    return lines
