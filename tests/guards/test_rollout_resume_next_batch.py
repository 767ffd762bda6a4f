"""The resume verdict says when the next batch starts (`next_batch`): a resume keeps what is left of the
interval, which runs from batch start to batch start. Reviewer, real loopback fleet: halted while the panel
said "next batch in 70 s", resumed — a plain ok, and batch 2 drained at once, 47 s early (fixed in the
controller too: console/gateway/rollout.py)."""

from __future__ import annotations

from typing import Any

from console.guards import judge_rollout_resume
from console.protocol import Check, NodeState, RolloutMode, RolloutState, RolloutStatus, Verdict, VerdictLevel
from tests.fleet_builders import node, snapshot
from tests.guards.fleets import fleet

#: The reviewer's rollout at the snapshot's fleet time (100 s): batch 1 of 3 started at 35.7 s, every 90 s.
HALTED = dict(
    state=RolloutState.HALTED,
    mode=RolloutMode.DRAIN,
    batch_size=1,
    interval_s=90.0,
    pause_cpu_pct=75.0,
    batch=1,
    batches=3,
    started_at_s=35.7,
    halted_at_s=90.0,
    pause_reason="halted by operator",
)


def _judged(extra: list | None = None, count: int = 3, **rollout: Any) -> Verdict:
    return judge_rollout_resume(fleet(count, rollout=RolloutStatus(**(HALTED | rollout)), extra=extra))


def _said(verdict: Verdict) -> Check:
    return next(c for c in verdict.checks if c.name == "next_batch")


def test_halted_in_the_interval_the_verdict_says_the_next_batch_starts_when_the_interval_ends() -> None:
    verdict = _judged(next_batch_at_s=125.7)
    said = _said(verdict)
    assert (
        verdict.level is VerdictLevel.OK and said.ok and said.level is VerdictLevel.OK
    )  # a note, not a gate
    assert said.value == "in 26 s" and said.why.startswith("batch 2 starts in 26 s"), said
    assert "90 s interval" in said.why and "batch 1's start" in said.why, said.why
    assert (verdict.projections["next_batch"], verdict.projections["next_batch_in_s"]) == (2, 25.7)


def test_past_the_interval_the_next_batch_starts_at_once() -> None:
    said = _said(_judged(next_batch_at_s=95.0))
    assert said.value == "at once" and said.why.startswith("batch 2 starts at once"), said
    paused = _judged(state=RolloutState.PAUSED, next_batch_at_s=100.0, halted_at_s=None)
    assert _said(paused).value == "at once" and paused.projections["next_batch_in_s"] == 0


def test_halted_during_a_batch_the_batch_goes_on_at_once() -> None:
    """No next batch time: the batch under way (gw-000 drained, not restarted) is what a resume goes on
    with, at once, as before."""
    under_way = [node("gw-000", state=NodeState.DRAINED, connections=0)] + [node(f"gw-00{i}") for i in (1, 2)]
    verdict = judge_rollout_resume(
        snapshot(under_way, rollout=RolloutStatus(**HALTED), connections=50_000, headroom_pct=66.0)
    )
    said = _said(verdict)
    assert said.value == "at once" and said.why.startswith("batch 1 goes on at once"), said
    assert (verdict.projections["next_batch"], verdict.projections["next_batch_in_s"]) == (1, 0)


def test_before_its_first_batch_batch_1_starts_at_once_or_at_its_scheduled_start() -> None:
    said = _said(_judged(batch=0, started_at_s=None))
    assert said.value == "at once" and said.why.startswith("batch 1 starts at once"), said
    scheduled = _said(_judged(batch=0, started_at_s=None, starts_at_s=130.0))
    assert scheduled.value == "in 30 s" and "scheduled start" in scheduled.why, scheduled


def test_where_the_status_does_not_say_nothing_is_said() -> None:
    """Between batches with no next batch time (an older server): nothing to go by, no note."""
    verdict = _judged()
    assert "next_batch" not in [c.name for c in verdict.checks]
    assert "next_batch" not in verdict.projections
