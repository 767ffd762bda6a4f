"""Drain pacing — pure: how many planned closes are due by a given moment, and when the next one is.

A drain closes connections at the operator's rate (closes per second) so that the rest of the fleet sees
a steady inflow it can admit, not a wave; whatever remains at the deadline is force-closed (DESIGN.md,
"drain"; the interview seed's 10-minute window). Envoy and HAProxy cannot pace this way (issue #6).

The pacing counts only the time the node was running: closes that fell due while it was stalled (`lost_s`,
see console/gateway/stall.py) are not made up in a burst at resume. The deadline is the clock's: one that
passed during a stall force-closes the rest at resume.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from console.protocol import DrainProgress, DrainRequest


@dataclass(frozen=True)
class DrainPlan:
    rate_per_s: float
    started_s: float
    deadline_s: float
    hint_ms: tuple[int, int]

    @classmethod
    def from_request(cls, request: DrainRequest, now_s: float) -> DrainPlan:
        low, high = request.hint_ms
        return cls(request.rate_per_s, now_s, now_s + request.deadline_s, (min(low, high), max(low, high)))

    def due(self, now_s: float, lost_s: float = 0.0) -> int:
        """Closes that should have started by `now_s`: the first at once, then one every 1/rate s of the
        time the node ran — `lost_s` of the drain's time it stood still (a stall) close nothing."""
        running_s = now_s - lost_s - self.started_s
        if running_s < 0:
            return 0
        return math.floor(running_s * self.rate_per_s + 1e-9) + 1

    def next_close_s(self, closed: int, lost_s: float = 0.0) -> float:
        """When close number `closed + 1` is due, `lost_s` of the drain's time having been lost to stalls."""
        return self.started_s + lost_s + closed / self.rate_per_s

    def past_deadline(self, now_s: float) -> bool:
        return now_s >= self.deadline_s

    def hint(self, rng: random.Random) -> int:
        """The reconnect delay sent with one close, drawn from the hint window."""
        return rng.randint(*self.hint_ms)

    def progress(
        self, remaining: int, close_times_s: list[float], forced: int, now_s: float, wall_offset_s: float
    ) -> DrainProgress:
        """Progress in wall-clock seconds (`wall_offset_s` = wall − this plan's clock): the paced closes
        (`close_times_s`) give the achieved rate; the `forced` ones at the deadline, all at one moment,
        would read as thousands a second."""
        eta = remaining / self.rate_per_s if remaining else 0.0
        return DrainProgress(
            remaining=remaining,
            rate_per_s=self.rate_per_s,
            hint_ms=self.hint_ms,
            started_at_s=self.started_s + wall_offset_s,
            deadline_at_s=self.deadline_s + wall_offset_s,
            eta_s=min(eta, max(0.0, self.deadline_s - now_s)),
            closed=len(close_times_s) + forced,
            forced=forced,
            achieved_rate_per_s=achieved_rate_per_s(close_times_s),
        )


def achieved_rate_per_s(close_times_s: list[float]) -> float | None:
    """Closes per second over a run: (n − 1) intervals over the span from the first to the last close."""
    if len(close_times_s) < 2:
        return None
    span = close_times_s[-1] - close_times_s[0]
    return (len(close_times_s) - 1) / span if span > 0 else None
