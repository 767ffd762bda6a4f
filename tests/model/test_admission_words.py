"""A node's admission in the operator's words: what it runs and whose setting it is."""

from __future__ import annotations

from console.model.admission import node_admission_readings
from console.protocol import AdmissionInForce, AdmissionSettings

FLEET = AdmissionSettings(rate_per_s=900.0, burst=None, max_connections=None, retry_after_s=(1.0, 30.0))
OWN = AdmissionSettings(rate_per_s=5.0, burst=10, max_connections=300, retry_after_s=(1.0, 30.0))
IDS = ("gw-000", "gw-001", "gw-002")


def test_a_node_with_its_own_setting_says_so_and_what_the_rest_run() -> None:
    in_force = AdmissionInForce(FLEET, (OWN.model_copy(update={"nodes": ["gw-001", "gw-002"]}),), IDS)
    assert node_admission_readings(in_force, "gw-001") == [
        "admission 5/s per node",
        "burst 10",
        "ceiling 300 per node",
        "Retry-After 1–30 s",
        "set on this node; elsewhere 900/s per node",
    ]
    assert node_admission_readings(in_force, "gw-000")[-1] == "the fleet's; 2 nodes run their own"


def test_a_fleet_alike_and_a_silent_source_say_nothing_in_a_node() -> None:
    """Every node on the fleet's settings: the rollout & admission box says them; at 80×24 the node's
    own two lines of "the fleet's" took two rows of its charts."""
    assert node_admission_readings(AdmissionInForce(FLEET, (), IDS), "gw-000") == []
    assert node_admission_readings(None, "gw-000") == []
