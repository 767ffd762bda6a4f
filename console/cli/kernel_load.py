"""The simulator's compiled kernel, loaded before a command times, paces or serves anything.

A fresh install compiles it on first use: tens of seconds (39 s on a busy 2-core machine) in which
`sim run` printed nothing and then gave the compile as the run's wall time, `sim serve` was silent until
its ready lines, and a paced headless drill rushed its first frames to catch up the lost time.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from console.sim.engine import Simulation

#: A load from numba's cache takes well under a second; longer than this, it is compiling.
COMPILE_NOTICE_S = 2.0
COMPILING = (
    "stormdeck: compiling the simulator — a first run after install takes tens of seconds; "
    "later runs load it from the cache"
)


def load_simulator(simulation: Simulation) -> None:
    """`simulation.load_kernel()`, saying on stderr that it compiles when it takes longer than a load."""
    notice = threading.Timer(COMPILE_NOTICE_S, lambda: print(COMPILING, file=sys.stderr, flush=True))
    notice.daemon = True
    notice.start()
    try:
        simulation.load_kernel()
    finally:
        notice.cancel()
