"""Figures of a storm that more than one part reports: one definition each.

The simulator's run summary (`stormdeck sim run`) and the after-action report of a recording
(`stormdeck report`) both say how long recovery took and how bunched the reconnect waves were; both call
these, so the same run gives the same numbers whichever way it is read. The simulator and the controller
over real nodes both put drain ÷ inflow in their frames (`DrainInflow`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

import numpy as np

from console.waves import lockstep_index

#: Connections are "back" at this share of what they were before the first disconnecting event.
RECOVERED_SHARE = 0.95
#: Seconds after each disconnecting event left out of the lockstep window: the event's own spike is
#: not a wave (issue #2).
EVENT_EXCLUSION_S = 5.0
BINS_PER_S = 10  # wave bins are 100 ms (console.protocol.WAVE_BIN_MS)


def recovery(
    connections: np.ndarray, times_s: np.ndarray, first_disconnect_s: float | None
) -> tuple[float | None, float]:
    """Seconds from the first disconnecting event until connections are back to ≥ 95 % for good.

    Returns (recovery_s, recovered_at_s). recovery_s is None when there was no disconnecting event or the
    run ended below the line; recovered_at_s is then the end of the run.
    """
    if first_disconnect_s is None or not connections.size:
        return None, float(times_s[-1]) if times_s.size else 0.0
    # The frame ending at the event's second is the last one before it.
    before_index = min(max(int(np.searchsorted(times_s, first_disconnect_s)), 0), connections.size - 1)
    target = RECOVERED_SHARE * connections[before_index]
    after = times_s > first_disconnect_s
    below = np.flatnonzero(after & (connections < target))
    if below.size == 0:
        return 0.0, first_disconnect_s
    last_below = below[-1]
    if last_below == connections.size - 1:
        return None, float(times_s[-1])
    back_at = float(times_s[last_below + 1])
    return round(back_at - first_disconnect_s, 1), back_at


def storm_lockstep_index(
    bins: np.ndarray, disconnect_times_s: Sequence[float], until_s: float, bins_start_s: float = 0.0
) -> float:
    """`lockstep_index` over the storm window — first disconnect to recovery — each stretch between the
    excluded spans after disconnecting events judged on its own. `bins[0]` starts at `bins_start_s`.

    When connections never fell below the recovery line (or were back within the exclusion), that window
    is empty, yet the reconnects still came, in waves or not: the window then runs from the first
    disconnect to the end of the run (an empty window read 0.0, below a smooth smear's 1)."""
    if not disconnect_times_s or not bins.size:
        return lockstep_index(bins)

    def at(time_s: float) -> int:
        return int((time_s - bins_start_s) * BINS_PER_S)

    def storm_window(end: int) -> np.ndarray:
        keep = np.zeros(bins.size, dtype=bool)
        keep[max(at(disconnect_times_s[0]), 0) : max(end, 0)] = True
        for t in disconnect_times_s:
            keep[max(at(t), 0) : max(at(t + EVENT_EXCLUSION_S), 0)] = False
        return keep

    keep = storm_window(at(until_s) + 1)
    if not keep.any():
        keep = storm_window(bins.size)
    best = 0.0
    edges = np.flatnonzero(np.diff(np.concatenate(([0], keep.astype(np.int8), [0]))))
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        best = max(best, lockstep_index(bins[start:stop]))
    return best


#: Seconds drain ÷ inflow is taken over (sync-engine essay: the backlog's drain rate against its inflow).
DRAIN_INFLOW_WINDOW_S = 10


class DrainInflow:
    """The reconnect backlog's drain rate ÷ its inflow over the trailing seconds: clients getting a
    connection back (accepts) against clients losing one (disconnects, planned or not). Below 1 the
    offline backlog grows: the storm is winning (sync-engine essay; alarms `drain_inflow_*`)."""

    def __init__(self, seconds: int = DRAIN_INFLOW_WINDOW_S) -> None:
        self._seconds: deque[tuple[float, float]] = deque([(0.0, 0.0)] * seconds, maxlen=seconds)
        self.accepts = 0.0
        self.disconnects = 0.0

    def add(self, accepts: float, disconnects: float) -> None:
        """One second's figures; the oldest second leaves the window. The sums are taken afresh (ten
        values): real nodes report rates, not counts, and a running sum of fractions drifts — after a
        drain it left ±1e-14 "disconnects" on a quiet fleet, and the ratio came out negative."""
        self._seconds.append((accepts, disconnects))
        self.accepts = math.fsum(second[0] for second in self._seconds)
        self.disconnects = math.fsum(second[1] for second in self._seconds)

    @property
    def ratio(self) -> float | None:
        """None when nothing flowed in (no disconnects in the window): no backlog to drain."""
        return ratio_of(self.accepts, self.disconnects)


def ratio_of(accepts: float, disconnects: float) -> float | None:
    return round(float(accepts / disconnects), 3) if disconnects > 0 else None
