"""The admission guard judges a limit against the calm inflow, never a storm's accepts, and in the field's
own unit (per node).

Reviewer, regional-outage drill (20 nodes, 1 M clients back at once, every node at 100 % CPU): admission
400/s a node — the drill's lesson, its forecast 50,133 → 440,769 connections — read "▲ FAIL
admission_rate_per_s 8,000 ≥ 8,904 … legitimate clients are refused: raise rate_per_s to at least 445.2/s a
node": the "steady inflow" was the storm's accepts. And 0.001/s a node was only a confirm, its check reading
0.048 (a fleet total) beside a per-node field."""

from __future__ import annotations

import pytest

from console.guards import judge_admission
from console.protocol import AdmissionRequest, Check, Verdict, VerdictLevel
from tests.fleet_builders import node, snapshot
from tests.guards.fleets import CAPACITY, fleet


def rate_check(verdict: Verdict) -> Check:
    return next(c for c in verdict.checks if c.name == "admission_rate_per_s")


def meltdown():
    """regional-outage at 02:02:41: 20 nodes at 100 % CPU, 44.4k attempts/s, 8.9k accepted, 35.3k timed
    out; admission off (the drill's start)."""
    members = [
        node(f"gw-{i:03d}", cpu_pct=100.0, connections=2_770, accepts_per_s=445.2, timeouts_per_s=1_765.0)
        for i in range(20)
    ]
    return snapshot(
        members,
        connections=55_400,
        attempts_per_s=44_435.0,
        accepts_per_s=8_904.0,
        timeouts_per_s=35_294.0,
        max_cpu_pct=100.0,
        headroom_pct=96.5,
        offline_clients=944_524,
    )


def test_in_a_storm_with_no_calm_inflow_known_the_limit_is_not_judged_against_the_storm() -> None:
    verdict = judge_admission(meltdown(), AdmissionRequest(rate_per_s=400))
    assert verdict.level is VerdictLevel.OK, [(c.name, c.why) for c in verdict.checks if not c.ok]
    rate = rate_check(verdict)
    assert rate.level is VerdictLevel.OK and not rate.ok  # a note: said, not asked
    assert rate.limit is None and "no calm inflow" in rate.why and "8,904" in rate.why, rate.why
    assert "steady_inflow_per_s" in rate.why  # where a calm figure is set
    assert verdict.projections["steady_inflow_per_s"] is None


def test_a_calm_fleets_learned_baseline_is_its_calm_inflow() -> None:
    """The calm baseline learned over its calm seconds (400/s: 20 × 20/s) is the inflow; one second's
    accepts are not (tests/guards/test_admission_calm_baseline.py)."""
    verdict = judge_admission(fleet(), AdmissionRequest(rate_per_s=15), None, None, 400.0)
    assert verdict.level is VerdictLevel.CONFIRM
    assert verdict.projections["steady_inflow_per_s"] == 400


def test_the_check_reads_per_node_as_its_field_does() -> None:
    verdict = judge_admission(fleet(), AdmissionRequest(rate_per_s=15), None, None, 400.0)
    rate = rate_check(verdict)
    assert (rate.value, rate.limit, rate.bound) == (15, 20, "min")
    assert "raise rate_per_s to at least 20/s a node" in rate.why


@pytest.mark.parametrize("rate_per_s", [0.001, 1.9])
def test_a_limit_that_refuses_nearly_every_client_must_be_typed(rate_per_s: float) -> None:
    capacity = CAPACITY.__class__(**{**CAPACITY.__dict__, "steady_inflow_per_s": 400.0})
    verdict = judge_admission(fleet(), AdmissionRequest(rate_per_s=rate_per_s), capacity)
    assert verdict.level is VerdictLevel.TYPED and verdict.typed_expected == "test-fleet"
    rate = rate_check(verdict)
    assert (rate.value, rate.limit) == (rate_per_s, 20)
    assert rate.level is VerdictLevel.TYPED
    assert "rate_per_s" in rate.why and "at least 20/s a node" in rate.why, rate.why
    assert "refuses" in rate.why and "%" in rate.why
    # a tenth of the calm inflow or more: asked, not typed
    tenth = judge_admission(fleet(), AdmissionRequest(rate_per_s=2.0), capacity)
    assert tenth.level is VerdictLevel.CONFIRM and rate_check(tenth).level is VerdictLevel.CONFIRM


def test_a_known_calm_inflow_still_judges_in_a_storm() -> None:
    """With a calm figure from the backend the storm's accepts play no part: 400/s a node over a calm
    inflow of 2000/s fleet-wide passes; 5/s a node (100/s) is a twentieth of it: typed."""
    capacity = CAPACITY.__class__(**{**CAPACITY.__dict__, "steady_inflow_per_s": 2000.0})
    assert judge_admission(meltdown(), AdmissionRequest(rate_per_s=400), capacity).level is VerdictLevel.OK
    low = judge_admission(meltdown(), AdmissionRequest(rate_per_s=5), capacity)
    assert rate_check(low).level is VerdictLevel.TYPED and not rate_check(low).ok


def test_in_a_storm_a_limit_that_keeps_the_offline_clients_out_for_hours_must_be_typed() -> None:
    """No calm inflow known, but 944,524 clients offline: 0.001/s a node (0.02/s for the fleet) would take
    years to bring them back. The drain window's pace (600 s) needs 78.7/s a node; under a tenth of it,
    typed."""
    verdict = judge_admission(meltdown(), AdmissionRequest(rate_per_s=0.001))
    assert verdict.level is VerdictLevel.TYPED
    rate = rate_check(verdict)
    assert (rate.value, rate.limit, rate.level) == (0.001, pytest.approx(7.871, abs=1e-3), VerdictLevel.TYPED)
    assert "944,524 clients offline" in rate.why and "raise rate_per_s to at least 7.9/s a node" in rate.why
    # the drill's own move, and a cautious 10/s, are not judged against the storm
    for rate_per_s in (400, 10):
        assert judge_admission(meltdown(), AdmissionRequest(rate_per_s=rate_per_s)).level is VerdictLevel.OK
