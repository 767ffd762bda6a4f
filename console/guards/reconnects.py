"""What a drain's reconnects come to at their peak, and the line the reconnect alarm draws for them.

A drain's closed clients come back over its hint window: once the first are back, its closes per second
arrive as reconnects per second. What is left at the deadline is force-closed in one moment, each client
told the same hint (both backends: the simulator's kernel closes them as it closes the paced ones, the
gateway node with `plan.hint`), so the force-closed arrive spread over the same window, on top of the paced
closes still coming back. The survivors' CPU is judged at that peak.

The reconnect alarm leaves out the drained clients back on their hint where the fleet says which they are
(`Totals.hinted_returns_per_s`; both backends say): a paced drain with hints is no storm — the graceful-drain
drill done right read "reconnects 348 > 100/s" for 30 min (review). Against its line a drain then adds only
its deadline's force-closed (`ReconnectLine.added_per_s`); where a source does not say, every reconnect of
it, as before.

The reconnect_rate_high alarm (`console.alarms.rules.RateOverBaseline`) fires when the fleet's attempts per
second stay over `reconnect_rate_multiple` × the steady rate it learned while calm (`CalmBaseline`), never
counted under `reconnect_floor_per_s`. A guard has one snapshot, not the alarm's history: `steady_reconnects`
takes the configured baseline where there is one (the alarm's own then), else the level the fleet API learned
over its calm seconds as the alarm does (`SteadyAttempts`, given by the server), else the backend's calm inflow,
else this second's attempts when the second is calm (`calm_second`, as the alarm learns), less the drained
clients back on their hint (or, where a source does not say them, the closes of the drains under way). Review: the planner offered graceful-drain 7,910 closes/s and the alarm fired 17 s
after it was applied ("16× the steady 185/s").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from console.alarms.tracking import calm_second, unhinted_attempts_per_s
from console.guards.capacity import FleetCapacity
from console.guards.fleet import FleetLoad, max_serving_cpu_pct
from console.guards.thresholds import Thresholds
from console.protocol import FleetSnapshot

#: A hint window narrower than a second lands its clients within one second: rates are per second.
MIN_SPREAD_S = 1.0


def spread_s(hint_ms: tuple[float, float]) -> float:
    """Seconds a hint window spreads its clients over, for a per-second rate (at least `MIN_SPREAD_S`)."""
    return max((hint_ms[1] - hint_ms[0]) / 1000, MIN_SPREAD_S)


def force_close_burst_per_s(forced: int, hint_ms: tuple[float, float]) -> float:
    """The force-closed clients coming back per second: `forced` spread over the hint window."""
    return forced / spread_s(hint_ms)


def peak_reconnects_per_s(
    closes_per_s: float, forced: int, deadline_s: float, hint_ms: tuple[float, float]
) -> float:
    """A drain's reconnects per second at their peak: its closes per second (`closes_per_s`, every node of
    it) once the first are back; where `forced` connections are left at the deadline, their burst on top of
    the paced closes still coming back then — those closed in the last window's worth of seconds before
    the deadline (none at a deadline of 0)."""
    if forced <= 0:
        return closes_per_s
    spread = spread_s(hint_ms)
    paced = closes_per_s * min(deadline_s, spread) / spread
    return max(closes_per_s, paced + forced / spread)


@dataclass(frozen=True)
class ReconnectLine:
    """The reconnect alarm's line as a guard can draw it, and the fleet's reconnects before a drain."""

    steady_per_s: float | None  # the steady rate the line is drawn from (the floor's at least); None: unknown
    line_per_s: float | None  # `reconnect_rate_multiple` × it: over it the alarm fires
    before_per_s: (
        float  # reconnects per second before this drain: now, or the steady and the drains under way
    )
    source: str  # what the steady rate is, in words
    # Whether a drain's paced closes count against the line: only where the fleet does not say which
    # attempts are drained clients back on their hint (`Totals.hinted_returns_per_s` null), as the alarm
    # then judges every attempt. Where it says, the alarm leaves them out (`unhinted_attempts_per_s`), and
    # only a deadline's force-close counts.
    paced_counted: bool = True
    # Whether `steady_per_s` is the floor (`reconnect_floor_per_s`): the steady rate found is under it.
    at_floor: bool = False

    def steady_said(self) -> str:
        """The line's base in words: "the steady 185/s (…)", or the floor where that is it."""
        if self.at_floor:
            return f"the {self.steady_per_s:,.0f}/s floor (reconnect_floor_per_s; {self.source})"
        return f"the steady {self.steady_per_s:,.0f}/s ({self.source})"

    def room_per_s(self) -> float | None:
        """Reconnects per second a drain may add under the line (below 0 when over it already); None when
        the line is unknown."""
        return None if self.line_per_s is None else self.line_per_s - self.before_per_s

    def added_per_s(
        self, closes_per_s: float, forced: int, deadline_s: float, hint_ms: tuple[float, float]
    ) -> float:
        """What a drain adds, at its peak, to the reconnects the alarm judges: its reconnects
        (`peak_reconnects_per_s`) where paced closes count, else only its deadline's force-closed, back
        over the hint window (`force_close_burst_per_s`; 0 with none left to force)."""
        if self.paced_counted:
            return peak_reconnects_per_s(closes_per_s, forced, deadline_s, hint_ms)
        return force_close_burst_per_s(forced, hint_ms) if forced > 0 else 0.0


