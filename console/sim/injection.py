"""An instructor's injection, checked before anything is applied (issue #5, section 2, "Instructor").

`Simulation.apply_injection` fires a timeline event by name, trusting the drill file that was validated
when it loaded; it changes the fleet node by node, so a bad node id half-way through a list would leave
half the list restarted. An injection typed at a live drill is checked here first, against the fleet as
it is (its node ids, its room for more nodes, its client populations), and only a whole, valid injection
reaches the engine. Pure: no I/O, no clocks; the facts come from the caller.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from console.errors import InputError, MissingInput
from console.policies import POLICIES, make_policy
from console.protocol.limits import HINT_MS, RETRY_AFTER_S
from console.protocol.requests import INJECTIONS, MAX_ADD_NODES
from console.sim.scenario import EVENT_ACTIONS, node_ids
from console.sim.scenario_schema import check_range, check_window


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
    if event == "set_policy":
        # Typed at a console as flat KEY=VALUE words: the policy's own parameters sit beside its name.
        policy_params = {key: value for key, value in given.items() if key not in ("policy", "population")}
        nested = {key: given[key] for key in ("policy", "population") if key in given}
        check_event(event, {**nested, "params": policy_params} if policy_params else nested, facts)
        return Injection(
            event,
            {
                "policy": given["policy"],
                "population": given.get("population"),
                "params": policy_params or None,
            },
        )
    check_event(event, given, facts)
    if event in ("restart_nodes", "kill_nodes"):
        nodes = _node_list(given, facts)
        refused, why = _REFUSED_STATES[event]
        for node in nodes:
            if facts.states.get(node) == refused:
                raise InputError("nodes", node, f"a node that is not {refused} ({node}: {why})")
        return Injection(event, {"nodes": nodes})
    if event == "disconnect_fraction":
        return Injection(event, {"fraction": float(given["fraction"])})
    return Injection(event, {"count": int(given["count"])})


#: Every timeline action's parameters (a scenario's [[events]], a drill's [[timeline]], an injection), and
#: those it cannot go without. Checked whole when a file loads, so nothing fails half-way through a run.
EVENT_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "restart_nodes": (("nodes", "first"), ("nodes",)),
    "kill_nodes": (("nodes", "first"), ("nodes",)),
    "disconnect_fraction": (("fraction",), ("fraction",)),
    "add_nodes": (("count",), ("count",)),
    "start_rollout": (("batch_size", "interval_s", "mode", "pause_cpu_pct"), ()),
    "halt_rollout": ((), ()),
    "set_admission": (("rate_per_s", "burst", "max_connections", "retry_after_s"), ()),
    "drain_nodes": (("nodes", "first", "rate_per_s", "deadline_s", "hint_ms"), ("nodes",)),
    "set_policy": (("policy", "population", "params"), ("policy",)),
}
#: A parameter with the range of the scenario value it stands for (`rollout.interval_s`, …): one range each.
_SAME_AS_SCENARIO = {
    ("start_rollout", "interval_s"): "rollout.interval_s",
    ("start_rollout", "pause_cpu_pct"): "rollout.pause_cpu_pct",
    ("set_admission", "rate_per_s"): "admission.rate_per_s",
    ("set_admission", "burst"): "admission.burst",
    ("set_admission", "max_connections"): "admission.max_connections",
    ("drain_nodes", "rate_per_s"): "rollout.drain_rate_per_s",
    ("drain_nodes", "deadline_s"): "rollout.drain_deadline_s",
}
_REQUIRED_HINT = {
    "fraction": "a share in (0, 1], e.g. fraction=0.3",
    "policy": "one of " + ", ".join(sorted(POLICIES)),
}
_ROLLOUT_MODES = ("drain", "abrupt")
_WINDOWS = {("set_admission", "retry_after_s"): RETRY_AFTER_S[1], ("drain_nodes", "hint_ms"): HINT_MS[1]}


def check_event(
    action: str, given: Mapping[str, Any], facts: FleetFacts | None = None, path: str = ""
) -> None:
    """`given` whole and valid for the timeline action `action`, or `InputError` naming `path` + the key.
    With `facts` (the fleet as it will be) node ids, counts and populations are checked against it; without,
    only what holds for any fleet."""
    if action not in EVENT_ACTIONS:
        raise InputError(
            f"{path}action" if path else "event", action, "one of " + ", ".join(sorted(EVENT_ACTIONS))
        )
    known, required = EVENT_PARAMS[action]
    _only(given, known, action, path)
    room = facts.room_nodes if facts is not None else MAX_ADD_NODES
    room_why = " (room left in the fleet)" if room < MAX_ADD_NODES else ""
    hints = {**_REQUIRED_HINT, "count": f"an integer in [1, {room}]{room_why}, e.g. count=2"}
    for key in required:
        if key != "nodes":  # _node_list says what nodes may be
            _required(given, key, f"{action} needs {key}: {hints[key]}", path)
    if "nodes" in known:
        _node_list(given, facts, path)
    if action == "disconnect_fraction":
        fraction = given["fraction"]
        if not _is_number(fraction) or not 0 < fraction <= 1:
            raise InputError(f"{path}fraction", fraction, "a share in (0, 1], e.g. fraction=0.3")
    if action == "add_nodes":
        count = given["count"]
        if not _is_integer(count) or not 1 <= count <= room:
            raise InputError(f"{path}count", count, f"an integer in [1, {room}]{room_why}")
    if action == "start_rollout":
        fleet = len(facts.node_ids) if facts is not None else MAX_ADD_NODES
        batch = given.get("batch_size", 1)
        if not _is_integer(batch) or not 1 <= batch <= fleet:
            raise InputError(f"{path}batch_size", batch, f"an integer in [1, {fleet}] (at most the fleet)")
        if given.get("mode", "drain") not in _ROLLOUT_MODES:
            raise InputError(f"{path}mode", given["mode"], "one of " + ", ".join(map(repr, _ROLLOUT_MODES)))
    for key in known:
        if key in given and (action, key) in _SAME_AS_SCENARIO:
            _renamed(check_range, _SAME_AS_SCENARIO[action, key], f"{path}{key}", given[key])
        if key in given and (action, key) in _WINDOWS:
            check_window(f"{path}{key}", given[key], 0, _WINDOWS[action, key])
    if action == "set_policy":
        _check_policy(given, facts, path)


def _check_policy(given: Mapping[str, Any], facts: FleetFacts | None, path: str) -> None:
    policies = "one of " + ", ".join(sorted(POLICIES))
    policy = given["policy"]
    if not isinstance(policy, str) or policy not in POLICIES:
        raise InputError(f"{path}policy", policy, policies)
    population = given.get("population")
    if population is not None and not isinstance(population, str):
        raise InputError(f"{path}population", population, "a population's name")
    if population is not None and facts is not None and population not in facts.populations:
        raise InputError(f"{path}population", population, "one of " + ", ".join(facts.populations))
    params = given.get("params", {})
    if not isinstance(params, Mapping):
        raise InputError(f"{path}params", params, f"a table of {policy}'s parameters")
    try:
        make_policy(policy, params)
    except InputError as error:
        if not path:
            raise  # an injection's answer names "policy.delay_ms" (the API's contract)
        # make_policy says "policy.delay_ms"; the file wrote it under params
        field_path = f"{path}params.{error.field.removeprefix('policy.')}"
        raise InputError(field_path, error.value, error.allowed) from None


def _renamed(check: Any, scenario_path: str, field_path: str, value: Any) -> None:
    try:
        check(scenario_path, value)
    except InputError as error:
        raise InputError(field_path, value, error.allowed) from None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: Any) -> bool:
    """An integer: 1.5, 2.0, "3" and true are not (a count is written as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _only(given: Mapping[str, Any], known: Sequence[str], event: str, path: str = "") -> None:
    for key in given:
        if key not in known:
            allowed = (
                f"a parameter of {event}: " + ", ".join(known)
                if known
                else f"no parameters: {event} takes none"
            )
            raise InputError(f"{path}{key}", given[key], allowed)


def _required(given: Mapping[str, Any], key: str, allowed: str, path: str = "") -> Any:
    if key not in given:
        raise MissingInput(f"{path}{key}", allowed)
    return given[key]


def _node_list(given: Mapping[str, Any], facts: FleetFacts | None, path: str = "") -> list[str]:
    """Node ids from a list of ids, one id, or a count from `first` (as drill timelines write it); without
    `facts` only the shape is checked (and the list is empty)."""
    fleet = len(facts.node_ids) if facts is not None else MAX_ADD_NODES
    known = (
        f"node ids such as {facts.node_ids[0]}..{facts.node_ids[-1]}, or a count in [1, {fleet}]"
        if facts is not None
        else f"node ids such as gw-000, or a count in [1, {fleet}]"
    )
    nodes = _required(given, "nodes", f"nodes=ID[,ID…] or nodes=COUNT: {known}", path)
    if _is_number(nodes):
        first = given.get("first", 0)
        if not _is_integer(first) or not 0 <= first < fleet:
            raise InputError(f"{path}first", first, f"a node index in [0, {fleet - 1}]")
        if not _is_integer(nodes) or not 1 <= nodes <= fleet - first:
            allowed = (
                f"a count in [1, {fleet - first}] from first={first:g} (the fleet has {fleet} nodes then)"
            )
            raise InputError(f"{path}nodes", nodes, allowed)
        return list(facts.node_ids[int(first) : int(first + nodes)]) if facts is not None else []
    if "first" in given:
        raise InputError(f"{path}first", given["first"], "first only with a count of nodes (nodes=COUNT)")
    ids = [nodes] if isinstance(nodes, str) else nodes
    if not isinstance(ids, list) or not ids or not all(isinstance(node, str) for node in ids):
        raise InputError(f"{path}nodes", nodes, known)
    for node in ids:
        if facts is not None and node not in facts.node_ids:
            raise InputError(f"{path}nodes", node, known)
    return list(dict.fromkeys(ids))  # each node once: a restart twice in one second is one restart


def check_timeline(
    events: Sequence[tuple[str, float, str, Mapping[str, Any]]],
    nodes: int,
    populations: Sequence[str],
    id_digits: int,
) -> None:
    """Timeline events as (path, at_s, action, params), each against the fleet as it will be when it fires:
    `nodes` at the start, plus the nodes the events before it add (ids of `id_digits` digits)."""
    added = 0
    for path, _at_s, action, params in sorted(events, key=lambda event: event[1]):
        fleet = nodes + added
        facts = FleetFacts(
            node_ids=node_ids(fleet, id_digits), room_nodes=MAX_ADD_NODES, populations=tuple(populations)
        )
        check_event(action, params, facts, f"{path}.")
        if action == "add_nodes":
            added += int(params["count"])


def _short(value: Any) -> str:
    if isinstance(value, list) and len(value) > 4:
        return f"[{', '.join(map(str, value[:3]))}, … {len(value)} in all]"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)
