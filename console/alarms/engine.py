"""The alarm engine: frames in, raised and cleared alarms out.

Pure: it keeps the alarm state of one frame history and reads the fleet time from the frames. The console
calls `update` once per frame; the simulator's summary calls `alarms_fired` over a whole run.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from console.alarms.base import Drain, is_worse
from console.alarms.rules import AlarmName, FleetView, Reading, Rule, build_rules
from console.errors import InputError
from console.guards.capacity import FleetCapacity
from console.guards.thresholds import Thresholds
from console.protocol import Alarm, Event, Frame, Severity, Waves

#: Cleared alarms kept for the history panel; older ones are forgotten.
HISTORY_LIMIT = 1000

_SEVERITY_RANK = {Severity.CRITICAL: 0, Severity.WARNING: 1, Severity.INFO: 2}

AlarmKey = tuple[str, str | None]


class AlarmEngine:
    """Alarm state over one frame history.

    `update(frame)` returns the changes as `Event`s (kind "alarm", data.change "raised" or "cleared"), the
    shape the fleet stream already carries. Time running backwards starts a new history (a restarted
    simulator, another fleet): every active alarm clears and the rules forget what they had seen. A new
    `epoch` whose clock goes on does not: that is the same fleet served by a restarted server (a controller
    keeps its fleet clock across restarts), and clearing there cleared what was still true and raised it
    again once its rule had held again (cpu_abort: 30 s later).
    """

    def __init__(self, thresholds: Thresholds | None = None, capacity: FleetCapacity | None = None) -> None:
        self.thresholds = thresholds if thresholds is not None else Thresholds()
        self.capacity = capacity
        self._build_rules()
        self._active: dict[AlarmKey, Alarm] = {}
        self._last_held_s: dict[AlarmKey, float] = {}
        self._raised_by: dict[AlarmKey, Rule] = {}
        self._history: deque[Alarm] = deque(maxlen=HISTORY_LIMIT)
        self._cleared_by_update: list[Alarm] = []
        self._time_s: float | None = None
        # The last frame's drains (`FleetView.drains`): what dates a drain ending inside the next frame.
        self._drains_before: tuple[Drain, ...] | None = None

    @property
    def active(self) -> list[Alarm]:
        """Active alarms, most severe first, then oldest first."""
        return sorted(
            self._active.values(), key=lambda a: (_SEVERITY_RANK[a.severity], a.since_s, a.node or "")
        )

    @property
    def history(self) -> list[Alarm]:
        """Cleared alarms, oldest first (`active` False, `cleared_s` set)."""
        return list(self._history)

    @property
    def last_cleared(self) -> list[Alarm]:
        """The alarms the last `update` cleared, oldest first: `active` shows what is up after a frame, and
        an alarm raised and cleared inside one sped-up frame (between its earlier seconds) is only here."""
        return list(self._cleared_by_update)

    def acknowledge(self, name: str, node: str | None = None) -> Alarm:
        """Mark an active alarm as seen by the operator; it stays active until its condition clears."""
        alarm = self._active.get((name, node))
        if alarm is None:
            names = sorted({f"{a.name}" + (f"@{a.node}" if a.node else "") for a in self._active.values()})
            raise InputError(
                "alarm",
                name if node is None else f"{name}@{node}",
                "an active alarm: " + (", ".join(names) or "none is active"),
            )
        alarm.acknowledged = True
        return alarm

    def update(self, frame: Frame, fleet: FleetView | None = None) -> list[Event]:
        """Judge one frame; return the alarms it raised and cleared. `fleet`: its nodes already gathered
        (`FleetView.of_columns`), for a frame sent without node records.

        A frame folding several fleet seconds (speed > 1) is judged second by second where it says what
        each second was (`Frame.folded_totals`): the rules that read only totals and wave bins
        (`Rule.each_second`) see every second, oldest first, at its own fleet time, and so does `cpu_abort`
        where the frame says which serving nodes were over the engine's abort line each second
        (`Frame.folded_hot`), and `drain_pacing_exceeded` where its drains say when they started
        (`FleetView.drains_in_second`), those ended inside the frame dated by the frame's list of them
        (`Frame.folded_drains`) or else by the frame before's (`FleetView.with_ended_drains`); the others
        see the last second. A condition held for 60 s then
        raises after 60 fleet seconds, as at one frame a second, not after two frames 60 s apart, and one
        second's break clears it where it happened."""
        changes: list[Event] = []
        self._cleared_by_update = []
        judged_to_s = self._time_s
        if self._starts_new_history(frame):
            changes.extend(self._clear_all(frame.time_s if self._time_s is None else self._time_s))
            self._build_rules()
            judged_to_s = None
        self._time_s = frame.time_s

        if fleet is None:
            fleet = FleetView.of(frame, self.thresholds, self.capacity)
        *earlier, own = seconds_of(frame)
        drains_before, self._drains_before = self._drains_before, fleet.drains
        if earlier and frame.folded_drains is not None:
            fleet = fleet.with_folded_drains(frame.folded_drains)  # the frame says which ended inside it
        elif earlier and drains_before is not None and judged_to_s is not None:
            fleet = fleet.with_ended_drains(drains_before, judged_to_s)  # as the frame before dated them
        hot = frame.hot_by_second(self.thresholds.cpu_abort_pct) if earlier else None
        if hot is not None and len(hot) != len(earlier):
            hot = None
        # What this frame says enough about for each of its seconds (`Rule.each_second_of`).
        said = [rule for rule in self._rules if rule.each_second_of(frame, fleet)] if earlier else []
        each = (self._each_second_rules if hot is None else self._over_line_rules) + said  # (once a frame)
        for i, second in enumerate(earlier):
            if judged_to_s is None or second.time_s > judged_to_s:
                view = fleet.drains_in_second(second.time_s)
                if hot is not None:
                    view = view.folded_second(hot[i], second.totals.max_cpu_pct)
                changes.extend(self._judge(second, view, each))
        changes.extend(self._judge(own, fleet, self._rules))
        return changes

    def _build_rules(self) -> None:
        self._rules = build_rules(self.thresholds)
        self._each_second_rules = [rule for rule in self._rules if rule.each_second]
        self._over_line_rules = [
            rule for rule in self._rules if rule.each_second or rule.each_second_over_line
        ]

    def _judge(self, second: Frame, fleet: FleetView, rules: list[Rule]) -> list[Event]:
        """One fleet second through `rules`; only the alarms those rules raise can clear in it."""
        changes: list[Event] = []
        now = second.time_s
        held: set[AlarmKey] = set()
        for rule in rules:
            for reading in rule.evaluate(second, fleet):
                key = (reading.name, reading.node)  # AlarmName is a str: plain names find it too
                held.add(key)
                self._last_held_s[key] = now
                alarm = self._active.get(key)
                if alarm is None:
                    alarm = self._raise(reading, now)
                    self._raised_by[key] = rule
                    changes.append(_event(alarm, "raised", now))
                else:
                    # Straight into the model's fields: they were validated when the alarm was raised, and
                    # pydantic's __setattr__ costs ~1 µs a field — with 2000 hot nodes that alone is 6 ms.
                    alarm.__dict__.update(
                        value=reading.value,
                        limit=reading.limit,
                        message=reading.message,
                        nodes=list(reading.nodes) or None,
                        clearing_since_s=None,
                    )
                    worst = alarm.worst_value
                    if reading.value is not None and (
                        worst is None or is_worse(key[0], reading.value, worst)
                    ):
                        alarm.__dict__.update(
                            worst_value=reading.value, worst_s=now, worst_message=reading.message
                        )
        clear_after_s = self.thresholds.clear_after_s
        for key in [k for k in self._active if k not in held and self._raised_by[k] in rules]:
            if now - self._last_held_s[key] >= clear_after_s:
                changes.append(self._clear(key, now))
            else:
                # Its value is the last reading over the line; the console shows it as past, not current.
                waiting = self._active[key]
                if waiting.clearing_since_s is None:
                    waiting.__dict__["clearing_since_s"] = now
        return changes

    def _starts_new_history(self, frame: Frame) -> bool:
        return self._time_s is not None and frame.time_s < self._time_s

    def _raise(self, reading: Reading, now: float) -> Alarm:
        alarm = Alarm(
            name=reading.name.value,
            severity=reading.severity,
            since_s=now,
            value=reading.value,
            limit=reading.limit,
            message=reading.message,
            node=reading.node,
            nodes=list(reading.nodes) or None,
            worst_value=reading.value,
            worst_s=now if reading.value is not None else None,
            worst_message=reading.message if reading.value is not None else None,
        )
        self._active[(alarm.name, alarm.node)] = alarm
        return alarm

    def _clear(self, key: AlarmKey, now: float) -> Event:
        alarm = self._active.pop(key)
        del self._last_held_s[key]
        del self._raised_by[key]
        alarm.active = False
        alarm.cleared_s = now
        alarm.clearing_since_s = None  # (cleared: no longer waiting)
        self._history.append(alarm)
        self._cleared_by_update.append(alarm)
        return _event(alarm, "cleared", now)

    def _clear_all(self, now: float) -> list[Event]:
        return [self._clear(key, now) for key in list(self._active)]


