"""Rollout start, halt and resume guards; admission guards."""

from __future__ import annotations

import dataclasses

import pytest

from console.errors import InputError
from console.guards import (
    FleetCapacity,
    Thresholds,
    judge_admission,
    judge_rollout_halt,
    judge_rollout_resume,
    judge_rollout_start,
)
from console.guards.rollout import SURVIVOR_CHECKS as ROLLOUT_SURVIVOR_CHECKS
from console.guards.rollout import plan_batches
from console.protocol import (
    AdmissionRequest,
    AdmissionSettings,
    Check,
    FleetSnapshot,
    NodeState,
    RolloutMode,
    RolloutRequest,
    RolloutState,
    RolloutStatus,
    VerdictLevel,
)
from tests.fleet_builders import node
from tests.guards.fleets import CAPACITY, fleet, out_of_rotation, says_a_move


def failed(verdict) -> set[str]:
    return {c.name for c in verdict.checks if not c.ok}


def asked(verdict) -> set[str]:
    """The failed checks that raise the verdict's level, not the notes: a fleet refusing a backlog or with
    a node hot is no calm second, and the admission rate check says it has no calm inflow to judge by."""
    return {c.name for c in verdict.checks if not c.ok and c.level is not VerdictLevel.OK}


def rollout(batch_size: int = 2, mode: RolloutMode = RolloutMode.DRAIN, **fields) -> RolloutRequest:
    return RolloutRequest(batch_size=batch_size, interval_s=90, mode=mode, **fields)


# --- rollout start ------------------------------------------------------------------------------------


def test_drain_rollout_on_a_calm_fleet_is_ok() -> None:
    verdict = judge_rollout_start(fleet(), CAPACITY, rollout())
    assert verdict.level is VerdictLevel.OK, failed(verdict)
    assert verdict.projections["batches"] == 10 and verdict.projections["batch_connections"] == 54_000


def test_a_rollout_over_a_fleet_with_a_node_down_asks_first() -> None:
    """Seen live (3 `gateway serve` nodes, 300 clients): node-2 killed, its `node_down` alarm saying "no
    rollout until it is back", and a drain rollout started from the console was applied without a question:
    batch 1 drained node-1, and node-3 held every client left — connections_drop 78 % — until batch 2 halted
    on the down node. A node down outside a planned restart is one fewer survivor than the plan assumes."""
    down = node("gw-020", state=NodeState.DOWN, connections=0, cpu_pct=0.0)
    verdict = judge_rollout_start(fleet(extra=[down]), CAPACITY, rollout())
    assert verdict.level is VerdictLevel.CONFIRM and failed(verdict) == {"nodes_down"}
    named = next(c for c in verdict.checks if c.name == "nodes_down")
    assert (named.value, named.limit) == (1, 0) and "gw-020" in named.why
    # a planned restart (`restarting`) is no loss: nothing to ask
    restarting = node("gw-020", state=NodeState.RESTARTING, connections=0, cpu_pct=0.0)
    assert judge_rollout_start(fleet(extra=[restarting]), CAPACITY, rollout()).level is VerdictLevel.OK


def test_the_projected_batches_are_the_ones_the_fleet_plans_nodes_out_of_rotation_included() -> None:
    """Seen on a 3-node controller fleet with one node drained: the verdict said 2 batches (the nodes in
    rotation), the controller ran 3 — both backends plan every node of the fleet (the controller its nodes
    file, the simulator every node), and restart a drained one too."""
    drained = node("gw-020", state=NodeState.DRAINED, connections=0, cpu_pct=0.0)
    verdict = judge_rollout_start(fleet(count=2, connections=10_000, extra=[drained]), CAPACITY, rollout(1))
    assert verdict.projections["batches"] == 3
    assert verdict.projections["batches"] == len(plan_batches(["gw-000", "gw-001", "gw-020"], 1))


def test_below_the_headroom_budget_no_restart_is_safe() -> None:
    # 70 % utilisation: the outage fleet before its post-mortem (20 % headroom was its provisioning).
    verdict = judge_rollout_start(fleet(connections=35_000), CAPACITY, rollout())
    assert verdict.level is VerdictLevel.BLOCKED and "headroom_pct" in failed(verdict)
    headroom = next(c for c in verdict.checks if c.name == "headroom_pct")
    assert "add capacity instead of restarting" in headroom.why


def test_abrupt_is_always_typed_with_the_storm_size() -> None:
    verdict = judge_rollout_start(fleet(), CAPACITY, rollout(batch_size=3, mode=RolloutMode.ABRUPT))
    assert verdict.level is VerdictLevel.TYPED and verdict.typed_expected == "test-fleet"
    assert verdict.projections["storm_connections"] == 81_000
    assert verdict.projections["storm_readmit_s"] > 0


