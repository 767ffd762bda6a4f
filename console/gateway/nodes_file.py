"""The nodes file (`--nodes`): which gateway nodes the controller follows, and how to reach them.

TOML, one `[[nodes]]` table per node; anything it does not know is refused with the path and the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from console.errors import InputError
from console.userfiles import read_user_toml


@dataclass(frozen=True)
class NodeEntry:
    id: str
    admin_url: str  # http://127.0.0.1:PORT
    client_url: str | None = None  # ws://127.0.0.1:PORT/channel/NAME, for load generators
    restart: str | None = None  # rollout restart command, `{node}` replaced by the id
    # The nodes file it came from (None: built in code), so a refusal says where to fix it.
    source: str | None = None


def load_nodes(path: str) -> list[NodeEntry]:
    """The nodes file: TOML, one `[[nodes]]` table per node with `id` and `admin` (and `client`, `restart`),
    and an optional `[capacity]` table (`load_capacity`). Anything else is refused: a typo must not be
    silently ignored."""
    document = read_user_toml("--nodes", path)
    for key in document:
        if key not in _NODES_FILE_KEYS:
            raise InputError(f"{key} (from {path})", document[key], "only [[nodes]] tables and [capacity]")
    tables = document.get("nodes", [])
    if not isinstance(tables, list) or not all(isinstance(table, dict) for table in tables):
        raise InputError(
            f"nodes (from {path})", tables, 'a list of [[nodes]] tables: id = "…", admin = "http://…"'
        )
    entries = [_node_entry(f"nodes[{k}] (from {path})", table, path) for k, table in enumerate(tables)]
    if not entries or len({e.id for e in entries}) != len(entries):
        raise InputError("--nodes", path, "at least one [[nodes]] table, ids unique")
    return entries


_NODES_FILE_KEYS = ("nodes", "capacity")
_NODE_KEYS = ("id", "admin", "client", "restart")


def _node_entry(where: str, table: dict[str, Any], path: str) -> NodeEntry:
    for key, value in table.items():
        if key not in _NODE_KEYS:
            raise InputError(f"{where}.{key}", value, "one of " + ", ".join(_NODE_KEYS))
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"{where}.{key}", value, "a non-empty string")
    if "id" not in table or "admin" not in table:
        raise InputError(where, table, 'a table with id = "…" and admin = "http://…"')
    admin = table["admin"]
    try:
        parts = urlsplit(admin)
        valid = parts.scheme == "http" and bool(parts.hostname) and parts.port is not None
    except ValueError:  # a port that is not a number in [0, 65535]
        valid = False
    if not valid:
        raise InputError(f"{where}.admin", admin, "http://HOST:PORT with a port in [1, 65535]")
    return NodeEntry(table["id"], admin.rstrip("/"), table.get("client"), table.get("restart"), path)
