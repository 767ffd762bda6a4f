"""The simulator says how many drained clients come back each second as their hint told them
(`Totals.hinted_returns_per_s`), so `reconnect_rate_high` judges a drain-mode rollout on the reconnects
beyond them.

Found in review: the graceful-drain drill done right (10 nodes × 50 k, churn 500/min, a drain rollout at
167 closes/s a node in batches of 2, hints of 1–30 s) raised "reconnects 348 > 100/s" (critical) for 30 min:
the drill's steady rate is the 10/s floor, and two drains bring 334 reconnects/s by design. Abrupt batches
still raise it.
"""

from __future__ import annotations

import json

import pytest

from console.cli import main
from console.sim.engine import Simulation
from console.sim.scenario_loader import load_scenario

#: The graceful-drain drill's fleet, its rollout in drain mode at the drill's 167/s.
DRILL = [
    "nodes.count=10",
    "clients.count=500000",
    "clients.churn_per_min=500",
    "rollout.start_at_s=180",
    "rollout.drain_rate_per_s=167",
    "rollout.drain_deadline_s=600",
]


def fired(capsys: pytest.CaptureFixture[str], *overrides: str) -> dict[str, float]:
    args = ["sim", "run", "graceful-drain", "--until", "420", "--json"]
    for override in (*DRILL, *overrides):
        args += ["--set", override]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)["alarms_fired"]


def test_a_drain_rollouts_hinted_returns_raise_no_reconnect_alarm(capsys: pytest.CaptureFixture[str]) -> None:
    assert "reconnect_rate_high" not in fired(capsys, "rollout.mode=drain")


def test_abrupt_batches_still_raise_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert "reconnect_rate_high" in fired(capsys, "rollout.mode=abrupt")


def test_the_returns_are_the_drains_rate_once_the_first_are_back() -> None:
    """Two nodes at 167/s with hints of 1–30 s: 334 a second once the hint window has turned over — and the
    attempts beyond them are the fleet's steady few, not the drains'."""
    scenario = load_scenario("graceful-drain", [*DRILL, "rollout.mode=drain"])
    sim = Simulation(scenario, keep_history=False)
    totals = {int(r.time_s): sim.frame(r, with_nodes=False).totals for r in sim.run(300)}
    assert totals[179].hinted_returns_per_s == 0
    late = [totals[t] for t in range(240, 300)]
    returns = sum(t.hinted_returns_per_s or 0 for t in late) / len(late)
    assert returns == pytest.approx(334, rel=0.02)
    beyond = sum(t.attempts_per_s - (t.hinted_returns_per_s or 0) for t in late) / len(late)
    assert beyond < 100  # the reconnect alarm's line on this fleet (the 10/s floor × 10)


@pytest.mark.parametrize(("deadline_s", "fires"), [(600, True), (900, False)])
def test_graceful_drains_later_batches_force_close_at_the_seeds_ten_minutes(
    capsys: pytest.CaptureFixture[str], deadline_s: int, fires: bool
) -> None:
    """graceful-drain as written: its second batch's nodes hold the first batch's returned clients too
    (~580 k), so 833/s for the seed's 10 minutes leaves ~80 k a node to force-close at the deadline, and
    those come back over the hint window at ~3.7 k/s, 20× the steady 185/s. Counted as paced returns, they
    hid under a steady rate learned from the drains' own (1.85 k/s); a deadline that empties the nodes
    raises nothing."""
    args = ["sim", "run", "graceful-drain", "--until", "1500", "--json"]
    assert main([*args, "--set", f"rollout.drain_deadline_s={deadline_s}"]) == 0
    fired = json.loads(capsys.readouterr().out)["alarms_fired"]
    assert ("reconnect_rate_high" in fired) is fires, fired
