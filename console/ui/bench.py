"""`stormdeck bench console`: a headless console on a synthetic 2000-node stream at 1 Hz.

Figures (issue #3 targets): frame_ms median ≤ 25 and p99 (decode + apply + render, until painted),
cpu_pct ≤ 10 (of one core, steady state, the synthetic generator's own CPU subtracted), staleness_p99_ms
≤ 250 (frame created → painted), startup_s ≤ 1.5 (to the first painted frame), rss_mb ≤ 250 after an
hour's worth of history.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from console.client.decode import StreamDecoder
from console.client.synthetic import SyntheticFleet
from console.model.history import FleetModel
from console.model.link import LinkState, LinkStatus, Received, StreamItem
from console.protocol import Frame

TARGETS = {
    "frame_ms_median": 25.0,
    "cpu_pct": 10.0,
    "staleness_p99_ms": 250.0,
    "startup_s": 1.5,
    "rss_mb": 250.0,
}


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


@dataclass
class _Timing:
    fed_at: list[float] = field(default_factory=list)
    created_at: list[float] = field(default_factory=list)
    painted_at: list[float] = field(default_factory=list)
    generator_cpu_s: float = 0.0
    # (wall, process cpu, generator cpu) at each frame, for the steady-state CPU share
    cpu_marks: list[tuple[float, float, float]] = field(default_factory=list)


class _PacedSynthetic:
    """The synthetic fleet as a stream source, paced at `rate_hz`, timing each frame."""

    def __init__(self, nodes: int, frames: int, rate_hz: float, timing: _Timing, done: asyncio.Event) -> None:
        self.fleet = SyntheticFleet(nodes=nodes, storm_at_s=frames // 3 or 1)
        self.frames = frames
        self.interval_s = 1.0 / rate_hz
        self.timing = timing
        self.done = done
        self.decoder = StreamDecoder()

    async def run(self, sink: Callable[[StreamItem], None]) -> None:
        sink(Received(self.decoder.feed(json.dumps(self.fleet.hello())), time.time()))
        sink(LinkStatus(LinkState.LIVE, at_s=time.time()))
        next_at = time.perf_counter()
        for _ in range(self.frames):
            self.timing.cpu_marks.append(
                (time.perf_counter(), time.process_time(), self.timing.generator_cpu_s)
            )
            cpu0 = time.process_time()
            messages = self.fleet.next_messages()
            self.timing.generator_cpu_s += time.process_time() - cpu0
            created = time.perf_counter()
            for raw in messages:
                message = self.decoder.feed(raw)
                if message is not None:
                    if isinstance(message, Frame):
                        self.timing.created_at.append(created)
                        self.timing.fed_at.append(time.perf_counter())
                    sink(Received(message, time.time()))
            next_at += self.interval_s
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
        self.done.set()
        await asyncio.Event().wait()


async def _hour_of_history(model: FleetModel, nodes: int, history_s: int) -> None:
    """Apply `history_s` frames straight into the model (no rendering): memory is what this measures."""
    fleet = SyntheticFleet(nodes=nodes, storm_at_s=20, seed=11)
    decoder = StreamDecoder()
    pool = [decoder.feed(json.dumps(fleet.next_frame())) for _ in range(30)]
    start_seq = model.last_seq or 0
    start_t = model.frame.time_s if model.frame else 0.0
    for i in range(1, history_s + 1):
        frame = pool[i % len(pool)].model_copy(
            update={"seq": start_seq + i, "time_s": start_t + i, "epoch": model.epoch}
        )
        model.apply_frame(frame, time.time())
        if i % 200 == 0:
            await asyncio.sleep(0)


async def run_console_bench(
    nodes: int = 2000, frames: int = 30, rate_hz: float = 1.0, history_s: int = 3600, warmup: int = 3
) -> dict[str, float]:
    started = time.perf_counter()
    from console.model.alarm_source import console_model
    from console.ui.app import ConsoleApp

    timing = _Timing()
    done = asyncio.Event()
    source = _PacedSynthetic(nodes, frames, rate_hz, timing, done)
    app = ConsoleApp(model=console_model(), source=source, remember_theme=False, theme_name="dark")
    app.after_paint = lambda: timing.painted_at.append(time.perf_counter())
    async with app.run_test(headless=True, size=(160, 50)) as pilot:
        await asyncio.wait_for(done.wait(), timeout=frames / rate_hz + 60)
        await pilot.pause()
        startup_s = timing.painted_at[0] - started if timing.painted_at else float("nan")
        await _hour_of_history(app.model, nodes, history_s)
        app.refresh_views()
        await pilot.pause()
        rss_mb = _rss_mb()
    # Pair each frame with the first paint after it (coalesced paints serve several frames).
    frame_ms, stale_ms = [], []
    paints = sorted(timing.painted_at)
    for fed, created in zip(timing.fed_at, timing.created_at, strict=True):
        painted = next((p for p in paints if p >= fed), None)
        if painted is not None:
            frame_ms.append((painted - fed) * 1000.0)
            stale_ms.append((painted - created) * 1000.0)
    steady = frame_ms[warmup:] or frame_ms
    return {
        "nodes": nodes,
        "frames": len(frame_ms),
        "frame_ms_median": round(statistics.median(steady), 2),
        "frame_ms_p99": round(_p99(steady), 2),
        "cpu_pct": round(_steady_cpu_pct(timing.cpu_marks[warmup:]), 2),
        "staleness_p99_ms": round(_p99(stale_ms[warmup:] or stale_ms), 2),
        "startup_s": round(startup_s, 3),
        "rss_mb": round(rss_mb, 1),
        "history_s": history_s,
    }


def _steady_cpu_pct(marks: list[tuple[float, float, float]]) -> float:
    """Process CPU over whole frame periods after warm-up, less the synthetic generator's, per wall second."""
    if len(marks) < 2:
        return float("nan")
    (wall0, cpu0, gen0), (wall1, cpu1, gen1) = marks[0], marks[-1]
    return 100.0 * ((cpu1 - cpu0) - (gen1 - gen0)) / (wall1 - wall0)
