"""The rollout form's drain rate starts at the backend's batch drain rate, where its capacity record says
one; blank (the backend's rate) where it does not, or where there is no record."""

from __future__ import annotations

import dataclasses

from console.guards import Thresholds
from console.model.actions.form import parse_form
from console.model.actions.rollout import rollout_prefill
from console.protocol import ActionKind
from tests.fleet_builders import frame
from tests.guards.fleets import CAPACITY, fleet

CALM = frame(100.0, fleet=fleet(count=20).nodes)
FORM = {"batch_size": "2", "interval_s": "90", "mode": "drain", "pause_cpu_pct": "75"}


def test_the_drain_rate_starts_at_the_backends() -> None:
    told = dataclasses.replace(CAPACITY, batch_drain_rate_per_s=833.0, batch_drain_deadline_s=600.0)
    assert rollout_prefill(CALM, "f", told, Thresholds()).values["drain_rate_per_s"] == "833"
    assert rollout_prefill(CALM, "f", CAPACITY, Thresholds()).values["drain_rate_per_s"] == ""  # 0: unknown
    assert rollout_prefill(None, "f", None, Thresholds()).values["drain_rate_per_s"] == ""


def test_a_typed_rate_is_sent_and_a_blank_one_is_left_out() -> None:
    typed = parse_form(ActionKind.ROLLOUT_START, None, FORM | {"drain_rate_per_s": "20"}).body
    assert typed["drain_rate_per_s"] == 20.0
    assert "drain_rate_per_s" not in parse_form(ActionKind.ROLLOUT_START, None, FORM).body
    assert (
        "drain_rate_per_s"
        not in parse_form(ActionKind.ROLLOUT_START, None, FORM | {"drain_rate_per_s": " "}).body
    )


def test_what_would_pass_names_the_drain_rate_that_fits() -> None:
    from console.guards import judge_rollout_start
    from console.model.actions.answer import what_would_pass
    from console.protocol import RolloutRequest
    from tests.guards.test_rollout_pacing_moves import CONTROLLER, loopback

    verdict = judge_rollout_start(loopback(), CONTROLLER, RolloutRequest(batch_size=1, interval_s=90))
    hints = what_would_pass(verdict)
    assert "drain rate ≤ 60 closes/s per node (drain_rate_per_s): the batch's drain then fits" in hints, hints
