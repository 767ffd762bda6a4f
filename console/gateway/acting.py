"""The controller's write side: what the fleet API's guards need of real nodes, and forwarding the actions
they allowed (issue #6 over issue #4's desk).

The guards need a capacity record a frame does not carry. Over real nodes each figure comes from, in order:
the nodes file's `[capacity]` table (an operator who measured the gateway says so there), else the nodes'
own settings as their frames report them, else a stated default. Each field means what the simulator's
record means by it (`console.server.simulator.capacity_of`, which knows its nodes' real ceilings):

- `handshakes_per_s`: `[capacity] handshakes_per_s`, else `DEFAULT_HANDSHAKES_PER_S`, a planning figure
  (`handshakes_planned`: the guards' CPU projections say so). Never an admission `rate_per_s`: that is a
  limit the operator set, not what a node's CPU can do — taken for the ceiling, a 2/s admission drill made
  it 50 CPU points per handshake/s and a drain's survivors "225 %". The guards bound what survivors admit
  by the admission settings of the snapshot (`console.guards.capacity.AdmissionLimit`), as on the simulator;
- `cpu_pct_per_handshake_per_s`: 100 ÷ handshakes_per_s — the simulator's model (a node at its handshake
  ceiling is at 100 % CPU; the outage seed: reconnecting, not holding, is what burns CPU);
- `connections_per_node`: `[capacity] connections_per_node`, else the smallest `capacity_connections` the
  nodes report (their connection ceiling, or their configured planning capacity);
- `steady_inflow_per_s`: `[capacity] steady_inflow_per_s`, else 0 (unknown: the admission guard then judges
  by the calm baseline the fleet API learns over the frames, `console.alarms.tracking.SteadyAttempts`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import httpx

from console.errors import InputError
from console.guards import FleetCapacity
from console.protocol import NodeStatus
from console.userfiles import read_user_toml

#: Handshakes one node completes per second when the nodes file does not say: the issue's
#: admission drill limits a node to 500/s, and a node on the default work factor handshakes well above that
#: on one core (docs/benchmarks.md), so 500/s is a conservative planning figure, not a measurement.
DEFAULT_HANDSHAKES_PER_S = 500.0
#: A node's planning capacity when no frame has arrived yet (the node's own default, NodeConfig).
DEFAULT_CONNECTIONS_PER_NODE = 10_000

_CAPACITY_KEYS = ("handshakes_per_s", "connections_per_node", "steady_inflow_per_s")


@dataclass(frozen=True)
class CapacityConfig:
    """The nodes file's `[capacity]` table; a figure left out is taken from the nodes (module docstring)."""

    handshakes_per_s: float | None = None
    connections_per_node: int | None = None
    steady_inflow_per_s: float | None = None


def load_capacity(path: str) -> CapacityConfig:
    """The `[capacity]` table of a nodes file (empty when absent)."""
    table = read_user_toml("--nodes", path).get("capacity", {})
    if not isinstance(table, dict):
        raise InputError(f"capacity (from {path})", table, "a [capacity] table")
    unknown = sorted(set(table) - set(_CAPACITY_KEYS))
    if unknown:
        raise InputError(f"capacity.{unknown[0]}", table[unknown[0]], "one of " + ", ".join(_CAPACITY_KEYS))
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
            raise InputError(f"capacity.{key}", value, "a finite number ≥ 0")
    return CapacityConfig(**table)


def capacity_of(config: CapacityConfig, statuses: list[NodeStatus]) -> FleetCapacity:
    """The guards' capacity record (where each figure comes from: the module docstring)."""
    handshakes_per_s = config.handshakes_per_s or DEFAULT_HANDSHAKES_PER_S
    reported = [s.capacity_connections for s in statuses if s.capacity_connections]
    connections = config.connections_per_node or (min(reported) if reported else DEFAULT_CONNECTIONS_PER_NODE)
    return FleetCapacity(
        handshakes_per_s=handshakes_per_s,
        cpu_pct_per_handshake_per_s=100.0 / handshakes_per_s,
        connections_per_node=int(connections),
        steady_inflow_per_s=config.steady_inflow_per_s or 0.0,
        handshakes_planned=not config.handshakes_per_s,
    )


def refusal(node_id: str, response: httpx.Response, default_field: str) -> InputError:
    """A node's refusal as an `InputError` naming the field the node named (its problem+json), or ours."""
    try:
        body: dict[str, Any] = response.json()
    except ValueError:
        body = {}
    field = body.get("field") or default_field
    detail = body.get("detail") or response.reason_phrase
    return InputError(
        field, node_id, f"what node {node_id} accepts (it answered {response.status_code}: {detail})"
    )


class NodeUnreachable(InputError):
    """A node that did not answer its admin API: its process may be gone (a restart), not refusing.
    `reason`: the transport's error by its name (ConnectError, ReadTimeout)."""

    def __init__(self, node_id: str, reason: str) -> None:
        self.reason = reason
        super().__init__("node", node_id, f"a node that answers its admin API ({reason})")


def unreachable(node_id: str, error: httpx.HTTPError) -> NodeUnreachable:
    return NodeUnreachable(node_id, type(error).__name__)


#: The answering nodes a refusal names in its words at most (all of them are in `nodes_answering`).
ANSWERING_SAID = 8


class NodesNotAnswering(InputError):
    """An admission change refused whole because nodes it covers do not answer their admin API (shown
    `down`, or timing out: SIGSTOPped). Refusing is right — a hung node that comes back keeps its old
    settings, so a part-applied change would leave the fleet split without saying so — but the words say
    the way on: the field is `nodes`, and the nodes that answer are named. It read "node: 'n3' is not
    allowed; expected a node that answers its admin API (it is down)", naming a field no one sent and no
    way on (found on a real fleet). `problem_members` lists both sets for a client to offer."""

    def __init__(self, silent: dict[str, str], answering: list[str], *, fleet_wide: bool) -> None:
        self.silent = silent  # node id → why it does not answer ("down", "ReadTimeout")
        self.answering = answering  # the nodes of the change that would take it now
        self.fleet_wide = fleet_wide
        super().__init__("nodes", list(silent), "nodes that answer their admin API")

    def _message(self) -> str:
        ids = list(self.silent)
        reasons = sorted(set(self.silent.values()))
        who = ", ".join(ids)
        does = "does not answer its" if len(ids) == 1 else "do not answer their"
        them = ids[0] if len(ids) == 1 else "them"
        wait = f"wait for {them} to answer"
        if self.fleet_wide:
            need = "a fleet-wide admission change needs every node to take it"
            way = f"set the answering ones with nodes {_listed(self.answering)}, or {wait}"
        else:
            need = "every node named must take the change"
            way = (
                f"leave {'it' if len(ids) == 1 else 'them'} out (nodes {_listed(self.answering)}), or {wait}"
            )
        if not self.answering:
            way = wait
        return f"{self.field}: {who} {does} admin API ({', '.join(reasons)}): {need}; {way}"

    def problem_members(self) -> dict[str, object]:
        return {"nodes_down": list(self.silent), "nodes_answering": list(self.answering)}


def _listed(node_ids: list[str]) -> str:
    """Node ids as a refusal says them: all of a few; the first ones and how many of a large fleet."""
    if len(node_ids) <= ANSWERING_SAID:
        return ", ".join(node_ids)
    return ", ".join(node_ids[:ANSWERING_SAID]) + f", … ({len(node_ids):,} nodes)"
