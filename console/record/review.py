"""What a recording shows: its series, its key figures, its alarms and its actions — read in one pass.

The after-action report renders a `Review`; so could a replay screen's summary. The alarms are judged
afresh by `console.alarms` over the recorded frames (not taken from whatever the source sent), so every
recording is judged by the same rules. Key figures use the simulator summary's definitions
(`console.figures`): the same run gives the same numbers whether it is summarized live or recorded.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field, replace

import numpy as np

from console.alarms import AlarmEngine
from console.figures import BINS_PER_S, RECOVERED_SHARE, back_for_good, recovery, storm_lockstep_index
from console.guards.capacity import NodeRoom, node_room
from console.guards.rollout import HALTABLE, UNDRAINABLE
from console.guards.thresholds import Thresholds
from console.protocol import TOTAL_COUNTERS, AdmissionInForce, Event, Frame, RolloutState, named_instructor
from console.record.reader import RecordingReader
from console.record.records import (
    ActionRecord,
    Confirmation,
    DrillOutcome,
    RecordingHeader,
    is_told_action,
    told_actions,
)
from console.record.underway import IncidentUnderway, incident_underway
from console.waves import to_hundredths


@dataclass(frozen=True)
class AlarmSpan:
    name: str
    severity: str
    since_s: float
    cleared_s: float | None
    message: str
    node: str | None = None
    # Its reading furthest past the limit while it held, when, and what it said then (from the cleared
    # change; None while it holds, or where it has no value): what the console's panel reports once it
    # cleared, so the report says the same.
    worst_value: float | None = None
    worst_s: float | None = None
    worst_message: str | None = None


class AlarmSpans:
    """Each alarm from the engine's changes: raised (with what it said then — not its latest reading),
    then cleared (with its worst reading). In time order; none forgotten however long the recording."""

    def __init__(self) -> None:
        self.spans: list[AlarmSpan] = []
        self._open: dict[tuple[str, str | None], int] = {}

    def take(self, changes: list[Event]) -> None:
        for change in changes:
            key = (str(change.data["name"]), change.node)
            if change.data["change"] == "raised":
                self._open[key] = len(self.spans)
                message = str(change.data.get("message") or change.message)
                span = AlarmSpan(
                    key[0], str(change.data["severity"]), change.time_s, None, message, change.node
                )
                self.spans.append(span)
            elif key in self._open:
                i = self._open.pop(key)
                worst = change.data.get("worst_value")
                worst_s = change.data.get("worst_s")
                worst_message = change.data.get("worst_message")
                self.spans[i] = replace(
                    self.spans[i],
                    cleared_s=change.time_s,
                    worst_value=float(worst) if isinstance(worst, int | float) else None,
                    worst_s=float(worst_s) if isinstance(worst_s, int | float) else None,
                    worst_message=str(worst_message) if worst_message else None,
                )


#: The injections that cut connections (console.sim.injection): what they cut is the incident's doing.
CUTTING_INJECTIONS = frozenset({"restart_nodes", "kill_nodes", "disconnect_fraction"})
INSTRUCTOR = "the instructor"
DRILL_TIMELINE = "the drill's timeline"
#: The scenario's own script (its timeline, its rollout), as a disconnect it made says (`data.scripted`).
SCENARIO = "the scenario"


def instructor(actor: object) -> str:
    """Who injected, as the report says it: "instructor dana" where the `injection` event names its actor
    (as the audit log does: with two instructors, which one cut the fleet), "the instructor" where an older
    recording's names nobody, or names `drill --serve`'s own admin token, "instructor"."""
    name = named_instructor(actor)
    return f"instructor {name}" if name else INSTRUCTOR


@dataclass(frozen=True)
class Injection:
    """An event injected into the fleet, as the recording tells it: an instructor's (`stormdeck inject`:
    an `injection` event, after the events it caused), a drill's timeline's (a `drill` event naming its
    `action`, before them), or the scenario's own script's (its timeline or rollout: the disconnect says
    so itself, `data.scripted`). Each is the incident a trainee answers, not a choice the trainee made."""

    time_s: float
    by: str  # "instructor NAME" (else INSTRUCTOR), DRILL_TIMELINE or SCENARIO
    event: str  # restart_nodes, kill_nodes, disconnect_fraction, … (the scenario's: also `rollout`)
    params: dict

    @classmethod
    def scripted(cls, disconnect: Event) -> Injection | None:
        """The scenario's script, when the disconnect says it made it (a simulator's since it says so)."""
        what = disconnect.data.get("scripted")
        return cls(disconnect.time_s, SCENARIO, what, {}) if isinstance(what, str) else None

    @property
    def verb(self) -> str:
        return "scripted" if self.by == SCENARIO else "injected"

    @classmethod
    def told_by(cls, event: Event) -> Injection | None:
        if event.kind == "injection" and isinstance(event.data.get("event"), str):
            by = instructor(event.data.get("actor"))
            return cls(event.time_s, by, event.data["event"], dict(event.data.get("params") or {}))
        if event.kind == "drill" and isinstance(event.data.get("action"), str):
            return cls(
                event.time_s, DRILL_TIMELINE, event.data["action"], dict(event.data.get("params") or {})
            )
        return None

    def cut(self, disconnect: Event) -> bool:
        """Whether this injection made the mass `disconnect`: in the fleet second it landed in (an
        instructor's lands between two seconds and is stamped with the disconnect's time; a timeline entry
        fires at the first second at or after its time), on the nodes it names."""
        if self.event not in CUTTING_INJECTIONS or not self.time_s <= disconnect.time_s < self.time_s + 1:
            return False
        nodes = disconnect.node_ids()
        named = self.params.get("nodes")
        if self.event == "disconnect_fraction":
            return not nodes  # a fleet-wide reset names no node
        if isinstance(named, list):
            return bool(nodes) and set(nodes) <= {str(node) for node in named}
        return isinstance(named, int) and 0 < len(nodes) <= named  # `nodes = 20`: the first 20 (or `first`)

    @property
    def text(self) -> str:
        return f"{self.event} by {self.by}"


@dataclass
class Series:
    """One value a frame, at the frames' fleet times; wave bins at 100 ms from `bins_start_s`."""

    times_s: list[float] = field(default_factory=list)
    connections: list[int] = field(default_factory=list)
    attempts_per_s: list[float] = field(default_factory=list)
    rejects_per_s: list[float] = field(default_factory=list)
    timeouts_per_s: list[float] = field(default_factory=list)
    headroom_pct: list[float] = field(default_factory=list)
    max_cpu_pct: list[float] = field(default_factory=list)
    hottest_node: list[str | None] = field(default_factory=list)
    span_s: list[float] = field(default_factory=list)
    epochs: list[str] = field(default_factory=list)
    #: The frames' running counts (`totals.*_total`), None where a frame has none (an older source).
    running: dict[str, list[int | None]] = field(
        default_factory=lambda: {name: [] for name in TOTAL_COUNTERS}
    )
    rollout_running: list[bool] = field(default_factory=list)
    admission_limited: list[bool] = field(default_factory=list)
    #: Each frame's `max_nodes` (None where it does not say: an older server or recording) and its nodes,
    #: every state counted: the fleet's room then (`room_at`), which the findings advise "add capacity" by.
    max_nodes: list[int | None] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)
    #: What else a fleet without room could do then, as headroom_low's advice names it: a rollout to halt
    #: (running or paused), and how many nodes were out of rotation to undrain (draining or drained).
    rollout_haltable: list[bool] = field(default_factory=list)
    out_of_rotation: list[int] = field(default_factory=list)
    bins: list[int] = field(default_factory=list)
    bins_start_s: float = 0.0

    def add(self, frame: Frame) -> None:
        if not self.times_s:
            self.bins_start_s = frame.time_s - len(frame.waves.attempts) / BINS_PER_S
        self.times_s.append(frame.time_s)
        totals = frame.totals
        self.connections.append(totals.connections)
        self.attempts_per_s.append(totals.attempts_per_s)
        self.rejects_per_s.append(totals.rejects_per_s)
        self.timeouts_per_s.append(totals.timeouts_per_s)
        # A server running faster than real time sends one frame per several fleet seconds (`span_s`, a
        # field the server adds); its rates are the last second's, so they stand for the whole span.
        self.span_s.append(float(getattr(frame, "span_s", 1.0) or 0.0))
        self.epochs.append(frame.epoch)
        for name, values in self.running.items():
            values.append(getattr(totals, name, None))
        self.headroom_pct.append(totals.headroom_pct)
        hottest = max(frame.nodes, key=lambda n: n.cpu_pct, default=None)
        self.max_cpu_pct.append(max(hottest.cpu_pct if hottest else 0.0, totals.max_cpu_pct))
        self.hottest_node.append(hottest.id if hottest else None)
        self.rollout_running.append(frame.rollout is not None and frame.rollout.state is RolloutState.RUNNING)
        # Set on some nodes only (`admission_overrides`), a limit is in force all the same.
        in_force = AdmissionInForce.of(frame, ())
        self.admission_limited.append(in_force is not None and in_force.limits_rate)
        self.max_nodes.append(frame.max_nodes)
        self.nodes.append(len(frame.nodes))
        self.rollout_haltable.append(frame.rollout is not None and frame.rollout.state in HALTABLE)
        self.out_of_rotation.append(sum(node.state in UNDRAINABLE for node in frame.nodes))
        # Bins land at their place in time, so a gap in the recording stays a gap.
        end = round((frame.time_s - self.bins_start_s) * BINS_PER_S)
        start = end - len(frame.waves.attempts)
        if start < len(self.bins):  # overlap (a restarted source): keep the newest
            del self.bins[max(start, 0) :]
        self.bins.extend([0] * (max(start, 0) - len(self.bins)))
        self.bins.extend(frame.waves.attempts[max(-start, 0) :])

    def frame_at(self, time_s: float) -> int | None:
        """The index of the newest frame at or before `time_s`; None before the first."""
        i = bisect_right(self.times_s, time_s) - 1
        return i if 0 <= i < len(self.max_nodes) else None

    def room_at(self, time_s: float) -> NodeRoom | None:
        """The fleet's room as the newest frame at or before `time_s` said it (the add guard's rule,
        `NodeRoom`); None where that frame does not say, or there is none."""
        i = self.frame_at(time_s)
        return None if i is None else node_room(self.max_nodes[i], self.nodes[i])


