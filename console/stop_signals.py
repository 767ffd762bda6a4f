"""The signals that stop a long-running command in order: Ctrl-C, a `kill`, and a closed terminal.

SIGHUP (tmux kill-session, a dropped ssh session, a closed terminal window) ended the process on the
spot: `sim serve` left its token file, `fleet up` left Redis, the publisher and its nodes running, a
gateway node closed its connections without reconnect hints — every client at once.

A parent that dies without stopping its children (SIGKILL, a hard crash) sends no signal at all: a child
started with `--stop-with-parent` and its stdin on a pipe from the parent stops itself (SIGTERM, so in
order) when that pipe closes — the kernel closes it however the parent ends, from whichever of its threads
the child was started (unlike PR_SET_PDEATHSIG, which fires when the starting thread exits).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator

#: What stops a command from outside it: a `kill`, a closed terminal. (A full-screen console takes Ctrl-C as
#: a key of its own, and quits on it itself.)
OUTSIDE_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
STOP_SIGNALS = (signal.SIGINT, *OUTSIDE_STOP_SIGNALS)


@contextlib.contextmanager
def answering_stop_signals(answer: Callable[[], object]) -> Iterator[None]:
    """Each stop signal calls `answer()` until the block ends; then the handlers from before are back.

    Not the event loop's `add_signal_handler`: that points the signal wakeup fd at the loop's self-pipe, and
    `loop.close()` closes the pipe before it removes its handlers — a signal in between (Ctrl-C pressed three
    times at `fleet up`) printed "Exception ignored when trying to write to the signal wakeup fd" and a
    traceback. `answer` runs in the main thread between two bytecodes, maybe inside the loop's own code: it
    only sets flags, or hands the work to the loop (`soon`)."""
    before = {signum: signal.signal(signum, lambda signum, frame: answer()) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


class UntilServing:
    """A long-running command's stop signals before and after its server: until it serves, each raises
    KeyboardInterrupt, so the command's `finally` stops what it started so far; once it serves, the server
    answers them (its own handlers) and puts this one back when it is done. A signal from then on, before the
    command's shutdown puts in its own handlers, is the stop already under way: counted and said, not raised
    — raised, it cut `fleet up`'s `finally` short before its children's stops (or ended it with 130 after
    a clean stop)."""

    def __init__(self, said: str) -> None:
        self._said = said
        self.serving = False
        #: Signals after serving, before the shutdown's handlers: the shutdown counts them as its own.
        self.late = 0

    def install(self) -> None:
        for signum in STOP_SIGNALS:
            signal.signal(signum, self)

    def __call__(self, signum: int, frame: object) -> None:
        if not self.serving:
            raise KeyboardInterrupt
        self.late += 1
        os.write(2, self._said.encode())  # straight to fd 2: the signal may come in the middle of a print


def soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], object]) -> Callable[[], None]:
    """`callback` run by `loop` at its next turn, asked from a signal handler; nothing once it is closed."""

    def ask() -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(callback)

    return ask


def stop_when_stdin_closes() -> None:
    """SIGTERM ourselves, to stop as on a `kill`, once stdin (the parent's end of a pipe) closes."""

    def watch() -> None:
        # The raw descriptor, not sys.stdin: a daemon thread inside sys.stdin's buffered read holds its
        # lock, and the interpreter's exit (on a plain SIGTERM) then waited 1 s for it and aborted (SIGABRT).
        with contextlib.suppress(OSError):
            while os.read(0, 1024):
                pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="stormdeck-parent-watch", daemon=True).start()