def test_abrupt_on_a_fleet_without_headroom_is_blocked() -> None:
    verdict = judge_rollout_start(fleet(connections=35_000), CAPACITY, rollout(mode=RolloutMode.ABRUPT))
    assert verdict.level is VerdictLevel.BLOCKED


def test_a_batch_the_rest_cannot_hold_is_blocked() -> None:
    # 8 of 20 nodes at 27 k: 216 k displaced into the other 12's 276 k of room (12 × 23 k); a batch of 10
    # displaces 270 k into 230 k.
    assert "batch_connections" not in failed(judge_rollout_start(fleet(), CAPACITY, rollout(batch_size=8)))
    assert "batch_connections" in failed(judge_rollout_start(fleet(), CAPACITY, rollout(batch_size=10)))


def test_pacing_a_batch_over_the_drain_window() -> None:
    tight = fleet(admission=AdmissionSettings(rate_per_s=25.0, max_connections=None, retry_after_s=(1, 30)))
    # Batch of 2: 54 000 over 600 s = 90/s; 18 survivors × 25/s = 450/s admitted, 400/s inflow → 50/s spare.
    verdict = judge_rollout_start(tight, CAPACITY, rollout())
    assert "drain_pacing_per_s" in failed(verdict) and verdict.level is VerdictLevel.BLOCKED


def check_value(verdict, name: str) -> float:
    return next(c.value for c in verdict.checks if c.name == name)


def test_a_batch_is_judged_at_the_drain_the_backend_applies() -> None:
    """Found in review: a real fleet's dry run projected `drain_pacing_per_s` 0.873 and `duration_s` 610
    (its batch spread over the 600 s drain window) while the controller drained each node at 100/s."""
    capacity = dataclasses.replace(CAPACITY, batch_drain_rate_per_s=100.0, batch_drain_deadline_s=600.0)
    small = fleet(count=3, connections=524)
    verdict = judge_rollout_start(small, capacity, RolloutRequest(batch_size=1, interval_s=5))
    assert check_value(verdict, "drain_pacing_per_s") == pytest.approx(100.0)  # one node at 100/s
    assert "100/s per node, 600 s deadline" in next(
        c.why for c in verdict.checks if c.name == "drain_pacing_per_s"
    )
    # Three batches, each drained in 5.24 s; restart time unknown to this fleet, so left out and said so.
    assert verdict.projections["batch_drain_s"] == pytest.approx(5.24)
    assert verdict.projections["duration_s"] == pytest.approx(3 * 5.24)
    assert verdict.projections["restart_s"] == "unknown (not in duration_s)"
    assert verdict.projections["batch_force_closed"] == 0
    # A node that holds fewer than a second's closes sends what it has, not the rate.
    few = judge_rollout_start(
        fleet(count=3, connections=40), capacity, RolloutRequest(batch_size=2, interval_s=5)
    )
    assert check_value(few, "drain_pacing_per_s") == pytest.approx(80.0)


def test_the_batch_drain_decides_pacing_and_a_deadline_force_closes_the_rest() -> None:
    # 27 k per node at 20/s: 1350 s to empty, the deadline cuts it at 600 s with 15 k still open.
    slow = dataclasses.replace(
        CAPACITY, batch_drain_rate_per_s=20.0, batch_drain_deadline_s=600.0, restart_s=30
    )
    verdict = judge_rollout_start(fleet(), slow, rollout())
    assert check_value(verdict, "drain_pacing_per_s") == pytest.approx(2 * 20.0)  # a batch of 2 at 20/s each
    assert verdict.projections["batch_force_closed"] == 2 * 15_000
    assert verdict.projections["duration_s"] == pytest.approx(10 * 630)  # 10 batches of 600 s + 30 s, each
    # The same batch drained fast enough that the pacing budget cannot take it (18 × 2000/s spare, less inflow).
    fast = dataclasses.replace(CAPACITY, batch_drain_rate_per_s=20_000.0, batch_drain_deadline_s=600.0)
    blocked = judge_rollout_start(fleet(), fast, rollout())
    assert "drain_pacing_per_s" in failed(blocked) and blocked.level is VerdictLevel.BLOCKED


def test_an_abrupt_rollout_lasts_its_intervals_and_a_restart_not_a_drain_window() -> None:
    """Found in review: an abrupt rollout projected 610 s (a drain window it never waits for), done in 24 s."""
    capacity = dataclasses.replace(CAPACITY, restart_s=10.0)
    request = RolloutRequest(batch_size=1, interval_s=5, mode=RolloutMode.ABRUPT)
    verdict = judge_rollout_start(fleet(count=3), capacity, request)
    assert verdict.projections["duration_s"] == pytest.approx(2 * 5 + 10)
    assert "batch_drain_s" not in verdict.projections


