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

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from console.drills.schema import ACTION_NAMES, Drill, at_seconds
from console.errors import InputError
from console.protocol import ActionRequest, AdmissionRequest, CapacityRequest, DrainRequest, RolloutRequest

_BODY_MODEL = {
    "drain": DrainRequest,
    "undrain": ActionRequest,
    "rollout_start": RolloutRequest,
    "rollout_halt": ActionRequest,
    "rollout_resume": ActionRequest,
    "admission": AdmissionRequest,
    "add_capacity": CapacityRequest,
}
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


def load_script(path: Path, drill: Drill) -> Script:
    if not path.is_file():
        raise InputError("--actions", str(path), "an existing TOML file of [[actions]]")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise InputError("--actions", str(path), f"valid TOML ({error})") from None
    return build_script(data, drill)


def build_script(data: dict[str, Any], drill: Drill) -> Script:
    for key in data:
        if key not in ("actor", "actions"):
            raise InputError(key, data[key], "a known key: actor, actions")
    actor = data.get("actor", "drill script")
    if not isinstance(actor, str) or not actor.strip():
        raise InputError("actor", actor, "a non-empty string")
    entries = data.get("actions", [])
    if not isinstance(entries, list):
        raise InputError("actions", entries, "an array of tables ([[actions]])")
    actions = sorted((_action(i, entry, drill) for i, entry in enumerate(entries)), key=lambda a: a.at_s)
    return Script(actor, tuple(actions))


def _action(i: int, entry: Any, drill: Drill) -> ScriptedAction:
    path = f"actions.{i}"
    if not isinstance(entry, dict):
        raise InputError(path, entry, "a table with at_s (or at) and action")
    at_s = at_seconds(path, entry, drill.clock_start_s)
    action = entry.get("action")
    if action not in ACTION_NAMES:
        raise InputError(f"{path}.action", action, "one of " + ", ".join(ACTION_NAMES))
    node = entry.get("node")
    needs_node = action in ("drain", "undrain")
    if needs_node != isinstance(node, str):
        allowed = 'a node id, e.g. "gw-003"' if needs_node else f"no node: {action} acts on the fleet"
        raise InputError(f"{path}.node", node, allowed)
    model = _BODY_MODEL[action]
    body = {key: value for key, value in entry.items() if key not in _CONTROL_KEYS}
    for key in body:
        if key not in model.model_fields or key == "confirm":
            known = sorted(k for k in model.model_fields if k != "confirm")
            raise InputError(f"{path}.{key}", body[key], f"a field of {action}: " + ", ".join(known))
    confirm = entry.get("confirm", False)
    if not isinstance(confirm, bool):
        raise InputError(f"{path}.confirm", confirm, "true or false")
    typed = entry.get("typed")
    if typed is not None and not isinstance(typed, str):
        raise InputError(f"{path}.typed", typed, "the text a typed verdict asks for, e.g. the node id")
    return ScriptedAction(at_s, action, node, body, confirm, typed)
