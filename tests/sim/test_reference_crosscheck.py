"""The count engine agrees with the per-client reference at small N (issue #2, section 5 "Fidelity").

Both are random, with different streams, so they are compared as distributions: each scenario runs R seeds
in each, and every compared point (a 100 ms attempt bin, one node's connections or CPU in one second, a
run's total, its recovery time) gets a two-sample t statistic. Under the claim being tested the two
samples come from the same model, so their variances are equal and the pooled t (2R − 2 degrees of
freedom) applies. A series of m points is judged by its worst point against the Bonferroni bound: valid
however the points depend on each other. The error budget is split the same way over every series the
module compares (5 scenarios × 14 series), so a correct engine fails *anything here* with probability
below 1 %, whatever its random streams — a kernel change that reorders draws does not turn this red by
chance. Counts are whole numbers, so each variance is floored at the rounding variance 1/12 (in the unit
of `resolution`); deterministic points would otherwise divide by zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from scipy import stats

from console.sim import kernel as k
from console.sim.engine import Simulation
from console.sim.scenario import Scenario
from console.sim.scenario_loader import build_scenario
from console.sim.summary import RunRecorder
from tests.sim.reference import ReferenceFleet, recovery_s

#: The whole module's false-alarm budget, split evenly over the series it compares (see above).
SUITE_ALPHA = 0.01
SERIES = 5 * 14
ALPHA = SUITE_ALPHA / SERIES
RUNS = 8


@dataclass
class Runs:
    """R runs of one model: bins [R, seconds × 10], connections [R, seconds, nodes], per-run figures."""

    bins: np.ndarray
    connections: np.ndarray
    cpu_pct: np.ndarray  # [R, seconds, nodes], mean over each second
    totals: dict[str, np.ndarray]
    recovery_s: np.ndarray


def run_engine(scenario: Scenario, seeds: range, seconds: int) -> Runs:
    bins, conns, cpu, totals, recovery = [], [], [], [], []
    for seed in seeds:
        sim = Simulation(scenario, seed=seed)
        recorder = RunRecorder(sim)
        results = []
        for _ in range(seconds):
            result = sim.step()
            recorder.record(result)
            results.append(result)
        n = scenario.nodes.count
        out = np.array([r.node_out[:, :n].sum(axis=1) for r in results]).sum(axis=0)
        bins.append(np.concatenate([r.bins for r in results]))
        conns.append(np.array([r.connections[:n] for r in results]))
        cpu.append(np.array([r.node_out[k.ON_CPU, :n] * 100.0 for r in results]))
        totals.append(
            {
                "attempts": out[k.ON_ATTEMPTS],
                "accepts": out[k.ON_ACCEPTS],
                "rejects": out[k.ON_REJECTS],
                "timeouts": out[k.ON_TIMEOUTS],
                "drops": out[k.ON_DROPS],
                "closes": out[k.ON_CLOSES],
                "disconnects": sum(r.fleet_out[k.OF_DISCONNECTS] for r in results),
                "full_resyncs": sum(r.fleet_out[k.OF_RESYNCS] for r in results),
            }
        )
        times = np.array(recorder.times)
        mine = recovery_s(times, np.array(recorder.connections, dtype=float), scenario.events[0].at_s)
        if recorder.disconnect_times:
            # The engine's own figure and the reference's definition read the same series the same way.
            assert recorder.summary(wall_s=0.0)["recovery_s"] == pytest.approx(mine, abs=1.0)
        recovery.append(mine)
    return _collect(bins, conns, cpu, totals, recovery)


def run_reference(scenario: Scenario, seeds: range, seconds: int) -> Runs:
    bins, conns, cpu, totals, recovery = [], [], [], [], []
    for seed in seeds:
        fleet = ReferenceFleet(scenario, seed)
        results = [fleet.step() for _ in range(seconds)]
        bins.append(np.concatenate([r.bins for r in results]))
        conns.append(np.array([r.connections for r in results]))
        cpu.append(np.array([r.cpu * 100.0 for r in results]))
        totals.append(
            {
                name: sum(getattr(r, name).sum() for r in results)
                for name in ("attempts", "accepts", "rejects", "timeouts", "drops", "closes")
            }
            | {
                "disconnects": sum(r.disconnects for r in results),
                "full_resyncs": sum(r.resyncs for r in results),
            }
        )
        times = np.array([r.time_s for r in results])
        recovery.append(recovery_s(times, conns[-1].sum(axis=1), scenario.events[0].at_s))
    return _collect(bins, conns, cpu, totals, recovery)


def _collect(bins: list, conns: list, cpu: list, totals: list[dict[str, Any]], recovery: list) -> Runs:
    return Runs(
        bins=np.array(bins, dtype=float),
        connections=np.array(conns, dtype=float),
        cpu_pct=np.array(cpu, dtype=float),
        totals={name: np.array([t[name] for t in totals], dtype=float) for name in totals[0]},
        recovery_s=np.array([np.nan if r is None else r for r in recovery]),
    )


def assert_same_mean(
    reference: np.ndarray, engine: np.ndarray, what: str, resolution: float = 1.0, margin: float = 0.0
) -> None:
    """Runs × points from each model: no point's means differ beyond the Bonferroni-pooled-t bound, after
    allowing `margin` (a share of the reference's mean) for a documented approximation of the engine."""
    reference = reference.reshape(reference.shape[0], -1)
    engine = engine.reshape(engine.shape[0], -1)
    r1, r2 = reference.shape[0], engine.shape[0]
    dof = r1 + r2 - 2
    pooled = ((r1 - 1) * reference.var(axis=0, ddof=1) + (r2 - 1) * engine.var(axis=0, ddof=1)) / dof
    pooled = np.maximum(pooled, resolution**2 / 12.0)
    difference = engine.mean(axis=0) - reference.mean(axis=0)
    allowed = margin * np.abs(reference.mean(axis=0))
    excess = np.sign(difference) * np.maximum(np.abs(difference) - allowed, 0.0)
    t = excess / np.sqrt(pooled * (1.0 / r1 + 1.0 / r2))
    points = t.size
    bound = stats.t.ppf(1.0 - ALPHA / (2.0 * points), dof)
    worst = int(np.argmax(np.abs(t)))
    assert abs(t[worst]) < bound, (
        f"{what}: point {worst} of {points}: engine mean {engine.mean(axis=0)[worst]:.1f}, "
        f"reference {reference.mean(axis=0)[worst]:.1f}, t = {t[worst]:.2f} beyond ±{bound:.2f}"
    )


# --- the scenarios ---------------------------------------------------------------------------------------

STORM = {
    # Everyone reset at once into a fleet that can admit them only slowly: handshake queues past the
    # connect timeout (doomed, wasted work), backlog overflow, CPU pinned long enough to drop
    # established connections, and the outage's exponential backoff bringing them back in waves.
    "duration_s": 60,
    "clients": {
        "count": 5000,
        "populations": [{"policy": "exponential", "honours_hints": False, "connect_timeout_s": 3}],
    },
    "nodes": {
        "count": 4,
        "capacity_connections": 2500,
        "handshakes_per_s": 200,
        "overload_after_s": 2,
        "accept_backlog": 500,
    },
    "events": [{"at_s": 5, "action": "disconnect_fraction", "fraction": 1.0}],
}


def restart(populations: list[dict[str, Any]]) -> dict[str, Any]:
    """Two of six nodes restart under admission control (token bucket and a connection ceiling that the
    survivors hit), with natural churn and clients offline past a short resume window queueing full
    resyncs on a finite backend."""
    return {
        "duration_s": 60,
        "clients": {"count": 6000, "churn_per_min": 600, "resume_window_s": 4, "populations": populations},
        "nodes": {"count": 6, "capacity_connections": 2000, "handshakes_per_s": 300, "restart_s": 15},
        "admission": {"rate_per_s": 150, "burst": 50, "max_connections": 1400, "retry_after_s": [1, 3]},
        "resync": {"capacity_per_s": 100, "timeout_s": 5},
        "events": [{"at_s": 3, "action": "restart_nodes", "nodes": 2, "first": 0}],
    }


HONOURS_RETRY_AFTER = {"policy": "decorrelated", "honours_hints": True, "connect_timeout_s": 5}
IGNORES_RETRY_AFTER = {"policy": "socketio", "honours_hints": False, "connect_timeout_s": 5}

DRAIN = {
    # One node drains at 60 closes/s with reconnect hints of 0.5–4 s and is force-closed at its 12 s
    # deadline (about 280 left); its clients land on the other three, whose handshakes are slow enough
    # to queue the forced batch.
    "duration_s": 40,
    "clients": {"count": 4000, "populations": [{"policy": "grpc", "honours_hints": True}]},
    "nodes": {"count": 4, "handshakes_per_s": 100},
    "events": [
        {
            "at_s": 3,
            "action": "drain_nodes",
            "nodes": 1,
            "first": 1,
            "rate_per_s": 60,
            "deadline_s": 12,
            "hint_ms": [500, 4000],
        }
    ],
}

CALM = {
    # Nodes with room to spare and no admission control: the drained clients come back to them spread over
    # their hints, a second's arrivals at a time (kernel._calm_nodes), and churn is drawn a second ahead.
    # The restart's wave at 3 s is too much for that and runs tick by tick; the drain's deadline (24 s)
    # force-closes ~1,300 clients that return within the same second, more than the calm nodes may take
    # a tick, so what waited is settled mid-second. Two populations, so the calm share is split by
    # population.
    "duration_s": 60,
    "clients": {
        "count": 6000,
        "churn_per_min": 1200,
        "populations": [
            {
                "name": "old",
                "share": 0.6,
                "policy": "exponential",
                "honours_hints": False,
                "connect_timeout_s": 5,
            },
            {
                "name": "new",
                "share": 0.4,
                "policy": "full_jitter",
                "honours_hints": True,
                "connect_timeout_s": 5,
            },
        ],
    },
    "nodes": {"count": 6, "capacity_connections": 2000, "handshakes_per_s": 3000},
    "events": [
        {"at_s": 3, "action": "restart_nodes", "nodes": 1, "first": 5},
        {
            "at_s": 12,
            "action": "drain_nodes",
            "nodes": 2,
            "first": 0,
            "rate_per_s": 30,
            "deadline_s": 12,
            "hint_ms": [100, 400],
        },
    ],
}

CASES = {
    "calm": (CALM, 40),
    "storm": (STORM, 40),
    "restart-retry-after": (restart([HONOURS_RETRY_AFTER]), 50),
    "restart-backoff": (restart([IGNORES_RETRY_AFTER]), 50),
    "drain": (DRAIN, 30),
}


def run_both(name: str, data: dict[str, Any], seconds: int) -> tuple[str, Runs, Runs]:
    scenario = build_scenario(data)
    engine = run_engine(scenario, range(RUNS), seconds)
    reference = run_reference(scenario, range(1000, 1000 + RUNS), seconds)
    return name, reference, engine


@pytest.fixture(scope="module", params=sorted(CASES))
def both(request: pytest.FixtureRequest) -> tuple[str, Runs, Runs]:
    return run_both(request.param, *CASES[request.param])


def test_attempts_per_100ms_agree(both: tuple[str, Runs, Runs]) -> None:
    name, reference, engine = both
    assert engine.bins.sum() > 0
    assert_same_mean(reference.bins, engine.bins, f"{name}: attempts per 100 ms")


def test_attempts_per_second_agree(both: tuple[str, Runs, Runs]) -> None:
    name, reference, engine = both
    per_s = [runs.bins.reshape(runs.bins.shape[0], -1, 10).sum(axis=2) for runs in (reference, engine)]
    assert_same_mean(*per_s, f"{name}: attempts per second")


def test_connections_per_node_agree(both: tuple[str, Runs, Runs]) -> None:
    name, reference, engine = both
    assert_same_mean(reference.connections, engine.connections, f"{name}: connections per node per second")
    fleet = [runs.connections.sum(axis=2) for runs in (reference, engine)]
    assert_same_mean(*fleet, f"{name}: fleet connections per second")


def test_cpu_per_node_agrees(both: tuple[str, Runs, Runs]) -> None:
    name, reference, engine = both
    # CPU is a continuous share; frames show it to 0.1 %, the resolution its floor stands for.
    assert_same_mean(reference.cpu_pct, engine.cpu_pct, f"{name}: CPU % per node per second", resolution=0.1)


def test_run_totals_agree(both: tuple[str, Runs, Runs]) -> None:
    name, reference, engine = both
    for what in reference.totals:
        # Resume or resync is decided per wheel cell by its clients' mean time offline (docs/policies.md):
        # measured at 2.6–3.6 % more full resyncs than per client in restart-retry-after, whatever the seeds.
        margin = RESYNC_MARGIN if what == "full_resyncs" else 0.0
        assert_same_mean(
            reference.totals[what][:, None],
            engine.totals[what][:, None],
            f"{name}: {what} total",
            margin=margin,
        )


def test_recovery_time_agrees(both: tuple[str, Runs, Runs]) -> None:
    name, reference, engine = both
    assert not np.isnan(engine.recovery_s).any() and not np.isnan(reference.recovery_s).any()
    # Recovery is read off whole seconds: the rounding floor above is that of a 1 s resolution.
    assert_same_mean(reference.recovery_s[:, None], engine.recovery_s[:, None], f"{name}: recovery_s")


def assert_whole_run_agrees(name: str, reference: Runs, engine: Runs) -> None:
    both = (name, reference, engine)
    for check in (
        test_attempts_per_100ms_agree,
        test_attempts_per_second_agree,
        test_connections_per_node_agree,
        test_cpu_per_node_agrees,
        test_run_totals_agree,
        test_recovery_time_agrees,
    ):
        check(both)


# --- what the cross-check finds in the engine: bugs, and one approximation it can see (strict: a change that
# --- removes the difference turns the test red, so the marker goes) ------------------------------------------

ZERO_TICK_DELAY = (
    "kernel._place puts a delay of 0 ticks drawn inside run_ticks (drops, churn, rejections) into the slot "
    "of the tick being run, whose arrivals were already taken: those clients retry a whole wheel later "
    "(engine.horizon ticks, minutes). full_jitter draws 0 ticks with probability tick/window, so about 1 % "
    "of dropped clients go missing and connections plateau below the reference."
)
POPULATION_SPLIT = (
    "kernel.run_ticks splits each node's arrivals over populations from the tick's full pop_total and total "
    "for every node instead of what earlier nodes left, so the per-population arrivals summed over nodes "
    "differ from the wheel's: with two or more populations clients are created or lost (conn + wheel != N)."
)


#: How far the per-cohort resume decision may move the full-resync total (a share of the reference's).
RESYNC_MARGIN = 0.05
FRESH_MIX = (
    "approximation, not a bug (docs/policies.md): the engine keeps the fresh clients' retry states "
    "fleet-wide. Node 0 restarts at 3 s and again at 24 s; in between it refilled with clients that had "
    "failed longest (high states), so the reference brings them back late and together, while the engine "
    "draws their states from the fleet's younger mix and brings them back sooner and spread out."
)


def double_restart() -> dict[str, Any]:
    data = restart([IGNORES_RETRY_AFTER | {"policy": "exponential"}])
    data["clients"]["churn_per_min"] = 0
    data["events"] = [*data["events"], {"at_s": 24, "action": "restart_nodes", "nodes": 1, "first": 0}]
    return data


@pytest.mark.parametrize(
    ("name", "data", "seconds"),
    [
        pytest.param(
            "double-restart",
            double_restart(),
            60,
            marks=pytest.mark.xfail(strict=True, reason=FRESH_MIX),
        ),
        pytest.param(
            "storm-full-jitter",
            STORM
            | {
                "clients": STORM["clients"]
                | {"populations": [{"policy": "full_jitter", "honours_hints": False, "connect_timeout_s": 3}]}
            },
            60,
        ),
        pytest.param(
            "restart-two-populations",
            restart([HONOURS_RETRY_AFTER | {"share": 0.6}, IGNORES_RETRY_AFTER | {"share": 0.4}]),
            50,
        ),
    ],
)
def test_known_deviations_show_in_the_crosscheck(name: str, data: dict[str, Any], seconds: int) -> None:
    assert_whole_run_agrees(*run_both(name, data, seconds))