def test_a_hot_fleet_or_a_looser_pause_line() -> None:
    assert judge_rollout_start(fleet(cpu_pct=78), CAPACITY, rollout()).level is VerdictLevel.BLOCKED
    looser = judge_rollout_start(fleet(), CAPACITY, rollout(pause_cpu_pct=90))
    assert failed(looser) == {"pause_cpu_pct"} and looser.level is VerdictLevel.TYPED


def test_rollout_input_errors() -> None:
    running = fleet(rollout=RolloutStatus(state=RolloutState.RUNNING))
    with pytest.raises(InputError, match="halt it first"):
        judge_rollout_start(running, CAPACITY, rollout())
    with pytest.raises(InputError) as error:
        judge_rollout_start(fleet(count=4), CAPACITY, rollout(batch_size=5))
    assert error.value.field == "batch_size"


def rotation_check(verdict) -> Check:
    return next(c for c in verdict.checks if c.name == "nodes_in_rotation")


@pytest.mark.parametrize("mode", list(RolloutMode))
def test_a_rollout_with_no_node_in_rotation_is_blocked_naming_the_rotation(mode: RolloutMode) -> None:
    """A start over a fleet with every node drained, draining or down was bad input, "batch_size: expected
    1 … 0 (the nodes in rotation)" — a field the operator had not got wrong. It is a verdict now: blocked on
    nodes_in_rotation, 0 against ≥ 1, which an admin may still force with a reason, as any block."""
    verdict = judge_rollout_start(out_of_rotation(), CAPACITY, rollout(batch_size=1, mode=mode))
    assert verdict.level is VerdictLevel.BLOCKED and "nodes_in_rotation" in failed(verdict)
    check = rotation_check(verdict)
    assert (check.value, check.limit, check.bound, check.level) == (0, 1, "min", VerdictLevel.BLOCKED)
    assert "undrain" in check.why
    assert verdict.projections["batches"] == 3  # every node of the fleet, as the backends plan it
    # Nodes in rotation: the check is shown and passes; a batch larger than them is still bad input.
    ok = rotation_check(judge_rollout_start(fleet(count=4), CAPACITY, rollout(batch_size=1, mode=mode)))
    assert (ok.ok, ok.value) == (True, 4)


@pytest.mark.parametrize("mode", list(RolloutMode))
def test_a_first_batch_of_every_node_in_rotation_is_blocked_on_the_rotation_after_alone(
    mode: RolloutMode,
) -> None:
    """A start whose first batch took every node in rotation also failed survivor_cpu_vs_pause_pct (value
    "—": no survivor to have a CPU) and drain_pacing_per_s (limit 0: no spare admission without one), and
    batch_connections against "the room left on the other nodes" of none: 0, or below 0 with a drain under
    way. With no survivor those checks are left out, as the last node's drain leaves them out, and
    nodes_in_rotation_after (≥ 1) stands in for batch_connections: blocked, however few connections."""
    verdict = judge_rollout_start(fleet(count=3), CAPACITY, rollout(batch_size=3, mode=mode))
    names = [c.name for c in verdict.checks]
    assert "nodes_in_rotation_after" in names
    assert not {"batch_connections", *ROLLOUT_SURVIVOR_CHECKS} & set(names)
    blocking = [c.name for c in verdict.checks if not c.ok and c.level is VerdictLevel.BLOCKED]
    assert verdict.level is VerdictLevel.BLOCKED and blocking == ["nodes_in_rotation_after"]
    assert failed(verdict) == {"nodes_in_rotation_after"} | (
        {"abrupt_mode"} if mode is RolloutMode.ABRUPT else set()
    )
    after = next(c for c in verdict.checks if c.name == "nodes_in_rotation_after")
    assert (after.value, after.limit, after.bound) == (0, 1, "min") and "a batch of 2 or fewer" in after.why
    # The projections keep their names (the protocol's fields); the batch still says what it moves.
    assert verdict.projections["batch_connections"] == 81_000
    # An idle fleet's: nothing to move, and still no node left to take a newcomer while the batch restarts
    # (it passed batch_connections, 0 ≤ 0, and was typed only on the survivors' CPU of "—").
    idle = judge_rollout_start(fleet(count=3, connections=0), CAPACITY, rollout(batch_size=3, mode=mode))
    assert idle.level is VerdictLevel.BLOCKED and "nodes_in_rotation_after" in failed(idle)
    # A drain under way held a limit below 0: "batch_connections ≤ -4,000". The rotation is the reason.
    draining = node("gw-009", state=NodeState.DRAINING, connections=4_000, drain_rate_per_s=50.0)
    busy = judge_rollout_start(fleet(count=2, extra=[draining]), CAPACITY, rollout(batch_size=2, mode=mode))
    assert [c.name for c in busy.checks if not c.ok and c.level is VerdictLevel.BLOCKED] == [
        "nodes_in_rotation_after"
    ]
    # The last node in rotation: no smaller batch, so the move is another node.
    one = judge_rollout_start(fleet(count=1), CAPACITY, rollout(batch_size=1, mode=mode))
    assert "undrain another node" in next(c.why for c in one.checks if c.name == "nodes_in_rotation_after")
    # One node left in rotation: the batch and survivor checks are back, the rotation-after check gone.
    two = {
        c.name for c in judge_rollout_start(fleet(count=3), CAPACITY, rollout(batch_size=2, mode=mode)).checks
    }
    assert "batch_connections" in two and "nodes_in_rotation_after" not in two
    if mode is RolloutMode.DRAIN:
        assert two >= ROLLOUT_SURVIVOR_CHECKS


