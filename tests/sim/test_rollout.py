"""The simulator's rollout controller (console/sim/rollout.py): a scheduled start, and the refusals of a
halt or resume with nothing to act on."""

from __future__ import annotations

import pytest

from console.errors import InputError
from console.guards.rollout import nothing_to
from console.protocol import ActionKind, RolloutMode, RolloutState
from console.sim.engine import Simulation
from console.sim.scenario_loader import build_scenario

#: 8 nodes, a scenario rollout of 4 batches of 2 scheduled at 10 s (thundering-herd's is 16 of 30 at 30 s).
SCHEDULED = {
    "name": "scheduled",
    "duration_s": 300,
    "clients": {"count": 20_000},
    "nodes": {"count": 8, "capacity_connections": 8_000, "handshakes_per_s": 2_000, "restart_s": 3},
    "rollout": {"enabled": True, "start_at_s": 10, "batch_size": 2, "interval_s": 20, "mode": "abrupt"},
}


def scheduled() -> Simulation:
    return Simulation(build_scenario(SCHEDULED))


def steps_until(sim: Simulation, time_s: float) -> None:
    while sim.time_s < time_s:
        sim.step()


def test_a_rollout_before_its_start_reads_as_scheduled_with_its_start() -> None:
    """thundering-herd's rolling restart starts at 30 s: before, its status said `running` at batch 0, and
    the console showed a running rollout that had not begun. It says when it starts (`starts_at_s`), until
    it does; `state` stays `running` on the wire, so an older console still reads the frame."""
    sim = scheduled()
    first = sim.rollout.status()
    assert first.state is RolloutState.RUNNING and first.batch == 0 and first.batches == 4
    assert first.starts_at_s == 10.0 and first.scheduled
    assert first.state_said() == "scheduled"
    steps_until(sim, 9)
    assert sim.rollout.status().scheduled and sim.rollout.status().batch == 0
    steps_until(sim, 11)
    begun = sim.rollout.status()
    assert begun.batch == 1 and begun.starts_at_s is None and not begun.scheduled
    assert begun.state_said() == "running"


def test_an_operators_rollout_is_never_scheduled() -> None:
    sim = Simulation(build_scenario({**SCHEDULED, "rollout": {"enabled": False}}))
    sim.step()
    sim.rollout.start(2, 20, sim.rollout.mode or "abrupt", 0)  # type: ignore[arg-type]
    status = sim.rollout.status()
    assert status.starts_at_s is None and status.state_said() == "running"


def test_the_status_says_the_drain_rate_the_rollout_was_started_with() -> None:
    """The operator's `drain_rate_per_s` in the status; null where the rollout asked for none (each batch
    node drains at the scenario's rate)."""
    sim = Simulation(build_scenario({**SCHEDULED, "rollout": {"enabled": False}}))
    sim.step()
    sim.rollout.start(2, 20, RolloutMode.DRAIN, 0, drain_rate_per_s=10.0)
    assert sim.rollout.status().drain_rate_per_s == 10.0
    sim.rollout.halt()
    sim.rollout.start(2, 20, RolloutMode.DRAIN, 0)
    assert sim.rollout.status().drain_rate_per_s is None
    assert scheduled().rollout.status().drain_rate_per_s is None  # the scenario's rollout: its own rate


def test_a_scheduled_rollout_halted_does_not_start_and_resumed_starts_as_scheduled() -> None:
    """Halting it before its start is possible, and says what it does; it does not start while halted, and
    a resume before its start time lets it start then."""
    sim = scheduled()
    steps_until(sim, 3)
    sim.rollout.halt()
    halted = sim.rollout.status()
    assert halted.state is RolloutState.HALTED and halted.batch == 0
    assert halted.pause_reason == "halted by operator before its start: it does not start; resume starts it"
    assert halted.starts_at_s == 10.0  # still ahead: what a resume now waits for
    steps_until(sim, 5)
    sim.rollout.resume()
    assert sim.rollout.status().scheduled  # resumed before its time: scheduled again
    steps_until(sim, 11)
    assert sim.rollout.status().batch == 1


def test_a_scheduled_rollout_halted_past_its_start_starts_when_resumed() -> None:
    sim = scheduled()
    steps_until(sim, 3)
    sim.rollout.halt()
    steps_until(sim, 15)
    held = sim.rollout.status()
    assert held.state is RolloutState.HALTED and held.batch == 0 and held.starts_at_s is None
    sim.rollout.resume()
    sim.step()
    assert sim.rollout.status().batch == 1


def test_a_rollout_halted_before_its_start_and_resumed_later_started_when_its_first_batch_did() -> None:
    """`started_at_s` kept the scheduled 10 s though the rollout, halted at 3 s, started at its resume at
    15 s; null while no batch has started (`starts_at_s` says when one is to), and null for good when none
    does: a run's summary said it started at 10 s."""
    sim = scheduled()
    assert sim.rollout.status().started_at_s is None
    steps_until(sim, 3)
    sim.rollout.halt()
    steps_until(sim, 15)
    assert sim.rollout.status().started_at_s is None
    sim.rollout.resume()
    sim.step()
    begun = sim.rollout.status()
    assert begun.batch == 1 and begun.started_at_s == 15.0
    steps_until(sim, 200)
    done = sim.rollout.status()
    assert done.state is RolloutState.COMPLETED and done.started_at_s == 15.0
    never = scheduled()
    steps_until(never, 3)
    never.rollout.halt()
    steps_until(never, 30)
    assert never.rollout.status().started_at_s is None


