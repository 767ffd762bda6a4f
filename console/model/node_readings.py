"""A frame's nodes as the console reads them: one value a node per column, not a record a node.

The model's rings and the alarm rules read a few numbers of each node. A replay's jump sends the minute
before the landing point (61 frames); at 2000 nodes, validating them into node records (pydantic models)
was 1.66 s of a 2.19 s seek (profiled, `docs/recording.md`). Validated the same way into plain fields, then
columns, they take about a third of that, and the model and the alarms read the same values either way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import Annotated, Any, NotRequired, Required

import numpy as np
from pydantic import BaseModel, ConfigDict, PrivateAttr, TypeAdapter
from pydantic.fields import FieldInfo
from typing_extensions import TypedDict  # pydantic reads only typing_extensions TypedDicts before 3.12

from console.protocol import DrainProgress, Frame, NodeState, NodeStatus

#: The per-node series the model keeps (sparklines, the node detail's charts).
NODE_METRICS = (
    "connections",
    "cpu_pct",
    "accepts_per_s",
    "rejects_per_s",
    "timeouts_per_s",
    "handshake_p99_ms",
)


@dataclass(frozen=True)
class NodeReadings:
    ids: list[str]
    states: list[NodeState]
    cpu_pct: list[float]
    drain_rate_per_s: list[float]  # a draining node's requested close rate (its closes when none was set)
    metrics: np.ndarray  # [node, NODE_METRICS], float32: what the model's rings hold
    # the nodes saying they cannot reach their history (Redis): (id, why); the alarm rules read it
    history_unreachable: tuple[tuple[str, str], ...] = ()
    # a node's drain status, None without one: its start and end are what the pacing alarm judges a
    # sped-up frame's earlier seconds by (`FleetView.drains_in_second`, `with_ended_drains`)
    drain_status: list[DrainProgress | None] | None = None

    @classmethod
    def of_records(cls, nodes: Sequence[NodeStatus]) -> NodeReadings:
        return cls._of(
            nodes,
            attrgetter,
            [n.closes_per_s if n.drain is None else n.drain.rate_per_s for n in nodes],
            tuple((n.id, n.history_unreachable) for n in nodes if n.history_unreachable),
            [n.drain for n in nodes],
        )

    @classmethod
    def of_fields(cls, nodes: Sequence[Mapping[str, Any]]) -> NodeReadings:
        """From node fields already validated as NodeStatus validates them (`_NODE_FIELDS`)."""
        closes = NodeStatus.model_fields["closes_per_s"].default
        return cls._of(
            nodes,
            itemgetter,
            [
                n.get("closes_per_s", closes) if (drain := n.get("drain")) is None else drain.rate_per_s
                for n in nodes
            ],
            # left out of a node's JSON while null, as nearly always
            tuple((n["id"], why) for n in nodes if (why := n.get("history_unreachable"))),
            [n.get("drain") for n in nodes],
        )

    @classmethod
    def _of(
        cls,
        nodes: Sequence[Any],
        getter: Callable[..., Callable[[Any], Any]],
        drain_rate_per_s: list[float],
        history_unreachable: tuple[tuple[str, str], ...],
        drain_status: list[DrainProgress | None],
    ) -> NodeReadings:
        """`getter`: how a node's fields are read (attrgetter of records, itemgetter of fields)."""
        metrics = list(map(getter(*NODE_METRICS), nodes))
        return cls(
            ids=list(map(getter("id"), nodes)),
            states=list(map(getter("state"), nodes)),
            cpu_pct=list(map(getter("cpu_pct"), nodes)),
            drain_rate_per_s=drain_rate_per_s,
            metrics=np.array(metrics, dtype=np.float32).reshape(-1, len(NODE_METRICS)),
            history_unreachable=history_unreachable,
            drain_status=drain_status,
        )


class ColumnarFrame(Frame):
    """A recorded frame read with its nodes as columns (`node_readings`) and no node records: `nodes` is
    empty. What a replay's prefill sends: the model applies it as the frame it was."""

    _node_readings: NodeReadings | None = PrivateAttr(default=None)

    @classmethod
    def of(cls, head: Mapping[str, Any], nodes: NodeReadings) -> ColumnarFrame:
        """`head`: the frame's fields but its nodes, already validated."""
        frame = cls.model_construct(**{**head, "nodes": []})
        frame._node_readings = nodes
        return frame

    @property
    def node_readings(self) -> NodeReadings:
        assert self._node_readings is not None
        return self._node_readings


def _fields_of(model: type[BaseModel], name: str, **replaced: Any) -> Any:
    """`model`'s fields as a TypedDict: pydantic validates each as the model would (types, coercions,
    constraints, unknown keys kept) but builds a dict, not a model — the cost of a frame is its 2000 node
    models. `replaced`: fields validated as another type."""

    def typed_as(field: FieldInfo) -> Any:
        annotation = Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation
        return (Required if field.is_required() else NotRequired)[annotation]

    fields = {
        field_name: replaced.get(field_name) or typed_as(field)
        for field_name, field in model.model_fields.items()
    }
    typed = TypedDict(name, fields)  # type: ignore[operator]
    typed.__pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[attr-defined]
    return typed


_NODE_FIELDS = _fields_of(NodeStatus, "NodeFields")
_FRAME_FIELDS = TypeAdapter(_fields_of(Frame, "FrameFields", nodes=Required[list[_NODE_FIELDS]]))


def columnar_frame_json(payload: bytes | str) -> ColumnarFrame:
    """A frame's JSON read as `Frame.model_validate_json` reads it (the same checks: a ValidationError
    names the field), its nodes into columns. The frame itself must be a frame's: its type is checked."""
    fields = _FRAME_FIELDS.validate_json(payload)
    nodes = fields.pop("nodes")
    return ColumnarFrame.of(fields, NodeReadings.of_fields(nodes))