@dataclass(frozen=True)
class Count:
    """How many of something (503s, timeouts, …) happened in the recording's fleet seconds, and how well
    that is known. `total` = `counted` (exact, over `counted_s` fleet seconds) + an estimate over
    `estimated_s` seconds; `uncounted_s` seconds are in neither (see `count`)."""

    total: int
    counted: int
    counted_s: float
    estimated_s: float = 0.0
    uncounted_s: float = 0.0
    running: bool = False  # some of it from the source's running counts

    @property
    def estimated(self) -> bool:
        return self.estimated_s > 0


def count(series: Series, rate: str, running: str) -> Count:
    """Count what the `rate` (per second) measured over the recording's frames, exactly where possible.

    A frame stands for `span_s` fleet seconds and carries the rates of its last one only. Where the source
    keeps a `running` count (`totals.*_total`, since its fleet started), the seconds between two frames of
    one epoch are counted exactly by its difference — those a sped-up frame folds in, and any a gap in the
    recording skipped. Counts restart with the fleet (a new epoch), so no difference is taken across
    epochs. A frame no earlier frame of its epoch bounds (the recording's first, the first after a
    restart) is counted by its rate for its last second; the seconds before that (a recording joining a
    sped-up source mid-run) are `uncounted_s`: its running count holds them, but also everything since
    the fleet started. A frame without running counts (an older source) standing for several seconds is
    estimated as before: its last second's rate for each of them (`estimated_s`).
    """
    counted = estimated = 0
    counted_s = estimated_s = uncounted_s = 0.0
    used = False
    previous: tuple[str, float, int] | None = None  # epoch, time, running count of the frame before
    columns = zip(
        series.epochs,
        series.times_s,
        series.span_s,
        getattr(series, rate),
        series.running[running],
        strict=True,
    )
    for epoch, time_s, span_s, per_s, total in columns:
        if (
            total is not None
            and previous is not None
            and previous[0] == epoch
            and time_s >= previous[1]
            and total >= previous[2]
        ):
            counted += total - previous[2]
            counted_s += time_s - previous[1]
            used = True
        else:
            last_s = min(span_s, 1.0)  # 0 for a paused frame: it repeats the last second's rates
            counted += round(per_s * last_s)
            counted_s += last_s
            if total is None:
                estimated += round(per_s * (span_s - last_s))
                estimated_s += span_s - last_s
            else:
                uncounted_s += span_s - last_s
        previous = (epoch, time_s, total) if total is not None else None
    return Count(counted + estimated, counted, counted_s, estimated_s, uncounted_s, used)


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


