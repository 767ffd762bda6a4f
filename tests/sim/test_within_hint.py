"""The simulator says how many drained clients are still within their reconnect hint
(`Totals.within_hint_clients`), so `connections_drop` judges a drain-mode rollout net of them.

Found in review: graceful-drain on a small fleet (6 nodes, 10 k clients, batches of 2 — each batch drains in
2 s at 833/s and its clients come back over 1–30 s) raised connections_drop at 31 s, "clients are failing
to reconnect", for a rollout doing what it should. Abrupt restarts and a deadline's force-closes still
raise it.
"""

from __future__ import annotations

import json

import pytest

from console.cli import main
from console.sim.engine import Simulation
from console.sim.scenario_loader import load_scenario

SMALL = ["nodes.count=6", "clients.count=10000", "rollout.batch_size=2"]


def fired(capsys: pytest.CaptureFixture[str], *overrides: str) -> tuple[dict[str, float], int]:
    args = ["sim", "run", "graceful-drain", "--until", "150", "--json"]
    for override in (*SMALL, *overrides):
        args += ["--set", override]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    return summary["alarms_fired"], summary["min_connections"]


def test_a_drain_rollout_whose_clients_wait_out_their_hint_raises_no_connections_drop(
    capsys: pytest.CaptureFixture[str],
) -> None:
    alarms, min_connections = fired(capsys)
    assert min_connections < 6000  # 40 % of the clients away at once: a drop by connections alone
    assert "connections_drop" not in alarms, alarms


@pytest.mark.parametrize(
    "overrides",
    [
        ("rollout.mode=abrupt",),  # restarts with no hint: every client wants back at once
        ("rollout.drain_rate_per_s=100", "rollout.drain_deadline_s=5"),  # 70 % of each node force-closed
    ],
)
def test_abrupt_restarts_and_a_deadlines_force_closes_still_raise_it(
    capsys: pytest.CaptureFixture[str], overrides: tuple[str, ...]
) -> None:
    alarms, _ = fired(capsys, *overrides)
    assert "connections_drop" in alarms, alarms


def test_a_paced_drains_clients_within_their_hint_are_its_rate_times_the_hints_mean() -> None:
    """graceful-drain as written: 2 nodes at 833/s with hints of 1–30 s. Of a second's closes (at its
    middle), those s seconds old are still away with the chance (30 − s − 0.5) / 29; once the first are
    back that is the drain guard's offline_at_once figure, rate × the hint's mean: 1666 × 15.5 ≈ 25.8 k."""

    def expected(seconds: int) -> float:
        return 1666 * sum(min(1.0, max(0.0, (29.5 - s) / 29)) for s in range(seconds))

    sim = Simulation(load_scenario("graceful-drain"), keep_history=False)
    within = {int(r.time_s): sim.frame(r, with_nodes=False).totals.within_hint_clients for r in sim.run(120)}
    start_s = int(sim.scenario.rollout.start_at_s)
    assert within[start_s] == 0
    assert within[start_s + 15] == pytest.approx(expected(15), rel=0.02)  # 19.4 k: the first coming back
    assert within[start_s + 60] == pytest.approx(expected(60), rel=0.02) == 1666 * 15.5
