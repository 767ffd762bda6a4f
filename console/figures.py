"""Figures of a storm that more than one part reports: one definition each.

The simulator's run summary (`stormdeck sim run`) and the after-action report of a recording
(`stormdeck report`) both say how long recovery took and how bunched the reconnect waves were; both call
these, so the same run gives the same numbers whichever way it is read. The simulator and the controller
over real nodes both put drain ÷ inflow in their frames (`DrainInflow`).
"""

from __future__ import annotations

import functools
import math
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from console.waves import TOO_QUIET, WINDOW_MS, lockstep_index, window_bins

#: Connections are "back" at this share of what they were before the first disconnecting event.
RECOVERED_SHARE = 0.95
#: Seconds after each disconnecting event left out of the lockstep window: the event's own spike is
#: not a wave (issue #2).
EVENT_EXCLUSION_S = 5.0
BINS_PER_S = 10  # wave bins are 100 ms (console.protocol.WAVE_BIN_MS)


def recovery(
    connections: np.ndarray,
    times_s: np.ndarray,
    first_disconnect_s: float | None,
    before: float | None = None,
) -> tuple[float | None, float]:
    """Seconds from the first disconnecting event until connections are back to ≥ 95 % for good.

    "Before" is the level the event fell from: the last frame at or before it (a frame's time ends its
    second; the event's is the start of the one it happened in). Not the first frame after it: a source
    sped up ×4 sends one frame per 4 fleet seconds, and that one already held the collapse — a regional
    outage to 0 read "never below 95 % of before". `before` gives the level where the frames begin after
    the event (a recording begun inside the incident) and no frame holds it.

    Returns (recovery_s, recovered_at_s). recovery_s is None when there was no disconnecting event, no
    level before it, or the run ended below the line; recovered_at_s is then the end of the run.
    """
    end_s = float(times_s[-1]) if times_s.size else 0.0
    if first_disconnect_s is None or not connections.size:
        return None, end_s
    if before is None:
        before_index = int(np.searchsorted(times_s, first_disconnect_s, side="right")) - 1
        if before_index < 0:
            return None, end_s
        before = float(connections[before_index])
    back_at = back_for_good(connections, times_s, RECOVERED_SHARE * before, first_disconnect_s)
    if back_at is None:
        return None, end_s
    return round(back_at - first_disconnect_s, 1), back_at


def back_for_good(
    connections: np.ndarray, times_s: np.ndarray, line: float, after_s: float | None = None
) -> float | None:
    """The time of the frame from which connections stay at or above `line` to the end, judging the frames
    after `after_s` (all of them when None); `after_s` itself (or the first frame's time) when none of
    them is below; None when the last frame is below."""
    judged = times_s > after_s if after_s is not None else np.ones(times_s.size, dtype=bool)
    below = np.flatnonzero(judged & (connections < line))
    if below.size == 0:
        return after_s if after_s is not None else float(times_s[0])
    if below[-1] == connections.size - 1:
        return None
    return float(times_s[below[-1] + 1])


class Lockstep(NamedTuple):
    """A lockstep index (`console.waves.lockstep_index`) and, when it was not measured (None), why."""

    index: float | None
    unmeasured: str | None = None