def test_resuming_with_no_node_in_rotation_is_typed_naming_the_rotation() -> None:
    """Resume asks, by the fleet's name, where a start blocks: the batch the rollout halted on may be what
    holds every node out of rotation, and finishing it the way back (as the headroom check only asks, where
    that batch — gw-000 drained, gw-001 draining — is all that holds the fleet under its budget)."""
    halted = RolloutStatus(state=RolloutState.HALTED, pause_cpu_pct=75.0, batch_size=2, batch=1, batches=2)
    verdict = judge_rollout_resume(out_of_rotation(halted))
    assert verdict.level is VerdictLevel.TYPED and "nodes_in_rotation" in failed(verdict)
    check = rotation_check(verdict)
    assert (check.value, check.limit, check.bound, check.level) == (0, 1, "min", VerdictLevel.TYPED)
    assert "undrain a node first" in check.why and "type the fleet's name" in check.why
    start = rotation_check(judge_rollout_start(out_of_rotation(), CAPACITY, rollout(batch_size=1)))
    assert start.level is VerdictLevel.BLOCKED and (start.value, start.limit) == (check.value, check.limit)
    assert rotation_check(judge_rollout_resume(fleet(rollout=halted))).ok


# --- halt and resume --------------------------------------------------------------------------------------


def test_halt_is_ok_even_in_a_burning_fleet() -> None:
    burning = fleet(cpu_pct=100, rollout=RolloutStatus(state=RolloutState.RUNNING), headroom_pct=0)
    assert judge_rollout_halt(burning).level is VerdictLevel.OK


def test_resume_needs_cpu_under_the_pause_line() -> None:
    paused = RolloutStatus(state=RolloutState.PAUSED, pause_cpu_pct=75.0)
    hot = fleet(rollout=paused, extra=[node("hot", cpu_pct=77.0)])
    verdict = judge_rollout_resume(hot)
    assert verdict.level is VerdictLevel.BLOCKED and verdict.projections["nodes_over_pause"] == 1
    assert judge_rollout_resume(fleet(rollout=paused)).level is VerdictLevel.OK
    with pytest.raises(InputError):
        judge_rollout_resume(fleet())  # idle: nothing to resume


ABORT = "abort criterion: gw-003 CPU 91 % > 80 % for 30 s"


@pytest.mark.parametrize(
    ("state", "judge", "said"),
    [
        (
            RolloutState.HALTED,
            judge_rollout_halt,
            "rollout halt: nothing to halt — the rollout is halted already, at batch 3 of 8; resume it with "
            "`stormdeck act URL rollout resume`",
        ),
        (
            RolloutState.ABORTED,
            judge_rollout_halt,
            f"rollout halt: nothing to halt — the rollout aborted at batch 3 of 8 ({ABORT}), and an aborted "
            "one is not resumed; start a new one with `stormdeck act URL rollout start`",
        ),
        (
            RolloutState.ABORTED,
            judge_rollout_resume,
            f"rollout resume: nothing to resume — the rollout aborted at batch 3 of 8 ({ABORT}), and an "
            "aborted one is not resumed; start a new one with `stormdeck act URL rollout start`",
        ),
        (
            RolloutState.RUNNING,
            judge_rollout_resume,
            "rollout resume: nothing to resume — the rollout is running, at batch 3 of 8",
        ),
    ],
)
def test_nothing_to_halt_or_resume_says_what_the_rollout_did_and_what_to_do(state, judge, said) -> None:
    """Review: "rollout: 'halted' is not allowed; expected a running or paused rollout: nothing to halt"."""
    status = RolloutStatus(
        state=state, batch=3, batches=8, pause_reason=ABORT if state == "aborted" else None
    )
    with pytest.raises(InputError) as refused:
        judge(fleet(rollout=status))
    assert refused.value.field == "rollout" and refused.value.exit_code == 2
    assert str(refused.value) == said


