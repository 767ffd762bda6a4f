"""`unchanged_admission`: an admission change that changes nothing is said as such, not sent — the
console's form and `act … admission` alike (found in review: Enter on the untouched form applied and
audited an empty change)."""

from __future__ import annotations

from typing import Any

from console.model.actions.admission import unchanged_admission
from console.protocol import AdmissionInForce, AdmissionSettings

FLEET = AdmissionSettings(rate_per_s=150.0, burst=300, max_connections=40_000, retry_after_s=(1.0, 30.0))
SAME: dict[str, Any] = {"rate_per_s": 150, "burst": 300, "max_connections": 40_000, "retry_after_s": [1, 30]}


def test_the_fleets_own_settings_sent_fleet_wide_change_nothing() -> None:
    said = unchanged_admission(SAME, AdmissionInForce(FLEET))
    assert said == "nothing to apply: these are the fleet's current settings"


def test_any_field_moved_is_a_change() -> None:
    for name, value in (
        ("rate_per_s", 151),
        ("burst", None),
        ("max_connections", 1),
        ("retry_after_s", [1, 31]),
    ):
        assert unchanged_admission({**SAME, name: value}, AdmissionInForce(FLEET)) is None, name


def test_a_fleet_wide_change_that_ends_a_nodes_own_settings_is_a_change() -> None:
    """The fleet's values again, but gw-001 runs 5/s of its own: sending them puts gw-001 back on 150/s."""
    own = FLEET.model_copy(update={"rate_per_s": 5.0, "nodes": ["gw-001"]})
    assert unchanged_admission(SAME, AdmissionInForce(FLEET, (own,))) is None


def test_named_nodes_already_running_the_settings_change_nothing() -> None:
    own = FLEET.model_copy(update={"rate_per_s": 5.0, "nodes": ["gw-001", "gw-002"]})
    in_force = AdmissionInForce(FLEET, (own,))
    five = {**SAME, "rate_per_s": 5}
    assert unchanged_admission({**five, "nodes": ["gw-001"]}, in_force) == (
        "nothing to apply: gw-001 already runs these settings"
    )
    assert unchanged_admission({**five, "nodes": ["gw-002", "gw-001"]}, in_force) == (
        "nothing to apply: the 2 nodes named already run these settings"
    )
    # gw-003 runs the fleet's 150/s: 5/s there is a change, for it if not for the others.
    assert unchanged_admission({**five, "nodes": ["gw-001", "gw-003"]}, in_force) is None
    assert unchanged_admission({**SAME, "nodes": ["gw-003"]}, in_force) is not None


def test_unknown_settings_are_never_said_unchanged() -> None:
    assert unchanged_admission(SAME, None) is None