def storm_lockstep_index(
    bins: np.ndarray,
    disconnect_times_s: Sequence[float],
    until_s: float,
    bins_start_s: float = 0.0,
    from_s: float | None = None,
) -> Lockstep:
    """`lockstep_index` over the storm window — first disconnect to recovery — each stretch between the
    excluded spans after disconnecting events judged on its own. `bins[0]` starts at `bins_start_s`.
    `from_s`: where the window starts when not at the first disconnect (a recording begun during the
    storm: its first bin).

    When connections never fell below the recovery line (or were back within the exclusion), that window
    is empty, yet the reconnects still came, in waves or not: the window then runs from the first
    disconnect to the end of the run (an empty window read 0.0, below a smooth smear's 1). Not measured
    (index None), it says why: a window too short to judge (a run that ended inside the storm read "too
    quiet" beside 23,000 attempts a 100 ms), or too quiet."""
    if not disconnect_times_s or not bins.size:
        return _judged([bins], "the run")

    def at(time_s: float) -> int:
        return int((time_s - bins_start_s) * BINS_PER_S)

    def storm_window(end: int) -> np.ndarray:
        keep = np.zeros(bins.size, dtype=bool)
        start_s = disconnect_times_s[0] if from_s is None else min(from_s, disconnect_times_s[0])
        keep[max(at(start_s), 0) : max(end, 0)] = True
        for t in disconnect_times_s:
            keep[max(at(t), 0) : max(at(t + EVENT_EXCLUSION_S), 0)] = False
        return keep

    keep = storm_window(at(until_s) + 1)
    if not keep.any():
        keep = storm_window(bins.size)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], keep.astype(np.int8), [0]))))
    stretches = [bins[start:stop] for start, stop in zip(edges[::2], edges[1::2], strict=True)]
    left_out = f"once the {EVENT_EXCLUSION_S:g} s after each disconnect were left out"
    return _judged(stretches, "the storm window", left_out)


def _judged(stretches: Sequence[np.ndarray], what: str, left_out: str = "") -> Lockstep:
    """The highest index of the stretches, or why none was measured (`what`: the span they make up)."""
    measured = [index for index in map(lockstep_index, stretches) if index is not None]
    if measured:
        return Lockstep(max(measured))
    if max((stretch.size for stretch in stretches), default=0) < window_bins():
        held = f"{what} held no whole {WINDOW_MS / 1000:g} s"
        return Lockstep(None, f"too short to judge: {held}{f' {left_out}' if left_out else ''}")
    return Lockstep(None, TOO_QUIET)


#: Seconds drain ÷ inflow is taken over (sync-engine essay: the backlog's drain rate against its inflow).
DRAIN_INFLOW_WINDOW_S = 10
#: Fewer clients than this flowing in over the window and drain ÷ inflow is not judged (None: too few to
#: judge). Of n clients due back in a window, n ± √n come back in it; the kill switch's 0.6 is 0.4·√n of
#: those below an even 1.0, three of them (a trip by chance about one second in a thousand) from n ≈ 56.
#: A real ~300-client fleet drained at 5/s (at most 50 due back in 10 s) read 0 accepts against 0.09
#: clients due in the drain's first seconds — the kill switch — in each of 400 simulated drains, though
#: in expectation it never went under 0.8. A fleet that small losing clients for good says so by
#: `connections_drop` (5 % of it in 60 s); a storm's in-flow is judged the second it comes.
DRAIN_INFLOW_MIN_CLIENTS = 60


@dataclass(frozen=True)
class HintedCloses:
    """Planned closes made in one second, each client told to come back within `hint_ms` [lo, hi].
    `at_s`: when in the second they were made (0: its start, 1: its end); a paced drain's fall all
    through it (the middle), a drain's deadline closes the rest at one moment (`forced`)."""

    count: float
    hint_ms: tuple[float, float]
    at_s: float = 0.5
    #: Closed by a drain's deadline, not at its pace: not in `WithinHint`'s allowance.
    forced: bool = False


@functools.lru_cache(maxsize=64)
def due_shares(hint_ms: tuple[float, float], at_s: float = 0.5) -> tuple[float, ...]:
    """The share of one second's hinted closes due back in each second from it (index 0: this second).

    A close made `at_s` into its second has its client back at a uniform point of the hint window: 1–30 s
    spreads a second's closes over the 30 seconds that follow, a zero window counts them this second.
    (Taken half a second late, a deadline's 100 k forced closes left ~1,700 clients "due" after all had
    come back: 0.49 in the last second of the tail, the kill switch.)"""
    lo_s, hi_s = (bound / 1000.0 - (1.0 - at_s) for bound in hint_ms)
    if hi_s <= lo_s:
        return (0.0,) * max(0, math.ceil(lo_s)) + (1.0,)
    first = max(0, math.ceil(lo_s))
    return (0.0,) * first + tuple(
        (min(hi_s, j) - max(lo_s, j - 1)) / (hi_s - lo_s) for j in range(first, math.ceil(hi_s) + 1)
    )


