"""Which nodes the table shows, in which order: sorting and filtering, pure."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from console.errors import InputError
from console.model.gauges import node_level
from console.model.thresholds import GaugeThresholds, Level
from console.protocol import NodeState, NodeStatus

_DIGITS = re.compile(r"(\d+)")


# Cached: the node table sorts every frame, and splitting 2000 ids by regex each time made a sort by id
# 13× slower (0.34 → 4.5 ms at 2000 nodes, measured); a fleet's ids are few and stay the same.
@functools.lru_cache(maxsize=16_384)
def id_order(node_id: str) -> tuple[tuple[str | int, ...], str]:
    """A node id as the table orders it: its runs of digits by number, so node-2 comes before node-10 (the
    controller's ids) and gw-999 before gw-1000 (a recording from a simulator whose ids were not of one
    width), where text order put gw-1000 between gw-100 and gw-101."""
    parts = tuple(int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(node_id)))
    return parts, node_id


def handshake_p99_text(node: NodeStatus) -> str:
    """A node's handshake p99 in ms, or "—" when it completed none in the window: a node reports 0 then
    (console.gateway.meter.percentile of nothing), and "0" read as handshakes that took no time."""
    return "—" if node.accepts_per_s <= 0 else f"{node.handshake_p99_ms:.0f}"


SORT_KEYS: dict[str, Callable[[NodeStatus], float | str | tuple[tuple[str | int, ...], str]]] = {
    "id": lambda n: id_order(n.id),
    "state": lambda n: n.state.value,
    "connections": lambda n: n.connections,
    "cpu_pct": lambda n: n.cpu_pct,
    "accepts_per_s": lambda n: n.accepts_per_s,
    "rejects_per_s": lambda n: n.rejects_per_s,
    "timeouts_per_s": lambda n: n.timeouts_per_s,
    "handshake_p99_ms": lambda n: n.handshake_p99_ms,
}
#: `s` steps through these in the node table's column order (console/ui/widgets/node_table.py COLUMNS).
SORT_ORDER = tuple(SORT_KEYS)


FILTER_FORMS = "state:NAME[,NAME], id:PATTERN, alarming, or an id pattern"


@dataclass(frozen=True)
class NodeFilter:
    """`state:draining id:gw-01* alarming` — every part optional, all must hold."""

    states: frozenset[NodeState] = frozenset()
    id_pattern: str | None = None
    alarming_only: bool = False

    @classmethod
    def parse(cls, text: str) -> NodeFilter:
        states: set[NodeState] = set()
        pattern: str | None = None
        alarming = False
        for word in text.split():
            key, sep, value = word.partition(":")
            if any(sign in word for sign in "<>="):
                # "cpu>80" was an id pattern matching no node: an empty table and no word why.
                raise InputError("filter", word, f"{FILTER_FORMS}; no comparisons — s sorts by a column")
            if word in ("alarming", "!"):
                alarming = True
            elif sep and key == "state":
                for name in value.split(","):
                    try:
                        states.add(NodeState(name))
                    except ValueError:
                        allowed = ", ".join(s.value for s in NodeState)
                        raise InputError("state", name, f"one of {allowed}") from None
            elif sep and key == "id":
                pattern = value
            elif not sep:
                pattern = word  # a bare word is an id pattern
            else:
                raise InputError("filter", word, FILTER_FORMS)
        if pattern is not None and not any(ch in pattern for ch in "*?["):
            pattern = f"*{pattern}*"
        return cls(frozenset(states), pattern, alarming)

    def describe(self) -> str:
        parts = []
        if self.states:
            parts.append("state:" + ",".join(sorted(s.value for s in self.states)))
        if self.id_pattern:
            parts.append(f"id:{self.id_pattern}")
        if self.alarming_only:
            parts.append("alarming")
        return " ".join(parts)

    @property
    def empty(self) -> bool:
        return not (self.states or self.id_pattern or self.alarming_only)


@dataclass(frozen=True)
class NodeQuery:
    sort_key: str = "id"
    descending: bool = False
    filter: NodeFilter = NodeFilter()

    def next_sort(self) -> NodeQuery:
        """`s`: the next column, in the table's order; numeric columns start worst (highest) first."""
        key = SORT_ORDER[(SORT_ORDER.index(self.sort_key) + 1) % len(SORT_ORDER)]
        return NodeQuery(key, key not in ("id", "state"), self.filter)


def select_nodes(
    nodes: Iterable[NodeStatus],
    query: NodeQuery,
    thresholds: GaugeThresholds,
    alarming_ids: set[str] | frozenset[str] = frozenset(),
) -> list[NodeStatus]:
    f = query.filter
    chosen = []
    for node in nodes:
        if f.states and node.state not in f.states:
            continue
        if f.id_pattern and not fnmatch.fnmatchcase(node.id, f.id_pattern):
            continue
        if f.alarming_only and node.id not in alarming_ids and node_level(node, thresholds) < Level.WARNING:
            continue
        chosen.append(node)
    key = SORT_KEYS[query.sort_key]
    # Ties broken by id so the order is stable across frames and the cursor does not jitter.
    chosen.sort(key=lambda n: id_order(n.id))
    if query.sort_key != "id" or query.descending:  # (sorted by id already)
        chosen.sort(key=key, reverse=query.descending)
    return chosen
