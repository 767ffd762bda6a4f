"""The guards judge each node by the admission it runs: its per-node override where it has one
(`FleetSnapshot.admission_overrides`), else the fleet's — found in review: they read the fleet's alone."""

from __future__ import annotations

from console.alarms.base import FleetView
from console.guards import Thresholds, judge_admission, plan_drain
from console.guards.fleet import fleet_load
from console.protocol import AdmissionRequest, AdmissionSettings, FleetSnapshot, VerdictLevel
from tests.fleet_builders import frame
from tests.guards.fleets import CAPACITY, fleet


def _admitting(rate_per_s: float | None, nodes: list[str] | None = None) -> AdmissionSettings:
    return AdmissionSettings(rate_per_s=rate_per_s, max_connections=None, retry_after_s=(1, 30), nodes=nodes)


def _with_overrides(snapshot: FleetSnapshot, *overrides: AdmissionSettings) -> FleetSnapshot:
    return snapshot.model_copy(update={"admission_overrides": list(overrides)})


def failed(verdict) -> set[str]:
    return {c.name for c in verdict.checks if not c.ok}


def test_a_change_that_lifts_a_nodes_tighter_override_is_loosening_for_it() -> None:
    """900/s fleet-wide, 5/s on gw-001 and gw-002, every node hot: putting 900/s back on every node is
    read as no change against the fleet's 900/s — but it lifts those two from 5/s to 900/s."""
    hot = _with_overrides(
        fleet(cpu_pct=80.0, admission=_admitting(900.0)), _admitting(5.0, ["gw-001", "gw-002"])
    )
    for request in (AdmissionRequest(rate_per_s=900), AdmissionRequest(rate_per_s=10, nodes=["gw-001"])):
        verdict = judge_admission(hot, request)
        assert "loosening_cpu_pct" in failed(verdict) and verdict.level is VerdictLevel.TYPED, request
        assert verdict.projections["loosening"]
    # A node without an override runs the fleet's 900/s: the same again is no loosening there.
    same = judge_admission(hot, AdmissionRequest(rate_per_s=900, nodes=["gw-005"]))
    assert not same.projections["loosening"] and "loosening_cpu_pct" not in failed(same)


def test_a_fleet_wide_change_says_how_many_nodes_it_takes_off_their_own_settings() -> None:
    snapshot = _with_overrides(fleet(admission=_admitting(900.0)), _admitting(5.0, ["gw-001", "gw-002"]))
    assert judge_admission(snapshot, AdmissionRequest(rate_per_s=800)).projections["overrides_ended"] == 2
    assert (
        "overrides_ended"
        not in judge_admission(snapshot, AdmissionRequest(rate_per_s=4, nodes=["gw-001"])).projections
    )
    assert "overrides_ended" not in judge_admission(fleet(), AdmissionRequest(rate_per_s=800)).projections


def test_the_survivors_spare_admission_is_what_each_of_them_runs() -> None:
    """Unlimited fleet-wide, 30/s set on every node but gw-003: draining gw-003 moves its clients onto
    nodes that admit 30/s each — not onto nodes at their 2 000/s handshake ceiling."""
    others = [f"gw-{i:03d}" for i in range(20) if i != 3]
    snapshot = _with_overrides(fleet(), _admitting(30.0, others))
    load = fleet_load(snapshot, CAPACITY, {"gw-003"})
    assert load.admission_capacity_per_s == 30.0 * 19 and load.admission_limit_per_s == 30.0
    plan = plan_drain(snapshot, CAPACITY, "gw-003")
    assert (plan.limited_by, plan.admission_limit_per_s) == ("drain_pacing", 30.0)


def test_the_alarms_count_each_nodes_admission() -> None:
    """The fleet's admission capacity (drain ÷ spare admission) adds what each node in rotation admits."""
    said = frame(5.0, admission=_admitting(100.0))
    with_override = said.model_copy(update={"admission_overrides": [_admitting(5.0, ["gw-001"])]})
    view = FleetView.of(with_override, Thresholds(), None)
    assert view.admission_capacity_per_s == 100.0 * 3 + 5.0
