"""The rollout form's starting batch is one the guards pass where any batch does, and "what would pass" says
a batch the operator can type. Found on a real 3-node fleet at 50 % headroom: R pre-filled a batch of 2,
Ctrl+D gave "✖ BLOCKED … batch_connections 2,016 ≤ 1,016", and "what would pass" read "batch_connections
≤ 1,016 (now 2,016)", never "batch size 1"."""

from __future__ import annotations

from console.guards import Thresholds, judge_rollout_start
from console.model.actions.answer import what_would_pass
from console.model.actions.form import parse_form
from console.model.actions.rollout import rollout_prefill
from console.protocol import ActionKind, RolloutMode, RolloutRequest, RolloutState, RolloutStatus
from tests.fleet_builders import frame, node
from tests.guards.fleets import CAPACITY, fleet

#: 3 nodes at 50 % of their room: a batch of 2 moves 50 k into 25 k of room, a batch of 1 fits.
HALF = fleet(count=3, connections=25_000)


def half_frame(rollout: RolloutStatus | None = None):
    return frame(100.0, fleet=HALF.nodes, rollout=rollout, headroom_pct=50.0, connections=75_000)


def judged(values: dict[str, str]):
    body = parse_form(ActionKind.ROLLOUT_START, None, values).body
    return judge_rollout_start(HALF, CAPACITY, RolloutRequest(**body))


def test_the_prefill_is_a_batch_the_guards_pass_on_a_small_fleet() -> None:
    prefill = rollout_prefill(half_frame(), "test-fleet", CAPACITY, Thresholds())
    assert prefill.values["batch_size"] == "1", prefill
    assert judged(prefill.values).level == "ok"
    assert "batch 1" in prefill.source and "largest" in prefill.source, prefill.source


def test_the_prefill_keeps_the_usual_batch_where_it_passes() -> None:
    calm = frame(100.0, fleet=fleet(count=20).nodes)
    assert rollout_prefill(calm, "f", CAPACITY, Thresholds()).values["batch_size"] == "2"
    # The last rollout's batch where it passes, the largest that does where it does not.
    last = RolloutStatus(
        state=RolloutState.COMPLETED, mode=RolloutMode.DRAIN, batch_size=2, batch=3, batches=3
    )
    assert rollout_prefill(half_frame(last), "f", CAPACITY, Thresholds()).values["batch_size"] == "1"


def test_the_prefill_says_when_no_batch_passes() -> None:
    full = fleet(count=3, connections=40_000)  # a batch of 1 moves 40 k into 20 k of room
    prefill = rollout_prefill(frame(100.0, fleet=full.nodes), "f", CAPACITY, Thresholds())
    assert prefill.values["batch_size"] == "1"
    assert prefill.source.startswith("no batch passes now"), prefill.source
    assert "batch_connections" in prefill.source, prefill.source


def test_the_prefill_names_the_configured_pause_line() -> None:
    """The note said "outage seed: 75 %" with STORMDECK_CPU_PAUSE_PCT=10."""
    t = Thresholds(cpu_pause_pct=10.0, drain_plan_cpu_margin_pct=5.0)
    cool = frame(100.0, fleet=[node(f"gw-{i}", cpu_pct=2.0, connections=1_000) for i in range(4)])
    prefill = rollout_prefill(cool, "f", CAPACITY, t)
    assert prefill.values["pause_cpu_pct"] == "10" and "10 %" in prefill.source and "75" not in prefill.source
    # With no frame or capacity record the guards cannot be asked: the usual batch, said so.
    bare = rollout_prefill(None, "f", None, Thresholds())
    assert bare.values["batch_size"] == "2" and "75 %" in bare.source


def test_what_would_pass_names_the_largest_batch_size() -> None:
    blocked = judged({"batch_size": "2", "interval_s": "90", "mode": "drain", "pause_cpu_pct": "75"})
    assert blocked.level == "blocked"
    assert what_would_pass(blocked) == ["batch size ≤ 1 (now 2)"]


def test_what_would_pass_says_when_no_batch_passes() -> None:
    full = fleet(count=3, connections=40_000)
    verdict = judge_rollout_start(full, CAPACITY, RolloutRequest(batch_size=1, interval_s=90))
    hints = what_would_pass(verdict)
    assert "no batch size passes batch_connections now, a batch of 1 included" in hints, hints
    assert any(hint.startswith("batch_connections ≤ ") for hint in hints), hints


def _loopback_frame():
    """fleet up's three nodes at admission 30/s a node and no inflow: every batch's drain (the controller's
    fixed 100/s a node) is over the 2 survivors' 60/s (tests/guards/test_rollout_pacing_moves.py)."""
    from tests.guards.test_rollout_pacing_moves import loopback

    fleet = loopback()
    return frame(100.0, fleet=fleet.nodes, admission=fleet.admission, headroom_pct=90.0, accepts_per_s=0.0)


def test_a_rollout_held_by_its_drain_pacing_says_the_admission_that_fits() -> None:
    """Found in review: every rollout blocked at admission 30/s a node on a 3-node loopback fleet, and
    nothing said what would let one start. The rollout takes no drain rate; the admission rate that makes
    the room is the move, in "what would pass" and in the form's note."""
    from tests.guards.test_rollout_pacing_moves import CONTROLLER, loopback

    verdict = judge_rollout_start(loopback(), CONTROLLER, RolloutRequest(batch_size=1, interval_s=90))
    hints = what_would_pass(verdict)
    assert "admission rate_per_s ≥ 50/s a node, set before the start: the batch's drain then fits" in hints
    prefill = rollout_prefill(_loopback_frame(), "f", CONTROLLER, Thresholds())
    assert prefill.values["batch_size"] == "1"
    assert prefill.source.startswith(
        "no batch passes now (drain_pacing_per_s fails at a batch of 1: raise admission rate_per_s to at "
        "least 50/s a node (now 30/s) first)"
    ), prefill.source


def test_the_form_over_a_halted_rollout_says_it_replaces_it() -> None:
    """R with a rollout halted opened the start form saying nothing of it: only the verdict's halted_rollout
    check did. The form's note says it first, and that r resumes the halted one instead."""
    calm = fleet(count=20).nodes
    halted = RolloutStatus(
        state=RolloutState.HALTED, mode=RolloutMode.DRAIN, batch_size=2, batch=3, batches=10
    )
    source = rollout_prefill(frame(100.0, fleet=calm, rollout=halted), "f", CAPACITY, Thresholds()).source
    assert source.startswith("replaces the rollout halted at batch 3 of 10 (r resumes it instead); "), source
    running_before = RolloutStatus(state=RolloutState.COMPLETED, batch_size=2, batch=10, batches=10)
    said = rollout_prefill(
        frame(100.0, fleet=calm, rollout=running_before), "f", CAPACITY, Thresholds()
    ).source
    assert "replaces" not in said
