"""The admission guard judges a limit against the calm baseline learned over a window — the attempts gauge's
"steady" — never against one second's accepts.

Reviewer, `fleet up --nodes 3 --clients 300`: `act URL admission --rate 0.001 --dry-run` read "verdict: ok",
"admission_rate_per_s 0.001 ≥ 0 pass", steady_inflow_per_s=0, while the console's attempts gauge read
"steady (10/s)" and a minute earlier the same check's limit read "≥ 2.97": the guard's inflow was the current
second's accepts, and a quiet second made one admission per 1000 s a node pass as ok."""

from __future__ import annotations

import itertools

import pytest

from console.alarms.tracking import SteadyAttempts
from console.guards import Thresholds, judge_admission
from console.protocol import AdmissionRequest, Check, FleetSnapshot, Verdict, VerdictLevel
from tests.fleet_builders import node, snapshot
from tests.guards.fleets import LOOPBACK

#: A fleet-wide second-by-second inflow averaging 1 (× the level): lumpy, with quiet seconds of none, as a
#: few hundred clients' reconnects spread over three nodes are.
LUMPY = (1.4, 0.0, 1.2, 0.9, 1.5, 0.0, 1.1, 1.3, 1.0, 1.6)


def rate_check(verdict: Verdict) -> Check:
    return next(c for c in verdict.checks if c.name == "admission_rate_per_s")


def loopback_now(attempts_per_s: float = 0.0, cpu_pct: float = 1.1) -> FleetSnapshot:
    """fleet up's three nodes holding their 300 clients, in a second with `attempts_per_s` (all accepted)."""
    each = attempts_per_s / 3
    members = [
        node(f"node-{i}", cpu_pct=cpu_pct, connections=100, attempts_per_s=each, accepts_per_s=each)
        for i in (1, 2, 3)
    ]
    return snapshot(
        members,
        connections=300,
        attempts_per_s=attempts_per_s,
        accepts_per_s=attempts_per_s,
        headroom_pct=99.0,
    )


def learned(level_per_s: float, seconds: int, thresholds: Thresholds) -> SteadyAttempts:
    """The calm baseline after `seconds` calm seconds of a lumpy inflow averaging `level_per_s`."""
    steady = SteadyAttempts.of(thresholds)
    for time_s, share in zip(range(seconds), itertools.cycle(LUMPY), strict=False):
        now = loopback_now(level_per_s * share)
        steady.observe(float(time_s), now.totals, max(n.cpu_pct for n in now.nodes))
    return steady


@pytest.mark.parametrize("level_per_s", [10.0, 30.0])
def test_a_quiet_second_does_not_make_the_calm_inflow_zero(level_per_s: float) -> None:
    """The reviewer's case: calm seconds of ~10/s fleet-wide (and ~30/s: a learned level, not the floor),
    then a second with no attempts at all. 0.001/s a node is a tenth of a tenth of it and more: typed."""
    t = Thresholds()
    steady = learned(level_per_s, 90, t)
    baseline = steady.level_per_s
    assert baseline is not None and level_per_s * 0.85 <= baseline <= level_per_s * 1.05, baseline
    quiet = loopback_now(0.0)
    verdict = judge_admission(quiet, AdmissionRequest(rate_per_s=0.001), LOOPBACK, t, baseline)
    assert verdict.level is VerdictLevel.TYPED and verdict.typed_expected == "test-fleet"
    rate = rate_check(verdict)
    assert not rate.ok and rate.level is VerdictLevel.TYPED
    assert rate.limit == pytest.approx(baseline / 3, abs=1e-3)
    assert verdict.projections["steady_inflow_per_s"] == pytest.approx(baseline, abs=1e-3)
    assert "calm baseline" in rate.why and "refuses" in rate.why, rate.why
    # the same second, a limit above the calm inflow's share: ok; under it: asked
    assert judge_admission(quiet, AdmissionRequest(rate_per_s=level_per_s), LOOPBACK, t, baseline).level is (
        VerdictLevel.OK
    )
    under = judge_admission(quiet, AdmissionRequest(rate_per_s=baseline / 3 * 0.5), LOOPBACK, t, baseline)
    assert under.level is VerdictLevel.CONFIRM


def test_a_fleet_with_no_reconnects_has_the_gauges_steady_floor() -> None:
    """fleet up's 300 clients, all held: no attempts in any second. The gauge reads "steady (10/s)" (the
    reconnect floor); the guard judges by the same figure."""
    t = Thresholds()
    baseline = learned(0.0, 60, t).level_per_s
    assert baseline == t.reconnect_floor_per_s
    verdict = judge_admission(loopback_now(0.0), AdmissionRequest(rate_per_s=0.001), LOOPBACK, t, baseline)
    assert verdict.level is VerdictLevel.TYPED
    assert rate_check(verdict).limit == pytest.approx(10 / 3, abs=1e-3)


def test_with_no_calm_baseline_known_a_near_zero_rate_must_be_typed() -> None:
    """No history (a fleet API just started, still learning; or a caller that keeps none): the guard says it
    has no calm inflow, and a limit under a tenth of the reconnect floor's share — a node's share of 1/s —
    is typed, never ok. Above it, said in a note, not asked."""
    t = Thresholds()
    assert learned(10.0, 20, t).level_per_s is None  # still learning (baseline_learn_s 30 s)
    quiet = loopback_now(0.0)
    verdict = judge_admission(quiet, AdmissionRequest(rate_per_s=0.001), LOOPBACK, t, None)
    assert verdict.level is VerdictLevel.TYPED and verdict.typed_expected == "test-fleet"
    rate = rate_check(verdict)
    assert (rate.value, rate.limit, rate.level) == (0.001, pytest.approx(1 / 3, abs=1e-3), VerdictLevel.TYPED)
    assert "no calm inflow" in rate.why and "reconnect_floor_per_s" in rate.why, rate.why
    assert "raise rate_per_s to at least 0.4/s a node" in rate.why, rate.why
    assert verdict.projections["steady_inflow_per_s"] is None
    # a cautious limit: not judged, but said
    cautious = judge_admission(quiet, AdmissionRequest(rate_per_s=1.0), LOOPBACK, t, None)
    assert cautious.level is VerdictLevel.OK
    note = rate_check(cautious)
    assert not note.ok and note.limit is None and "no calm inflow" in note.why, note.why
    assert "learn" in note.why, note.why  # what would have it judged: the fleet API learning it


def test_no_history_is_no_calm_inflow_even_in_a_calm_second() -> None:
    """A calm second's accepts are no baseline: the reviewer's quiet second read 0, the one before 8.9."""
    t = Thresholds()
    busy_second = loopback_now(8.9)
    verdict = judge_admission(busy_second, AdmissionRequest(rate_per_s=0.001), LOOPBACK, t)
    assert verdict.projections["steady_inflow_per_s"] is None
    assert verdict.level is VerdictLevel.TYPED


def test_a_configured_floor_of_zero_leaves_no_line_to_type_under() -> None:
    """reconnect_floor_per_s = 0 says a trickle of nothing is normal: with no calm inflow known, only the
    note is said."""
    t = Thresholds(reconnect_floor_per_s=0.0)
    verdict = judge_admission(loopback_now(0.0), AdmissionRequest(rate_per_s=0.001), LOOPBACK, t, None)
    assert verdict.level is VerdictLevel.OK and rate_check(verdict).limit is None
