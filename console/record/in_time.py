"""When a finding's move mattered: while its alarm held, or the storm was still under way.

A finding is done by a move made while it mattered, not by one made after: the report read "done —
admission tightened at 1:15" for a drain ÷ inflow alarm that had cleared at 0:25, in a storm back at 0:35.
A move made before any of it (a limit set pre-emptively) is each finding's own question, not late. The
storm's fix — the outage seed's halt and added capacity, admission to shed its load — mattered until the
storm was over (`while_the_storm_lasted`), not until the first short alarm of it cleared. Pure: a `Review`
in, spells out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from console.alarms.base import AlarmName
from console.record.records import ActionRecord
from console.record.review import Review

#: The alarms that say the storm itself is still on: connections falling, the reconnect inflow over its
#: steady rate, drain ÷ inflow losing ground, survivors over the abort line. Not headroom_low — a budget a
#: fleet can start under, before any storm (thundering-herd starts at 20 %) — nor the waves' timing.
STORM_ALARMS = (
    AlarmName.CONNECTIONS_DROP,
    AlarmName.RECONNECT_RATE_HIGH,
    AlarmName.DRAIN_INFLOW_LOSING,
    AlarmName.DRAIN_INFLOW_KILL_SWITCH,
    AlarmName.CPU_ABORT,
)


@dataclass(frozen=True)
class Spell:
    """A stretch it mattered: from `start_s` until `end_s` (None: still so when the recording ended), and
    what its end was, in the words "N s after …" takes ("the alarm had cleared")."""

    start_s: float
    end_s: float | None
    ended: str

    def holds(self, time_s: float) -> bool:
        return self.start_s <= time_s and (self.end_s is None or time_s < self.end_s)


@dataclass(frozen=True)
class WhileItMattered:
    """The spells a finding's move mattered in; none: it always did (the recording cannot tell when not)."""

    spells: tuple[Spell, ...] = ()

    def __or__(self, other: WhileItMattered) -> WhileItMattered:
        return WhileItMattered(self.spells + other.spells)

    def late_after(self, time_s: float) -> Spell | None:
        """The spell a move at `time_s` came after, when it came in none of them: the last one ended before
        it. None where it came in time — in a spell, or before the first."""
        if any(spell.holds(time_s) for spell in self.spells):
            return None
        ended = [s for s in self.spells if s.end_s is not None and s.end_s <= time_s]
        return max(ended, key=lambda s: s.end_s or 0.0, default=None)

    def in_time(self, moves: Iterable[ActionRecord]) -> list[ActionRecord]:
        return [move for move in moves if self.late_after(move.time_s) is None]

    def late_text(self, what: str, time_s: float, at: Callable[[float], str], then: str = "") -> str:
        """`what` done at `time_s` (and `then`, how), and how long after it stopped mattering: "admission
        tightened at 1:15, 50 s after the storm had recovered" — the times said, not a verdict on anyone."""
        done = f"{what} at {at(time_s)}{then}"
        spell = self.late_after(time_s)
        if spell is None or spell.end_s is None:
            return done
        return f"{done}, {time_s - spell.end_s:.0f} s after {spell.ended}"


def while_held(review: Review, names: Sequence[str], ended: str = "the alarm had cleared") -> WhileItMattered:
    """Each spell any of the alarms `names` held, raised to cleared."""
    return WhileItMattered(
        tuple(Spell(a.since_s, a.cleared_s, ended) for a in review.alarms if a.name in names)
    )


def until_recovered(review: Review) -> WhileItMattered:
    """The storm, from its first mass disconnect (`KeyFigures.recovery_from_s`) until connections were back
    to ≥ 95 % for good; to the end where they never were. None where there was no recovery to measure, or
    none to make (back at once)."""
    figures = review.figures
    if figures is None or figures.recovery_from_s is None:
        return WhileItMattered()
    if figures.recovery_s is None:
        return WhileItMattered((Spell(figures.recovery_from_s, None, "the storm had recovered"),))
    if figures.recovery_s <= 0:
        return WhileItMattered()
    back_s = figures.recovery_from_s + figures.recovery_s
    return WhileItMattered((Spell(figures.recovery_from_s, back_s, "the storm had recovered"),))


def while_it_mattered(
    review: Review, names: Sequence[str], ended: str = "the alarm had cleared"
) -> WhileItMattered:
    """While any of the alarms `names` held, or the storm was still under way: a move after the alarm
    cleared but before connections were back still mattered (the scripted herd's admission came 1.5 s after
    drain ÷ inflow cleared, 6 s before the storm recovered), one made after both did not."""
    return while_held(review, names, ended) | until_recovered(review)


def until_storm_over(review: Review) -> WhileItMattered:
    """The storm, from its first mass disconnect until it was over: connections back to ≥ 95 % for good
    and none of its alarms (`STORM_ALARMS`) holding any more — to the end where one still held. The seeds'
    fix of thundering-herd came at 3:20–3:30, after each drain ÷ inflow alarm had cleared and with
    connections never below 95 %, while the hot nodes stayed over the abort line until 17:45: the seed's
    storm "slowly subsides over the next 14 minutes" after its fix. An alarm of the storm's kind over before
    it began is not the storm's. None where there was no storm to measure (no mass disconnect)."""
    figures = review.figures
    if figures is None or figures.recovery_from_s is None:
        return WhileItMattered()
    start_s = figures.recovery_from_s
    ends = [None if figures.recovery_s is None else start_s + figures.recovery_s]
    ends += [
        alarm.cleared_s
        for alarm in review.alarms
        if alarm.name in STORM_ALARMS and (alarm.cleared_s is None or alarm.cleared_s > start_s)
    ]
    end_s = None if None in ends else max(e for e in ends if e is not None)
    if end_s is not None and end_s <= start_s:
        return WhileItMattered()  # back at once, and no alarm of it held: nothing to recover from
    return WhileItMattered((Spell(start_s, end_s, "the storm had recovered"),))


def while_the_storm_lasted(
    review: Review, names: Sequence[str], ended: str = "the alarm had cleared"
) -> WhileItMattered:
    """For the storm's fix: while any of the alarms `names` held, or until the storm was over
    (`until_storm_over`)."""
    return while_held(review, names, ended) | until_storm_over(review)
