"""When a finding's move mattered: while its alarm held, or the storm was still under way.

A finding is done by a move made while it mattered, not by one made after: the report read "done —
admission tightened at 1:15" for a drain ÷ inflow alarm that had cleared at 0:25, in a storm back at 0:35.
A move made before any of it (a limit set pre-emptively) is each finding's own question, not late. Pure: a
`Review` in, spells out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from console.record.records import ActionRecord
from console.record.review import Review


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
