"""The Session section: which recording, of what fleet and source, when, how many frames, and what to
know before reading on (restarts, retention, damage). Pure."""

from __future__ import annotations

import datetime as dt

from console.record.clock import clock, recorded_clock
from console.record.records import RecordingHeader
from console.record.report.table import cell
from console.record.review import Review


def session_section(
    reviewed: Review,
    source_name: str,
    damaged_at: int | None,
    damage: str | None = None,
    size_bytes: int | None = None,
) -> list[str]:
    header = reviewed.header
    started = dt.datetime.fromtimestamp(header.started_unix_s, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    rows = [
        ("recording", source_name),
        ("fleet", header.fleet or "—"),
        ("source", header.source.value if header.source else "—"),
        ("recorded from", header.url or "—"),
        ("started", started),
        ("stormdeck", header.stormdeck_version),
        (
            "scenario",
            f"{header.scenario or '—'}"
            + (f" (seed {header.seed})" if header.seed is not None else "")
            + "".join(f" --set {override}" for override in header.overrides or ()),
        ),
        ("drill", _drill(header)),
    ]
    if reviewed.figures is not None:
        rows.append(
            (
                "frames",
                f"{reviewed.figures.frames} ({clock(reviewed.figures.start_s)} → {clock(reviewed.figures.end_s)})",
            )
        )
    if reviewed.restarts:
        at = ", ".join(
            f"at {clock(t)} (its fleet clock back to {clock(own)})" for t, own in reviewed.restarts
        )
        rows.append(("source restarts", f"{len(reviewed.restarts)}: {at}"))
    if header.trimmed_before_s is not None:
        rows.append(("retention", f"frames before {clock(header.trimmed_before_s)} were dropped"))
    # How much is not read, where the file's size is known: a torn last record is a few kB at most, and a
    # note of one read the same beside 108 kB of a damaged copy lost after it.
    unread = (
        f": the last {size_bytes - damaged_at:,} of its {size_bytes:,} bytes are not read"
        if damaged_at is not None and size_bytes is not None and size_bytes > damaged_at
        else ""
    )
    if damaged_at is not None and damage is not None:
        rows.append(
            (
                "note",
                f"the recording is read up to byte {damaged_at:,}{unread}: {damage}, not a record this "
                "stormdeck reads (an edited file?); everything before it is reported",
            )
        )
    elif damaged_at is not None:
        rows.append(
            (
                "note",
                f"the recording is damaged from byte {damaged_at:,} on{unread} (a torn last record: the "
                "recorder was stopped mid-write; or a damaged copy); everything before it is reported",
            )
        )
    return ["## Session", "", "| | |", "|---|---|", *[f"| {k} | {cell(v)} |" for k, v in rows], ""]


def _drill(header: RecordingHeader) -> str:
    if header.drill is None:
        return "—"
    face = recorded_clock(header)
    if face.day_start_s is None:  # not carried (a recording older than the field): fleet time only
        return header.drill.name
    return f"{header.drill.name} ({face.label} {face.text(0)} at fleet time {clock(0)})"