def test_resuming_a_halted_rollout_with_a_node_down_asks_as_starting_one_does() -> None:
    """Starting a rollout with a node down asked first (nodes_down); resuming a halted one did not — yet a
    controller's rollout halts exactly so ("went down before it drained: restart it, then resume"), and an
    operator resuming at 4 a.m. with the node still down sends the next batches onto the rest unasked."""
    halted = RolloutStatus(state=RolloutState.HALTED, pause_cpu_pct=75.0)
    down = node("gw-020", state=NodeState.DOWN, connections=0, cpu_pct=0.0)
    verdict = judge_rollout_resume(fleet(rollout=halted, extra=[down]))
    assert verdict.level is VerdictLevel.CONFIRM and failed(verdict) == {"nodes_down"}
    asked = next(c for c in verdict.checks if c.name == "nodes_down")
    started = next(
        c
        for c in judge_rollout_start(fleet(extra=[down]), CAPACITY, rollout()).checks
        if c.name == "nodes_down"
    )
    assert asked == started and (asked.value, asked.limit) == (1, 0) and "gw-020" in asked.why
    # a paused one too; a planned restart (`restarting`) is no loss: nothing to ask
    paused = RolloutStatus(state=RolloutState.PAUSED, pause_cpu_pct=75.0)
    assert judge_rollout_resume(fleet(rollout=paused, extra=[down])).level is VerdictLevel.CONFIRM
    restarting = node("gw-020", state=NodeState.RESTARTING, connections=0, cpu_pct=0.0)
    assert judge_rollout_resume(fleet(rollout=halted, extra=[restarting])).level is VerdictLevel.OK


def test_resuming_under_the_headroom_budget_is_blocked_as_a_start_naming_headroom_and_the_budget() -> None:
    """A maintenance-window pass: a resume went through at 31 % headroom where a start was blocked under the
    35 % budget — yet resuming a halted rollout restarts more nodes. It asked first (confirm), and `--yes`
    resumed (reviewer); it is blocked as the start is now, every node here being in rotation (it asks only
    while the batch it stopped on is what holds the fleet under: tests/guards/test_rollout_room.py), saying
    headroom now, the budget and what to do."""
    paused = RolloutStatus(state=RolloutState.PAUSED, pause_cpu_pct=75.0)
    # 20 × 34.5 k held of 20 × 50 k: 31 % headroom.
    tight = fleet(connections=34_500, rollout=paused)
    verdict = judge_rollout_resume(tight)
    assert verdict.level is VerdictLevel.BLOCKED and failed(verdict) == {"headroom_pct"}
    asked = next(c for c in verdict.checks if c.name == "headroom_pct")
    assert (asked.value, asked.limit, asked.bound) == (31.0, 35.0, "min")
    assert "31 %" in asked.why and "35 %" in asked.why
    assert "add capacity" in asked.why and "wait" in asked.why
    # just under the line it says so, not "35 % under the 35 % budget"
    near = judge_rollout_resume(fleet(connections=32_700, rollout=paused))  # 34.6 %
    assert "headroom 34.6 % under the 35 % budget" in next(
        c.why for c in near.checks if c.name == "headroom_pct"
    )
    # the budget is the thresholds' own, as the start's
    looser = judge_rollout_resume(tight, Thresholds(headroom_min_pct=30))
    assert looser.level is VerdictLevel.OK
    assert judge_rollout_resume(fleet(rollout=paused)).level is VerdictLevel.OK  # 46 %: nothing to ask


# --- admission --------------------------------------------------------------------------------------------

#: The calm baseline of `fleet()`'s 20 nodes admitting 20/s each (`SteadyAttempts`, as the fleet API learns
#: it): one second's accepts are no calm inflow (tests/guards/test_admission_calm_baseline.py).
CALM_PER_S = 400.0


def test_tightening_below_the_steady_inflow_asks_for_confirmation() -> None:
    # 20 nodes admit 20/s each in calm times: 400/s. A limit of 15/s per node admits 300/s.
    verdict = judge_admission(fleet(), AdmissionRequest(rate_per_s=15), calm_baseline_per_s=CALM_PER_S)
    assert failed(verdict) == {"admission_rate_per_s"} and verdict.level is VerdictLevel.CONFIRM
    above = judge_admission(fleet(), AdmissionRequest(rate_per_s=25), calm_baseline_per_s=CALM_PER_S)
    assert above.level is VerdictLevel.OK


def test_steady_inflow_comes_from_the_capacity_record_when_it_knows() -> None:
    capacity = CAPACITY.__class__(**{**CAPACITY.__dict__, "steady_inflow_per_s": 200.0})
    assert judge_admission(fleet(), AdmissionRequest(rate_per_s=15), capacity).level is VerdictLevel.OK


