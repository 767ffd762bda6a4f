"""`fleet up`'s shutdown: its children stopped one by one, in order, and not cut short by another signal.

A second Ctrl-C (or SIGTERM, SIGHUP) while the children were being stopped raised KeyboardInterrupt
between two stops, or in the wait for one: the children not yet stopped were left running. Now a stop
signal during the stops is an operator's impatience, answered: the first says how many children are left
(and that another signal kills them), the next kills every child left (SIGKILL) — each still waited for,
so none outlives `fleet up`. Once all are stopped, stop signals are ignored: the process is on its way out.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from console.gateway.watch import Gone, Role
from console.model.units import counted
from console.stop_signals import STOP_SIGNALS

#: How often a stop's wait looks whether a signal asked to kill the rest.
WAKE_S = 0.05


@dataclass(frozen=True)
class Stop:
    """A child to stop: SIGTERM (it stops in order), then SIGKILL once `grace_s` has passed."""

    process: subprocess.Popen  # type: ignore[type-arg]
    grace_s: float


class Shutdown:
    """Stops `stops` in their order; stop signals from now on are answered, not raised (see the module)."""

    def __init__(self, stops: list[Stop], signals: int = 0) -> None:
        self._stops = stops
        self._at = 0  # the stop under way
        #: Stop signals received while stopping (`signals`: those since the stop began, before this).
        self.signals = signals
        #: A signal asked to kill every child left.
        self.forced = False

    def run(self) -> None:
        # Installed until every child is stopped: a signal until then is answered too.
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._signalled)
        for at, stop in enumerate(self._stops):
            self._at = at
            self._stop(stop)
        self._at = len(self._stops)
        # Nothing left to stop: the process only says so and exits. A Ctrl-C from now on is ignored, not
        # answered — a handler of ours is put back to the default by the interpreter's exit, and a press
        # there ended fleet up by SIGINT (status -2, 130 in a shell); an ignored signal stays ignored.
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)

    def left(self) -> int:
        """The children still to stop, the one under way included."""
        return sum(1 for stop in self._stops[self._at :] if stop.process.returncode is None)

    def _stop(self, stop: Stop) -> None:
        process = stop.process
        if process.poll() is not None:
            return
        process.send_signal(signal.SIGKILL if self.forced else signal.SIGTERM)
        deadline = time.monotonic() + stop.grace_s
        while True:
            try:
                process.wait(WAKE_S)
                return
            except subprocess.TimeoutExpired:
                pass
            if self.forced or time.monotonic() >= deadline:
                process.kill()
                process.wait()
                return

    def _signalled(self, signum: int, frame: object) -> None:
        # Written straight to fd 2: the signal may come in the middle of a print to sys.stderr.
        self.signals += 1
        if self.signals == 1:
            said = f"fleet up: stopping… ({self.left()} left; Ctrl-C again kills them)\n"
        else:
            self.forced = True
            said = f"fleet up: killing the {self.left()} left\n"
        os.write(2, said.encode())


class Ended(NamedTuple):
    """One of `fleet up`'s children at its end: its role, its name as the fleet calls it (`node-2`,
    `load`), and how it had already ended (None: `fleet up` stopped it)."""

    role: Role
    name: str
    gone: Gone | None = None


#: How the stop summary names the children that are not nodes (the nodes are counted).
SUMMARY_NAMES = {Role.LOAD: "the load", Role.PUBLISHER: "the publisher", Role.REDIS: "redis"}


def stop_summary(children: Sequence[Ended]) -> str:
    """`fleet up`'s last line: what it stopped, the nodes counted first, then the others in the order
    given — "stopped: 3 gateway nodes, the publisher, redis (node-2 was already down)". A child that had ended before is not counted as stopped
    (a node killed in a drill and reported down made "4 gateway nodes" of the 3 stopped): it is named
    after, as it went."""

    def named(child: Ended) -> str:
        return child.name if child.role is Role.NODE else SUMMARY_NAMES[child.role]

    stopped = [child for child in children if child.gone is None]
    nodes = sum(1 for child in stopped if child.role is Role.NODE)
    said = [counted(nodes, "gateway node")] if nodes else []
    said += [named(child) for child in stopped if child.role is not Role.NODE]
    gone = []
    for how in Gone:
        names = [named(child) for child in children if child.gone is how]
        if names:
            gone.append(f"{_listed(names)} {how.value[0] if len(names) == 1 else how.value[1]}")
    return "stopped: " + (", ".join(said) or "nothing") + (f" ({'; '.join(gone)})" if gone else "")


def _listed(names: list[str]) -> str:
    """One name, two ("node-1 and redis"), or more ("node-1, node-2 and redis")."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
