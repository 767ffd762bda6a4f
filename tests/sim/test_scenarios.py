"""The packaged scenarios, at full scale, show what their seeds describe (issue #2, "Fidelity").

Each runs the real engine at the scenario's own size (13 M clients for the outage); together they take
about a minute on two cores.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest

from console.sim.engine import Simulation
from console.sim.scenario import load_scenario
from console.sim.summary import RunRecorder


@cache
def run(name: str, *overrides: str) -> tuple[dict[str, Any], np.ndarray]:
    """The run's summary and its attempts per 100 ms."""
    sim = Simulation(load_scenario(name, list(overrides)))
    recorder = RunRecorder(sim)
    for _ in range(int(sim.scenario.duration_s)):
        recorder.record(sim.step())
    return recorder.summary(wall_s=0.0), np.concatenate(recorder.bins)


def test_thundering_herd_as_written_comes_back_in_lockstep_waves() -> None:
    summary, _ = run("thundering-herd")
    assert summary["lockstep_index"] >= 4
    assert summary["min_connections"] < 0.95 * summary["clients"]  # a storm, not a blip
    assert summary["recovery_s"] is not None  # halting and adding 200 nodes ends it (outage seed)


@pytest.mark.parametrize("policy", ["full_jitter", "decorrelated"])
def test_jitter_breaks_the_waves_and_keeps_more_clients_connected(policy: str) -> None:
    written, _ = run("thundering-herd")
    jittered, _ = run("thundering-herd", f"clients.policy={policy}")
    assert jittered["lockstep_index"] <= 2
    assert jittered["min_connections"] > written["min_connections"]


def test_regional_outage_recovers_at_the_admitted_rate() -> None:
    summary, _ = run("regional-outage")
    # 10 M clients ÷ 50 k/s of fleet admission ≈ 200 s (interview seed).
    assert summary["recovery_s"] == pytest.approx(200, rel=0.15)
    assert summary["rejects_total"] > 0  # admission turned the surplus away with 503s


def test_graceful_drain_paces_closes_and_takes_about_100_minutes() -> None:
    summary, _ = run("graceful-drain")
    assert summary["drain_close_rate_per_s"] == pytest.approx(833, rel=0.05)
    # 10 batches × (10 minute drain + restart) (interview seed: "10 batches x 10 minutes = 100 minutes").
    assert summary["rollout_completed_s"] == pytest.approx(6000, rel=0.05)
    assert summary["min_connections"] > 0.95 * summary["clients"]  # never a storm


def test_resync_backlog_outlasts_the_herd() -> None:
    summary, _ = run("resync-cliff")
    assert summary["full_resyncs_total"] > 0.9 * summary["clients"]  # back after the resume window
    assert summary["recovery_s"] is not None and summary["resync_backlog_cleared_s"] is not None
    # matrix.org: the backlog took 10–20 more minutes after the herd dissipated.
    assert summary["resync_backlog_cleared_s"] > 2 * summary["recovery_s"]


def test_socketio_herd_returns_every_5_seconds() -> None:
    summary, bins = run("socketio-lockstep")
    storm = bins[400:1500].astype(float)  # from the fleet's return until most are admitted
    storm -= storm.mean()

    def autocorrelation(lag: int) -> float:
        return float(np.dot(storm[:-lag], storm[lag:]) / np.dot(storm, storm))

    five_s = autocorrelation(50)  # 50 bins of 100 ms
    assert five_s > 0.5
    assert five_s > autocorrelation(25) + 0.3  # a 5 s rhythm, not a slow trend
    assert summary["lockstep_index"] > 1.5


def test_gitlab_reset_burst_makes_the_autoscaler_grow_the_fleet() -> None:
    summary, _ = run("gitlab-reset-burst")
    # GitLab #23063: ~100 pods grew to 335 (3.3×) to absorb the return wave.
    assert summary["nodes"] >= 2.5 * 100
