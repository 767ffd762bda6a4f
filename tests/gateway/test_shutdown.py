"""`fleet up`'s shutdown (console/gateway/shutdown.py), in process: what it leaves the stop signals."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from console.gateway.shutdown import Ended, Shutdown, Stop, stop_summary
from console.gateway.watch import Gone, Role
from console.stop_signals import STOP_SIGNALS


@pytest.fixture
def stop_handlers_restored() -> Iterator[None]:
    """`Shutdown.run` sets the process's stop signals for good: put this test process's back after."""
    before = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def test_once_every_child_is_stopped_a_stop_signal_is_ignored(stop_handlers_restored: None) -> None:
    """A Ctrl-C after "stopped:" hit the interpreter's exit, where Python resets its handlers to the
    default: fleet up died of SIGINT (status -2, 130 in a shell) with nothing left to stop. Ignored, it
    exits as it was going to (an ignored signal stays ignored through the interpreter's exit)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    Shutdown([Stop(child, 5.0)]).run()
    assert child.returncode is not None
    assert {signum: signal.getsignal(signum) for signum in STOP_SIGNALS} == dict.fromkeys(
        STOP_SIGNALS, signal.SIG_IGN
    )


def test_the_stop_summary_counts_only_what_was_stopped_and_names_what_was_already_down() -> None:
    """On the loopback fleet, with node-2 killed (kill -9) and reported down, `fleet up` said "stopped: 4
    gateway nodes" on exit: it counted every node it had started, not the ones it stopped."""
    fleet = [
        Ended(Role.LOAD, "load"),
        Ended(Role.PUBLISHER, "publisher"),
        *(Ended(Role.NODE, f"node-{k}", Gone.DOWN if k == 2 else None) for k in range(1, 5)),
        Ended(Role.REDIS, "redis"),
    ]
    assert stop_summary(fleet) == (
        "stopped: 3 gateway nodes, the load, the publisher, redis (node-2 was already down)"
    )


def test_the_stop_summary_of_a_whole_fleet_is_as_it_was() -> None:
    fleet = [Ended(Role.PUBLISHER, "publisher"), Ended(Role.NODE, "node-1"), Ended(Role.REDIS, "redis")]
    assert stop_summary(fleet) == "stopped: 1 gateway node, the publisher, redis"


def test_the_stop_summary_names_each_child_already_gone_as_it_went() -> None:
    fleet = [
        Ended(Role.LOAD, "load", Gone.FINISHED),  # its --duration ran out: done, not down
        Ended(Role.PUBLISHER, "publisher"),
        Ended(Role.NODE, "node-1", Gone.DOWN),
        Ended(Role.NODE, "node-2", Gone.DOWN),
        Ended(Role.NODE, "node-3"),
        Ended(Role.REDIS, "redis", Gone.DOWN),  # Redis died: what stopped the fleet
    ]
    assert stop_summary(fleet) == (
        "stopped: 1 gateway node, the publisher "
        "(node-1, node-2 and redis were already down; the load had finished)"
    )


def test_the_stop_summary_with_nothing_left_to_stop_says_so() -> None:
    fleet = [Ended(Role.NODE, "node-1", Gone.DOWN)]
    assert stop_summary(fleet) == "stopped: nothing (node-1 was already down)"


def test_fleet_up_tells_the_summary_which_nodes_were_there_to_stop() -> None:
    """What `fleet up` hands the summary, from its children before the stops: a node its watch reported
    gone is named as such; one that failed to start (no URL, exited: the controller said so) is left out;
    one still starting (no URL yet, running) is stopped, so counted."""
    from console.cli.fleet import _ended
    from console.gateway.processes import NodeProcess

    def running() -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], text=True)

    exited = subprocess.Popen([sys.executable, "-c", "pass"], text=True)
    exited.wait(10)
    nodes = [
        NodeProcess("node-1", process=running(), url="ws://127.0.0.1:1/"),
        NodeProcess("node-2", process=running(), url="ws://127.0.0.1:2/"),
        NodeProcess("node-3", process=exited),  # failed to start
        NodeProcess("node-4", process=running()),  # interrupted while it started
        NodeProcess("node-5"),  # never started
    ]
    try:
        ended = _ended(None, None, nodes, None, {nodes[1].pid: Gone.DOWN})
    finally:
        for node in nodes:
            node.kill()
    assert ended == [
        Ended(Role.NODE, "node-1"),
        Ended(Role.NODE, "node-2", Gone.DOWN),
        Ended(Role.NODE, "node-4"),
    ]
    assert stop_summary(ended) == "stopped: 2 gateway nodes (node-2 was already down)"