def test_a_limit_under_the_drains_under_way_asks_for_confirmation() -> None:
    """graceful-drain, its rollout draining 2 nodes at 833/s: a limit of 50/s per node (900/s on 18 nodes)
    passed against the steady 167/s and was applied at once — then 97 % of attempts were refused and the
    drain_pacing_exceeded alarm read "1.7k > 900/s". The clients a drain closes come back through admission
    too."""
    capacity = CAPACITY.__class__(**{**CAPACITY.__dict__, "steady_inflow_per_s": 167.0})
    draining = [
        node(f"gw-{i:03d}", state=NodeState.DRAINING, connections=400_000, drain_rate_per_s=833.0)
        for i in (18, 19)
    ]
    busy = fleet(18, extra=draining)
    verdict = judge_admission(busy, AdmissionRequest(rate_per_s=50), capacity)
    assert failed(verdict) == {"admission_rate_per_s"} and verdict.level is VerdictLevel.CONFIRM
    rate = next(c for c in verdict.checks if c.name == "admission_rate_per_s")
    assert (rate.value, rate.limit) == (50, pytest.approx((167 + 2 * 833) / 18, abs=1e-3))  # a node
    assert verdict.projections["drain_closes_per_s"] == pytest.approx(1666)
    assert judge_admission(busy, AdmissionRequest(rate_per_s=110), capacity).level is VerdictLevel.OK
    # Without a steady figure the calm inflow is unknown (a note), and so are the drains added to it.
    calm = judge_admission(busy, AdmissionRequest(rate_per_s=25))
    assert calm.level is VerdictLevel.OK and calm.projections["drain_closes_per_s"] == 0


def backlogged(rejects_per_s: float) -> FleetSnapshot:
    """20 nodes at 45 % CPU admitting their 20/s each under a limit of 20/s, and refusing `rejects_per_s`:
    clients sent away with a 503, each coming back when its Retry-After ends."""
    current = AdmissionSettings(rate_per_s=20.0, max_connections=None, retry_after_s=(1, 30))
    return fleet(cpu_pct=45.0, admission=current, rejects_per_s=rejects_per_s)


#: 1000 handshakes/s a node, each handshake/s 0.1 CPU points: 20 nodes at 45 % have 30 points to the pause
#: line (75 %), and the busiest takes 1.5× its even share — 30 × 20 ÷ (0.1 × 1.5) = 4000 handshakes/s.
HANDSHAKE_BOUND = FleetCapacity(
    handshakes_per_s=1000.0, cpu_pct_per_handshake_per_s=0.1, connections_per_node=50_000
)


def test_loosening_over_a_refused_backlog_the_fleet_cannot_take_asks_first() -> None:
    """A fleet refusing 6000/s has a backlog of clients waiting out their Retry-After, coming back at the
    rate they were refused. Raising the limit to unlimited passed with nothing asked (CPU was under the
    loosening line), though it lets the whole backlog back through admission at once: half again what the
    nodes can handshake under the pause line."""
    fleet_now = backlogged(6000.0)
    unlimited = judge_admission(fleet_now, AdmissionRequest(rate_per_s=None), HANDSHAKE_BOUND)
    assert failed(unlimited) == {"refused_backlog_admitted_per_s"}
    assert unlimited.level is VerdictLevel.CONFIRM
    backlog = next(c for c in unlimited.checks if c.name == "refused_backlog_admitted_per_s")
    assert (backlog.value, backlog.limit) == (6000, pytest.approx(4000))
    assert unlimited.projections["refused_backlog_per_s"] == 6000
    # Under a limit of 300/s a node the backlog is let in at what that leaves above today's 400/s.
    steep = judge_admission(fleet_now, AdmissionRequest(rate_per_s=300), HANDSHAKE_BOUND)
    assert asked(steep) == {"refused_backlog_admitted_per_s"}
    assert next(c.value for c in steep.checks if c.name == "refused_backlog_admitted_per_s") == 5600
    # A step the fleet can take: 200/s a node lets 3600/s of the backlog back in.
    step = judge_admission(fleet_now, AdmissionRequest(rate_per_s=200), HANDSHAKE_BOUND)
    assert step.level is VerdictLevel.OK, failed(step)
    assert next(c.value for c in step.checks if c.name == "refused_backlog_admitted_per_s") == 3600


def test_a_refused_backlog_is_judged_only_when_loosening_and_nothing_refused_passes() -> None:
    tighten = judge_admission(backlogged(6000.0), AdmissionRequest(rate_per_s=19), HANDSHAKE_BOUND)
    assert "refused_backlog_admitted_per_s" not in {c.name for c in tighten.checks}
    assert tighten.projections["refused_backlog_per_s"] == 6000
    calm = judge_admission(backlogged(0.0), AdmissionRequest(rate_per_s=None), HANDSHAKE_BOUND)
    assert calm.level is VerdictLevel.OK, failed(calm)
    assert calm.projections["refused_backlog_per_s"] == 0


def test_a_refused_backlog_comes_back_to_the_covered_nodes_in_their_share() -> None:
    """A refused client comes back through the load balancer to any node in rotation: the 5 covered of
    20 take a quarter of the backlog, 1500/s, and have room for a quarter of the fleet's, 1000/s."""
    verdict = judge_admission(
        backlogged(6000.0),
        AdmissionRequest(rate_per_s=None, nodes=[f"gw-{i:03d}" for i in range(5)]),
        HANDSHAKE_BOUND,
    )
    backlog = next(c for c in verdict.checks if c.name == "refused_backlog_admitted_per_s")
    assert (backlog.value, backlog.limit) == (1500, pytest.approx(1000)) and not backlog.ok
    assert verdict.projections["refused_backlog_per_s"] == 6000  # the fleet's, as the inflow's


