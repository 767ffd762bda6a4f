"""A frame's nodes as columns, for the server's ten minutes of history. Pure.

The history holds 600 frames. As records, a frame's nodes cost ~1.8 KB each (a pydantic model, its
dict and a boxed number per field): 480 nodes × 600 frames was ~500 MB of a served `thundering-herd`,
2000 nodes over 2 GB. As columns they cost 8 bytes a number, and the columns that rarely change (ids,
states, drains) are shared with the frame before when they are the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np

from console.protocol import NodeStatus

#: The status fields held as numbers (int or float), and those held as they are (id, state, drain …).
NUMBER_FIELDS = tuple(
    name for name, field in NodeStatus.model_fields.items() if field.annotation in (int, float)
)
OBJECT_FIELDS = tuple(name for name in NodeStatus.model_fields if name not in NUMBER_FIELDS)
_INT_FIELDS = frozenset(name for name in NUMBER_FIELDS if NodeStatus.model_fields[name].annotation is int)
_numbers_of = attrgetter(*NUMBER_FIELDS)


@dataclass(frozen=True)
class NodeColumns:
    ids: tuple[str, ...]
    numbers: np.ndarray  # [node, NUMBER_FIELDS], float64: exact for every int below 2**53
    objects: dict[str, tuple[Any, ...]]  # OBJECT_FIELDS but "id": a value per node

    @classmethod
    def of(cls, nodes: list[NodeStatus]) -> NodeColumns | None:
        """The nodes as columns; None when a node carries fields this server's model does not know
        (kept as records then: nothing is dropped)."""
        if any(node.model_extra for node in nodes):
            return None
        numbers = np.array([_numbers_of(node) for node in nodes], dtype=np.float64).reshape(
            len(nodes), len(NUMBER_FIELDS)
        )
        objects = {
            name: tuple(getattr(node, name) for node in nodes) for name in OBJECT_FIELDS if name != "id"
        }
        return cls(tuple(node.id for node in nodes), numbers, objects)

    def sharing(self, before: NodeColumns | None) -> NodeColumns:
        """These columns, holding the frame before's ids, states and drains where they are the same: most
        frames change none of them, and 600 frames of 2000 ids are otherwise ~10 MB of tuples."""
        if before is None:
            return self
        objects = {name: _shared(column, before.objects.get(name)) for name, column in self.objects.items()}
        return NodeColumns(_shared(self.ids, before.ids), self.numbers, objects)

    def index_of(self, node_id: str, hint: int | None) -> int | None:
        # The newest frame's position first, as history._find_node does (nodes keep their order).
        if hint is not None and hint < len(self.ids) and self.ids[hint] == node_id:
            return hint
        try:
            return self.ids.index(node_id)
        except ValueError:
            return None

    def fields(self, index: int) -> dict[str, Any]:
        """Node `index`'s status fields, as NodeStatus takes them."""
        row = self.numbers[index].tolist()
        fields: dict[str, Any] = {"id": self.ids[index]}
        for name, value in zip(NUMBER_FIELDS, row, strict=True):
            fields[name] = int(value) if name in _INT_FIELDS else value
        for name, column in self.objects.items():
            fields[name] = column[index]
        return fields


def _shared(column: tuple[Any, ...], before: tuple[Any, ...] | None) -> tuple[Any, ...]:
    """The frame before's column when it is the same: most frames change no id, state or drain."""
    return before if before is not None and before == column else column
