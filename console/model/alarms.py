"""The console's alarm log: which alarms are active, which have cleared, which the operator acknowledged.

The rules themselves live in the pure `console.alarms` module; the model only needs something that turns
a frame into the alarms active after it (`AlarmSource`), so the rules can change without touching this.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from console.alarms.base import UNITS, short_label
from console.figures import beside_limit
from console.model.node_readings import NodeReadings
from console.model.units import short_number
from console.protocol import Alarm, Frame, Severity

#: Turns each new frame (with its nodes as columns: a replay's prefill frames have no node records) into the
#: list of alarms active after it — and, first and oldest first, those that cleared in it (`active` False,
#: `cleared_s` set), where the source knows them: a sped-up frame folds several fleet seconds, and an alarm
#: raised and cleared between two frames is in no frame's active list.
AlarmSource = Callable[[Frame, NodeReadings], list[Alarm]]

_SEVERITY_RANK = {Severity.CRITICAL: 2, Severity.WARNING: 1, Severity.INFO: 0}

AlarmKey = tuple[str, str | None]


@dataclass
class AlarmEntry:
    alarm: Alarm
    raised_at_s: float
    cleared_at_s: float | None = None
    acknowledged: bool = False
    #: (severity, value, limit, clearing since) when the log last looked: the alarm source may update its alarms in place
    #: (the engine does), so comparing with `alarm` itself would never see a change.
    reading: tuple[object, ...] = ()

    @property
    def key(self) -> AlarmKey:
        return (self.alarm.name, self.alarm.node)

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK.get(self.alarm.severity, 0)


@dataclass(frozen=True)
class AckedSpell:
    """One spell of an alarm the operator acknowledged: up since `raised_s` and still up at `acked_s`, the
    fleet time of the frame on screen when acknowledged, at severity rank `rank`."""

    raised_s: float
    acked_s: float
    rank: int


class Acknowledgements:
    """The alarm spells the operator acknowledged, kept apart from any one log: a replay starts a fresh model
    at every seek, and what the operator acknowledged while watching shouted again after each.

    An acknowledgement is a spell's, not a rule's, as in a live console (a rule raised again needs a fresh
    one): an alarm seen up from `since_s` to `time_s` is the spell acknowledged when that span meets the span
    it was seen up when acknowledged — an alarm's spells follow one another, so two spans up that meet are
    one spell. A fresh engine may date the spell later than it began (no recorded raise time): the spans
    then may not meet, and the alarm shouts — the safe side. Severity as in the log: acknowledged at a
    milder one, a worse one needs a fresh acknowledgement."""

    def __init__(self) -> None:
        self._spells: dict[AlarmKey, list[AckedSpell]] = {}

    def remember(self, key: AlarmKey, spell: AckedSpell) -> None:
        self._spells.setdefault(key, []).append(spell)

    def covers(self, key: AlarmKey, since_s: float, time_s: float, rank: int) -> bool:
        """Whether alarm `key`, seen up from `since_s` to `time_s` at severity rank `rank`, is a spell
        acknowledged."""
        return any(
            spell.raised_s <= time_s and since_s <= spell.acked_s and rank <= spell.rank
            for spell in self._spells.get(key, [])
        )


class AlarmLog:
    def __init__(self, past_limit: int = 200, acknowledged: Acknowledgements | None = None) -> None:
        """`acknowledged`: the spells acknowledged, where they outlive this log (a replay's, across seeks)."""
        self._active: dict[AlarmKey, AlarmEntry] = {}
        self._past: deque[AlarmEntry] = deque(maxlen=past_limit)
        self.version = 0  # bumped on every change, so a view redraws only when there is news
        self.acknowledged = acknowledged if acknowledged is not None else Acknowledgements()
        self._time_s = 0.0  # the fleet time of the last update: an acknowledgement's

    def update(self, alarms: list[Alarm], time_s: float) -> None:
        """Record the alarms a frame at fleet time `time_s` leaves: those active after it, and those that
        cleared in it (`active` False, oldest first, before the active ones), each logged past with its own
        raised and cleared times — also one raised and cleared inside the frame, which a sped-up source's
        frame folds. An active alarm missing from the list has cleared, at `time_s`."""
        self._time_s = time_s
        seen: set[AlarmKey] = set()
        for alarm in alarms:
            if not alarm.active:
                self._cleared(alarm, time_s)
                continue
            key = (alarm.name, alarm.node)
            seen.add(key)
            entry = self._active.get(key)
            reading = (alarm.severity, alarm.value, alarm.limit, alarm.clearing_since_s)
            rank = _SEVERITY_RANK.get(alarm.severity, 0)
            if entry is None:
                acked = self.acknowledged.covers(key, alarm.since_s, time_s, rank)
                self._active[key] = AlarmEntry(alarm, alarm.since_s, acknowledged=acked, reading=reading)
                self.version += 1
            else:
                # A worse severity needs a fresh acknowledgement: the operator acked the milder one (unless
                # this spell was acknowledged at its worse: a replay sought back to before it grew worse).
                if rank > _SEVERITY_RANK.get(entry.reading[0], 0):
                    entry.acknowledged = self.acknowledged.covers(key, entry.raised_at_s, time_s, rank)
                if reading != entry.reading:
                    self.version += 1
                entry.alarm = alarm
                entry.reading = reading
        for key in [key for key in self._active if key not in seen]:
            entry = self._active.pop(key)
            entry.cleared_at_s = time_s
            self._past.append(entry)
            self.version += 1

    def _cleared(self, alarm: Alarm, time_s: float) -> None:
        """A cleared alarm: the log's active entry for it moves to the past — the spell that was up, since an
        alarm's spells follow one another — or, none being up, a spell raised and cleared between two frames
        joins the past as it is."""
        key = (alarm.name, alarm.node)
        entry = self._active.pop(key, None)
        if entry is None:
            reading = (alarm.severity, alarm.value, alarm.limit, alarm.clearing_since_s)
            entry = AlarmEntry(alarm, raised_at_s=alarm.since_s, reading=reading)
        else:
            entry.alarm = alarm
        entry.cleared_at_s = alarm.cleared_s if alarm.cleared_s is not None else time_s
        self._past.append(entry)
        self.version += 1

    def acknowledge(self, key: AlarmKey) -> bool:
        entry = self._active.get(key)
        if entry is None or entry.acknowledged:
            return False
        entry.acknowledged = True
        self.acknowledged.remember(key, AckedSpell(entry.raised_at_s, self._time_s, entry.rank))
        self.version += 1
        return True

    def acknowledge_all(self) -> int:
        count = 0
        for key in list(self._active):
            count += self.acknowledge(key)
        return count

    def active(self) -> list[AlarmEntry]:
        """Unacknowledged first, then worst first, then newest first."""
        return sorted(self._active.values(), key=lambda e: (e.acknowledged, -e.rank, -e.raised_at_s))

    def past(self) -> list[AlarmEntry]:
        """Newest first."""
        return list(reversed(self._past))

    def alarming_nodes(self) -> set[str]:
        return {entry.alarm.node for entry in self._active.values() if entry.alarm.node}

    @property
    def unacknowledged(self) -> int:
        return sum(not entry.acknowledged for entry in self._active.values())


@dataclass(frozen=True)
class AlarmRow:
    """One line of the alarms panel: a single alarm, or one rule firing on many nodes at once."""

    keys: tuple[AlarmKey, ...]
    name: str
    severity: Severity
    raised_at_s: float
    cleared: bool
    acknowledged: bool
    where: str  # "fleet", a node id, "gw-031 +2" (a fleet alarm naming nodes), or "212 nodes"
    value: str
    message: str = ""  # what the rule said, in the operator's words (the worst node's, for a group)
    #: Active, but its condition no longer holds: it clears after `clear_after_s` unless it holds again.
    clearing: bool = False
    #: While clearing: the fleet time its condition stopped holding (`Alarm.clearing_since_s`; a group's,
    #: its last node's) — its value is the last reading before then. None otherwise.
    clearing_since_s: float | None = None
    #: Active as of the last frame, which is past the stale line (`FleetModel.stale_s`): whether it still
    #: holds is not known. A cleared row is never stale: it says what held then, and that stays so.
    stale: bool = False
    #: A cleared row: the fleet time it cleared, as the log dated it (`AlarmEntry.cleared_at_s`; a group's,
    #: its last node's). None while active.
    cleared_at_s: float | None = None
    #: A cleared row that reads its worst (`Alarm.worst_value`): the fleet time of that reading, which
    #: `message` then says. None otherwise.
    worst_at_s: float | None = None

    @property
    def label(self) -> str:
        """The rule's name in a narrow panel (`console.alarms.base.SHORT_LABELS`)."""
        return short_label(self.name)


#: More nodes than this on one rule are shown as one row: 480 cpu_abort lines hide everything else.
GROUP_OVER = 3


def _worst_said(entry: AlarmEntry) -> bool:
    """A cleared alarm whose source kept its worst reading: the row reports that, not its last — the last
    reading of a connections_drop clearing is a drop nearly over ("was 6.43 > 5 %" after a 44 % drop)."""
    return entry.cleared_at_s is not None and entry.alarm.worst_value is not None


def _value_text(entry: AlarmEntry) -> str:
    alarm = entry.alarm
    if alarm.value is None:
        return alarm.message
    if _worst_said(entry):
        assert alarm.worst_value is not None
        return "worst " + _reading_text(alarm, alarm.worst_value)
    if alarm.clearing_since_s is not None or entry.cleared_at_s is not None:
        # The last reading over the line, not the current one: "0.322 < 0.6" beside a gauge back at 46.87
        # read as a contradiction — and so did "10.2 > 5 %" on a row that had cleared (from a source that
        # keeps no worst reading).
        return "was " + _reading_text(alarm, alarm.value)
    return _reading_text(alarm, alarm.value)


def _message(entry: AlarmEntry) -> str:
    """What the alarm said: a cleared one's at its worst, where the source kept it."""
    alarm = entry.alarm
    if _worst_said(entry) and alarm.worst_message is not None:
        return alarm.worst_message
    return alarm.message


def _reading_text(alarm: Alarm, value: float) -> str:
    unit = UNITS.get(alarm.name, "")  # (an alarm from a newer server: its figures bare)
    if alarm.limit is None:
        return short_number(value) + unit
    # The sign says which side of its line the reading is: headroom alarms below theirs, drops above.
    sign = "<" if value < alarm.limit else ">" if value > alarm.limit else "="
    # The unit once, after both (they share it): at 160 columns the panel has no cell to spare.
    shown = short_number(value)
    if shown == short_number(alarm.limit) and value != alarm.limit:
        shown = beside_limit(value, alarm.limit)  # "34.96 < 35", never "35 < 35"
    return f"{shown} {sign} {short_number(alarm.limit)}{unit}"


def _where(alarm: Alarm) -> str:
    """A node alarm's node; a fleet alarm naming nodes (cpu_abort), the worst of them and how many more —
    the node is what an operator acts on; else the fleet."""
    if alarm.node is not None:
        return alarm.node
    if alarm.nodes:
        return alarm.nodes[0] + (f" +{len(alarm.nodes) - 1}" if len(alarm.nodes) > 1 else "")
    return "fleet"


def alarm_rows(
    entries: list[AlarmEntry], group_over: int = GROUP_OVER, stale: bool = False
) -> list[AlarmRow]:
    """Rows in the entries' order; a rule on more than `group_over` nodes becomes one row where it first
    appears, with the worst value, the earliest time, and acknowledged only when every one of them is.
    `stale`: the view is past the stale line, and the active rows are marked as the last frame's (an alarm
    "NEW" from a frame 40 s old read as firing now); the entries themselves are not touched."""
    groups: dict[tuple[str, bool], list[AlarmEntry]] = {}
    for entry in entries:
        if entry.alarm.node is not None:
            groups.setdefault((entry.alarm.name, entry.cleared_at_s is not None), []).append(entry)
    rows: list[AlarmRow] = []
    emitted: set[tuple[str, bool]] = set()
    for entry in entries:
        cleared = entry.cleared_at_s is not None
        group = groups.get((entry.alarm.name, cleared), []) if entry.alarm.node is not None else []
        if len(group) > group_over:
            if (entry.alarm.name, cleared) in emitted:
                continue
            emitted.add((entry.alarm.name, cleared))
            worst = max(group, key=lambda e: (e.rank, _reported(e)))
            rows.append(
                AlarmRow(
                    keys=tuple(e.key for e in group),
                    name=entry.alarm.name,
                    severity=worst.alarm.severity,
                    raised_at_s=min(e.raised_at_s for e in group),
                    cleared=cleared,
                    acknowledged=all(e.acknowledged for e in group),
                    where=f"{len(group)} nodes",
                    # (a cleared group's row reads its worst node's worst: "worst …" says it)
                    value=_value_text(worst) if _worst_said(worst) else f"max {_value_text(worst)}",
                    message=_message(worst),
                    clearing=not cleared and all(e.alarm.clearing_since_s is not None for e in group),
                    clearing_since_s=_clearing_since(group) if not cleared else None,
                    stale=stale and not cleared,
                    cleared_at_s=max(e.cleared_at_s for e in group if e.cleared_at_s is not None)
                    if cleared
                    else None,
                    worst_at_s=worst.alarm.worst_s if _worst_said(worst) else None,
                )
            )
            continue
        rows.append(
            AlarmRow(
                keys=(entry.key,),
                name=entry.alarm.name,
                severity=entry.alarm.severity,
                raised_at_s=entry.raised_at_s,
                cleared=cleared,
                acknowledged=entry.acknowledged,
                where=_where(entry.alarm),
                value=_value_text(entry),
                message=_message(entry),
                clearing=entry.alarm.clearing_since_s is not None and not cleared,
                clearing_since_s=None if cleared else entry.alarm.clearing_since_s,
                stale=stale and not cleared,
                cleared_at_s=entry.cleared_at_s,
                worst_at_s=entry.alarm.worst_s if _worst_said(entry) else None,
            )
        )
    return rows


def _clearing_since(group: list[AlarmEntry]) -> float | None:
    """When a group's condition stopped holding: its last node's, once none of them holds."""
    since = [e.alarm.clearing_since_s for e in group]
    return None if any(s is None for s in since) else max(s for s in since if s is not None)


def _reported(entry: AlarmEntry) -> float:
    """The value a row reports (a cleared alarm's worst, where kept), for picking a group's worst node."""
    alarm = entry.alarm
    value = alarm.worst_value if _worst_said(entry) else alarm.value
    return value if value is not None else 0.0