def test_a_narrow_retry_after_window_is_lockstep() -> None:
    request = AdmissionRequest(rate_per_s=50, retry_after_s=(10, 12))
    verdict = judge_admission(fleet(), request, calm_baseline_per_s=CALM_PER_S)
    assert failed(verdict) == {"retry_after_window_s"} and verdict.level is VerdictLevel.CONFIRM
    said = next(c.why for c in verdict.checks if c.name == "retry_after_window_s")
    # One clause, its citation, then the move: it read "…together: lockstep (outage seed): widen …".
    assert said == (
        "a narrow Retry-After window sends refused clients back together, in lockstep (outage seed): widen "
        "retry_after_s to at least 5 s between its ends"
    ), said


def test_loosening_while_a_node_is_hot_is_typed_tightening_is_not() -> None:
    current = AdmissionSettings(rate_per_s=50.0, max_connections=None, retry_after_s=(1, 30))
    hot = fleet(admission=current, extra=[node("hot", cpu_pct=80.0)])
    loosen = judge_admission(hot, AdmissionRequest(rate_per_s=100))
    assert asked(loosen) == {"loosening_cpu_pct"} and loosen.level is VerdictLevel.TYPED
    tighten = judge_admission(hot, AdmissionRequest(rate_per_s=30))
    assert tighten.level is VerdictLevel.OK and not tighten.projections["loosening"]


def test_a_ceiling_under_what_nodes_hold() -> None:
    verdict = judge_admission(fleet(), AdmissionRequest(max_connections=20_000, nodes=["gw-001"]))
    assert failed(verdict) == {"max_connections"}


def test_a_ceiling_under_what_every_node_holds_stops_the_fleet_admitting_and_is_typed() -> None:
    """10 connections a node, fleet-wide: every newcomer everywhere refused — it needed only Enter."""
    stop = judge_admission(fleet(), AdmissionRequest(max_connections=10))
    assert failed(stop) == {"max_connections", "max_connections_every_node"}
    assert stop.level is VerdictLevel.TYPED and stop.typed_expected == "test-fleet"
    some = judge_admission(
        fleet(extra=[node("light", connections=5_000)]), AdmissionRequest(max_connections=10_000)
    )
    assert failed(some) == {"max_connections"} and some.level is VerdictLevel.CONFIRM


def test_admission_input_errors() -> None:
    with pytest.raises(InputError) as error:
        judge_admission(fleet(), AdmissionRequest(retry_after_s=(30, 1)))
    assert error.value.field == "retry_after_s"
    with pytest.raises(InputError) as error:
        judge_admission(fleet(), AdmissionRequest(nodes=["gw-001", "nope"]))
    # The request's own name for it: `act admission --nodes gw-001,gw-999` answered "node: 'gw-999' …".
    assert error.value.field == "nodes" and error.value.value == "nope"


#: Each check that can hold a rollout back, a fleet and request it fails on (a batch of 2), and its move.
TIGHT_ADMISSION = AdmissionSettings(rate_per_s=25.0, max_connections=None, retry_after_s=(1, 30))
HOLDS_BACK = [
    ("cpu_now_pct", fleet(cpu_pct=78), rollout(), Thresholds(), "shed load with admission"),
    ("batch_connections", fleet(), rollout(batch_size=10), Thresholds(), "a smaller batch"),
    ("concurrent_drains", fleet(), rollout(), Thresholds(max_concurrent_drains=1), "a smaller batch"),
    ("drain_pacing_per_s", fleet(admission=TIGHT_ADMISSION), rollout(), Thresholds(), "a smaller batch"),
    ("survivor_cpu_vs_pause_pct", fleet(), rollout(pause_cpu_pct=40.1), Thresholds(), "a smaller batch"),
]


@pytest.mark.parametrize(("name", "snap", "request_", "thresholds", "move"), HOLDS_BACK)
def test_each_check_that_can_hold_a_rollout_back_says_what_to_do(
    name: str, snap: FleetSnapshot, request_: RolloutRequest, thresholds: Thresholds, move: str
) -> None:
    """When it fails; passing, it says nothing of what to do (tests/guards/test_rollout_lines.py)."""
    verdict = judge_rollout_start(snap, CAPACITY, request_, thresholds)
    held = next(c for c in verdict.checks if c.name == name)
    assert not held.ok and move in held.why, held
    calm = next(c for c in judge_rollout_start(fleet(), CAPACITY, rollout()).checks if c.name == name)
    assert calm.ok and move not in calm.why, calm


