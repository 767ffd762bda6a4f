"""Small builders of frames and snapshots for tests: a fleet described by the few numbers a test cares
about, everything else at calm defaults."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from console.protocol import (
    AdmissionSettings,
    DrainProgress,
    FleetSnapshot,
    Frame,
    NodeState,
    NodeStatus,
    RolloutStatus,
    Source,
    Totals,
    Waves,
)

CALM_TOTALS: dict[str, Any] = {
    "connections": 100_000,
    "attempts_per_s": 100.0,
    "accepts_per_s": 100.0,
    "rejects_per_s": 0.0,
    "headroom_pct": 50.0,
    "drain_inflow_ratio": None,
}


def node(
    node_id: str = "gw-000",
    state: NodeState | str = NodeState.READY,
    cpu_pct: float = 30.0,
    connections: int = 25_000,
    drain_rate_per_s: float | None = None,
    **fields: Any,
) -> NodeStatus:
    drain = None
    if drain_rate_per_s is not None:
        drain = DrainProgress(
            remaining=connections,
            rate_per_s=drain_rate_per_s,
            hint_ms=(1000, 15000),
            started_at_s=0.0,
            deadline_at_s=600.0,
        )
    values: dict[str, Any] = {
        "attempts_per_s": 25.0,
        "accepts_per_s": 25.0,
        "rejects_per_s": 0.0,
        "timeouts_per_s": 0.0,
        "handshake_p99_ms": 20.0,
        "capacity_connections": 50_000,
    } | fields
    return NodeStatus(
        id=node_id, state=NodeState(state), cpu_pct=cpu_pct, connections=connections, drain=drain, **values
    )


def nodes(count: int, **fields: Any) -> list[NodeStatus]:
    return [node(f"gw-{i:03d}", **fields) for i in range(count)]


def frame(
    time_s: float,
    *,
    fleet: Sequence[NodeStatus] | None = None,
    epoch: str = "e1",
    attempts: Sequence[int] | None = None,
    rollout: RolloutStatus | None = None,
    admission: AdmissionSettings | None = None,
    **totals: Any,
) -> Frame:
    return Frame(
        seq=int(time_s),
        epoch=epoch,
        time_s=time_s,
        nodes=list(fleet) if fleet is not None else nodes(4),
        totals=Totals(**(CALM_TOTALS | totals)),
        waves=Waves(attempts=list(attempts) if attempts is not None else [10] * 10),
        rollout=rollout,
        admission=admission,
    )


Value = Any | Callable[[float], Any]


def series(start_s: float, seconds: int, **fields: Value) -> list[Frame]:
    """One frame per fleet second; each field is a constant or a function of the fleet time."""
    out = []
    for i in range(seconds):
        time_s = start_s + i
        values = {k: (v(time_s) if callable(v) else v) for k, v in fields.items()}
        out.append(frame(time_s, **values))
    return out


def snapshot(
    fleet: Sequence[NodeStatus],
    *,
    rollout: RolloutStatus | None = None,
    admission: AdmissionSettings | None = None,
    **totals: Any,
) -> FleetSnapshot:
    return FleetSnapshot(
        fleet="test-fleet",
        source=Source.SIMULATOR,
        time_s=100.0,
        nodes=list(fleet),
        totals=Totals(**(CALM_TOTALS | totals)),
        rollout=rollout or RolloutStatus(),
        admission=admission
        or AdmissionSettings(rate_per_s=None, max_connections=None, retry_after_s=(1, 30)),
    )


#: `sim` overrides: the demo's rolling restart, small, under an admission rate — 503s and handshake timeouts
#: come in waves, so a sped-up frame's last second says little of the seconds folded into it.
STORMY_DEMO = [
    "clients.count=130000",
    "nodes.count=6",
    "rollout.batch_size=2",
    "nodes.capacity_connections=27000",
    "admission.rate_per_s=1200",
]


#: A meltdown's totals and nodes, for the gauges' tests: regional-outage at 02:02:41, its 20 nodes as 4 —
#: 55.5k connections of 1.6M capacity (97 % headroom), every node at 100 % CPU timing handshakes out.
MELTDOWN = {
    "connections": 55_476,
    "attempts_per_s": 44_435.0,
    "accepts_per_s": 9_141.0,
    "timeouts_per_s": 35_294.0,
    "max_cpu_pct": 100.0,
    "headroom_pct": 96.53,
}
HOT = [
    node(
        f"gw-{i:03d}", cpu_pct=100.0, connections=13_869, capacity_connections=400_000, timeouts_per_s=8_823.5
    )
    for i in range(4)
]
