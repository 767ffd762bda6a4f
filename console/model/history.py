"""The console's model of one fleet: the newest frame plus bounded history, built only from stream items.

Pure: time arrives with the items (`at_s`), nothing here reads a clock or a socket. Bounded: totals for
10 minutes, per-node series for 5 minutes, wave bins for 60 s, so an hour-long session costs the same
memory as a ten-minute one (issue #3 bench: rss ≤ 250 MB).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from console.alarms.tracking import SteadyAttempts, Sustained, drop_pct
from console.model.alarms import Acknowledgements, AlarmLog, AlarmSource
from console.model.drain_seen import DrainSeen
from console.model.link import LinkState, LinkStatus, Malformed, StreamItem
from console.model.node_readings import NODE_METRICS, ColumnarFrame, NodeReadings
from console.model.ring import Ring, RingTable
from console.model.thresholds import GaugeThresholds
from console.model.units import duration
from console.protocol import AdmissionInForce, Event, Frame, Hello, NodeStatus, ServedDrill, Source
from console.waves import bins_in, lockstep_index

TOTALS_HISTORY_S = 600  # the connections chart: last 10 minutes (issue #3)
NODE_HISTORY_S = 300  # node sparklines: last 5 minutes (issue #3)
WAVE_WINDOW_S = 60  # the wave chart: last 30–60 s of 100 ms bins (issue #3)
EVENTS_KEPT = 500

# The frames whose clock says how much fleet time one frame covers.
_STEP_FRAMES = 30

# Frames in a row older than the newest one held before the model takes them as a restarted history.
_BEHIND_MEANS_RESTART = 3


@dataclass
class TotalsHistory:
    """Fleet-wide series, one sample per frame; NaN samples mark gaps."""

    time_s: Ring = field(default_factory=lambda: Ring(TOTALS_HISTORY_S))
    connections: Ring = field(default_factory=lambda: Ring(TOTALS_HISTORY_S))
    attempts_per_s: Ring = field(default_factory=lambda: Ring(TOTALS_HISTORY_S))
    accepts_per_s: Ring = field(default_factory=lambda: Ring(TOTALS_HISTORY_S))
    rejects_per_s: Ring = field(default_factory=lambda: Ring(TOTALS_HISTORY_S))
    #: Drained clients still within their reconnect hint (0 from a source that does not say).
    within_hint_clients: Ring = field(default_factory=lambda: Ring(TOTALS_HISTORY_S))

    def append(self, time_s: float, frame: Frame | None) -> None:
        self.time_s.append(time_s)
        totals = frame.totals if frame else None
        self.connections.append(totals.connections if totals else np.nan)
        self.attempts_per_s.append(totals.attempts_per_s if totals else np.nan)
        self.accepts_per_s.append(totals.accepts_per_s if totals else np.nan)
        self.rejects_per_s.append(totals.rejects_per_s if totals else np.nan)
        self.within_hint_clients.append((totals.within_hint_clients or 0) if totals else np.nan)


def stale_note(age_s: float) -> str:
    """What a stale panel's title says: whole seconds, as the header's age counts them."""
    return f"stale — last frame {duration(age_s)} ago"


class ConnectionsChange(NamedTuple):
    """Connections' change over a window: `delta` clients, `pct` of `base` (0 when `base` is 0), `base`
    the count at the window's start."""

    delta: float
    pct: float
    base: float


class ConnectionsDrop(NamedTuple):
    """Connections `pct` under their `peak` of the connections_drop alarm's window (`tracking.drop_pct`),
    as the alarm counts them: with the drained clients still within their hint (`within_hint`, now)."""

    pct: float
    peak: float
    within_hint: float = 0.0