@dataclass
class Review:
    header: RecordingHeader
    series: Series
    figures: KeyFigures | None
    alarms: list[AlarmSpan]
    events: list[Event]
    actions: list[ActionRecord]
    confirmations: list[Confirmation]
    drill_outcome: DrillOutcome | None
    disconnect_times_s: list[float]
    #: Where the source restarted: (time on the recording's timeline, the new run's own fleet time there).
    restarts: list[tuple[float, float]] = field(default_factory=list)
    #: Each mass disconnect an injection made (the event, the injection): the incident's, not the operator's.
    injected: list[tuple[Event, Injection]] = field(default_factory=list)

    def injection_of(self, event: Event) -> Injection | None:
        return next((injection for cut, injection in self.injected if cut is event), None)

    def injected_counts(self) -> str:
        """How many mass disconnects were not the operator's, by how: '2 injected', '1 scripted',
        '2 injected, 1 scripted'."""
        verbs = [injection.verb for _, injection in self.injected]
        return ", ".join(f"{verbs.count(verb)} {verb}" for verb in ("injected", "scripted") if verb in verbs)

    @property
    def mass_disconnects(self) -> list[Event]:
        return [event for event in self.events if event.data.get("mass")]

    @property
    def underway(self) -> IncidentUnderway | None:
        return self.figures.underway if self.figures is not None else None

    def first_alarm_s(self, name: str) -> float | None:
        return min((a.since_s for a in self.alarms if a.name == name), default=None)

    def actions_named(self, *prefixes: str, applied_only: bool = True) -> list[ActionRecord]:
        return [
            a
            for a in self.actions
            if a.action.startswith(prefixes) and (not applied_only or a.outcome in ("applied", "overridden"))
        ]


