"""The admission guard judges a rate_per_s against what a node can handshake under the CPU line.

Trainee review, regional-outage drill: the briefing said a node handshakes 1000/s, admission at 800–900/s a
node melted the fleet (score 27) and the guard answered `ok`. A node's CPU goes on holding its connections
and refusing what it does not admit as well as on handshakes (the simulator's node model,
console/sim/kernel.py): holding 50,000 of 80,000 at 40 % takes 25 %, so under the 80 % line (cpu_abort_pct)
a node of 1000 handshakes/s takes 550/s, not 1000."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console.guards import FleetCapacity, judge_admission
from console.guards.admission import rate_under_cpu_line_per_s
from console.guards.capacity import handshakes_under_line_per_s, node_cpu_demand_pct
from console.protocol import AdmissionRequest, AdmissionSettings, Check, FleetSnapshot, Verdict, VerdictLevel
from tests.fleet_builders import node, snapshot
from tests.guards.fleets import CAPACITY

#: regional-outage's node model (console/sim/scenarios/regional-outage.toml, the schema's reject_cost 0.05):
#: 1000 handshakes/s at 100 %, 40 % to hold 80,000, a refusal 0.05 of a handshake's cost.
NODE_MODEL = FleetCapacity(
    handshakes_per_s=1000.0,
    cpu_pct_per_handshake_per_s=0.1,
    connections_per_node=80_000,
    cpu_pct_per_connection=40.0 / 80_000,
    cpu_pct_per_reject_per_s=0.05 * 0.1,
)
NAME = "rate_under_cpu_line_per_s"


def cpu_check(verdict: Verdict) -> Check:
    return next(c for c in verdict.checks if c.name == NAME)


def held(connections: int = 50_000, offline: int = 0, attempts_per_s: float = 20.0, **more) -> FleetSnapshot:
    """20 nodes holding `connections` each, `offline` clients waiting to come back."""
    members = [
        node(f"gw-{i:03d}", connections=connections, cpu_pct=25.0, attempts_per_s=attempts_per_s)
        for i in range(20)
    ]
    return snapshot(members, connections=connections * 20, offline_clients=offline, **more)


def test_the_cpu_model_costs_holding_handshakes_and_refusals() -> None:
    assert node_cpu_demand_pct(NODE_MODEL, 50_000, 550.0) == pytest.approx(80.0)
    assert node_cpu_demand_pct(NODE_MODEL, 0, 0.0, rejects_per_s=2_000.0) == pytest.approx(10.0)
    assert handshakes_under_line_per_s(NODE_MODEL, 80.0, 50_000) == pytest.approx(550.0)
    # Refusing what it does not admit costs too: 6000 attempts/s, 5000 held.
    room = handshakes_under_line_per_s(NODE_MODEL, 80.0, 5_000, attempts_per_s=6_000.0)
    assert node_cpu_demand_pct(NODE_MODEL, 5_000, room, rejects_per_s=6_000.0 - room) == pytest.approx(80.0)
    # Holding and refusing alone over the line: no rate keeps it under.
    assert handshakes_under_line_per_s(NODE_MODEL, 80.0, 80_000, attempts_per_s=20_000.0) == 0.0


def test_a_rate_that_pins_the_nodes_is_blocked_naming_the_field_and_the_range() -> None:
    verdict = judge_admission(held(), AdmissionRequest(rate_per_s=850), NODE_MODEL)
    assert verdict.level is VerdictLevel.BLOCKED
    check = cpu_check(verdict)
    assert not check.ok and check.level is VerdictLevel.BLOCKED and check.bound == "max"
    assert (check.value, check.limit) == (850, 550)
    assert "rate_per_s" in check.why and "850" in check.why, check.why
    assert "≤ 550/s a node keeps CPU under 80 %" in check.why, check.why
    assert "110 %" in check.why and "over capacity" in check.why, check.why


def test_a_rate_over_the_line_but_under_capacity_must_be_typed() -> None:
    verdict = judge_admission(held(), AdmissionRequest(rate_per_s=700), NODE_MODEL)
    check = cpu_check(verdict)
    assert not check.ok and check.level is VerdictLevel.TYPED and "95 %" in check.why, check.why
    assert verdict.level is VerdictLevel.TYPED and verdict.typed_expected == "test-fleet"


def test_a_rate_under_the_line_passes_and_says_no_move() -> None:
    check = cpu_check(judge_admission(held(), AdmissionRequest(rate_per_s=550), NODE_MODEL))
    assert check.ok and "≤ 550" not in check.why


def test_the_clients_offline_count_as_held_once_they_are_back() -> None:
    """Just after a regional restart: no node holds anything yet, 1 M clients are offline — each node will
    hold 50,000 of them, and the rate must still fit then."""
    restarted = held(connections=0, offline=1_000_000)
    assert rate_under_cpu_line_per_s(restarted, NODE_MODEL) == 550.0
    assert cpu_check(judge_admission(restarted, AdmissionRequest(rate_per_s=850), NODE_MODEL)).limit == 550


def test_in_a_storm_the_refusals_take_their_share() -> None:
    """6,000 attempts/s a node, 5,000 held, the rest of 1 M offline: refusing what it does not admit leaves
    a node less than the 550/s it has once every client is back."""
    storm = held(connections=5_000, offline=900_000, attempts_per_s=6_000.0)
    rate = rate_under_cpu_line_per_s(storm, NODE_MODEL)
    assert rate is not None and 450 < rate < 550


def test_tightening_from_a_looser_limit_is_never_held_back() -> None:
    """Shedding is the move: 900/s in force, 850/s asked — still over the line, said, not asked or blocked."""
    running = held(admission=AdmissionSettings(rate_per_s=900, max_connections=None, retry_after_s=(1, 30)))
    verdict = judge_admission(running, AdmissionRequest(rate_per_s=850), NODE_MODEL)
    check = cpu_check(verdict)
    assert not check.ok and check.level is VerdictLevel.OK and "≤ 550/s" in check.why
    assert verdict.level is VerdictLevel.OK


def test_unlimited_admission_turned_into_a_limit_is_judged() -> None:
    """Admission off (the regional-outage drill's start) is no limit to be tighter than: 850/s is judged."""
    assert judge_admission(held(), AdmissionRequest(rate_per_s=850), NODE_MODEL).level is VerdictLevel.BLOCKED


def test_no_rate_keeps_cpu_under_the_line_a_note_not_a_block() -> None:
    """Holding alone over the line (a node of 80,000 at 40 % plus 20,000 refusals/s): every rate fails, so
    no rate is held back for it — shedding with admission stays possible; the note says so."""
    full = held(connections=80_000, attempts_per_s=20_000.0)
    check = cpu_check(judge_admission(full, AdmissionRequest(rate_per_s=10), NODE_MODEL))
    assert not check.ok and check.level is VerdictLevel.OK
    assert "no rate_per_s" in check.why, check.why


def test_without_a_capacity_record_it_is_not_judged() -> None:
    assert NAME not in {c.name for c in judge_admission(held(), AdmissionRequest(rate_per_s=850)).checks}


def test_a_record_without_holding_and_refusal_costs_judges_handshakes_alone() -> None:
    """A real fleet's controller knows handshakes_per_s only: the line is 80 % of it (2,000/s at 0.02 CPU
    points each: 4,000/s), and the planning figure is said where it is one."""
    assert rate_under_cpu_line_per_s(held(), CAPACITY) == 4_000.0


@settings(max_examples=300, deadline=None)
@given(
    handshake_pct=st.floats(1e-3, 1),
    reject_share=st.floats(0, 1),  # the scenario schema's reject_cost range: a refusal costs ≤ a handshake
    connection_pct=st.floats(0, 1e-2),
    connections=st.integers(0, 200_000),
    attempts_per_s=st.floats(0, 50_000),
    line_pct=st.floats(1, 100),
)
def test_the_rate_under_the_line_is_the_largest_that_stays_under_it(
    handshake_pct: float,
    reject_share: float,
    connection_pct: float,
    connections: int,
    attempts_per_s: float,
    line_pct: float,
) -> None:
    capacity = FleetCapacity(
        handshakes_per_s=100 / handshake_pct,
        cpu_pct_per_handshake_per_s=handshake_pct,
        connections_per_node=80_000,
        cpu_pct_per_connection=connection_pct,
        cpu_pct_per_reject_per_s=reject_share * handshake_pct,
    )

    def demand(rate: float) -> float:
        return node_cpu_demand_pct(capacity, connections, rate, max(attempts_per_s - rate, 0.0))

    rate = handshakes_under_line_per_s(capacity, line_pct, connections, attempts_per_s)
    assert rate >= 0
    if rate > 0:
        assert demand(rate) == pytest.approx(line_pct, rel=1e-6, abs=1e-6)
        assert demand(rate * 1.01 + 1e-3) > line_pct or demand(rate * 1.01 + 1e-3) == pytest.approx(line_pct)
    else:  # nothing admitted is already at or over the line
        assert demand(0.0) >= line_pct - 1e-6
