"""regional-outage: the rate its briefing names is the one the admission guard draws its line at, from the
drill's own node model — so the two cannot drift apart.

Trainee review: the briefing said "Each node handshakes 1000 connections a second at most"; admission at
800–900/s a node melted the fleet (score 27) and the guard answered `ok`. Its nodes hold 50,000 clients
each (1 M over 20) of 80,000 at 40 % CPU: 25 % before a single handshake, so under the 80 % line a node of
1000 handshakes/s takes 550/s."""

from __future__ import annotations

import pytest

from console.drills.headless import drill_scenario
from console.drills.schema import load_drill
from console.guards import judge_admission
from console.guards.admission import rate_under_cpu_line_per_s
from console.protocol import AdmissionRequest, FleetSnapshot, VerdictLevel
from console.server.simulator import capacity_of
from console.sim.engine import Simulation

DRILL = load_drill("regional-outage")


@pytest.fixture(scope="module")
def at_start() -> tuple[Simulation, FleetSnapshot]:
    simulation = Simulation(drill_scenario(DRILL))
    return simulation, simulation.live_snapshot()


def test_the_briefing_names_the_rate_a_node_takes_under_the_cpu_line(at_start) -> None:
    simulation, snapshot = at_start
    rate = rate_under_cpu_line_per_s(snapshot, capacity_of(simulation))
    assert rate == 550.0
    assert f"{rate:g} handshakes a second" in DRILL.briefing and "80 %" in DRILL.briefing, DRILL.briefing


@pytest.mark.parametrize("rate_per_s", [800, 850, 900])
def test_the_rates_that_melted_the_fleet_are_blocked(at_start, rate_per_s: int) -> None:
    simulation, snapshot = at_start
    request = AdmissionRequest(rate_per_s=rate_per_s, burst=rate_per_s, retry_after_s=(1, 10))
    verdict = judge_admission(snapshot, request, capacity_of(simulation))
    assert verdict.level is VerdictLevel.BLOCKED, [(c.name, c.why) for c in verdict.checks if not c.ok]
    cpu_line = next(c for c in verdict.checks if c.name == "rate_under_cpu_line_per_s")
    assert "≤ 550/s a node keeps CPU under 80 %" in cpu_line.why, cpu_line.why


@pytest.mark.parametrize("rate_per_s", [250, 550])
def test_the_lesson_and_the_briefings_rate_pass(at_start, rate_per_s: int) -> None:
    simulation, snapshot = at_start
    request = AdmissionRequest(rate_per_s=rate_per_s, burst=rate_per_s, retry_after_s=(1, 10))
    verdict = judge_admission(snapshot, request, capacity_of(simulation))
    assert verdict.level is VerdictLevel.OK, [(c.name, c.why) for c in verdict.checks if not c.ok]


def test_gitlab_reset_bursts_briefing_and_hint_name_the_rate_a_pod_takes_under_the_cpu_line() -> None:
    """The same mistake in gitlab-reset-burst: "a pod handshakes about 6 connections a second" — flat out;
    holding its 6,000 sessions takes 20 % of it, so under the 80 % line 3.5/s, and a trainee who followed
    the hint with 5/s a pod was blocked "≤ 3.5/s"."""
    drill = load_drill("gitlab-reset-burst")
    simulation = Simulation(drill_scenario(drill))
    rate = rate_under_cpu_line_per_s(simulation.live_snapshot(), capacity_of(simulation))
    assert rate == 3.5
    assert f"{rate:g} handshakes a second" in " ".join(drill.briefing.split()), drill.briefing
    assert any(f"{rate:g} handshakes/s" in hint.text for hint in drill.hints)
