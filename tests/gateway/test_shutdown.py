"""`fleet up`'s shutdown (console/gateway/shutdown.py), in process: what it leaves the stop signals."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from console.gateway.shutdown import Shutdown, Stop
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
