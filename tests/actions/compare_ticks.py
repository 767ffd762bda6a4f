"""Would a coarser tick make the forecast cheaper without changing what it says? (issue #4, §1)

Runs thundering-herd to the halt at 10, 25 and 50 ms ticks and compares, window by 60 s window, the
forecast's summaries: total connections (min), max node CPU, attempts/s (peak); and the wall time.
`PYTHONPATH=$PWD python -m tests.actions.compare_ticks` — the figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import time

import numpy as np

from console.sim import kernel as k
from console.sim.engine import Simulation
from console.sim.scenario_loader import load_scenario

UNTIL_S = 690
TICKS_MS = (10, 25, 50)


def series(tick_ms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    sim = Simulation(load_scenario("thundering-herd", [f"tick_ms={tick_ms}"]))
    sim.step()  # compile outside the timing
    connections, cpu, attempts, wall_s = [], [], [], 0.0
    for _ in range(UNTIL_S):
        started = time.perf_counter()
        result = sim.step()
        wall_s += time.perf_counter() - started
        n = sim.n_nodes
        out = result.node_out[:, :n]
        connections.append(int(result.connections[:n].sum()))
        cpu.append(float(out[k.ON_CPU].max() * 100))
        attempts.append(float(out[k.ON_ATTEMPTS].sum() + result.fleet_out[k.OF_REFUSED]))
    return np.array(connections), np.array(cpu), np.array(attempts), wall_s


def main() -> None:
    runs = {tick: series(tick) for tick in TICKS_MS}
    for tick, run in runs.items():
        print(f"tick {tick} ms: {UNTIL_S} s simulated in {run[3]:.2f} s of wall time")
    fine = runs[TICKS_MS[0]]
    for tick in TICKS_MS[1:]:
        coarse = runs[tick]
        print(f"tick {tick} ms against {TICKS_MS[0]} ms, per 60 s window (fine vs coarse):")
        # thundering-herd restarts a batch every 90 s from fleet second 30 (the series' first entry is
        # second 2): a window opening with a batch sees its storm; one opening later sees only the
        # retry waves 31–90 s after it, the next batch not yet begun: a forecast asked for between batches.
        starts = sorted([*range(30, UNTIL_S - 60, 90), *range(61, UNTIL_S - 60, 90)])
        for start in starts:
            window = slice(start - 2, start - 2 + 60)
            f = [values[window] for values in fine[:3]]
            c = [values[window] for values in coarse[:3]]
            gap = abs(f[2].max() - c[2].max()) / f[2].max() * 100
            print(
                f"  {start:>3}–{start + 60:<3} s  connections min {f[0].min():>10,} vs {c[0].min():>10,}  "
                f"CPU max {f[1].max():3.0f} vs {c[1].max():3.0f} %  attempts/s peak {f[2].max():>9,.0f} vs "
                f"{c[2].max():>9,.0f} ({gap:.0f} % apart)"
                + ("  [opens with a batch]" if (start - 30) % 90 == 0 else "")
            )


if __name__ == "__main__":
    main()
