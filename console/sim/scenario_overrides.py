"""Scenario overrides: `--set key=value` by dotted path (`--set nodes.count=40`), over a scenario's tables.

Values are TOML (a bare word is a string); lists are indexed by position (`events.1.count=50`); a table
is set key by key (`nodes={count=40}`). An unknown path is refused with the keys known there
(`InputError`, exit status 2).
"""

from __future__ import annotations

import tomllib
from typing import Any, NamedTuple

from console.errors import InputError
from console.policies import POLICIES
from console.sim.scenario_schema import DEFAULTS


class Override(NamedTuple):
    """A value set by dotted `key` from a file rather than typed as `--set`: errors name `field`, where the
    file holds it (a drill's `overrides."nodes.count"`), not `--set` or the bare scenario key."""

    key: str
    value: Any
    field: str


def merge(base: dict[str, Any], extra: dict[str, Any], prefix: str) -> dict[str, Any]:
    for key, value in extra.items():
        path = f"{prefix}{key}"
        if key not in base:
            raise InputError(path, value, "a known key: " + ", ".join(sorted(base)))
        if isinstance(base[key], dict) and key != "params":
            if not isinstance(value, dict):
                raise InputError(path, value, "a table")
            merge(base[key], value, path + ".")
        else:
            base[key] = value
    return base


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text  # a bare word: a string


def apply_override(data: dict[str, Any], override: str | Override) -> None:
    """`--set KEY=VALUE` (a string), or an `Override` a file gave as a key and a value."""
    if isinstance(override, Override):
        set_value(data, override.key, override.value, override.field)
        return
    if "=" not in override:
        raise InputError("--set", override, "KEY=VALUE with a dotted KEY, e.g. nodes.count=40")
    key, _, text = override.partition("=")
    key = key.strip()
    if not key:  # '=3' named no path: the message read ': 3 is not allowed'
        raise InputError("--set", override, "KEY=VALUE with a dotted KEY, e.g. nodes.count=40")
    set_value(data, key, _parse_value(text.strip()))


def set_value(data: dict[str, Any], key: str, value: Any, field: str | None = None) -> None:
    """Set the scenario value at dotted `key`; an unknown path is refused naming `field` (default: `key`)."""
    field = field or key
    parts = key.split(".")
    if key == "clients.policy":
        _switch_populations(data, value)
    node: Any = data
    for depth, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise InputError(field, value, _position_in(".".join(parts[:depth]), node))
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, dict) and part == "params" and "policy" in node:
            node = node.setdefault(part, {})  # a population on its policy's defaults: set one of them
        else:
            known = ", ".join(sorted(node)) if isinstance(node, dict) else "nothing"
            raise InputError(
                field, value, f"a known path; under '{'.'.join(parts[:depth]) or '(top)'}': {known}"
            )
    leaf = parts[-1]
    if isinstance(node, dict):
        if leaf not in node and not (parts[-2:-1] == ["params"]):
            raise InputError(field, value, "a known path; known here: " + ", ".join(sorted(node)))
        if isinstance(node.get(leaf), dict) and leaf != "params":
            _set_table(node[leaf], key, value, field)
        else:
            node[leaf] = value
    elif isinstance(node, list) and leaf.isdigit() and int(leaf) < len(node):
        node[int(leaf)] = value
    elif isinstance(node, list):
        raise InputError(field, value, _position_in(".".join(parts[:-1]), node))
    else:
        raise InputError(field, value, "a known path")


def _switch_populations(data: dict[str, Any], policy: Any) -> None:
    """`clients.policy=NAME` switches each population at once, onto the policy's defaults: a population's
    own constants are its old policy's. The loader dropped them only at the end, so a constant set after
    the switch (`clients.populations.0.params.after_ms=3000`) was dropped too, a bad one unseen."""
    if policy not in POLICIES:
        return  # the loader refuses it, listing the policies
    default = DEFAULTS["clients"]["populations"][0]["policy"]
    for population in data.get("clients", {}).get("populations", []):
        if isinstance(population, dict) and population.get("policy", default) != policy:
            population["policy"] = policy
            population["params"] = {}


def _position_in(path: str, entries: list[Any]) -> str:
    """What a list's index may be. It read "an index below 0" for a list with no entries (a drill's
    `events`, which its timeline replaces)."""
    if not entries:
        return f"an entry of '{path}', which has none"
    count = len(entries)
    return f"a position in [0, {count - 1}] ('{path}' has {count} {'entry' if count == 1 else 'entries'})"


def _set_table(table: dict[str, Any], path: str, value: Any, field: str) -> None:
    """`--set nodes={count=40}` sets the keys it names; `--set nodes=3` would drop the whole table."""
    if not isinstance(value, dict):
        example = f"{path}.{next(iter(table))}" if table else path
        raise InputError(field, value, f"a table — set one of its keys, e.g. {example}")
    merge(table, value, f"{field}.")