def seconds_of(frame: Frame) -> list[Frame]:
    """The fleet seconds a frame stands for, as one-second frames, oldest first, the frame's own last: the
    earlier ones from `folded_totals` at their fleet times, each with its own 100 ms wave bins. Just the
    frame when it covers one second, or when it does not say what each second was (no `folded_totals`, or
    bins that do not split evenly into its seconds): judged as its last second, as before the field."""
    by_second = frame.seconds()
    if by_second is None or len(by_second) < 2:
        return [frame]
    count = len(by_second)
    bins = frame.waves.attempts
    if len(bins) % count:
        return [frame]
    per_second = len(bins) // count
    return [
        frame.model_copy(
            update={
                "time_s": time_s,
                "totals": totals,
                "waves": Waves(
                    bin_ms=frame.waves.bin_ms, attempts=bins[i * per_second : (i + 1) * per_second]
                ),
                "span_s": 1.0,
                "folded_totals": None,
            }
        )
        for i, (time_s, totals) in enumerate(by_second)
    ]


def _event(alarm: Alarm, change: str, now: float) -> Event:
    """A raised alarm says what it reads; a cleared one what it read at its worst (its last reading, just
    before it cleared, told a 44 % drop as 6 %), and the data carry both."""
    if change == "raised":
        said = f"{alarm.name} raised: {alarm.message}"
    elif alarm.worst_message is not None and alarm.worst_message != alarm.message:
        said = f"{alarm.name} cleared; at its worst: {alarm.worst_message}"
    else:
        said = f"{alarm.name} cleared: {alarm.message}"
    return Event(
        time_s=now,
        kind="alarm",
        node=alarm.node,
        message=said,
        data={
            "name": alarm.name,
            "change": change,
            "severity": alarm.severity.value,
            "value": alarm.value,
            "limit": alarm.limit,
            "since_s": alarm.since_s,
            "nodes": alarm.nodes,
            "message": alarm.message,
            **(
                {}
                if change == "raised"
                else {
                    "worst_value": alarm.worst_value,
                    "worst_s": alarm.worst_s,
                    "worst_message": alarm.worst_message,
                }
            ),
        },
    )


def alarms_fired(
    frames: Iterable[Frame],
    thresholds: Thresholds | None = None,
    capacity: FleetCapacity | None = None,
) -> dict[str, float]:
    """Each alarm name that fired over a run → the first fleet time it fired (for `sim run --json`)."""
    engine = AlarmEngine(thresholds, capacity)
    fired: dict[str, float] = {}
    for frame in frames:
        for change in engine.update(frame):
            if change.data["change"] == "raised":
                fired.setdefault(change.data["name"], change.time_s)
    return fired


__all__ = ["AlarmEngine", "AlarmName", "alarms_fired"]
