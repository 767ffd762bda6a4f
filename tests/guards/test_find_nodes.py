"""`find_nodes`: the nodes a request names, an unknown one refused naming the field, every unknown id and
the fleet's ids (the nearest first) — the words the server answers and `act … --nodes` says before sending."""

from __future__ import annotations

import pytest

from console.errors import InputError
from console.guards import judge_admission
from console.guards.fleet import find_nodes
from console.protocol import AdmissionRequest
from tests.guards.fleets import fleet


def _refusal(ids: list[str], count: int = 8) -> InputError:
    with pytest.raises(InputError) as refused:
        find_nodes(fleet(count), ids)
    return refused.value


def test_known_nodes_come_back_in_the_order_named() -> None:
    assert [n.id for n in find_nodes(fleet(8), ["gw-003", "gw-001"])] == ["gw-003", "gw-001"]


def test_an_unknown_id_is_named_with_the_fleets_ids() -> None:
    error = _refusal(["zz"])
    assert error.field == "nodes" and error.value == "zz"
    assert str(error) == (
        "nodes: 'zz' is not allowed; expected a node of fleet 'test-fleet': gw-000 … gw-007 (8 nodes)"
    )


def test_a_near_miss_names_the_nearest_node() -> None:
    error = _refusal(["gw-001", "gw-01"])
    assert error.value == "gw-01"
    assert str(error).endswith("(8 nodes); nearest to 'gw-01': gw-001")


def test_every_unknown_id_is_named_not_the_first_alone() -> None:
    """`--nodes zz,gw-0003` named zz; fixed, the operator typed again and learnt of gw-0003."""
    error = _refusal(["zz", "gw-001", "gw-0003"], count=20)
    assert error.value == ["zz", "gw-0003"]
    assert "expected nodes of fleet 'test-fleet': gw-000 … gw-019 (20 nodes)" in str(
        error
    ) and "nearest to 'gw-0003': gw-003" in str(error)


def test_an_unknown_id_in_an_admission_change_is_bad_input_not_a_verdict() -> None:
    with pytest.raises(InputError) as refused:
        judge_admission(fleet(3), AdmissionRequest(rate_per_s=30, nodes=["zz"]))
    # A small fleet's ids said in full (fleet up's node-1, node-2, node-3)
    assert refused.value.field == "nodes" and refused.value.allowed.endswith(": gw-000, gw-001, gw-002")
