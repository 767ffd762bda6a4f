"""Where a gauge turns from ok to warning to critical. Defaults come from the seeds (DESIGN.md table)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Level(IntEnum):
    """How a reading stands; the theme gives each level a colour AND a glyph (never colour alone)."""

    UNKNOWN = 0
    OK = 1
    WARNING = 2
    CRITICAL = 3


@dataclass(frozen=True)
class GaugeThresholds:
    # Outage seed: an alarm on a > 5 % drop of total connections in 60 s would have caught the outage.
    connections_drop_warn_pct: float = 2.0
    connections_drop_crit_pct: float = 5.0
    # Outage seed: steady ~80 k/min vs 13 M/min in the storm; 3× is unusual, 10× is a storm.
    attempts_warn_x: float = 3.0
    attempts_crit_x: float = 10.0
    # Outage seed: no safe restart below 35 % headroom.
    headroom_warn_pct: float = 50.0
    headroom_crit_pct: float = 35.0
    # Sync-engine essay: drain÷inflow < 1 is losing ground; 0.6 is the kill switch.
    drain_inflow_warn: float = 1.0
    drain_inflow_crit: float = 0.6
    # Outage seed: abort criterion, any surviving node above 80 % CPU; rollout pauses at 75 %.
    cpu_warn_pct: float = 75.0
    cpu_crit_pct: float = 80.0
    # Share of attempts answered 503: some shedding is admission doing its job; a lot is an overload.
    rejects_warn_share: float = 0.01
    rejects_crit_share: float = 0.25
    handshake_warn_ms: float = 500.0
    handshake_crit_ms: float = 2000.0
    # Link: a frame older than this is stale (frames come at 1/s).
    stale_warn_s: float = 3.0
    stale_crit_s: float = 10.0