class FleetModel:
    def __init__(
        self,
        thresholds: GaugeThresholds | None = None,
        alarm_source: AlarmSource | None = None,
        acknowledged: Acknowledgements | None = None,
    ) -> None:
        """`acknowledged`: the alarm spells acknowledged, where they outlive this model (`Acknowledgements`:
        a replay's, across its seeks)."""
        self.thresholds = thresholds or GaugeThresholds()
        self.alarm_source = alarm_source
        self.fleet = "—"
        self.source: Source | None = None
        self.epoch: str | None = None
        self.last_seq: int | None = None
        self.frame: Frame | None = None
        self.received_at_s: float | None = None
        self.frame_interval_s = 1.0
        self.role: str | None = None  # the token's, as the stream's hello says (None: an older server)
        self.actor: str | None = None  # the token's holder, as the hello says (None: an older server)
        self.drill: ServedDrill | None = None  # the served drill this fleet runs, as the hello says
        #: The drill's end event, from the stream or a hello after the end: the header says the drill
        #: ended for as long as it is on screen (its notification is gone in 30 s).
        self.drill_ended: Event | None = None
        self.frames_applied = 0
        self.malformed = 0
        self.malformed_reason: str | None = None
        self.gaps = 0
        self.gap_times_s: deque[float] = deque(maxlen=50)
        self.link = LinkStatus(LinkState.CONNECTING)
        self.totals = TotalsHistory()
        # The chart's 60 s, or the lockstep alarm's window where it is longer (its index reads the same bins).
        self.wave_bins = Ring(bins_in(max(WAVE_WINDOW_S, self.thresholds.lockstep_window_s)))
        self.wave_bin_ms = 100
        self.lockstep: float | None = None  # None: not measured (too quiet, or too few bins yet)
        self.baseline_attempts_per_s: float | None = None  # None while still learning it
        self.baseline_at_floor = False  # that is the floor: the learned level is under it (`SteadyAttempts`)
        self._baseline = self._new_baseline()
        #: Seconds drain ÷ inflow has been under its losing line without a break (None: it is not), as the
        #: drain_inflow_losing alarm times it: a second too few to judge breaks it (`_update_losing`).
        self.drain_inflow_under_s: float | None = None
        self._losing = Sustained()
        self.node_rows: dict[str, int] = {}
        self.nodes: dict[str, NodeStatus] = {}
        #: Each node's latest drain as seen, kept after it goes: a cancelled one's count (`drain_seen`).
        self.drains_seen: dict[str, DrainSeen] = {}
        self.node_series = {name: RingTable(NODE_HISTORY_S) for name in NODE_METRICS}
        self.events: deque[Event] = deque(maxlen=EVENTS_KEPT)
        self.alarms = AlarmLog(acknowledged=acknowledged)
        self._behind = 0

    # --- applying stream items --------------------------------------------------------------------

    def apply(self, item: StreamItem) -> None:
        if isinstance(item, LinkStatus):
            if self.link.state is LinkState.PAUSED and item.state is LinkState.LIVE:
                self.received_at_s = item.at_s  # playing again: frames are due from now, not overdue
            self.link = item
        elif isinstance(item, Malformed):
            self.malformed += 1
            self.malformed_reason = item.reason
        elif isinstance(item.message, Frame):
            self.apply_frame(item.message, item.at_s)
        elif isinstance(item.message, Hello):
            self.apply_hello(item.message)
        else:
            self.events.append(item.message)
            if item.message.kind == "drill" and item.message.data.get("ended"):
                self.drill_ended = item.message

    def apply_hello(self, hello: Hello) -> None:
        self.fleet = hello.fleet
        self.source = hello.source
        self.frame_interval_s = hello.frame_interval_s
        self.role = hello.role
        self.actor = hello.actor
        self.drill = hello.drill
        restarted = self.epoch is not None and hello.epoch != self.epoch
        if hello.drill is None or hello.drill.ended is not None or restarted:
            # (a resume's hello from an older server, which says no end, keeps the end already told)
            self.drill_ended = None if hello.drill is None else hello.drill.ended
        if self.frame is not None and (hello.recovered is False or restarted):
            self.mark_gap()
        if restarted:
            self.last_seq = None  # a new history: its seqs start over, and so does its clock
            self._baseline = self._new_baseline()
            self._losing = Sustained()
        self.epoch = hello.epoch

    def mark_gap(self) -> None:
        """Frames were lost: break every chart's line here instead of joining across the hole."""
        self.gaps += 1
        time_s = self.frame.time_s if self.frame else 0.0
        self.gap_times_s.append(time_s)
        self.totals.append(time_s, None)
        self.wave_bins.extend(np.full(10, np.nan))

    def apply_frame(self, frame: Frame, at_s: float) -> None:
        if self.epoch is not None and frame.epoch != self.epoch:
            self.mark_gap()
            self.epoch = frame.epoch
            self.last_seq = None
            self._baseline = self._new_baseline()
            self._losing = Sustained()
        if self.last_seq is not None:
            if frame.seq <= self.last_seq:
                # A replayed frame we already hold — unless they keep coming: then the server restarted
                # its history without changing the epoch, and waiting for seqs to catch up would freeze us.
                self._behind += 1
                if self._behind < _BEHIND_MEANS_RESTART:
                    return
            if frame.seq > self.last_seq + 1 or frame.seq <= self.last_seq:
                self.mark_gap()
        self._behind = 0
        self.epoch = frame.epoch
        self.last_seq = frame.seq
        self.frame = frame
        self.received_at_s = at_s
        self.frames_applied += 1
        # A replay's prefill sends its frames' nodes as columns only (no records to show: the landing frame,
        # a whole one, comes last).
        readings = (
            frame.node_readings if isinstance(frame, ColumnarFrame) else NodeReadings.of_records(frame.nodes)
        )
        self.totals.append(frame.time_s, frame)
        self._apply_waves(frame)
        self._apply_nodes(frame, readings)
        self._update_baseline(frame, readings)
        self._update_losing(frame)
        if self.alarm_source is not None:
            self.alarms.update(self.alarm_source(frame, readings), frame.time_s)

    def _apply_waves(self, frame: Frame) -> None:
        self.wave_bin_ms = frame.waves.bin_ms
        self.wave_bins.extend(frame.waves.attempts)
        # Over the lockstep_waves alarm's window, as the alarm reads it: one figure on the chart and the panel.
        recent = self.wave_bins.values()[-bins_in(self.thresholds.lockstep_window_s, self.wave_bin_ms) :]
        self.lockstep = lockstep_index(np.nan_to_num(recent), bin_ms=self.wave_bin_ms)

    def chart_wave_bins(self) -> np.ndarray:
        """The wave chart's bins: the last `WAVE_WINDOW_S` (the ring holds more under a longer lockstep window)."""
        return self.wave_bins.values()[-bins_in(WAVE_WINDOW_S, self.wave_bin_ms) :]

    def _apply_nodes(self, frame: Frame, readings: NodeReadings) -> None:
        self.nodes = {node.id: node for node in frame.nodes}
        for node in frame.nodes:
            if node.drain is not None:
                previous = self.drains_seen.get(node.id)
                self.drains_seen[node.id] = DrainSeen.of(previous, node.drain, frame.time_s, frame.span_s)
        for node_id in readings.ids:
            if node_id not in self.node_rows:
                self.node_rows[node_id] = len(self.node_rows)
        # One (nodes × metrics) array, then one column write per metric.
        values = readings.metrics
        rows = np.fromiter(
            (self.node_rows[node_id] for node_id in readings.ids), dtype=np.intp, count=len(readings.ids)
        )
        column = np.full(len(self.node_rows), np.nan, dtype=np.float32)
        for k, name in enumerate(NODE_METRICS):
            column[:] = np.nan
            column[rows] = values[:, k]
            self.node_series[name].append_column(column)

    def _new_baseline(self) -> SteadyAttempts:
        t = self.thresholds
        return SteadyAttempts(
            learn_s=t.baseline_learn_s,
            tau_s=t.baseline_tau_s,
            configured_per_s=t.baseline_configured_per_s,
            floor_per_s=t.baseline_floor_per_s,
            storm_x=t.attempts_crit_x,
            cpu_line_pct=t.cpu_warn_pct,
        )

    def _update_baseline(self, frame: Frame, readings: NodeReadings) -> None:
        """The steady attempts as the alarm engine's reconnect-rate rule learns them and the fleet API's
        admission guard judges by (`SteadyAttempts`): calm seconds only (no storm's timeouts, 503s or hot
        nodes: `calm_second`), the lower quartile while learning, then a slow average of those under the
        storm line, never below the floor."""
        self._baseline.observe(frame.time_s, frame.totals, max(readings.cpu_pct, default=0.0))
        self.baseline_attempts_per_s = self._baseline.level_per_s
        self.baseline_at_floor = self._baseline.at_floor

    def _update_losing(self, frame: Frame) -> None:
        """Times drain ÷ inflow under its losing line second by second, a sped-up frame's folded seconds
        too (`Frame.seconds`), as the alarm judges them: its gauge warns when the alarm would, not on one
        second's dip — a steady fleet's churn comes back as fast as it leaves only on average, and read
        "▲ 0.99" half its seconds (graceful-drain before its rollout)."""
        line = self.thresholds.drain_inflow_warn
        for time_s, totals in frame.seconds() or [(frame.time_s, frame.totals)]:
            ratio = totals.drain_inflow_ratio
            self.drain_inflow_under_s = self._losing.update(time_s, ratio is not None and ratio < line)

    @property
    def calm_seen(self) -> bool:
        """Whether the reconnect baseline has seen a calm second (`SteadyAttempts.calm_seen`): with none, the
        attempts gauge says it has no calm rate to judge by, not that it is learning one."""
        return self._baseline.calm_seen

    # --- reading -------------------------------------------------------------------------------------

    def staleness_s(self, now_s: float) -> float | None:
        return None if self.received_at_s is None else max(0.0, now_s - self.received_at_s)

    def frame_age_s(self, now_s: float) -> float | None:
        """How late the view runs: None before the first frame, and while a replay is held (PAUSED: it
        sends no frames on purpose, and none are late)."""
        return None if self.link.state is LinkState.PAUSED else self.staleness_s(now_s)

    def stale_s(self, now_s: float) -> float | None:
        """The view's age once it is past the critical line (`stale_crit_s`), else None: the gauges, node
        table, charts and rollout panel then say they show old data. Only the header said it, and with the
        fleet API gone the gauges kept the last frame's green ✓ — a dead fleet read as a healthy one."""
        age = self.frame_age_s(now_s)
        return age if age is not None and age >= self.thresholds.stale_crit_s else None

    def node_history(self, node_id: str, metric: str) -> np.ndarray:
        row = self.node_rows.get(node_id)
        if row is None:
            return np.empty(0, dtype=np.float32)
        return self.node_series[metric].row(row)

    def node_events(self, node_id: str, limit: int = 20) -> list[Event]:
        return [event for event in reversed(self.events) if event.names(node_id)][:limit]

    def _recent_connections(
        self, span_s: float, counting_hints: bool = False
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The (times, connections) of the frames held within `span_s` of the newest, oldest first; None
        until there are two. `counting_hints`: with the drained clients still within their hint, as the
        connections_drop alarm counts them."""
        times = self.totals.time_s.values()
        conns = self.totals.connections.values()
        if counting_hints:
            conns = conns + self.totals.within_hint_clients.values()
        ok = ~np.isnan(conns)
        if ok.sum() < 2 or self.frame is None:
            return None
        times, conns = times[ok], conns[ok]
        # Only the current history: after a server restart its clock starts over, and every sample of the
        # old one (up to 10 minutes of them) counted as "within 60 s" of the new clock's small times.
        restarts = np.nonzero(np.diff(times) < 0)[0]
        if restarts.size:
            times, conns = times[restarts[-1] + 1 :], conns[restarts[-1] + 1 :]
            if times.size < 2:
                return None
        earlier = times >= times[-1] - span_s
        return times[earlier], conns[earlier]

    def connections_delta_60s(self) -> ConnectionsChange | None:
        """Connections' change over the last 60 s of the frames held; None until there are two."""
        recent = self._recent_connections(60.0)
        if recent is None:
            return None
        conns = recent[1]
        then = conns[0]
        delta = conns[-1] - then
        return ConnectionsChange(float(delta), float(100.0 * delta / then) if then > 0 else 0.0, float(then))

    def connections_drop(self) -> ConnectionsDrop | None:
        """Connections under their peak of the connections_drop alarm's window, as the alarm judges it
        (`tracking.drop_pct`): the gauge compared with 60 s ago and read "+120 %", green, beside the alarm's
        "fell 43.8 %". With the drained clients still within their hint counted, as the alarm counts them:
        a planned drain colours nothing the alarm stays quiet about. From the frames held (a sped-up frame's
        folded seconds are the alarm's alone). None until there are two frames, or with no peak."""
        recent = self._recent_connections(self.thresholds.connections_drop_window_s, counting_hints=True)
        if recent is None:
            return None
        conns = recent[1]
        peak = float(conns.max())
        pct = drop_pct(peak, float(conns[-1]))
        within_hint = float(self.totals.within_hint_clients.values()[-1])
        return None if pct is None else ConnectionsDrop(pct, peak, within_hint)

    def fleet_s_per_frame(self) -> float:
        """Fleet seconds one frame covers, from the frames' own clock: 1 on a live fleet, the speed on a sped-up
        simulator (`sim serve --speed 10`: ten a frame), whatever the wall-clock `frame_interval_s`."""
        times = self.totals.time_s.values()[-_STEP_FRAMES:]
        conns = self.totals.connections.values()[-_STEP_FRAMES:]
        steps = np.diff(times[~np.isnan(conns)])
        steps = steps[steps > 0]  # a paused clock repeats its time; a restart goes back
        return float(np.median(steps)) if steps.size else self.frame_interval_s

    def admission_capacity_per_bin(self) -> float | None:
        """Fleet admission rate per wave bin: the line a storm must stay under to be shed gracefully — what
        each node in rotation admits (its own setting, else the fleet's); None while one of them admits
        without a limit (its share of the storm is not shed)."""
        frame = self.frame
        in_force = AdmissionInForce.of(frame) if frame is not None else None
        if frame is None or in_force is None or (in_force.uniform and in_force.fleet.rate_per_s is None):
            return None
        rates = [in_force.for_node(node.id).rate_per_s for node in frame.nodes if node.state.in_rotation]
        if any(rate is None for rate in rates):
            return None
        return sum(rate for rate in rates if rate is not None) * self.wave_bin_ms / 1000.0

    def baseline_per_bin(self) -> float | None:
        if self.baseline_attempts_per_s is None:
            return None
        return self.baseline_attempts_per_s * self.wave_bin_ms / 1000.0
