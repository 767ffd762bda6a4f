"""The injection checker, directly: whole and valid for this fleet, or an error naming the field."""

from __future__ import annotations

import math
from typing import Any

import pytest

from console.errors import InputError
from console.sim.injection import INJECTIONS, FleetFacts, check_injection

FACTS = FleetFacts(
    node_ids=("gw-000", "gw-001", "gw-002", "gw-003"), room_nodes=5, populations=("web", "mobile")
)


def test_every_injection_has_a_checked_form() -> None:
    given = {
        "restart_nodes": {"nodes": 2},
        "kill_nodes": {"nodes": "gw-003"},
        "disconnect_fraction": {"fraction": 1},
        "add_nodes": {"count": 5},
        "set_policy": {"policy": "fixed", "population": "web"},
    }
    assert set(given) == set(INJECTIONS)
    checked = {event: check_injection(event, params, FACTS).params for event, params in given.items()}
    assert checked == {
        "restart_nodes": {"nodes": ["gw-000", "gw-001"]},
        "kill_nodes": {"nodes": ["gw-003"]},
        "disconnect_fraction": {"fraction": 1.0},
        "add_nodes": {"count": 5},
        "set_policy": {"policy": "fixed", "population": "web", "params": None},
    }


def test_a_node_named_twice_is_restarted_once() -> None:
    assert check_injection("restart_nodes", {"nodes": ["gw-001", "gw-001"]}, FACTS).params == {
        "nodes": ["gw-001"]
    }


def test_a_provisioning_node_cannot_restart_and_a_down_node_cannot_be_killed() -> None:
    """A restart skipped the rest of a provisioning node's start-up (ready at once, clients and all); a kill
    of a node down already answered 'applied'. Both are refused naming the node, nothing applied."""
    facts = FleetFacts(
        node_ids=FACTS.node_ids,
        room_nodes=5,
        populations=FACTS.populations,
        states={"gw-000": "ready", "gw-001": "down", "gw-002": "provisioning", "gw-003": "ready"},
    )
    with pytest.raises(InputError, match="gw-002: it is still provisioning") as provisioning:
        check_injection("restart_nodes", {"nodes": ["gw-000", "gw-002"]}, facts)
    with pytest.raises(InputError, match="gw-001: it is down already") as down:
        check_injection("kill_nodes", {"nodes": 2}, facts)
    assert provisioning.value.field == down.value.field == "nodes"
    assert check_injection("restart_nodes", {"nodes": "gw-001"}, facts).params == {"nodes": ["gw-001"]}
    assert check_injection("kill_nodes", {"nodes": "gw-002"}, facts).params == {"nodes": ["gw-002"]}


@pytest.mark.parametrize(
    ("event", "params", "field"),
    [
        ("restart_nodes", {}, "nodes"),
        ("restart_nodes", {"nodes": 3, "first": 2}, "nodes"),  # only 2 nodes from index 2
        ("restart_nodes", {"nodes": 1, "first": 4}, "first"),
        ("restart_nodes", {"nodes": ["gw-001"], "first": 1}, "first"),
        ("kill_nodes", {"nodes": [1, 2]}, "nodes"),
        ("kill_nodes", {"nodes": True}, "nodes"),
        ("kill_nodes", {"nodes": "gw-001", "fraction": 0.5}, "fraction"),
        ("disconnect_fraction", {"fraction": 0}, "fraction"),
        ("disconnect_fraction", {"fraction": "half"}, "fraction"),
        ("add_nodes", {"count": 6}, "count"),  # room for 5
        ("add_nodes", {"count": 2.0}, "count"),
        ("set_policy", {}, "policy"),
        ("set_policy", {"policy": "fixed", "population": "desktop"}, "population"),
        ("set_policy", {"policy": "fixed", "delay_ms": -1}, "policy.delay_ms"),
        ("drain_nodes", {"nodes": 1}, "event"),  # an operator's action, not an injection
    ],
)
def test_a_bad_injection_names_its_field(event: str, params: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as raised:
        check_injection(event, params, FACTS)
    assert raised.value.field == field


@pytest.mark.parametrize(
    ("event", "field", "allowed_has"),
    [
        ("restart_nodes", "nodes", "gw-000..gw-003"),
        ("kill_nodes", "nodes", "a count in [1, 4]"),
        ("disconnect_fraction", "fraction", "(0, 1]"),
        ("add_nodes", "count", "[1, 5]"),
        ("set_policy", "policy", "full_jitter"),
    ],
)
def test_a_missing_parameter_is_required_not_none(event: str, field: str, allowed_has: str) -> None:
    """It read "nodes: None is not allowed; expected nodes=VALUE (required)"."""
    with pytest.raises(InputError) as raised:
        check_injection(event, {}, FACTS)
    message = str(raised.value)
    assert message.startswith(f"{field} is required: ") and allowed_has in message
    assert "None" not in message


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1e999])
def test_a_non_finite_policy_parameter_is_refused(value: float) -> None:
    """NaN reached the audit log, whose JSON hash failed: the server answered 500."""
    with pytest.raises(InputError) as raised:
        check_injection("set_policy", {"policy": "fixed", "delay_ms": value}, FACTS)
    assert raised.value.field == "policy.delay_ms" and "finite" in raised.value.allowed


def test_a_wrong_value_of_a_right_key_names_the_range_not_the_keys() -> None:
    with pytest.raises(InputError) as raised:
        check_injection("set_policy", {"policy": "fixed", "delay_ms": -5}, FACTS)
    assert raised.value.field == "policy.delay_ms" and "≥ 0" in raised.value.allowed
    assert "a parameter of" not in str(raised.value)


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_the_inject_cli_refuses_a_non_finite_number_before_sending(text: str) -> None:
    """It raised ValueError from the JSON encoder: a traceback."""
    from console.cli.inject import parse_params

    with pytest.raises(InputError) as raised:
        parse_params(["policy=fixed", f"delay_ms={text}"])
    assert raised.value.field == "delay_ms" and "finite" in raised.value.allowed