def review(recording: RecordingReader, thresholds: Thresholds | None = None) -> Review:
    """Read a recording once and gather what the report needs."""
    engine = AlarmEngine(thresholds)
    series = Series()
    events: list[Event] = []
    actions: list[ActionRecord] = []
    told: list[Event] = []
    confirmations: list[Confirmation] = []
    outcome: DrillOutcome | None = None
    disconnects: list[float] = []
    alarms = AlarmSpans()
    first_frame: Frame | None = None
    restarts: list[tuple[float, float]] = []
    offset_s = 0.0
    # Times go by the recording's timeline, as in the replay: a restarted source's fleet time starts from 1
    # again, and taken as it came its run was drawn back over the one before and mixed into its figures.
    for shift_s, record in recording.records_on_timeline():
        if shift_s != offset_s and isinstance(record, Frame):
            restarts.append((record.time_s + shift_s, record.time_s))
            offset_s = shift_s
        if shift_s and isinstance(getattr(record, "time_s", None), int | float):
            record = record.model_copy(update={"time_s": record.time_s + shift_s})  # type: ignore[union-attr]
        if isinstance(record, Frame):
            first_frame = first_frame or record
            series.add(record)
            alarms.take(engine.update(record))
        elif isinstance(record, Event):
            if record.kind == "alarm":
                continue  # judged afresh from the frames above
            if is_told_action(record):
                told.append(record)  # the stream's word for an applied action: read as one, below
                continue
            events.append(record)
            # A mass disconnect (data.mass) starts the storm window, as in the simulator's summary; its
            # time_s is the start of the second it happened in, the same instant the summary uses.
            if record.data.get("mass") and (not disconnects or disconnects[-1] != record.time_s):
                disconnects.append(record.time_s)
        elif isinstance(record, ActionRecord):
            actions.append(record)
        elif isinstance(record, Confirmation):
            confirmations.append(record)
        elif isinstance(record, DrillOutcome):
            outcome = record
    actions = sorted([*actions, *told_actions(told, actions)], key=lambda action: action.time_s)
    injections = [injection for event in events if (injection := Injection.told_by(event)) is not None]
    # The told injection first (an instructor's, a drill timeline's), else the scenario's own script: a
    # drill's timeline runs as its scenario's, so its cuts say `scripted` too, and its line names them.
    injected = [
        (event, injection)
        for event in events
        if event.data.get("mass")
        for injection in [next((i for i in injections if i.cut(event)), None) or Injection.scripted(event)]
        if injection is not None
    ]
    return Review(
        header=recording.header,
        series=series,
        figures=key_figures(
            series, disconnects, incident_underway(first_frame, disconnects) if first_frame else None
        ),
        alarms=alarms.spans,
        events=events,
        actions=actions,
        confirmations=confirmations,
        drill_outcome=outcome,
        disconnect_times_s=disconnects,
        restarts=restarts,
        injected=injected,
    )


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
