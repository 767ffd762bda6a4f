"""Stopping an in-process server is quiet; a tick that really fails is still logged."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.server.conftest import Live, start_live

TICK_FAILED = "tick failed"


def _within(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _ticked(live: Live, frames: int = 3) -> bool:
    return _within(lambda: live.feed.history.newest_seq >= frames)


def test_a_stopped_server_logs_no_tick_failure(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    live = start_live()
    try:
        assert _ticked(live)
    finally:
        live.server.stop()
    assert [r.getMessage() for r in caplog.records if TICK_FAILED in r.getMessage()] == []


def test_a_tick_that_fails_is_still_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="console.server.feed")
    live = start_live()

    async def failing(fleet_seconds: int, budget_s: float) -> object:
        raise ValueError("the backend broke")

    try:
        assert _ticked(live)
        live.fleet.tick = failing  # type: ignore[method-assign]
        assert _within(lambda: any(TICK_FAILED in r.getMessage() for r in caplog.records))
    finally:
        live.server.stop()
    failed = next(r for r in caplog.records if TICK_FAILED in r.getMessage())
    assert failed.exc_info is not None and "the backend broke" in str(failed.exc_info[1])


#: A script's server stopped at its exit (atexit), after the interpreter's exit hooks shut its thread
#: pools: every tick until the feed stopped said "tick failed (N in a row) … RuntimeError: cannot
#: schedule new futures after shutdown", with a traceback, though nothing had failed.
STOPPED_AT_EXIT = """
import atexit, logging, time
from tests.server.conftest import start_live

logging.basicConfig(level=logging.WARNING)
live = start_live()
atexit.register(live.server.stop)
deadline = time.monotonic() + 10
while live.feed.history.newest_seq < 3 and time.monotonic() < deadline:
    time.sleep(0.01)
print("ticked", live.feed.history.newest_seq >= 3)
"""


def test_a_server_stopped_at_the_scripts_exit_logs_no_tick_failure() -> None:
    root = Path(__file__).resolve().parents[2]  # where `tests.server.conftest` imports from
    run = subprocess.run(
        [sys.executable, "-c", STOPPED_AT_EXIT], capture_output=True, text=True, timeout=60, cwd=root
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["ticked", "True"], run.stdout
    assert TICK_FAILED not in run.stderr and "Traceback" not in run.stderr, run.stderr