class DrainInflow:
    """The reconnect backlog's drain rate ÷ its inflow over the trailing seconds: clients getting a
    connection back (accepts) against clients joining the backlog. Below 1 the offline backlog grows: the
    storm is winning (sync-engine essay; alarms `drain_inflow_*`).

    A client that lost its connection without a hint (a kill, an abrupt restart, a drop, churn) wants it
    back at once: it joins the backlog the second it is lost. A planned close tells its client to come back
    over the hint window: it joins the backlog then, spread over that window (`due_shares`) — counted at
    the close, a paced drain read as a storm winning from its first second (accepts come a hint later)."""

    def __init__(self, seconds: int = DRAIN_INFLOW_WINDOW_S, steady_per_s: float = 0.0) -> None:
        """`steady_per_s`: the window starts full of a steady fleet's seconds, that many clients a second
        losing a connection and getting one back. The simulator starts its clients connected and steady,
        but with nobody yet in backoff: its first second's churn, against an empty window, read 0.54 in
        graceful-drain (the kill switch at 1 s) before a single churned client was due back."""
        self._accepts: deque[float] = deque([steady_per_s] * seconds, maxlen=seconds)
        self._inflow: deque[float] = deque([steady_per_s] * seconds, maxlen=seconds)
        self._due: deque[float] = deque()  # hinted clients due back: [0] this second, [1] the next, …
        self.accepts = self.inflow = steady_per_s * seconds

    def add(self, accepts: float, disconnects: float, hinted: Iterable[HintedCloses] = ()) -> None:
        """One second's figures: its accepts, the connections lost without a hint (`disconnects`) and its
        planned closes with their hints; the oldest second leaves the window. The sums are taken afresh
        (ten values): real nodes report rates, not counts, and a running sum of fractions drifts — after a
        drain it left ±1e-14 "disconnects" on a quiet fleet, and the ratio came out negative."""
        due = self._due
        _spread_due(due, hinted)
        self._accepts.append(accepts)
        self._inflow.append(disconnects + (due.popleft() if due else 0.0))
        self.accepts = math.fsum(self._accepts)
        self.inflow = math.fsum(self._inflow)

    @property
    def ratio(self) -> float | None:
        """None when too few clients flowed in over the window to judge (`DRAIN_INFLOW_MIN_CLIENTS`) —
        none at all on a quiet fleet."""
        return ratio_of(self.accepts, self.inflow)


def _spread_due(due: deque[float], hinted: Iterable[HintedCloses]) -> None:
    """Adds each second's hinted closes to `due` (clients due back: [0] this second, [1] the next, …),
    spread over their hint windows (`due_shares`)."""
    for closes in hinted:
        if closes.count <= 0:
            continue
        lo_ms, hi_ms = closes.hint_ms  # (as a tuple: a list from a request body is not hashable)
        shares = due_shares((lo_ms, hi_ms), closes.at_s)
        while len(due) < len(shares):
            due.append(0.0)
        for j, share in enumerate(shares):
            due[j] += closes.count * share


