"""What a recording shows: its series, its key figures, its alarms and its actions — read in one pass.

The after-action report renders a `Review`; so could a replay screen's summary. The alarms are judged
afresh by `console.alarms` over the recorded frames (not taken from whatever the source sent), so every
recording is judged by the same rules. Key figures use the simulator summary's definitions
(`console.figures`): the same run gives the same numbers whether it is summarized live or recorded.

This module reads the recording; what it gathers is built by pure parts beside it: the frames as columns
(`series`), the counts and key figures over them (`counts`, `key_figures`), the alarms as spans
(`alarm_spans`) and who cut the fleet (`injections`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from console.alarms import AlarmEngine
from console.guards.thresholds import Thresholds
from console.protocol import Event, Frame
from console.record.alarm_spans import AlarmSpan, AlarmSpans
from console.record.injections import Injection
from console.record.key_figures import KeyFigures, key_figures
from console.record.reader import RecordingReader
from console.record.records import (
    ActionRecord,
    Confirmation,
    DrillOutcome,
    RecordingHeader,
    is_told_action,
    told_actions,
)
from console.record.series import Series
from console.record.underway import IncidentUnderway, incident_underway


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
