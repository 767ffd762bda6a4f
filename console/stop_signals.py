"""The signals that stop a long-running command in order: Ctrl-C, a `kill`, and a closed terminal.

SIGHUP (tmux kill-session, a dropped ssh session, a closed terminal window) ended the process on the
spot: `sim serve` left its token file, `fleet up` left Redis, the publisher and its nodes running, a
gateway node closed its connections without reconnect hints — every client at once.
"""

from __future__ import annotations

import signal

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