class WithinHint:
    """Clients a drain closed at its pace with a reconnect hint whose hint has not yet run out: away by
    design — the fleet told them when to come back —, so the `connections_drop` alarm counts them as held
    (`Totals.within_hint_clients`; the drain guard's `offline_at_once_pct` is this at a steady rate: rate ×
    the hint's mean). The expected count: each client is back at a uniform point of its window
    (`due_shares`), so of n due in a second, n ± √n are back in it — a few hundred of graceful-drain's
    ~26 k, far under the alarm's 5 %.

    Left out: a deadline's forced closes (`HintedCloses.forced`) — a drain that ran out of time closes the
    rest at once, a surge the alarm is there to show, hint or not — and closes without a hint (an abrupt
    restart, a kill, a drop), whose clients want back at once. A client still away after its hint has run
    out is missing: the alarm counts it as lost."""

    def __init__(self) -> None:
        self._due: deque[float] = deque()  # clients not yet due back: [0] the next second, [1] the one after
        #: The clients whose hint ran out in the second last added: back by design, each when told
        #: (`Totals.hinted_returns_per_s`, which the reconnect_rate_high alarm leaves out of its attempts).
        self.returned = 0.0

    def add(self, hinted: Iterable[HintedCloses] = ()) -> None:
        """One second's hinted closes (the forced ones are skipped); those due back by its end leave.
        Called every second, with none too: the window moves with the clock."""
        _spread_due(self._due, [closes for closes in hinted if not closes.forced])
        self.returned = self._due.popleft() if self._due else 0.0

    @property
    def clients(self) -> int:
        return round(math.fsum(self._due))


def ratio_of(accepts: float, inflow: float) -> float | None:
    return round(float(accepts / inflow), 3) if inflow >= DRAIN_INFLOW_MIN_CLIENTS else None


def headroom_pct(connections: float, capacity_connections: float, places: int | None = 2) -> float:
    """Spare connection capacity of the nodes in rotation, as a share: their capacity against every
    connection held — a draining node's clients too, who need a place on them (the outage seed's "headroom
    consumed" as a batch's clients reconnect). Below 0 the fleet holds more than it is planned for; with
    nothing in rotation there is no spare capacity: 0 (it read -100, a figure of no fleet — a node of 100
    holding 300 reads -200). One definition for the simulator's frames, the controller's and the guards'.

    To `places` decimals, as frames carry it; `None` unrounded, as the guards judge it against the budget
    (rounded, 34.996 % would pass a 35 % one)."""
    if capacity_connections <= 0:
        return 0.0
    share = (capacity_connections - connections) / capacity_connections * 100
    return share if places is None else round(share, places)


def beside_limit(value: float, limit: float | None, decimals: int = 0, *, also: Iterable[float] = ()) -> str:
    """`value` to `decimals` places, or more when fewer would round it onto its `limit` or past it: an
    alarm or a gauge comparing 34.6 with a 35 budget says "34.6", not "35" (which read as equal to the
    line it is under). Exactly at its limit, it gets the places that write it as the limit reads: a
    lockstep index of 4.05 fires at a limit of 4.05 (at or above), and "4.0" beside "alarm at 4.05×" read
    as under the line it fired at. `also`: other lines the same words name (drain ÷ inflow's kill switch
    beside its losing line), each kept on its side too. At most 6 places."""
    lines = [line for line in (limit, *also) if line is not None and math.isfinite(line)]
    if not math.isfinite(value):
        return f"{value:.{decimals}f}"
    places = decimals
    while places < 6:
        shown = float(f"{value:.{places}f}")  # as printed (round() is not how f-strings round)
        if all((shown > line) - (shown < line) == (value > line) - (value < line) for line in lines):
            break
        places += 1
    return f"{value:.{places}f}"


#: How many nodes a message names before it says how many more (`first_named`).
NAMED_NODES = 3


def first_named(names: Sequence[str], shown: int = NAMED_NODES, total: int | None = None) -> str:
    """The first few of a list of nodes, and how many more: "gw-001, gw-007, gw-012 and 5 more" — a fleet
    alarm's message names a few; its `nodes` lists them all. `total`: how many there are, when `names`
    holds only the first (in a storm hundreds of nodes are hot each second: format only those shown)."""
    total = len(names) if total is None else total
    more = f" and {total - shown} more" if total > shown else ""
    return ", ".join(names[:shown]) + more