def test_a_rollout_that_starts_as_planned_started_at_its_start() -> None:
    """The scenario's at its `start_at_s`, the operator's at once: the time each first batch started."""
    sim = scheduled()
    steps_until(sim, 11)
    assert sim.rollout.status().started_at_s == 10.0
    sim = Simulation(build_scenario({**SCHEDULED, "rollout": {"enabled": False}}))
    steps_until(sim, 5)
    sim.rollout.start(2, 20, RolloutMode.ABRUPT, 0)
    sim.step()
    assert sim.rollout.status().started_at_s == 5.0


@pytest.mark.parametrize("kind", [ActionKind.ROLLOUT_HALT, ActionKind.ROLLOUT_RESUME])
def test_the_simulators_refusal_says_what_the_guard_says(kind: ActionKind) -> None:
    """Called directly (the server's guard refuses first; the backend's own refusal is what a halt or
    resume meets when the rollout moved between the judge and the apply), a halt or resume with nothing to
    act on said "'completed' is not allowed; expected a paused or halted rollout" (a halt said nothing at
    all, and was answered `applied`). The same words as the guard's, the same bad input naming `rollout`."""
    sim = Simulation(build_scenario({**SCHEDULED, "rollout": {"enabled": False}}))
    act = sim.rollout.halt if kind is ActionKind.ROLLOUT_HALT else sim.rollout.resume
    verb = "halt" if kind is ActionKind.ROLLOUT_HALT else "resume"
    with pytest.raises(InputError) as idle:
        act()
    said = nothing_to(kind, sim.rollout.status())
    assert (
        said
        == f"nothing to {verb} — no rollout has started on this fleet; start one with `stormdeck act URL rollout start`"
    )
    assert idle.value.field == "rollout"
    assert str(idle.value) == f"rollout {verb}: {said}"


def test_a_resume_of_a_scheduled_rollout_says_it_has_not_started() -> None:
    sim = scheduled()
    with pytest.raises(InputError) as running:
        sim.rollout.resume()
    assert str(running.value) == (
        "rollout resume: nothing to resume — the rollout is scheduled: it starts at 0:00:10, 4 batches of 2"
    )


def test_the_scenarios_own_halt_of_nothing_changes_nothing() -> None:
    """The timeline's `halt_rollout` (and an instructor's) with nothing under way: nothing happens, as
    before — only the operator's halt is refused."""
    sim = Simulation(
        build_scenario(
            {
                **SCHEDULED,
                "rollout": {"enabled": False},
                "events": [{"at_s": 2, "action": "halt_rollout"}],
            }
        )
    )
    steps_until(sim, 4)
    assert sim.rollout.status().state is RolloutState.IDLE


def test_a_rollout_halted_between_batches_says_when_the_next_is_due_and_its_resume_keeps_it() -> None:
    """The simulator kept the interval across a halt (a resume starts the next batch no earlier than batch
    start + interval) but said it nowhere while halted: the status says `next_batch_at_s`, and the resume's
    verdict "batch 2 starts in 8 s" — what the controller says of a real fleet (console/gateway/rollout.py)."""
    from console.guards import judge_rollout_resume

    sim = scheduled()  # batch 1 at 10 s, every 20 s
    steps_until(sim, 15)
    assert sim.rollout.status().next_batch_at_s == 30.0  # waiting out the interval
    sim.rollout.halt()
    assert sim.rollout.status().next_batch_at_s == 30.0
    steps_until(sim, 22)
    verdict = judge_rollout_resume(sim.live_snapshot())
    said = next(c for c in verdict.checks if c.name == "next_batch")
    assert said.value == "in 8 s" and said.why.startswith("batch 2 starts in 8 s"), said
    assert verdict.projections["next_batch"] == 2
    sim.rollout.resume()
    steps_until(sim, 29)
    assert sim.rollout.status().batch == 1
    steps_until(sim, 31)
    assert sim.rollout.status().batch == 2 and sim.rollout.status().next_batch_at_s == 50.0


def test_a_drain_batch_under_way_says_no_next_batch_time() -> None:
    """While a drain-mode batch drains, the next batch waits for it as well as for the interval: no time is
    said, and a resume's verdict says the batch goes on."""
    from console.guards import judge_rollout_resume

    drained = {**SCHEDULED["rollout"], "mode": "drain", "drain_rate_per_s": 50, "drain_deadline_s": 120}
    sim = Simulation(build_scenario({**SCHEDULED, "rollout": drained}))
    steps_until(sim, 12)
    assert sim.rollout.status().batch == 1 and sim.rollout.status().next_batch_at_s is None
    sim.rollout.halt()
    said = next(c for c in judge_rollout_resume(sim.live_snapshot()).checks if c.name == "next_batch")
    assert said.value == "at once" and said.why.startswith("batch 1 goes on at once"), said
