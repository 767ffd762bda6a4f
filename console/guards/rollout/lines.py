"""The CPU line a rollout's start is judged against, and the check of the busiest serving node now."""

from __future__ import annotations

from dataclasses import dataclass

from console.guards.thresholds import DEFAULT_THRESHOLDS
from console.guards.verdict import any_of, check
from console.protocol import (
    Check,
    VerdictLevel,
)


@dataclass(frozen=True)
class PauseLine:
    """The CPU line a start is judged against: the one its request asks for (`pause_cpu_pct`), where its
    rollout pauses — judged at the seed's 75 % whatever it asked, a start passed "cpu_now_pct 18.2 ≤ 75"
    and sat "paused: b CPU 18 % > 15 %" a second later (real fleet, found in review) — but never above the
    configured line (`cpu_pause_pct`): a fleet over it is unhealthy whatever a rollout asks for."""

    asked_pct: float
    configured_pct: float

    @property
    def pct(self) -> float:
        return min(self.asked_pct, self.configured_pct)

    @property
    def is_asked(self) -> bool:
        """The line judged is the request's own (at or under the configured one)."""
        return self.asked_pct <= self.configured_pct

    def words(self) -> str:
        if self.is_asked:
            return f"the rollout's pause line, {self.asked_pct:g} % (pause_cpu_pct)"
        return f"{configured_line(self.configured_pct)}, under the {self.asked_pct:g} % asked for"

    def raise_move(self) -> str:
        """A higher line the operator may ask for without typing the fleet's name; "" when there is none."""
        if self.asked_pct >= self.configured_pct:
            return ""
        return f"a higher pause_cpu_pct (up to {self.configured_pct:g} %)"


def configured_line(pct: float) -> str:
    """The configured pause line, "the configured 10 % pause line (cpu_pause_pct)" — the seed's only where
    it is the seed's: "a pause line above the seed's 75 %" was said beside a limit of 10."""
    whose = "the outage seed's" if pct == DEFAULT_THRESHOLDS.cpu_pause_pct else "the configured"
    return f"{whose} {pct:g} % pause line (cpu_pause_pct)"


def cpu_now_check(cpu_now: float, line: PauseLine) -> Check:
    """The busiest serving node now against the pause line judged (`PauseLine`): over the request's own,
    the rollout pauses before its first batch; over the configured one, under a looser line asked for, the
    fleet is too hot for any restart (outage seed)."""
    if line.is_asked:
        move = ": the rollout would pause at once, before its first batch — " + any_of(
            ["wait for CPU to fall", "shed load with admission", line.raise_move()]
        )
    else:
        move = (
            ": no restart completes while the fleet is over it (outage seed) — shed load with admission and "
        )
        move += "wait for CPU to fall"
    return check(
        "cpu_now_pct",
        cpu_now,
        line.pct,
        fails_to=VerdictLevel.BLOCKED,
        why=f"busiest serving node's CPU now, against {line.words()}",
        move=move,
    )
