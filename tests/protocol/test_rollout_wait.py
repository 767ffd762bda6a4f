"""The rollout status's `waiting_for`: what a running rollout waits for right now, optional in v1."""

from __future__ import annotations

import json

from console.protocol import RolloutState, RolloutStatus, RolloutWait


def test_an_older_servers_rollout_status_reads_as_saying_nothing_of_a_wait() -> None:
    older = {"state": "running", "batch": 1, "batches": 3}
    assert RolloutStatus.model_validate(older).waiting_for is None


def test_a_wait_round_trips_and_keeps_a_kind_this_console_does_not_know() -> None:
    wait = RolloutWait(what="restart", nodes=["node-2"], waited_s=12.0, limit_s=60.0)
    status = RolloutStatus(state=RolloutState.RUNNING, batch=1, batches=3, waiting_for=wait)
    assert RolloutStatus.model_validate_json(status.model_dump_json()).waiting_for == wait
    # A newer server's kind of wait is read as its name, not refused: the set stays open.
    newer = json.loads(status.model_dump_json())
    newer["waiting_for"]["what"] = "quorum"
    assert RolloutStatus.model_validate(newer).waiting_for.what == "quorum"
