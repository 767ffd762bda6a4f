"""Cost of the pure cores: `python -m tests.bench_cores` (run with your worktree first on PYTHONPATH).

Prints the alarm engine's update() time with 2000 nodes (calm, and every node over the abort line) and
each guard verdict's time at 480 and 2000 nodes. Not collected by pytest (its name has no test_ prefix).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from console.alarms import AlarmEngine
from console.guards import (
    judge_admission,
    judge_drain,
    judge_rollout_start,
    plan_drain,
)
from console.protocol import AdmissionRequest, DrainRequest, RolloutRequest
from tests.fleet_builders import frame, nodes
from tests.guards.fleets import CAPACITY, fleet


def timed_ms(call: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        out.append((time.perf_counter() - started) * 1000)
    return sorted(out)


def summary(label: str, times: list[float]) -> str:
    p50 = times[len(times) // 2]
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return f"{label:<52} p50 {p50:6.2f} ms   p99 {p99:6.2f} ms   max {times[-1]:6.2f} ms"


def bench_alarms(node_count: int = 2000, frames: int = 300) -> None:
    for label, cpu_pct in (("calm", 40.0), ("every node over 80 % CPU", 85.0)):
        engine = AlarmEngine()
        members = nodes(node_count, cpu_pct=cpu_pct)
        history = iter([frame(t, fleet=members, attempts=[100] * 10) for t in range(frames)])
        unsorted: list[float] = []
        for _ in range(frames):
            started = time.perf_counter()
            engine.update(next(history))
            unsorted.append((time.perf_counter() - started) * 1000)
        print(summary(f"alarms update, {node_count} nodes, {label}", sorted(unsorted)))
        if engine.active:
            # The frame at 30 s raises every node's cpu_abort at once.
            print(f"{'  the frame that raises them all':<52} {unsorted[30]:6.2f} ms")


def bench_guards(node_count: int) -> None:
    snapshot = fleet(node_count)
    drain = DrainRequest(rate_per_s=833, deadline_s=600, hint_ms=(1000, 31000))
    cases = {
        "judge_drain": lambda: judge_drain(snapshot, CAPACITY, "gw-003", drain),
        "plan_drain": lambda: plan_drain(snapshot, CAPACITY, "gw-003"),
        "judge_rollout_start": lambda: judge_rollout_start(
            snapshot, CAPACITY, RolloutRequest(batch_size=30, interval_s=90)
        ),
        "judge_admission": lambda: judge_admission(snapshot, AdmissionRequest(rate_per_s=100)),
    }
    for name, call in cases.items():
        print(summary(f"{name}, {node_count} nodes", timed_ms(call, 200)))


if __name__ == "__main__":
    bench_alarms()
    for count in (480, 2000):
        bench_guards(count)
