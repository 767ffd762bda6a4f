"""A timeline's verdict cell tells a check that only warns from one that set the level.

Trainee reviewer: "ok: cpu_now_pct 82.4 (limit 75.0)" — an add_capacity verdict whose hottest-node check is
a note (the guard never holds capacity back from a hot fleet: that is what it is for) read as an ok past its
limit, a contradiction. The console's dialog and `stormdeck act` call such a check a note; so does this."""

from __future__ import annotations

from console.protocol import Check, Verdict, VerdictLevel
from console.record.records import ActionRecord
from console.record.report.timeline import verdict_text


def hot_cpu(level: VerdictLevel) -> Check:
    return Check(
        name="cpu_now_pct", value=82.4, limit=75.0, ok=False, why="the hottest node now", level=level
    )


def action(level: VerdictLevel, *checks: Check) -> ActionRecord:
    verdict = Verdict(level=level, action="add_capacity", checks=list(checks))
    return ActionRecord(
        time_s=60.0, actor="trainee", action="add_capacity", verdict=verdict, outcome="applied"
    )


def test_an_ok_verdicts_failed_note_says_it_only_warns() -> None:
    text = verdict_text(action(VerdictLevel.OK, hot_cpu(VerdictLevel.OK)))
    assert text == "ok; note, only warns: cpu_now_pct 82.4 (limit 75.0)", text


def test_the_checks_that_set_the_level_come_first_and_the_notes_after() -> None:
    headroom = Check(
        name="headroom_pct", value=12.0, limit=35.0, ok=False, why="", bound="min", level=VerdictLevel.BLOCKED
    )
    text = verdict_text(action(VerdictLevel.BLOCKED, hot_cpu(VerdictLevel.OK), headroom))
    assert text == "blocked: headroom_pct 12.0 (limit 35.0); note, only warns: cpu_now_pct 82.4 (limit 75.0)"
    # the ones that fail to what the verdict is stay as they read
    assert verdict_text(action(VerdictLevel.BLOCKED, headroom)) == "blocked: headroom_pct 12.0 (limit 35.0)"
    assert verdict_text(action(VerdictLevel.OK)) == "ok"
