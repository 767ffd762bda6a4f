"""The admission form's starting values (the fleet's admission settings now), and whether a change
would change anything (`unchanged_admission`: the console's form and `act … admission` alike)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.model.actions.form import Prefill, form_text
from console.protocol import AdmissionInForce, AdmissionSettings

#: What the form and the CLI say of a change that changes nothing, before what it would have covered.
NOTHING_TO_APPLY = "nothing to apply"


def admission_prefill(admission: AdmissionSettings | None) -> Prefill:
    if admission is None:
        return Prefill({"retry_after_min_s": "1", "retry_after_max_s": "30"}, "no admission settings seen")
    low, high = admission.retry_after_s
    return Prefill(
        {
            "rate_per_s": form_text(admission.rate_per_s),
            "burst": form_text(admission.burst),
            "max_connections": form_text(admission.max_connections),
            "retry_after_min_s": form_text(float(low)),
            "retry_after_max_s": form_text(float(high)),
        },
        "the fleet's admission settings now",
    )


def unchanged_admission(body: Mapping[str, Any], in_force: AdmissionInForce | None) -> str | None:
    """Why sending `body` (a `PUT /v1/admission` body, every setting given) would change nothing, or None
    where it changes something — or where what the fleet runs is not known. Fleet-wide: the fleet's own
    settings, and no node running settings of its own (a fleet-wide change ends those: a change there);
    with `nodes`: every node named runs them already. Compared as values, so 150.0 is 150."""
    if in_force is None:
        return None
    low, high = body["retry_after_s"]
    wanted = AdmissionSettings(
        rate_per_s=body["rate_per_s"],
        burst=body["burst"],
        max_connections=body["max_connections"],
        retry_after_s=(float(low), float(high)),
    ).limits_key()
    nodes: list[str] | None = body.get("nodes")
    if nodes is None:
        if in_force.uniform and in_force.fleet.limits_key() == wanted:
            return f"{NOTHING_TO_APPLY}: these are the fleet's current settings"
        return None
    if nodes and all(in_force.for_node(node_id).limits_key() == wanted for node_id in nodes):
        who = f"{nodes[0]} already runs" if len(nodes) == 1 else f"the {len(nodes)} nodes named already run"
        return f"{NOTHING_TO_APPLY}: {who} these settings"
    return None
