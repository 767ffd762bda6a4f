"""A scripted operator: a TOML list of timed actions, sent through the guarded fleet API.

    actor = "seeds-fix"
    [[actions]]
    at_s = 330                # or at = "04:05:30" on the drill's clock
    action = "rollout_halt"
    confirm = true            # answer a `confirm` verdict; `typed = "gw-003"` answers a `typed` one

Every other key is the action's request body (docs/actions.md); `node` names the node of a drain or undrain,
`count` the nodes of an `add_capacity`.
A key the action's body does not have is an error here (exit 2), not a 422 in the middle of a drill.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from console.drills.schema import ACTION_BODIES, ACTION_NAMES, Drill, at_seconds
from console.errors import InputError, MissingInput
from console.protocol import limits
from console.sim.scenario import Scenario, node_ids
from console.sim.scenario_loader import fleet_at_start
from console.sim.scenario_schema import check_window
from console.userfiles import read_user_toml

_CONTROL_KEYS = {"at", "at_s", "action", "node", "confirm", "typed"}


@dataclass(frozen=True)
class ScriptedAction:
    at_s: float
    action: str
    node: str | None = None
    body: dict[str, Any] = field(default_factory=dict)
    confirm: bool = False
    typed: str | None = None


@dataclass(frozen=True)
class Script:
    actor: str
    actions: tuple[ScriptedAction, ...]


#: Without `--actions` the operator does nothing (issue #5).
IDLE = Script("idle operator", ())


def load_script(path: Path, drill: Drill, overrides: Sequence[str] = ()) -> Script:
    return build_script(read_user_toml("--actions", path), drill, overrides)


def build_script(data: dict[str, Any], drill: Drill, overrides: Sequence[str] = ()) -> Script:
    """The script, every action checked whole before the drill runs: its body as the API would judge it
    (types, ranges, windows) and its node among those the fleet will have by then."""
    for key in data:
        if key not in ("actor", "actions"):
            raise InputError(key, data[key], "a known key: actor, actions")
    actor = data.get("actor", "drill script")
    if not isinstance(actor, str) or not actor.strip():
        raise InputError("actor", actor, "a non-empty string")
    entries = data.get("actions", [])
    if not isinstance(entries, list):
        raise InputError("actions", entries, "an array of tables ([[actions]])")
    from console.drills.headless import drill_scenario

    checked = [_action(i, entry, drill) for i, entry in enumerate(entries)]
    scenario = drill_scenario(drill, overrides)
    for i, (entry, action) in enumerate(zip(entries, checked, strict=True)):
        _check_time(f"actions.{i}", entry, action, drill, scenario)
    actions = sorted(checked, key=lambda a: a.at_s)
    _check_nodes(entries, actions, drill, scenario)
    return Script(actor, tuple(actions))


def _check_time(
    path: str, entry: dict[str, Any], action: ScriptedAction, drill: Drill, scenario: Scenario
) -> None:
    """An action within the drill: one after its end would never be sent (the run stops there)."""
    end_s = scenario.duration_s
    if action.at_s <= end_s:
        return
    key = "at_s" if "at_s" in entry else "at"
    clock = f"{drill.human_time(0)}–{drill.human_time(end_s)} on the drill's clock"
    allowed = f"a fleet time within the drill's {end_s:g} s: [0, {end_s:g}] ({clock})"
    raise InputError(f"{path}.{key}", entry[key], allowed)


def _check_nodes(entries: list[Any], actions: list[ScriptedAction], drill: Drill, scenario: Scenario) -> None:
    """A drain or undrain names a node the fleet has by then: at the start, plus what the drill's timeline
    and the script's own add_capacity added before it."""
    added = [(e.at_s, int(e.params["count"])) for e in scenario.events if e.action == "add_nodes"]
    added += [(a.at_s, int(a.body["count"])) for a in actions if a.action == "add_capacity"]
    for action in actions:
        if action.node is None:
            continue
        count = fleet_at_start(scenario.raw) + sum(n for at_s, n in added if at_s < action.at_s)
        fleet = node_ids(count, scenario.node_id_digits)
        if action.node not in fleet:
            i = next(i for i, entry in enumerate(entries) if entry.get("node") == action.node)
            allowed = f"a node id in {fleet[0]}..{fleet[-1]} (the fleet at {drill.human_time(action.at_s)})"
            raise InputError(f"actions.{i}.node", action.node, allowed)