def test_a_rollout_and_an_admission_change_say_what_their_figures_stand_on() -> None:
    """As a drain's verdict does: spare admission set by the operator's admission limit names it, and a CPU
    projected from a planning figure (a controller with no [capacity] handshakes_per_s) says so."""
    planned = dataclasses.replace(CAPACITY, handshakes_planned=True)
    tight = fleet(admission=AdmissionSettings(rate_per_s=25.0, max_connections=None, retry_after_s=(1, 30)))
    whys = {c.name: c.why for c in judge_rollout_start(tight, planned, rollout()).checks}
    assert "admission limit of 25/s a node (field guide): a smaller batch" in whys["drain_pacing_per_s"]
    assert (
        "planning figure (2000 handshakes/s a node, not measured: set [capacity] handshakes_per_s)"
        in whys["survivor_cpu_vs_pause_pct"]
    )
    measured = {c.name: c.why for c in judge_rollout_start(fleet(), CAPACITY, rollout()).checks}
    assert "admission limit" not in measured["drain_pacing_per_s"]
    assert "planning figure" not in measured["survivor_cpu_vs_pause_pct"]
    loosened = judge_admission(
        backlogged(6000.0),
        AdmissionRequest(rate_per_s=None),
        dataclasses.replace(HANDSHAKE_BOUND, handshakes_planned=True),
    )
    backlog = next(c.why for c in loosened.checks if c.name == "refused_backlog_admitted_per_s")
    assert "planning figure" in backlog and backlog.endswith("raise the limit in smaller steps"), backlog


# --- admission: moves said only when a check fails ------------------------------------------------------

#: A current limit the calm request loosens, so that every admission check is asked.
LOOSENED_FROM = AdmissionSettings(rate_per_s=30.0, max_connections=None, retry_after_s=(1, 30))
CALM_REQUEST = AdmissionRequest(rate_per_s=100, max_connections=40_000)

#: Each admission check, a fleet and request it fails on, and its move.
ADMISSION_HOLDS_BACK = [
    (
        "admission_rate_per_s",
        fleet(),
        AdmissionRequest(rate_per_s=10),
        "raise rate_per_s to at least 20/s a node",
    ),
    (
        "max_connections",
        fleet(),
        AdmissionRequest(max_connections=20_000, nodes=["gw-001"]),
        "raise max_connections to at least 27,000",
    ),
    (
        "max_connections_every_node",
        fleet(),
        AdmissionRequest(max_connections=10),
        "name the fleet to mean it",
    ),
    (
        "retry_after_window_s",
        fleet(),
        AdmissionRequest(rate_per_s=50, retry_after_s=(10, 12)),
        "widen retry_after_s to at least 5 s between its ends",
    ),
    (
        "loosening_cpu_pct",
        fleet(admission=LOOSENED_FROM, extra=[node("hot", cpu_pct=80.0)]),
        CALM_REQUEST,
        "wait for CPU to fall under it first",
    ),
    (
        "refused_backlog_admitted_per_s",
        backlogged(6000.0),
        AdmissionRequest(rate_per_s=None),
        "smaller steps",
    ),
    (
        "rate_under_cpu_line_per_s",
        fleet(),
        AdmissionRequest(rate_per_s=850),
        "lower rate_per_s — ≤ 800/s a node keeps CPU under 80 %",
    ),
]


@pytest.mark.parametrize(("name", "snap", "request_", "move"), ADMISSION_HOLDS_BACK)
def test_each_admission_check_says_what_to_do_when_it_fails(
    name: str, snap: FleetSnapshot, request_: AdmissionRequest, move: str
) -> None:
    held = next(
        c
        for c in judge_admission(snap, request_, HANDSHAKE_BOUND, calm_baseline_per_s=CALM_PER_S).checks
        if c.name == name
    )
    assert not held.ok and move in held.why, held
    calm = judge_admission(
        fleet(admission=LOOSENED_FROM), CALM_REQUEST, HANDSHAKE_BOUND, calm_baseline_per_s=CALM_PER_S
    )
    passing = next(c for c in calm.checks if c.name == name)
    assert passing.ok and move not in passing.why, passing


def test_a_calm_admission_changes_passing_checks_tell_nothing_to_do() -> None:
    """ "refused_backlog_admitted_per_s 0 ≤ 4000 pass … — raise the limit in smaller steps" of a fleet
    refusing nobody."""
    verdict = judge_admission(
        fleet(admission=LOOSENED_FROM), CALM_REQUEST, HANDSHAKE_BOUND, calm_baseline_per_s=CALM_PER_S
    )
    assert verdict.level is VerdictLevel.OK and verdict.projections["loosening"]
    assert {c.name for c in verdict.checks} == {name for name, *_ in ADMISSION_HOLDS_BACK}
    for item in verdict.checks:
        assert item.ok and not says_a_move(item.why), item
