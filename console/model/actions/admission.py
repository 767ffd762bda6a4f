"""The admission form's starting values (the fleet's admission settings now), and whether a change
would change anything (`unchanged_admission`: the console's form and `act … admission` alike)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from console.errors import MissingInput
from console.model.actions.form import Prefill, form_text
from console.protocol import AdmissionGroup, AdmissionInForce, AdmissionSettings

#: What the form and the CLI say of a change that changes nothing, before what it would have covered.
NOTHING_TO_APPLY = "nothing to apply"


def admission_prefill(admission: AdmissionInForce | AdmissionSettings | None) -> Prefill:
    """The form's starting values: what every node runs now, so a field left as filled keeps it. A setting
    the nodes run differently (a per-node change: n1, n2 at burst 20 of their own) is left blank and
    required, saying where each value runs: one fleet-wide call cannot keep them all, and filled with the
    fleet's value it lifted theirs unasked ("burst 20 on 2 nodes → unlimited", found on a real fleet)."""
    in_force = AdmissionInForce.said(admission)
    if in_force is None:
        return Prefill({"retry_after_min_s": "1", "retry_after_max_s": "30"}, "no admission settings seen")
    values: dict[str, str] = {}
    required: dict[str, str] = {}
    differ: list[str] = []
    for name in _WORD:
        fields = _FORM_FIELDS.get(name, (name,))
        try:
            value = kept_setting(in_force, None, name)
        except MixedSetting as mixed:
            values.update(dict.fromkeys(fields, ""))
            required.update(dict.fromkeys(fields, mixed.allowed + " (unlimited: type the word)"))
            differ.append(f"{_WORD[name]}: {mixed.where}")
            continue
        if isinstance(value, list):
            values.update(zip(fields, (form_text(float(end)) for end in value), strict=True))
        else:
            values[name] = form_text(value)
    if not differ:
        source = "the fleet's admission settings now" if in_force.uniform else "what every node runs now"
        return Prefill(values, source, required=required)
    source = f"what every node runs now; the nodes differ in {'; '.join(differ)} — type one for them all"
    return Prefill(values, source, required=required)


#: The form's fields for a setting that is a [min, max] pair in the body.
_FORM_FIELDS = {"retry_after_s": ("retry_after_min_s", "retry_after_max_s")}
#: Each setting a change sets (the body's fields but `nodes`), as the form and the panel say it.
_WORD = {"rate_per_s": "rate", "burst": "burst", "max_connections": "ceiling", "retry_after_s": "Retry-After"}


class MixedSetting(MissingInput):
    """A setting not given that the nodes a change covers run different values of: no one value keeps
    them all, so it must be given. `where`: each value and where it runs ("20 on n1, n2, unlimited on n3")."""

    def __init__(self, field: str, where: str, named: bool) -> None:
        self.where = where
        whose = "the nodes named" if named else "the fleet's nodes"
        super().__init__(field, f"{whose} run different values of it ({where}): give one for them all")


def kept_setting(in_force: AdmissionInForce, nodes: Sequence[str] | None, name: str) -> Any:
    """The value of setting `name` (as a request body carries it) that every node a change covers runs —
    `nodes`, or every node of the fleet — to send for a setting the operator did not give, so that it is
    kept: the console's form and `act … admission` alike. Raises `MixedSetting` where they differ."""
    values: list[tuple[Any, list[AdmissionGroup]]] = []
    for group in in_force.covered(nodes):
        value = group.settings.model_dump(mode="json")[name]
        for seen, groups in values:
            if seen == value:
                groups.append(group)
                break
        else:
            values.append((value, [group]))
    if len(values) == 1:
        return values[0][0]
    where = ", ".join(f"{kept_text(value)} {_where(groups)}" for value, groups in values)
    raise MixedSetting(name, where, named=nodes is not None)


def kept_text(value: Any) -> str:
    """A setting's value as `act` reads and says it: unlimited, 20, 1:30."""
    if value is None:
        return "unlimited"
    if isinstance(value, list):
        return f"{value[0]:g}:{value[1]:g}"
    return f"{value:g}"


#: Node ids said in full, at most; beyond, how many.
NODES_SAID = 3


def nodes_said(node_ids: Sequence[str]) -> str:
    """ "n1, n2" for a few nodes, "47 nodes" for more."""
    return ", ".join(node_ids) if len(node_ids) <= NODES_SAID else f"{len(node_ids):,} nodes"


def _where(groups: list[AdmissionGroup]) -> str:
    if any(group.nodes is None for group in groups):
        return "elsewhere"  # (the nodes no override names, their ids not known)
    return "on " + nodes_said([node_id for group in groups for node_id in group.nodes or ()])


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
