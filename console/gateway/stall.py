"""Time the node was not running — pure: a hang (SIGSTOP … SIGCONT), a long GC pause or CPU stall.

The node's timers run on the monotonic clock, which goes on while the process stands still; at resume every
timer that came due meanwhile fires in the same loop turn. Pacing counted from a start (a drain's closes,
the connections' lifetimes) would then make up the stalled time in one burst: after a 10 s hang a drain at
5/s closed 51 connections at once — the synchronized reconnect wave that pacing exists to prevent. The
node counts such pacing in *running* time instead: monotonic time less the stalls seen here. The stall's
time is lost, not made up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: How often the node shows it is running (`GatewayNode._watch_stalls`).
AWAKE_TICK_S = 0.1

#: A gap between two sightings up to this much past a tick is the loop's ordinary lateness under load, and
#: is made up as before; one beyond it is a stall, and all of its lateness is lost. One 100 ms wave bin
#: (WAVE_BIN_MS): what a node makes up fits in the bin the console shows waves at.
STALL_TOLERANCE_S = 0.1


@dataclass
class StallClock:
    """Seconds the node was stalled, from the gaps between sightings of its running loop."""

    last_seen_s: float
    lost_s: float = 0.0  # stalled seconds since the node started; only grows

    def observe(self, now_s: float) -> float:
        """The node runs at `now_s` (monotonic); returns the seconds lost to stalls so far, this one too.

        Anyone may call it: the first timer to run after a stall learns of it before the ticker does. The
        loop must have come round by the last sighting plus a tick (the ticker's next turn was due), so
        time beyond that is lateness."""
        late_s = now_s - self.last_seen_s - AWAKE_TICK_S
        if late_s > STALL_TOLERANCE_S:
            self.lost_s += late_s
        self.last_seen_s = max(self.last_seen_s, now_s)
        return self.lost_s


@dataclass
class Schedule:
    """A tick every `period_s` on a fixed schedule, so ticks do not drift by the work each one takes; a tick
    that runs more than STALL_TOLERANCE_S late starts the schedule again from itself. The ticks a stall
    missed are lost, not made up at resume in a burst; ordinary lateness is made up as before."""

    period_s: float
    next_s: float  # when the next tick is due (monotonic)

    def wait_s(self, now_s: float) -> float:
        return max(0.0, self.next_s - now_s)

    def ticked(self, now_s: float) -> None:
        """The due tick runs at `now_s`."""
        stalled = now_s - self.next_s > STALL_TOLERANCE_S
        self.next_s = (now_s if stalled else self.next_s) + self.period_s


def next_frame_s(due_s: float, now_s: float) -> float:
    """When a node's next frame is due (wall clock), the one due at `due_s` sent at `now_s`: a whole second
    later, so a fleet's nodes take theirs together — or, when that has passed too (a hang, a stall of more
    than a second), the next whole second after now: the frames missed are lost, not made up in a burst."""
    return max(due_s + 1.0, math.floor(now_s) + 1.0)