def steady_reconnects(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    load: FleetLoad,
    thresholds: Thresholds,
    learned_per_s: float | None = None,
) -> tuple[float | None, str]:
    """The steady reconnect rate the alarm judges against, and what it is: see the module's docstring.
    `learned_per_s`: the fleet API's learned calm level (`SteadyAttempts.level_per_s`), None where unknown."""
    if thresholds.reconnect_baseline_per_s > 0:
        return thresholds.reconnect_baseline_per_s, "the configured reconnect_baseline_per_s"
    # Before the backend's calm inflow: the alarm learns its own (185/s on graceful-drain, where the
    # capacity record says 166.7), and a line 10 % under the alarm's failed drains the alarm would allow.
    if learned_per_s is not None and learned_per_s > 0:
        return learned_per_s, "the steady rate learned while calm, as the alarm learns it"
    if capacity.steady_inflow_per_s > 0:
        return capacity.steady_inflow_per_s, "the fleet's calm inflow"
    totals = snapshot.totals
    if calm_second(totals, thresholds.cpu_pause_pct, max_serving_cpu_pct(snapshot.nodes)):
        if totals.hinted_returns_per_s is not None:
            return unhinted_attempts_per_s(totals), "this calm second's attempts"
        return max(totals.attempts_per_s - load.drain_rate_per_s, 0.0), "this calm second's attempts"
    return None, ""


def reconnect_line(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    load: FleetLoad,
    thresholds: Thresholds,
    learned_per_s: float | None = None,
) -> ReconnectLine:
    """The alarm's line (`reconnect_rate_multiple` × the steady rate, the floor at least) and the fleet's
    reconnects before the drain, as the alarm counts them. Where the fleet says which attempts are drained
    clients back on their hint: the others, this second's (`unhinted_attempts_per_s`), or the steady rate
    where that is more. Where it does not: this second's attempts, or the steady rate and the closes of the
    drains under way where those are more (a drain's reconnects rise over its hint window: at its start
    they are not in this second's attempts yet)."""
    steady, source = steady_reconnects(snapshot, capacity, load, thresholds, learned_per_s)
    totals = snapshot.totals
    paced_counted = totals.hinted_returns_per_s is None
    attempts = totals.attempts_per_s if paced_counted else unhinted_attempts_per_s(totals)
    if steady is None:
        return ReconnectLine(None, None, attempts, source, paced_counted)
    base = max(steady, thresholds.reconnect_floor_per_s)
    before = max(attempts, steady + (load.drain_rate_per_s if paced_counted else 0.0))
    at_floor = steady < thresholds.reconnect_floor_per_s
    if at_floor:  # said with its figure: the floor's reason
        source = f"{source} {steady:,.0f}/s, under it"
    return ReconnectLine(
        base, thresholds.reconnect_rate_multiple * base, before, source, paced_counted, at_floor
    )


def reconnect_room_rate(line: ReconnectLine, count: int) -> float | None:
    """The largest per-node rate (3 significant figures, rounded down) whose closes, back as reconnects,
    keep the fleet's reconnects at or under the alarm's line; 0 when it is crossed already, None when the
    line is unknown or a drain's paced closes do not count against it (`ReconnectLine.paced_counted`)."""
    room = line.room_per_s()
    if room is None or not line.paced_counted:
        return None
    if room <= 0:
        return 0.0
    rate = room / count
    digits = 2 - math.floor(math.log10(rate))
    candidate = math.floor(rate * 10**digits) / 10**digits
    while candidate > 0 and line.before_per_s + candidate * count > (line.line_per_s or 0.0):  # float noise
        candidate = round(candidate - 10.0**-digits, digits)
    return max(candidate, 0.0)