def _action(i: int, entry: Any, drill: Drill) -> ScriptedAction:
    path = f"actions.{i}"
    if not isinstance(entry, dict):
        raise InputError(path, entry, "a table with at_s (or at) and action")
    at_s = at_seconds(path, entry, drill.clock_start_s)
    action = entry.get("action")
    if action is None:
        raise MissingInput(f"{path}.action", "one of " + ", ".join(ACTION_NAMES))
    if action not in ACTION_NAMES:
        raise InputError(f"{path}.action", action, "one of " + ", ".join(ACTION_NAMES))
    node = entry.get("node")
    needs_node = action in ("drain", "undrain")
    if needs_node and node is None:
        raise MissingInput(f"{path}.node", f'{action} needs the node\'s id, e.g. "gw-003"')
    if needs_node != isinstance(node, str):
        allowed = 'a node id, e.g. "gw-003"' if needs_node else f"no node: {action} acts on the fleet"
        raise InputError(f"{path}.node", node, allowed)
    model = ACTION_BODIES[action]
    body = {key: value for key, value in entry.items() if key not in _CONTROL_KEYS}
    for key in body:
        if key not in model.model_fields or key == "confirm":
            known = sorted(k for k in model.model_fields if k != "confirm")
            raise InputError(f"{path}.{key}", body[key], f"a field of {action}: " + ", ".join(known))
    _check_body(path, action, body)
    confirm = entry.get("confirm", False)
    if not isinstance(confirm, bool):
        raise InputError(f"{path}.confirm", confirm, "true or false")
    typed = entry.get("typed")
    if typed is not None and not isinstance(typed, str):
        raise InputError(f"{path}.typed", typed, "the text a typed verdict asks for, e.g. the node id")
    return ScriptedAction(at_s, action, node, body, confirm, typed)


def _check_body(path: str, action: str, body: dict[str, Any]) -> None:
    """The body as the fleet API will judge it, so a bad value is a load error naming its key, not a
    `failed` line in the middle of the drill."""
    try:
        ACTION_BODIES[action].model_validate(body)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"][:1]) or action
        if key not in body:
            raise MissingInput(
                f"{path}.{key}", f"{action} needs it: {_allowed(action, key, first['msg'])}"
            ) from None
        raise InputError(f"{path}.{key}", body[key], _allowed(action, key, first["msg"])) from None
    for key, bounds in (("hint_ms", limits.HINT_MS), ("retry_after_s", limits.RETRY_AFTER_S)):
        if key in body:
            check_window(f"{path}.{key}", body[key], *bounds)


def _allowed(action: str, key: str, message: str) -> str:
    """A field's range from its model (`gt=0, le=1e9` → "a number in (0, 1e+09]"), else pydantic's words."""
    field_info = ACTION_BODIES[action].model_fields.get(key)
    bounds = {type(m).__name__: m for m in (field_info.metadata if field_info else ())}
    low = bounds.get("Gt") or bounds.get("Ge")
    high = bounds.get("Lt") or bounds.get("Le")
    if low is None or high is None:
        return message.removeprefix("Input should be ").removeprefix("Field ")
    kind = "an integer" if field_info.annotation in (int, int | None) else "a number"
    left = "(" if "Gt" in bounds else "["
    right = ")" if "Lt" in bounds else "]"
    low_value = getattr(low, "gt", getattr(low, "ge", None))
    high_value = getattr(high, "lt", getattr(high, "le", None))
    return f"{kind} in {left}{low_value:g}, {high_value:g}{right}"
