"""The admission each node runs: the fleet's settings and the per-node overrides a frame or snapshot carries
(`admission`, `admission_overrides`). Pure: the backends build the overrides with `overrides_of`; the
guards, the alarms and the console read a node's settings with `AdmissionInForce.for_node`.

A node named in an override runs it; any other node runs the fleet's settings — except where the fleet's
settings name `nodes` themselves (a recording from a server that showed a per-node change as the fleet's):
then the nodes they name run them and the rest are read as unlimited, as they always were.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from console.protocol.models import AdmissionSettings


class ShowsAdmission(Protocol):
    """A frame or a snapshot: what it says of admission, and its nodes."""

    @property
    def admission(self) -> AdmissionSettings | None: ...
    @property
    def admission_overrides(self) -> list[AdmissionSettings] | None: ...


def overrides_of(
    fleet: AdmissionSettings, by_node: Mapping[str, AdmissionSettings], node_ids: Sequence[str]
) -> list[AdmissionSettings] | None:
    """The per-node overrides to show: the nodes (of `node_ids`, in their order) whose settings in
    `by_node` differ from `fleet`, one entry per distinct setting naming its nodes, in the order of their
    first node; None when every node runs the fleet's (the field is then left out of a frame)."""
    fleet_key = fleet.limits_key()
    grouped: dict[tuple, tuple[AdmissionSettings, list[str]]] = {}
    for node_id in node_ids:
        settings = by_node.get(node_id)
        if settings is None or settings.limits_key() == fleet_key:
            continue
        grouped.setdefault(settings.limits_key(), (settings, []))[1].append(node_id)
    if not grouped:
        return None
    return [settings.model_copy(update={"nodes": nodes}) for settings, nodes in grouped.values()]


@dataclass(frozen=True)
class AdmissionGroup:
    """Nodes that run the same admission. `nodes` None: every node not named in another group ("elsewhere"),
    where the node ids are not known."""

    settings: AdmissionSettings
    nodes: tuple[str, ...] | None
    rest: bool  # the nodes no override names: what a node added later runs too


@dataclass(frozen=True)
class AdmissionInForce:
    """The fleet's admission settings and its per-node overrides; `node_ids`: the nodes of the frame or
    snapshot they came with (None: not known)."""

    fleet: AdmissionSettings
    overrides: tuple[AdmissionSettings, ...] = ()
    node_ids: tuple[str, ...] | None = None
    _by_node: dict[str, AdmissionSettings] = field(init=False, repr=False, compare=False)
    _covered: frozenset[str] | None = field(init=False, repr=False, compare=False)
    _rest: AdmissionSettings = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Built once: the alarms ask for every node of every frame (480 nodes a second).
        by_node: dict[str, AdmissionSettings] = {}
        for override in self.overrides:
            for node_id in override.nodes or ():
                by_node.setdefault(node_id, override.bare())  # a node is in one at most; the first holds
        object.__setattr__(self, "_by_node", by_node)
        covered = None if self.fleet.nodes is None else frozenset(self.fleet.nodes)
        object.__setattr__(self, "_covered", covered)
        object.__setattr__(
            self, "_rest", self.fleet.bare() if covered is None else _unlimited_like(self.fleet)
        )

    @classmethod
    def of(cls, record: ShowsAdmission, node_ids: Sequence[str] | None = None) -> AdmissionInForce | None:
        """What `record` (a frame, a snapshot) says; None where it says nothing of admission. `node_ids`:
        its nodes, where not its own `nodes` (a frame sent without them)."""
        if record.admission is None:
            return None
        if node_ids is None:
            nodes = getattr(record, "nodes", None)
            node_ids = [node.id for node in nodes] if nodes else None
        return cls(
            record.admission,
            tuple(record.admission_overrides or ()),
            tuple(node_ids) if node_ids is not None else None,
        )

    @classmethod
    def said(cls, admission: AdmissionInForce | AdmissionSettings | None) -> AdmissionInForce | None:
        """`admission` as settings in force: the fleet's settings alone have no overrides."""
        if admission is None or isinstance(admission, AdmissionInForce):
            return admission
        return cls(admission)

    @property
    def uniform(self) -> bool:
        """Every node runs the fleet's settings (as far as they say)."""
        return not self._by_node and self.fleet.nodes is None

    @property
    def elsewhere(self) -> AdmissionSettings:
        """What a node no override names runs: the fleet's settings (unlimited where they name nodes)."""
        return self._rest

    @property
    def limits_rate(self) -> bool:
        """Some node runs a token bucket (a `rate_per_s`): load is shed somewhere."""
        return self.fleet.rate_per_s is not None or any(o.rate_per_s is not None for o in self.overrides)

    def for_node(self, node_id: str) -> AdmissionSettings:
        """The settings `node_id` runs, naming no nodes."""
        override = self._by_node.get(node_id)
        if override is not None:
            return override
        if self._covered is not None and node_id in self._covered:
            return self.fleet.bare()
        return self._rest

    def overridden(self, node_id: str) -> bool:
        """`node_id` runs settings of its own, not the fleet's."""
        return node_id in self._by_node or (self._covered is not None and node_id in self._covered)

    def covered(self, nodes: Sequence[str] | None) -> list[AdmissionGroup]:
        """The nodes a change covers (`nodes`; None: every node) by the settings they run now."""
        if nodes is None:
            return self.groups()
        by_limits: dict[tuple, AdmissionGroup] = {}
        for node_id in nodes:
            settings = self.for_node(node_id)
            group = by_limits.get(settings.limits_key(), AdmissionGroup(settings, (), rest=False))
            by_limits[settings.limits_key()] = replace(group, nodes=(*(group.nodes or ()), node_id))
        return list(by_limits.values())

    def groups(self) -> list[AdmissionGroup]:
        """The nodes by the settings they run: the overrides in their order, then the rest (the fleet's
        settings; unlimited where the fleet's own name their nodes) — left out when the node ids are known
        and every node is in an override. Groups with the same limits are one."""
        named: list[tuple[AdmissionSettings, list[str]]] = [
            (o.bare(), list(o.nodes or ())) for o in self.overrides
        ]
        rest = self._rest
        if self.fleet.nodes is not None:
            named.insert(0, (self.fleet.bare(), list(self.fleet.nodes)))
        if self.node_ids is not None:
            known = set(self.node_ids)
            named = [(settings, [n for n in nodes if n in known]) for settings, nodes in named]
        merged: dict[tuple, tuple[AdmissionSettings, list[str]]] = {}
        for settings, nodes in named:
            if nodes:
                merged.setdefault(settings.limits_key(), (settings, []))[1].extend(nodes)
        groups = [
            AdmissionGroup(settings, tuple(nodes), rest=False)
            for key, (settings, nodes) in merged.items()
            if key != rest.limits_key()
        ]
        if self.node_ids is None:
            return [*groups, AdmissionGroup(rest, None, rest=True)]
        elsewhere = tuple(n for n in self.node_ids if self.for_node(n).limits_key() == rest.limits_key())
        return [*groups, AdmissionGroup(rest, elsewhere, rest=True)] if elsewhere else groups


def _unlimited_like(fleet: AdmissionSettings) -> AdmissionSettings:
    """No limit, Retry-After as the fleet's (it says when a refused client comes back, were one refused)."""
    return AdmissionSettings(rate_per_s=None, max_connections=None, retry_after_s=fleet.retry_after_s)
