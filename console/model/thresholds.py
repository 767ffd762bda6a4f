"""Where a gauge turns from ok to warning to critical. Defaults come from the seeds (DESIGN.md table)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from console.guards.thresholds import Thresholds
from console.protocol import Severity


class Level(IntEnum):
    """How a reading stands; the theme gives each level a colour AND a glyph (never colour alone)."""

    UNKNOWN = 0
    OK = 1
    WARNING = 2
    CRITICAL = 3


#: An alarm's severity as a level: the glyph and colour it is drawn with, in the alarms panel and wherever a
#: reading says what an alarm says (the wave chart's LOCKSTEP).
SEVERITY_LEVEL = {Severity.INFO: Level.OK, Severity.WARNING: Level.WARNING, Severity.CRITICAL: Level.CRITICAL}


@dataclass(frozen=True)
class GaugeThresholds:
    # Outage seed: an alarm on a > 5 % drop of total connections in 60 s would have caught the outage.
    connections_drop_warn_pct: float = 2.0
    connections_drop_crit_pct: float = 5.0
    # The alarm's window: the drop is the fall under the connections' peak within it (`tracking.drop_pct`).
    connections_drop_window_s: float = 60.0
    # Outage seed: steady ~80 k/min vs 13 M/min in the storm; 3× is unusual, 10× is a storm.
    attempts_warn_x: float = 3.0
    attempts_crit_x: float = 10.0
    # Outage seed: no safe restart below 35 % headroom.
    headroom_warn_pct: float = 50.0
    headroom_crit_pct: float = 35.0
    # Sync-engine essay: drain÷inflow < 1 is losing ground; 0.6 is the kill switch.
    drain_inflow_warn: float = 1.0
    drain_inflow_crit: float = 0.6
    # Under the warning line this long is losing ground: the drain_inflow_losing alarm's time.
    drain_inflow_losing_for_s: float = 60.0
    # Outage seed: abort criterion, any surviving node above 80 % CPU; rollout pauses at 75 %.
    cpu_warn_pct: float = 75.0
    cpu_crit_pct: float = 80.0
    # Share of attempts answered 503: some shedding is admission doing its job; a lot is an overload.
    rejects_warn_share: float = 0.01
    rejects_crit_share: float = 0.25
    # Share of attempts timing out: each a handshake a node paid for and lost (wasted work; the outage seed's
    # retries re-hit nodes still saturated). 1 % is a calm second's most (`calm_second`); the sync-engine
    # essay trips its circuit breaker at 5 % failures.
    timeouts_warn_share: float = 0.01
    timeouts_crit_share: float = 0.05
    # issue #2: the lockstep index at which the wave chart says LOCKSTEP — the lockstep_waves alarm's line.
    lockstep_index_max: float = 4.0
    # The bins it looks back over: the alarm's (`lockstep_window_s`), so the chart and the alarm read one index.
    lockstep_window_s: float = 30.0
    handshake_warn_ms: float = 500.0
    handshake_crit_ms: float = 2000.0
    # Link: a frame older than this is stale (frames come at 1/s).
    stale_warn_s: float = 3.0
    stale_crit_s: float = 10.0
    # The steady reconnect rate is learned as the alarm engine learns it (console.alarms.tracking).
    baseline_learn_s: float = 30.0
    baseline_tau_s: float = 300.0
    baseline_configured_per_s: float = 0.0
    baseline_floor_per_s: float = 10.0

    @classmethod
    def from_shared(cls, shared: Thresholds) -> GaugeThresholds:
        """The critical lines are the alarms' and guards' (one definition); the warning lines are the
        console's own early hints, kept below (or above) them."""
        return cls(
            connections_drop_warn_pct=min(cls.connections_drop_warn_pct, shared.connections_drop_pct),
            connections_drop_crit_pct=shared.connections_drop_pct,
            connections_drop_window_s=shared.connections_drop_window_s,
            attempts_warn_x=min(cls.attempts_warn_x, shared.reconnect_rate_multiple),
            attempts_crit_x=shared.reconnect_rate_multiple,
            headroom_warn_pct=max(cls.headroom_warn_pct, shared.headroom_min_pct),
            headroom_crit_pct=shared.headroom_min_pct,
            drain_inflow_warn=shared.drain_inflow_losing_ratio,
            drain_inflow_crit=shared.drain_inflow_kill_ratio,
            drain_inflow_losing_for_s=shared.drain_inflow_losing_for_s,
            cpu_warn_pct=shared.cpu_pause_pct,
            cpu_crit_pct=shared.cpu_abort_pct,
            lockstep_index_max=shared.lockstep_index_max,
            lockstep_window_s=shared.lockstep_window_s,
            baseline_learn_s=shared.baseline_learn_s,
            baseline_tau_s=shared.baseline_tau_s,
            baseline_configured_per_s=shared.reconnect_baseline_per_s,
            baseline_floor_per_s=shared.reconnect_floor_per_s,
        )
