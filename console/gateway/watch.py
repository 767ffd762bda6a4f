"""`fleet up`'s children after they start: which one exited, what that means for the fleet, and what next.

A node killed in a drill, a Redis that died, a crashed publisher: `fleet up`'s terminal said nothing and
the fleet ran on half dead. Now each exit is judged (`judge`, pure) and said at once, naming the child
as the fleet calls it, how it ended, where its log is and what follows:

* a node stays down — the controller shows it `down` (the console's node_down alarm), its clients
  reconnect to the others (the storm drill), and `act add-capacity` can add nodes; the fleet runs on;
* the publisher: no new messages on the nodes' channel, clients still connect and resume; the fleet
  runs on;
* the load generator: one that ends its `--duration` with status 0 is done (planned, said as such); one
  that fails leaves the fleet without `fleet up`'s load; the fleet runs on;
* Redis holds every node's history and the publisher's stream, on a port only `fleet up` knew, with
  nothing to bring it back: arriving clients are refused (1013) and no message flows — the fleet is not
  usable, so `fleet up` stops every child in order and exits 1.

Planned exits are not failures: the children `fleet up` stops itself (on Ctrl-C, SIGTERM, SIGHUP, or
after a fatal exit; Ctrl-C at a terminal reaches the children too), a node that failed to start (it never
served; the controller says so as a provisioning failure), and a load that finished. Rollouts restart
nothing here: `fleet up`'s nodes have no restart command, so the controller refuses a rollout over them.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

#: How often the children are looked at: a death is said within this.
POLL_S = 0.2
#: The log lines quoted with a report (a node's traceback ends there).
LAST_WORDS = 5


class Role(Enum):
    NODE = "node"
    REDIS = "redis"
    PUBLISHER = "publisher"
    LOAD = "load"


class Gone(Enum):
    """How a child ended while the fleet served, as its report said: what `fleet up`'s stop summary names
    it by (`console.gateway.shutdown.stop_summary`), as a child it did not stop."""

    #: Killed, crashed or failed (Redis's death stops the fleet).
    DOWN = ("was already down", "were already down")
    #: A planned exit: the load, its --duration over with status 0.
    FINISHED = ("had finished", "had finished")


@dataclass(frozen=True)
class Child:
    """A running child of `fleet up`, as the fleet calls it (`node-3`, `redis`, `publisher`, `load`)."""

    name: str
    role: Role
    process: subprocess.Popen  # type: ignore[type-arg]
    log: Path | None = None


@dataclass(frozen=True)
class Verdict:
    planned: bool  # not a failure: said plainly, the logs need not be kept
    fatal: bool  # the fleet is not usable without this child: stop everything, exit 1
    report: str  # what the terminal is told, first line first


def exit_status(returncode: int) -> str:
    """How a process ended, as `Popen.returncode` says it: `exited with status N` or `was killed by SIGX`."""
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"was killed by {name}"


#: The command that adds a node, while the fleet's URL is not known yet (it is once the controller serves).
ADD_CAPACITY_UNKNOWN = "stormdeck act <the url: line above> add-capacity --count N"


def judge(
    child: Child,
    returncode: int,
    nodes_serving: int,
    nodes_started: int,
    last_words: list[str],
    add_capacity: str = ADD_CAPACITY_UNKNOWN,
) -> Verdict:
    """What `child`'s exit means for the fleet. `nodes_serving` counts the nodes still running after it,
    of `nodes_started`; `last_words` are its log's last lines; `add_capacity` is the command that adds a
    node to this fleet, said when none serves."""
    log = f"log: {child.log}" if child.log is not None else "log: none"
    head = f"{child.name} (pid {child.process.pid}) {exit_status(returncode)} — {log}"
    if child.role is Role.LOAD and returncode == 0:
        return Verdict(True, False, f"fleet up: the load finished: {head}")
    if child.role is Role.NODE:
        meaning = f"{child.name} stays down: the controller shows it down (node_down); "
        if nodes_serving:
            # Processes, not rotation: "3 of 4 serve" counted a drained node's running process (review) —
            # the watch sees processes; the console says which are in rotation.
            meaning += (
                f"its clients reconnect to the other nodes; {nodes_serving} of {nodes_started} node processes "
                "still run."
            )
        else:
            meaning += (
                f"no node process of {nodes_started} runs now: add one ({add_capacity}) or stop the fleet."
            )
        meaning += " The fleet runs on."
        fatal = False
    elif child.role is Role.PUBLISHER:
        meaning = (
            "no new messages on the nodes' channel (clients still connect and resume from the history). "
            "The fleet runs on."
        )
        fatal = False
    elif child.role is Role.LOAD:
        meaning = "the fleet runs on without fleet up's load (the `more load` line above starts another)."
        fatal = False
    else:
        meaning = (
            "every node's history and the publisher's stream were in it, and nothing brings it back: "
            "arriving clients are refused (1013) and no message flows. The fleet is not usable: "
            "stopping the fleet."
        )
        fatal = True
    words = "".join(f"\n  | {line}" for line in last_words)
    return Verdict(False, fatal, f"fleet up: {head}{words}\n  {meaning}")


def last_lines(path: Path | None, count: int = LAST_WORDS) -> list[str]:
    """The last `count` lines of a child's log (none when it has no log or it cannot be read)."""
    if path is None:
        return []
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - 4096))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-count:]


class Watch:
    """Polls `fleet up`'s children while the fleet serves; says each exit at once, once."""

    def __init__(self, children: Callable[[], list[Child]]) -> None:
        self._children = children
        self._seen: set[int] = set()  # pids already judged
        #: An exit that was not planned happened (the logs are kept for the operator).
        self.failed = False
        #: The command that adds a node to this fleet (`serving` says it once the controller serves).
        self.add_capacity = ADD_CAPACITY_UNKNOWN
        #: The children whose exit was reported, by pid, and how they went: not stopped by `fleet up`.
        self.gone: dict[int, Gone] = {}

    def serving(self, url: str, token_path: Path) -> None:
        """The fleet API serves at `url`, `token_path` holding an operator's token: said in reports."""
        self.add_capacity = f"stormdeck act {url} add-capacity --count N --token-file {token_path}"

    async def run(self, stopping: Callable[[], bool]) -> bool:
        """Watch until a fatal exit (True: stop the fleet) or until cancelled. Nothing is judged once
        `stopping()`: the children exit then because `fleet up` stops them."""
        while True:
            await asyncio.sleep(POLL_S)
            exited = [
                child
                for child in self._children()
                if child.process.pid not in self._seen and child.process.poll() is not None
            ]
            if not exited:
                continue
            # Ctrl-C at a terminal reaches the children as it reaches us; our handler runs on this loop,
            # two turns after the signal's wake-up byte (read, then call): let it, before judging.
            for _ in range(3):
                await asyncio.sleep(0)
            if stopping():
                return False
            if self._judge(exited):
                return True

    def _judge(self, exited: list[Child]) -> bool:
        children = self._children()
        nodes = [c for c in children if c.role is Role.NODE]
        serving = sum(1 for c in nodes if c.process.poll() is None)
        fatal = False
        for child in exited:
            self._seen.add(child.process.pid)
            returncode = child.process.returncode
            words = last_lines(child.log)
            verdict = judge(child, returncode, serving, len(nodes), words, self.add_capacity)
            self.failed |= not verdict.planned
            self.gone[child.process.pid] = Gone.FINISHED if verdict.planned else Gone.DOWN
            print(verdict.report, file=sys.stdout if verdict.planned else sys.stderr, flush=True)
            fatal |= verdict.fatal
        return fatal
