"""A recording's key figures: its minimum, peaks, recovery, hottest node, lockstep index and counts. Pure.

Key figures use the simulator summary's definitions (`console.figures`): the same run gives the same
numbers whether it is summarized live or recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from console.figures import BINS_PER_S, RECOVERED_SHARE, back_for_good, recovery, storm_lockstep_index
from console.record.counts import count
from console.record.series import Series
from console.record.underway import IncidentUnderway
from console.waves import to_hundredths


@dataclass(frozen=True)
class KeyFigures:
    frames: int
    start_s: float
    end_s: float
    connections_at_start: int
    min_connections: int
    min_connections_at_s: float
    peak_attempts_per_100ms: int
    #: None when no bin held an attempt: every bin ties at 0, and the first one's time is no peak's.
    peak_attempts_at_s: float | None
    peak_attempts_per_s: float
    first_disconnect_s: float | None
    recovery_s: float | None
    max_cpu_pct: float
    max_cpu_node: str | None
    max_cpu_at_s: float
    #: None when not measured; `lockstep_note` says why (too short a storm window, too quiet).
    lockstep_index: float | None
    lockstep_note: str | None
    rejects_total: int
    timeouts_total: int
    #: How the two totals are known (`count`). A source that keeps running counts (`totals.rejects_total`,
    #: `timeouts_total`) is counted exactly at any speed. Without them the frames carry rates only: at
    #: real time each frame carries its one second, so the sums are counts; a sped-up source's frame
    #: covers `span_s` seconds but carries its last second's rates only, so the totals are estimates
    #: (`totals_estimated`: each rate taken for its frame's whole span). `counted_s` seconds hold the exact
    #: `rejects_counted` / `timeouts_counted`, of `covered_s` fleet seconds the frames stand for;
    #: `uncounted_s` seconds (a first frame's before its last second, with running counts) are in neither.
    totals_estimated: bool = False
    covered_s: float = 0.0
    counted_s: float = 0.0
    rejects_counted: int = 0
    timeouts_counted: int = 0
    uncounted_s: float = 0.0
    running_counts: bool = False
    #: The incident had begun by the first frame (`incident_underway`): that frame is not the fleet before
    #: it, so the minimum and the recovery are measured against the clients wanting a connection then, or
    #: not at all where the source does not say them.
    underway: IncidentUnderway | None = None
    #: The instant `recovery_s` counts from: the first mass disconnect; a recording begun during the
    #: incident, its first frame (the disconnect it holds before that frame, if any); None where there is
    #: no recovery to measure (no mass disconnect, or no level before the incident).
    recovery_from_s: float | None = None


def peak_per_second(attempts_per_s: list[float], bins: np.ndarray) -> float:
    """The busiest fleet second: from the wave bins, whole seconds of ten, as well as the frames' own
    figure. A frame of a sped-up source stands for several seconds but carries only the last one's rate,
    while its bins cover them all: at ×20 the frames' peak (149 k/s) was below one 100 ms bin × 10."""
    whole = bins[: bins.size - bins.size % BINS_PER_S].reshape(-1, BINS_PER_S).sum(axis=1)
    return float(max(max(attempts_per_s, default=0.0), int(whole.max()) if whole.size else 0))


def key_figures(
    series: Series, disconnect_times_s: list[float], underway: IncidentUnderway | None = None
) -> KeyFigures | None:
    if not series.times_s:
        return None
    times = np.asarray(series.times_s)
    connections = np.asarray(series.connections, dtype=np.float64)
    bins = np.asarray(series.bins, dtype=np.int64)
    cpu = np.asarray(series.max_cpu_pct)
    first = disconnect_times_s[0] if disconnect_times_s else None
    recovery_from_s, recovery_s, recovered_at_s = _recovery(connections, times, first, underway)
    low = int(connections.argmin())
    peak_bin = int(bins.argmax()) if bins.size else 0
    peak = int(bins[peak_bin]) if bins.size else 0
    hot = int(cpu.argmax())
    rejects = count(series, "rejects_per_s", "rejects_total")
    timeouts = count(series, "timeouts_per_s", "timeouts_total")
    lockstep = storm_lockstep_index(
        bins,
        disconnect_times_s,
        recovered_at_s,
        series.bins_start_s,
        # begun during the storm: its window from the first bin, not the first disconnect it holds
        from_s=series.bins_start_s if underway is not None else None,
    )
    return KeyFigures(
        frames=len(times),
        start_s=float(times[0]),
        end_s=float(times[-1]),
        connections_at_start=int(connections[0]),
        min_connections=int(connections[low]),
        min_connections_at_s=float(times[low]),
        peak_attempts_per_100ms=peak,
        peak_attempts_at_s=round(series.bins_start_s + peak_bin / BINS_PER_S, 1) if peak > 0 else None,
        peak_attempts_per_s=peak_per_second(series.attempts_per_s, bins),
        first_disconnect_s=first,
        recovery_s=recovery_s,
        max_cpu_pct=round(float(cpu[hot]), 1),
        max_cpu_node=series.hottest_node[hot],
        max_cpu_at_s=float(times[hot]),
        lockstep_index=to_hundredths(lockstep.index),
        lockstep_note=lockstep.unmeasured,
        rejects_total=rejects.total,
        timeouts_total=timeouts.total,
        totals_estimated=rejects.estimated or timeouts.estimated,
        covered_s=float(sum(series.span_s)),  # each frame stands for `span_s` fleet seconds (1 at real time)
        counted_s=min(rejects.counted_s, timeouts.counted_s),
        rejects_counted=rejects.counted,
        timeouts_counted=timeouts.counted,
        uncounted_s=max(rejects.uncounted_s, timeouts.uncounted_s),
        running_counts=rejects.running or timeouts.running,
        underway=underway,
        recovery_from_s=recovery_from_s,
    )


def _recovery(
    connections: np.ndarray, times: np.ndarray, first_s: float | None, underway: IncidentUnderway | None
) -> tuple[float | None, float | None, float]:
    """(from_s, recovery_s, recovered_at_s): `figures.recovery` from the first mass disconnect; for a
    recording begun during the incident, back to 95 % of the clients wanting a connection at its first
    frame — from the mass disconnect it holds before that frame, or else from that frame (the incident's
    start is not in it) — and nothing to measure where the source does not say those clients."""
    end_s = float(times[-1])
    if underway is None:
        recovery_s, recovered_at_s = recovery(connections, times, first_s)
        return first_s, recovery_s, recovered_at_s
    if underway.wanting is None:
        return None, None, end_s
    if underway.disconnects_before_s:
        from_s = underway.disconnects_before_s[0]
        return from_s, *recovery(connections, times, from_s, before=underway.wanting)
    back_at = back_for_good(connections, times, RECOVERED_SHARE * underway.wanting)
    if back_at is None:
        return underway.at_s, None, end_s
    return underway.at_s, round(back_at - underway.at_s, 1), back_at
