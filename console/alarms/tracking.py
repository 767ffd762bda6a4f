"""Small stateful trackers the alarm rules are built from: how long a condition has held, a value's
recent peak, a windowed sum, and a baseline learned while the fleet is calm (and the steady attempts the
console's gauge reads and the fleet API's admission guard judges by, learned so).

They take the fleet time from the frame (never a clock), so a replay judges exactly as the live run did.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from console.protocol import Totals

if TYPE_CHECKING:  # (not at run time: the guards import this module, for `calm_second`)
    from console.guards.thresholds import Thresholds


class Sustained:
    """How long a condition has held without a break, in fleet seconds."""

    def __init__(self) -> None:
        self._onset_s: float | None = None

    def update(self, time_s: float, holds: bool) -> float | None:
        """Seconds the condition has held as of `time_s` (0 on its first frame), or None when it does not."""
        if not holds:
            self._onset_s = None
            return None
        if self._onset_s is None:
            self._onset_s = time_s
        return time_s - self._onset_s


class Onsets:
    """Since when each node has met a condition without a break (`Sustained`, node by node): a node that
    stops meeting it is forgotten, so a later spell is timed from its own start."""

    def __init__(self) -> None:
        self._onset_s: dict[str, float] = {}

    def held(self, time_s: float, node_ids: Iterable[str]) -> dict[str, float]:
        """Seconds each of `node_ids` (the nodes meeting the condition now) has met it, as of `time_s`."""
        current = list(node_ids)
        onset_s = self._onset_s
        if len(onset_s) > len(current) or any(node_id not in onset_s for node_id in current):
            meeting = set(current)
            for node_id in [n for n in onset_s if n not in meeting]:
                del onset_s[node_id]
        return {node_id: time_s - onset_s.setdefault(node_id, time_s) for node_id in current}


class Window:
    """The (time, value) samples of the last `span_s` fleet seconds."""

    def __init__(self, span_s: float) -> None:
        self.span_s = span_s
        self._samples: deque[tuple[float, float]] = deque()

    def add(self, time_s: float, value: float) -> None:
        self._samples.append((time_s, value))
        horizon = time_s - self.span_s
        while self._samples and self._samples[0][0] < horizon:
            self._samples.popleft()

    def peak(self) -> float:
        return max(value for _, value in self._samples)

    def total(self) -> float:
        return sum(value for _, value in self._samples)

    def __len__(self) -> int:
        return len(self._samples)


def drop_pct(peak: float, now: float) -> float | None:
    """How far `now` is under `peak`, as a share of the peak in percent: the connections' drop, as the
    connections_drop alarm and the connections gauge both judge it (the peak of the alarm's window, not
    the value a window ago — the gauge read "+120 %", green, beside the alarm's "fell 43.8 %"). None with
    no peak to fall from."""
    return (peak - now) / peak * 100 if peak > 0 else None


#: Attempts a calm second may leave unaccepted: under 1 % of them, or under 10 a second — the reconnect
#: floor's trickle (`reconnect_floor_per_s`: a rate under it never pages), so a small fleet's handshakes
#: still in flight at a second's end, or a mobile client's lost one, are not a storm.
CALM_UNACCEPTED_SHARE = 0.01
CALM_UNACCEPTED_FLOOR_PER_S = 10.0


def unhinted_attempts_per_s(totals: Totals) -> float:
    """The attempts a reconnect storm is judged by: every attempt but those of the clients a paced drain
    told when to come back, back as told (`Totals.hinted_returns_per_s`; all of them where a source does
    not say). A drain at 167/s with a 1–30 s hint brings 167 reconnects/s, by design: counted, a perfect
    graceful drain read "✖ reconnects 348 > 100/s" for 30 min and its drill's report asked for admission
    (review). A deadline's forced closes, and any retry of a returning client, are still counted."""
    returned = totals.hinted_returns_per_s or 0.0
    return max(totals.attempts_per_s - returned, 0.0)


def calm_second(totals: Totals, cpu_line_pct: float, hottest_cpu_pct: float = 0.0) -> bool:
    """Whether a second shows none of a storm's own marks: attempts left unaccepted — timed out, refused
    with a 503, or finding no node to answer (more than `CALM_UNACCEPTED_SHARE` of them) — or a node over
    `cpu_line_pct` (the rollout's pause line).

    These marks, not the rate, say a storm, because they do not depend on the baseline they guard: judged
    by the rate against a line drawn from the rate, a console attached mid-storm learned the storm, drew its
    line ten times above it, and read 44k attempts/s with 35k timeouts/s and every node at 100 % CPU as
    "1.0× steady" (regional-outage drill, found in review). `hottest_cpu_pct`: the nodes' hottest, for totals
    that do not say it (`max_cpu_pct` 0)."""
    unaccepted_per_s = max(
        totals.attempts_per_s - totals.accepts_per_s, totals.timeouts_per_s + totals.rejects_per_s
    )
    allowed_per_s = max(CALM_UNACCEPTED_SHARE * totals.attempts_per_s, CALM_UNACCEPTED_FLOOR_PER_S)
    hottest = totals.max_cpu_pct or hottest_cpu_pct
    return unaccepted_per_s < allowed_per_s and hottest <= cpu_line_pct


class CalmBaseline:
    """A rate's steady level, learned from calm seconds only (`calm_second`): the lower quartile of the
    learning period's, then a slow exponential average of those under the alarm line. A storm's seconds
    teach nothing, so the level stays at its last calm value through a storm, and a console attached
    mid-storm has no baseline (`level_per_s` None, `calm_seen` False) until the fleet is calm — it says so
    rather than take the storm for normal.

    The learning period starts at the first calm second. The quartile, not the mean: a storm that shows only
    as a rate (clients flooding in, all handshaken in time) is not a storm by its marks, and a mean taught
    the baseline such a storm — the gauge then read a lockstep wave as "0.0× steady". Up to three quarters
    of the learning period may be such a storm without moving it.

    A configured baseline (> 0) replaces learning altogether.
    """

    def __init__(self, learn_s: float, tau_s: float, configured_per_s: float = 0.0) -> None:
        self.learn_s = learn_s
        self.tau_s = tau_s
        self.configured_per_s = configured_per_s
        self._first_s: float | None = None
        self._last_s: float | None = None
        self._learning: list[float] = []
        self._learned = False
        self._level: float | None = None

    @property
    def level_per_s(self) -> float | None:
        """The baseline, or None while still learning (or with no calm second seen yet)."""
        if self.configured_per_s > 0:
            return self.configured_per_s
        return self._level if self._learned else None

    @property
    def calm_seen(self) -> bool:
        """Whether any calm second has been seen: False, a missing level means a storm since the start,
        not a learning period under way."""
        return self._first_s is not None

    def observe(self, time_s: float, rate_per_s: float, over_line: bool, calm: bool = True) -> None:
        """Learn from one second's rate; a second that is not `calm` (`calm_second`), or is `over_line` (the
        alarm's condition holds) once learned, teaches nothing."""
        last_s, self._last_s = self._last_s, time_s
        if not self._learned and self._first_s is not None and time_s - self._first_s >= self.learn_s:
            # The first second past the learning period, calm or not, closes it: it was judged against no
            # line (the caller saw None) and teaches nothing, or a rate storm's first second would. A storm
            # that begins just then is judged against the calm at once (regional-outage: its power cut at
            # 30 s, the first second past a calm learning period).
            self._learned = True
            self._learning = []
            return
        if not calm:
            return
        if self._first_s is None:
            self._first_s = time_s
        if not self._learned:
            bisect.insort(self._learning, rate_per_s)
            self._level = self._learning[(len(self._learning) - 1) // 4]
        elif not over_line and last_s is not None:
            # Weighted by the step from the second before, calm or not: a storm's length is no weight.
            step_s = max(time_s - last_s, 0.0)
            weight = min(step_s / self.tau_s, 1.0)
            self._level += (rate_per_s - self._level) * weight


class SteadyAttempts:
    """The fleet's steady connection attempts per second: what the console's attempts gauge reads ("1.0×
    steady (10/s)") and the fleet API's admission guard judges a limit by — one figure, learned one way.

    A `CalmBaseline` of the attempts over calm seconds (`calm_second`, with `cpu_line_pct`), a second over
    `storm_x` times the level teaching nothing once learned, never counted below `floor_per_s`; a source's
    declared `steady_attempts_per_s` (> 0) replaces it. Learned over a window, so one quiet second does not
    make it 0: judged by the second it was asked in, the admission guard passed 0.001/s a node as ok on a
    loopback fleet whose gauge read "steady (10/s)" (found in review)."""

    def __init__(
        self,
        *,
        learn_s: float,
        tau_s: float,
        configured_per_s: float,
        floor_per_s: float,
        storm_x: float,
        cpu_line_pct: float,
    ) -> None:
        self.floor_per_s = floor_per_s
        self.storm_x = storm_x
        self.cpu_line_pct = cpu_line_pct
        self._baseline = CalmBaseline(learn_s, tau_s, configured_per_s)
        #: The steady attempts per second (never under the floor), or None while still learning them (or
        #: with no calm second seen yet: `calm_seen`).
        self.level_per_s: float | None = None
        #: Whether that is the floor: the fleet's learned level is under it (a quiet loopback fleet's 0/s
        #: read "0.0× steady (10/s)" — a steady rate nobody had seen).
        self.at_floor = False

    @classmethod
    def of(cls, thresholds: Thresholds) -> SteadyAttempts:
        """Learned with the shared lines, as the gauge learns them (`GaugeThresholds.from_shared`) and the
        reconnect_rate_high alarm judges over them."""
        return cls(
            learn_s=thresholds.baseline_learn_s,
            tau_s=thresholds.baseline_tau_s,
            configured_per_s=thresholds.reconnect_baseline_per_s,
            floor_per_s=thresholds.reconnect_floor_per_s,
            storm_x=thresholds.reconnect_rate_multiple,
            cpu_line_pct=thresholds.cpu_pause_pct,
        )

    @property
    def calm_seen(self) -> bool:
        """Whether a calm second has been seen (`CalmBaseline.calm_seen`): with none, no level means a storm
        since the start, not a learning period under way."""
        return self._baseline.calm_seen

    def observe(self, time_s: float, totals: Totals, hottest_cpu_pct: float = 0.0) -> None:
        """Learn from one second's totals (`hottest_cpu_pct`: the nodes' hottest, for totals that do not say
        it)."""
        declared = getattr(totals, "steady_attempts_per_s", None)
        if isinstance(declared, int | float) and declared > 0:
            self.level_per_s = float(declared)
            return
        attempts = unhinted_attempts_per_s(totals)
        level = self._baseline.level_per_s
        storm = level is not None and attempts > max(level, self.floor_per_s) * self.storm_x
        calm = calm_second(totals, self.cpu_line_pct, hottest_cpu_pct)
        self._baseline.observe(time_s, attempts, storm, calm)
        level = self._baseline.level_per_s
        self.level_per_s = None if level is None else max(level, self.floor_per_s)
        self.at_floor = level is not None and level < self.floor_per_s
