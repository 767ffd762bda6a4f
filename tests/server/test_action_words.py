"""How an action names itself in the server's answers ("admission gw-009 (rate_per_s=5 …): applied")."""

from __future__ import annotations

from console.protocol import ActionKind, AdmissionRequest
from console.server.actions import FleetAction


def test_an_admission_on_some_nodes_names_them_not_the_fleet() -> None:
    """It read "admission fleet (rate_per_s=5.0, …, nodes=['gw-009'])": the fleet named, the node last."""
    one = FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=5, nodes=["gw-009"]))
    assert one.describe().startswith("admission on gw-009 (rate_per_s=5")
    assert "fleet" not in one.describe() and "nodes=" not in one.describe()
    three = FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=5, nodes=["a", "b", "c"]))
    assert three.describe().startswith("admission on 3 nodes (a, b, c) (rate_per_s=5")
    many = FleetAction(
        ActionKind.ADMISSION, AdmissionRequest(rate_per_s=5, nodes=[f"n{i}" for i in range(480)])
    )
    assert many.describe().startswith("admission on 480 nodes (n0, n1, n2, …) (rate_per_s=5")
    fleet = FleetAction(ActionKind.ADMISSION, AdmissionRequest(rate_per_s=5))
    assert fleet.describe().startswith("admission fleet (rate_per_s=5")
