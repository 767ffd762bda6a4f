"""How an action names itself in the server's answers ("admission on gw-009 (rate 5/s …): applied")."""

from __future__ import annotations

from console.protocol import ActionKind, AdmissionRequest, AdmissionSettings, FleetSnapshot
from console.server.actions import FleetAction
from tests.fleet_builders import node, snapshot


def test_an_admission_on_some_nodes_names_them_not_the_fleet() -> None:
    """It read "admission fleet (rate_per_s=5.0, …, nodes=['gw-009'])": the fleet named, the node last."""
    one = FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=5, nodes=["gw-009"]))
    assert one.describe().startswith("admission on gw-009 (rate 5/s, burst unlimited")
    assert "fleet" not in one.describe() and "nodes=" not in one.describe()
    three = FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=5, nodes=["a", "b", "c"]))
    assert three.describe().startswith("admission on 3 nodes (a, b, c) (rate 5/s")
    many = FleetAction(
        ActionKind.ADMISSION, AdmissionRequest(rate_per_s=5, nodes=[f"n{i}" for i in range(480)])
    )
    assert many.describe().startswith("admission on 480 nodes (n0, n1, n2, …) (rate 5/s")
    fleet = FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=5))
    assert fleet.describe().startswith("admission fleet (rate 5/s")


def _in_force(fleet_settings: AdmissionSettings, *overrides: AdmissionSettings) -> FleetSnapshot:
    members = [node(node_id) for node_id in ("n1", "n2", "n3")]
    shown = snapshot(members, admission=fleet_settings)
    return shown.model_copy(update={"admission_overrides": list(overrides) or None})


WINDOW = (1.0, 30.0)
LIMITED = AdmissionSettings(rate_per_s=50.0, burst=20, max_connections=300, retry_after_s=WINDOW)


def test_an_admission_change_says_what_changed_against_what_the_nodes_ran() -> None:
    """Found on a real fleet: lifting every limit read "admission fleet (retry_after_s=[1, 30]): applied" —
    in the answer, the audit record and the console's L — as if only Retry-After had changed (a limit lifted
    is null, and null was left out)."""
    lifted = FleetAction(ActionKind.ADMISSION, AdmissionRequest(retry_after_s=WINDOW))
    assert lifted.describe(_in_force(LIMITED)) == (
        "admission fleet (rate 50/s → unlimited, burst 20 → unlimited, ceiling 300 → unlimited)"
    )
    window = FleetAction(
        ActionKind.ADMISSION,
        AdmissionRequest(rate_per_s=50, burst=20, max_connections=300, retry_after_s=(2, 20)),
    )
    assert window.describe(_in_force(LIMITED)) == "admission fleet (Retry-After 1–30 s → 2–20 s)"
    same = FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=50, burst=20, max_connections=300))
    assert same.describe(_in_force(LIMITED)) == "admission fleet (no setting changes)"
    # Without what the nodes ran: every setting sent, a lifted one said as such (not left out).
    assert lifted.describe() == (
        "admission fleet (rate unlimited, burst unlimited, ceiling unlimited, Retry-After 1–30 s)"
    )


def test_a_change_says_where_the_nodes_it_covers_ran_different_settings() -> None:
    unlimited = AdmissionSettings(rate_per_s=None, max_connections=None, retry_after_s=WINDOW)
    own = LIMITED.model_copy(update={"rate_per_s": 40.0, "nodes": ["n1", "n2"]})
    before = _in_force(unlimited, own)
    fleet_wide = FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=40))
    assert fleet_wide.describe(before) == (
        "admission fleet (rate unlimited on n3 → 40/s, burst 20 on 2 nodes → unlimited, "
        "ceiling 300 on 2 nodes → unlimited)"
    )
    on_n1 = FleetAction(
        ActionKind.ADMISSION, AdmissionRequest(rate_per_s=30, burst=20, max_connections=300, nodes=["n1"])
    )
    assert on_n1.describe(before) == "admission on n1 (rate 40/s → 30/s)"
