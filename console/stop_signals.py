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

import contextlib
import os
import signal
import threading

#: What stops a command from outside it: a `kill`, a closed terminal. (A full-screen console takes Ctrl-C as
#: a key of its own, and quits on it itself.)
OUTSIDE_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
STOP_SIGNALS = (signal.SIGINT, *OUTSIDE_STOP_SIGNALS)


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
