"""A start while a rollout is halted replaces it, on both backends: the halted one's batches not yet started
are dropped, and the new one restarts every node from its first batch. Judged as if none existed, the
start said nothing of it (reviewer); it asks first now (`halted_rollout`, confirm), saying what is dropped."""

from __future__ import annotations

import pytest

from console.guards import judge_rollout_start
from console.protocol import (
    Check,
    RolloutMode,
    RolloutRequest,
    RolloutState,
    RolloutStatus,
    Verdict,
    VerdictLevel,
)
from tests.guards.fleets import CAPACITY, fleet

#: A calm 20-node fleet: a drain-mode start of 1 is ok on it (tests/guards/test_rollout_admission.py).
REQUEST = RolloutRequest(batch_size=1, interval_s=90, mode=RolloutMode.DRAIN)
HALTED = RolloutStatus(
    state=RolloutState.HALTED,
    mode=RolloutMode.DRAIN,
    batch_size=2,
    batch=3,
    batches=16,
    pause_reason="halted by operator",
)


def _start(rollout: RolloutStatus) -> Verdict:
    return judge_rollout_start(fleet(rollout=rollout), CAPACITY, REQUEST)


def _halted_check(verdict: Verdict) -> Check | None:
    return next((c for c in verdict.checks if c.name == "halted_rollout"), None)


def test_a_start_over_a_halted_rollout_asks_first_saying_what_it_drops() -> None:
    judged = _start(HALTED)
    check = _halted_check(judged)
    assert check is not None and not check.ok and check.level is VerdictLevel.CONFIRM
    assert (check.value, check.limit) == ("batch 3 of 16", "no halted rollout")
    assert check.why == (
        "replaces the rollout halted at batch 3 of 16 (halted by operator), and drops its 13 batches not "
        "yet started — the new one restarts every node from its first batch, those already restarted too; "
        "resuming goes on with the halted one instead"
    ), check.why
    assert judged.level is VerdictLevel.CONFIRM  # else ok: the calm fleet passes every other check
    assert _start(RolloutStatus()).level is VerdictLevel.OK


def test_a_start_over_a_rollout_halted_before_its_start_drops_all_of_it() -> None:
    """A scheduled rollout halted before its start (batch 0, `starts_at_s` still ahead)."""
    before = HALTED.model_copy(update={"batch": 0, "starts_at_s": 600.0, "pause_reason": None})
    check = _halted_check(_start(before))
    assert check is not None and check.value == "before its start"
    assert check.why.startswith(
        "replaces the rollout halted before its start, and drops its 16 batches, none started — "
    ), check.why


def test_a_start_over_a_rollout_halted_on_its_last_batch_says_it_leaves_that_batch() -> None:
    """Halted during batch 16 of 16: no batch is left to start, but the one under way is not finished (a
    finished last batch completes the rollout) — said so, not "drops its 0 batches"."""
    last = HALTED.model_copy(update={"batch": 16, "pause_reason": "restart of gw-031 failed (exit 1): true"})
    check = _halted_check(_start(last))
    assert check is not None and not check.ok and check.level is VerdictLevel.CONFIRM
    assert check.why.startswith(
        "replaces the rollout halted at batch 16 of 16 (restart of gw-031 failed (exit 1): true), and leaves "
        "its last batch unfinished — "
    ), check.why


@pytest.mark.parametrize("state", [RolloutState.IDLE, RolloutState.COMPLETED, RolloutState.ABORTED])
def test_no_halted_rollout_no_check(state: RolloutState) -> None:
    """A rollout that ended (completed, aborted) has nothing left to drop: the check is not there."""
    assert _halted_check(_start(HALTED.model_copy(update={"state": state}))) is None


def test_an_abrupt_start_over_a_halted_rollout_stays_typed_and_still_says_it() -> None:
    """The level is the strictest: an abrupt start is typed anyway; the halted one is still named."""
    abrupt = judge_rollout_start(
        fleet(rollout=HALTED), CAPACITY, REQUEST.model_copy(update={"mode": RolloutMode.ABRUPT})
    )
    assert abrupt.level is VerdictLevel.TYPED and _halted_check(abrupt) is not None
