"""An instructor's injection, checked before anything is applied (issue #5, section 2, "Instructor").

`Simulation.apply_injection` fires a timeline event by name, trusting the drill file that was validated
when it loaded; it changes the fleet node by node, so a bad node id half-way through a list would leave
half the list restarted. An injection typed at a live drill is checked here first, against the fleet as
it is (its node ids, its room for more nodes, its client populations), and only a whole, valid injection
reaches the engine. Pure: no I/O, no clocks; the facts come from the caller.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from console.errors import InputError, MissingInput
from console.policies import POLICIES, make_policy

#: What an instructor may inject, and its parameters (the palette of issue #5: restart nodes, kill a node,
#: disconnect a fraction, add capacity, change the client mix). Operator actions — drain, rollout,
#: admission — are the trainee's, through the guarded API, so they are not injections.
INJECTIONS: dict[str, str] = {
    "restart_nodes": "restart nodes abruptly: nodes=ID[,ID…] or nodes=COUNT [first=INDEX]",
    "kill_nodes": "nodes go down and stay down: nodes=ID[,ID…] or nodes=COUNT [first=INDEX]",
    "disconnect_fraction": "reset a share of every node's connections at once: fraction in (0, 1]",
    "add_nodes": "add capacity: count=N nodes, ready after the scenario's nodes.provisioning_s",
    "set_policy": "change the client mix: policy=NAME [population=NAME] [any of the policy's parameters]",
}
_NODE_KEYS = ("nodes", "first")


@dataclass(frozen=True)
class FleetFacts:
    """What an injection is checked against: the fleet at the moment it would be applied."""

    node_ids: tuple[str, ...]
    room_nodes: int  # nodes that can still be added (the simulation's preallocated capacity)
    populations: tuple[str, ...]
    states: Mapping[str, str] = field(default_factory=dict)  # node id → its state now ("ready", "down", …)


#: States a node cannot be in for the injection to make sense: a node still provisioning has nothing to
#: restart (a restart skipped the rest of its provisioning), a node down already cannot be killed again.
_REFUSED_STATES = {
    "restart_nodes": (
        "provisioning",
        "it is still provisioning: it has nothing to restart before it is ready",
    ),
    "kill_nodes": ("down", "it is down already"),
}


@dataclass(frozen=True)
class Injection:
    """A checked injection: `params` are what `Simulation.apply_injection` takes (node lists resolved)."""

    event: str
    params: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        shown = ", ".join(f"{key}={_short(value)}" for key, value in self.params.items() if value is not None)
        return f"{self.event}({shown})"


def check_injection(event: str, given: Mapping[str, Any], facts: FleetFacts) -> Injection:
    """The injection `event` with `given` parameters, whole and valid for this fleet, or `InputError`
    naming the field and what is allowed."""
    if event not in INJECTIONS:
        raise InputError("event", event, "one of " + ", ".join(INJECTIONS))
    if event in ("restart_nodes", "kill_nodes"):
        _only(given, _NODE_KEYS, event)
        nodes = _nodes(given, facts)
        refused, why = _REFUSED_STATES[event]
        for node in nodes:
            if facts.states.get(node) == refused:
                raise InputError("nodes", node, f"a node that is not {refused} ({node}: {why})")
        return Injection(event, {"nodes": nodes})
    if event == "disconnect_fraction":
        _only(given, ("fraction",), event)
        share = "a share in (0, 1], e.g. fraction=0.3"
        fraction = _required(given, "fraction", share)
        if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not 0 < fraction <= 1:
            raise InputError("fraction", fraction, share)
        return Injection(event, {"fraction": float(fraction)})
    if event == "add_nodes":
        _only(given, ("count",), event)
        room = f"an integer in [1, {facts.room_nodes}] (room left in the fleet), e.g. count=2"
        count = _required(given, "count", room)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= facts.room_nodes:
            raise InputError("count", count, room)
        return Injection(event, {"count": count})
    # set_policy: the policy's own parameters are checked by the one policy builder the engine uses.
    policies = "one of " + ", ".join(sorted(POLICIES))
    policy = _required(given, "policy", f"policy=NAME, {policies}")
    if not isinstance(policy, str) or policy not in POLICIES:
        raise InputError("policy", policy, policies)
    population = given.get("population")
    if population is not None and population not in facts.populations:
        raise InputError("population", population, "one of " + ", ".join(facts.populations))
    policy_params = {key: value for key, value in given.items() if key not in ("policy", "population")}
    make_policy(policy, policy_params)
    return Injection(event, {"policy": policy, "population": population, "params": policy_params or None})


def _only(given: Mapping[str, Any], known: Sequence[str], event: str) -> None:
    for key in given:
        if key not in known:
            raise InputError(key, given[key], f"a parameter of {event}: " + ", ".join(known))


def _required(given: Mapping[str, Any], key: str, allowed: str) -> Any:
    if key not in given:
        raise MissingInput(key, allowed)
    return given[key]


def _nodes(given: Mapping[str, Any], facts: FleetFacts) -> list[str]:
    """Node ids from a list of ids, one id, or a count from `first` (as drill timelines write it)."""
    known = f"node ids such as {facts.node_ids[0]}..{facts.node_ids[-1]}, or a count in [1, {len(facts.node_ids)}]"
    nodes = _required(given, "nodes", f"nodes=ID[,ID…] or nodes=COUNT: {known}")
    if isinstance(nodes, int) and not isinstance(nodes, bool):
        first = given.get("first", 0)
        if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first < len(facts.node_ids):
            raise InputError("first", first, f"a node index in [0, {len(facts.node_ids) - 1}]")
        if not 1 <= nodes <= len(facts.node_ids) - first:
            raise InputError(
                "nodes", nodes, f"a count in [1, {len(facts.node_ids) - first}] from first={first}"
            )
        return list(facts.node_ids[first : first + nodes])
    if "first" in given:
        raise InputError("first", given["first"], "first only with a count of nodes (nodes=COUNT)")
    ids = [nodes] if isinstance(nodes, str) else nodes
    if not isinstance(ids, list) or not ids or not all(isinstance(node, str) for node in ids):
        raise InputError("nodes", nodes, known)
    for node in ids:
        if node not in facts.node_ids:
            raise InputError("nodes", node, known)
    return list(dict.fromkeys(ids))  # each node once: a restart twice in one second is one restart


def _short(value: Any) -> str:
    if isinstance(value, list) and len(value) > 4:
        return f"[{', '.join(map(str, value[:3]))}, … {len(value)} in all]"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)
