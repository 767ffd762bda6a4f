"""The reconnect hint a drain gives its clients: where the planner's window starts, how wide a rate needs
it, the share of the fleet offline at once while it runs, and the share its deadline force-closes."""

from __future__ import annotations

import math

from console.guards.deadline import force_close_drop_pct
from console.guards.thresholds import Thresholds

__all__ = [
    "HINT_START_MS",
    "force_close_drop_pct",
    "hint_window_needed_ms",
    "offline_at_once_pct",
    "planned_hint_ms",
]

#: The planner's hint window starts here: nobody is told to come back at once (interview: "after a
#: randomized delay rather than being cut off cold").
HINT_START_MS = 1000


def hint_window_needed_ms(total_rate_per_s: float, thresholds: Thresholds) -> float:
    """A window wide enough that each second's closes come back spread thinly (a narrow window recreates
    lockstep: the outage seed's 100 ms of jitter did)."""
    return max(thresholds.hint_window_min_ms, total_rate_per_s / thresholds.hint_spread_per_s_max * 1000)


def planned_hint_ms(total_rate_per_s: float, thresholds: Thresholds, hint_max_ms: int = 0) -> tuple[int, int]:
    """The hint window the planner offers for a rate: from `HINT_START_MS`, as wide as
    `hint_window_needed_ms` (the `hint_window_ms` check's limit), cut at the fleet's longest hint
    (`FleetCapacity.hint_max_ms`, 0: none). The console re-derives an untouched hint with it as the
    operator changes the rate."""
    high_ms = HINT_START_MS + math.ceil(hint_window_needed_ms(total_rate_per_s, thresholds))
    return HINT_START_MS, min(high_ms, hint_max_ms) if hint_max_ms else high_ms


def offline_at_once_pct(
    total_rate_per_s: float,
    hint_ms: tuple[float, float],
    leaving_connections: int,
    fleet_connections: int,
    thresholds: Thresholds,
    forced: int = 0,
    deadline_s: float = math.inf,
) -> float:
    """Clients closed and not yet back at once, as a share of the fleet's (the `offline_at_once_pct` note):
    a drain's rate × the hint's mean — the alarm's window at most —, the draining nodes' connections at
    most. One arithmetic for the guard's note and the planner that keeps under it (`_offline_rate`).

    `forced`: what the deadline (`deadline_s` after the start) force-closes, all in one moment, on top of the
    paced closes still within their hint then — those closed in the hint's mean before it, or since the start
    (review: 137 of 300 force-closed at once on a loopback fleet beside a note of 2 %, the paced alone). A
    drain that empties its nodes by the deadline (`forced` 0) reads as before."""
    mean_hint_s = (hint_ms[0] + hint_ms[1]) / 2000
    paced = total_rate_per_s * min(mean_hint_s, thresholds.connections_drop_window_s, deadline_s)
    offline = min(paced + forced, leaving_connections)
    return offline / max(fleet_connections, 1) * 100
