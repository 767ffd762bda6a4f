"""The signals that stop a long-running command in order: Ctrl-C, a `kill`, and a closed terminal.

SIGHUP (tmux kill-session, a dropped ssh session, a closed terminal window) ended the process on the
spot: `sim serve` left its token file, `fleet up` left Redis, the publisher and its nodes running, a
gateway node closed its connections without reconnect hints — every client at once.
"""

from __future__ import annotations

import signal

#: What stops a command from outside it: a `kill`, a closed terminal. (A full-screen console takes Ctrl-C as
#: a key of its own, and quits on it itself.)
OUTSIDE_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
STOP_SIGNALS = (signal.SIGINT, *OUTSIDE_STOP_SIGNALS)
