"""The packaged scenarios, at full scale, show what their seeds describe (issue #2, "Fidelity").

Each runs the real engine at the scenario's own size (13 M clients for the outage); together they take
about a minute on two cores.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from console.cli import main
from console.errors import InputError
from console.sim.engine import Simulation
from console.sim.scenario_loader import build_scenario, load_scenario
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


def test_graceful_drains_first_batch_reads_level_not_a_storm_winning() -> None:
    """The drain's clients are told to come back over 1–30 s, and do: drain ÷ inflow stays level while
    the first batch drains. Counted as in-flow at their close it fell to 0.21 in the drain's first 10 s,
    under the 0.6 kill switch (sync-engine essay) — the textbook safe drain read as a storm."""
    from console.figures import ratio_of

    sim = Simulation(load_scenario("graceful-drain"))
    ratios = {int(r.time_s): ratio_of(*r.flow) for r in sim.run(120)}
    drain_started_s = sim.scenario.rollout.start_at_s
    during = [ratios[t] for t in range(int(drain_started_s) + 1, 121)]
    assert sim.drains and all(ratio is not None and ratio > 0.9 for ratio in during), min(during)


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


# --- [[events]] are checked whole when the scenario loads (user audit) ----------------------------------

_SMALL_FLEET = {"duration_s": 5, "clients": {"count": 1000}, "nodes": {"count": 5}}


@pytest.mark.parametrize(
    ("event", "field", "allowed_has"),
    [
        ({"action": "disconnect_fraction"}, "events.0.fraction", "(0, 1]"),
        ({"action": "set_admission", "rate_per_s": "x"}, "events.0.rate_per_s", "[0, 1e+09]"),
        ({"action": "set_admission", "rate_per_s": -1}, "events.0.rate_per_s", "[0, 1e+09]"),
        ({"action": "set_admission", "max_connections": 1.5}, "events.0.max_connections", "integer"),
        ({"action": "set_admission", "retry_after_s": [30, 1]}, "events.0.retry_after_s", "min ≤ max"),
        ({"action": "start_rollout", "mode": "bogus"}, "events.0.mode", "'drain'"),
        ({"action": "start_rollout", "pause_cpu_pct": 500}, "events.0.pause_cpu_pct", "[0, 100]"),
        ({"action": "drain_nodes", "nodes": 1, "deadline_s": -10}, "events.0.deadline_s", "[0, 604800]"),
        ({"action": "restart_nodes", "nodes": 99}, "events.0.nodes", "[1, 5]"),
        ({"action": "restart_nodes", "nodes": -1}, "events.0.nodes", "[1, 5]"),
        ({"action": "restart_nodes", "nodes": ["gw-099"]}, "events.0.nodes", "gw-004"),
        ({"action": "kill_nodes"}, "events.0.nodes", "[1, 5]"),
        ({"action": "add_nodes", "count": 100_000}, "events.0.count", "[1, 10000]"),
        ({"action": "add_nodes", "count": 1.5}, "events.0.count", "[1, 10000]"),
        ({"action": "add_nodes", "count": "3"}, "events.0.count", "[1, 10000]"),
        ({"action": "add_nodes", "count": 1, "extra": 1}, "events.0.extra", "count"),
        ({"action": "halt_rollout", "why": "x"}, "events.0.why", "takes none"),
        (
            {"action": "set_policy", "policy": "fixed", "params": {"delay_ms": -5}},
            "events.0.params.delay_ms",
            "≥ 0",
        ),
        (
            {"action": "set_policy", "policy": "fixed", "params": {"delay_ms": math.nan}},
            "events.0.params.delay_ms",
            "finite",
        ),
        ({"action": "set_policy", "policy": "fixed", "population": "mars"}, "events.0.population", "all"),
    ],
)
def test_a_bad_event_is_refused_when_the_scenario_loads(event: dict, field: str, allowed_has: str) -> None:
    with pytest.raises(InputError) as raised:
        build_scenario({**_SMALL_FLEET, "events": [{"at_s": 1, **event}]})
    assert raised.value.field == field
    assert allowed_has in raised.value.allowed


def test_an_event_may_name_the_nodes_an_earlier_event_added() -> None:
    events = [
        {"at_s": 3, "action": "restart_nodes", "nodes": ["gw-006"]},
        {"at_s": 1, "action": "add_nodes", "count": 2},
    ]
    assert len(build_scenario({**_SMALL_FLEET, "events": events}).events) == 2
    with pytest.raises(InputError) as raised:
        build_scenario({**_SMALL_FLEET, "events": [{**events[0], "at_s": 0}, events[1]]})
    assert raised.value.field == "events.0.nodes"


def test_a_bad_event_exits_2_before_any_frame_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_text(
        "duration_s = 5\n[clients]\ncount = 1000\n[nodes]\ncount = 5\n"
        '[[events]]\nat_s = 2\naction = "drain_nodes"\nnodes = 1\ndeadline_s = -10\n'
    )
    frames = tmp_path / "frames.jsonl"
    assert main(["sim", "run", str(scenario), "--frames", str(frames)]) == 2
    assert "events.0.deadline_s" in capsys.readouterr().err
    assert not frames.exists()


@pytest.mark.parametrize(
    ("name", "kill_switch_at_s"),
    [("graceful-drain", None), ("thundering-herd", 31.0), ("regional-outage", 31.0)],
)
def test_the_kill_switch_trips_for_abrupt_restarts_not_for_a_paced_drain(
    name: str, kill_switch_at_s: float | None, capsys: pytest.CaptureFixture[str]
) -> None:
    """graceful-drain fired drain_inflow_kill_switch at 1 s — its first second's churn against an empty
    window — and again on every batch's drain (the hinted closes counted at the close). The abrupt
    restarts at 30 s (no hints: every client wants back at once) still trip it the second after."""
    import json

    assert main(["sim", "run", name, "--json"]) == 0
    fired = json.loads(capsys.readouterr().out)["alarms_fired"]
    assert fired.get("drain_inflow_kill_switch") == kill_switch_at_s
    if kill_switch_at_s is None:
        # 2 of 20 out of rotation: 10 M on 18 × 800 k is 31 % spare. And the second batch's deadline
        # force-close (`tests/sim/test_hinted_returns.py`): its nodes hold the first batch's returned
        # clients too, and 10 minutes at 833/s leaves ~80 k each.
        assert fired == {"headroom_low": 31.0, "reconnect_rate_high": 1245.0}
