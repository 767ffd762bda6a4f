"""The admission each node runs, from the fleet's settings and the per-node overrides a frame carries."""

from __future__ import annotations

import json

from console.protocol import AdmissionInForce, AdmissionSettings, overrides_of
from tests.fleet_builders import frame

FLEET = AdmissionSettings(rate_per_s=900.0, burst=90, max_connections=None, retry_after_s=(1.0, 30.0))
SLOW = AdmissionSettings(rate_per_s=5.0, burst=10, max_connections=None, retry_after_s=(1.0, 30.0))
CAPPED = AdmissionSettings(rate_per_s=None, max_connections=300, retry_after_s=(1.0, 30.0))
IDS = [f"n{i}" for i in range(6)]


def test_overrides_group_the_nodes_apart_from_the_fleet_by_their_settings_in_node_order() -> None:
    by_node = {
        "n4": SLOW,
        "n1": SLOW,
        "n2": CAPPED,
        "n3": FLEET,
        "n5": SLOW.model_copy(update={"nodes": ["x"]}),
    }
    overrides = overrides_of(FLEET, by_node, IDS)
    assert overrides is not None
    assert [(o.rate_per_s, o.max_connections, o.nodes) for o in overrides] == [
        (5.0, None, ["n1", "n4", "n5"]),
        (None, 300, ["n2"]),
    ]
    assert overrides_of(FLEET, {"n3": FLEET}, IDS) is None  # the fleet's own is no override


def test_each_node_runs_its_override_else_the_fleets() -> None:
    in_force = AdmissionInForce(FLEET, tuple(overrides_of(FLEET, {"n1": SLOW, "n2": CAPPED}, IDS) or ()))
    assert in_force.for_node("n1") == SLOW and in_force.for_node("n2") == CAPPED
    assert in_force.for_node("n0") == FLEET and in_force.for_node("added-later") == FLEET
    assert in_force.overridden("n1") and not in_force.overridden("n0") and not in_force.uniform
    assert AdmissionInForce(FLEET).uniform


def test_groups_say_how_many_nodes_run_each_setting_and_the_rest() -> None:
    overrides = overrides_of(FLEET, {"n1": SLOW, "n2": SLOW, "n3": CAPPED}, IDS)
    groups = AdmissionInForce(FLEET, tuple(overrides or ()), tuple(IDS)).groups()
    assert [(g.settings.rate_per_s, g.nodes, g.rest) for g in groups] == [
        (5.0, ("n1", "n2"), False),
        (None, ("n3",), False),
        (900.0, ("n0", "n4", "n5"), True),
    ]
    # Every node overridden: no rest to speak of.
    everyone = AdmissionInForce(FLEET, (SLOW.model_copy(update={"nodes": IDS}),), tuple(IDS)).groups()
    assert [(g.settings.rate_per_s, len(g.nodes or ()), g.rest) for g in everyone] == [(5.0, 6, False)]


def test_fleet_settings_that_name_their_nodes_leave_the_rest_unlimited_as_before() -> None:
    """A recording from a server that showed a per-node change as the fleet's: its nodes ran it, the rest
    are read as unlimited (the guards' `AdmissionLimit` always read it so)."""
    legacy = AdmissionInForce(SLOW.model_copy(update={"nodes": ["n1", "n2"]}), (), tuple(IDS))
    assert legacy.for_node("n1") == SLOW and legacy.for_node("n0").rate_per_s is None
    assert [(g.settings.rate_per_s, g.nodes, g.rest) for g in legacy.groups()] == [
        (5.0, ("n1", "n2"), False),
        (None, ("n0", "n3", "n4", "n5"), True),
    ]


def test_a_frame_without_overrides_is_as_small_as_before_and_one_with_them_carries_them() -> None:
    plain = frame(3.0).model_copy(update={"admission": FLEET})
    assert "admission_overrides" not in json.loads(plain.model_dump_json())
    overrides = overrides_of(FLEET, {"gw-001": SLOW}, [n.id for n in plain.nodes])
    with_them = plain.model_copy(update={"admission_overrides": overrides})
    said = json.loads(with_them.model_dump_json())["admission_overrides"]
    assert said == [{**SLOW.model_dump(mode="json"), "nodes": ["gw-001"]}]
    in_force = AdmissionInForce.of(with_them)
    assert in_force is not None and in_force.for_node("gw-001") == SLOW
    assert in_force.node_ids == tuple(n.id for n in plain.nodes)
