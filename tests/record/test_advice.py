"""The seeds' findings over a reviewed recording, directly: when each applies and what it says was done."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from console.protocol import Event
from console.record.advice import abort_criterion, add_capacity, connections_alarm, drain_not_disconnect
from console.record.alarm_spans import AlarmSpan
from console.record.in_time import Spell
from console.record.key_figures import KeyFigures, peak_per_second
from console.record.records import ActionRecord
from console.record.review import Review
from console.record.series import Series
from tests.record.conftest import header


def reviewed(alarm: str, at_s: float, rollout_running: bool, actions: list[ActionRecord]) -> Review:
    series = Series(times_s=[float(t) for t in range(0, 300, 10)])
    series.rollout_running = [rollout_running] * len(series.times_s)
    return Review(
        header=header(),
        series=series,
        figures=None,
        alarms=[AlarmSpan(alarm, "critical", at_s, None, "…")],
        events=[],
        actions=actions,
        confirmations=[],
        drill_outcome=None,
        disconnect_times_s=[],
    )


def act(action: str, at_s: float) -> ActionRecord:
    return ActionRecord(time_s=at_s, actor="trainee", action=action, outcome="applied", status=200)


def test_the_abort_criterion_is_advice_only_where_a_restart_was_under_way() -> None:
    # A whole-fleet outage heats the survivors with no rollout to halt: "halt the restart" does not apply.
    assert abort_criterion(reviewed("cpu_abort", 60.0, rollout_running=False, actions=[])) is None
    halted = abort_criterion(reviewed("cpu_abort", 60.0, True, [act("rollout_halt", 75.0)]))
    assert halted is not None and halted.done is True and "+15 s after the criterion" in halted.what_was_done
    ignored = abort_criterion(reviewed("cpu_abort", 60.0, True, []))
    assert (
        ignored is not None and ignored.done is False and ignored.what_was_done == "no rollout halt recorded"
    )


def test_a_connections_drop_counts_only_what_was_done_after_it() -> None:
    """It said "not visible in the recording — 2 action attempt(s) recorded after it", counting actions
    from before the alarm too."""
    before_only = connections_alarm(reviewed("connections_drop", 100.0, False, [act("admission", 40.0)]))
    assert before_only is not None and before_only.done is False
    assert before_only.what_was_done == "no action recorded after the alarm"
    acted = connections_alarm(
        reviewed("connections_drop", 100.0, False, [act("admission", 40.0), act("drain", 130.0)])
    )
    assert acted is not None and acted.done is True
    assert acted.what_was_done == "first action drain at 2:10, +30 s after the alarm (1 attempt(s) after it)"


def test_the_busiest_second_comes_from_the_bins_when_frames_stand_for_several() -> None:
    """At ×20 a frame carries the last second's rate and every bin: its peak second was missed."""
    bins = np.zeros(200, dtype=np.int64)
    bins[40:50] = 15_000  # fleet second 4: 150 k attempts, in no frame's own rate
    assert peak_per_second([1_000.0, 2_000.0], bins) == 150_000.0
    assert peak_per_second([160_000.0], bins) == 160_000.0  # a frame's own figure still counts


def test_a_batch_disconnect_counts_every_node_it_names() -> None:
    # The simulator sends a fleet restart as one event, its nodes in data.nodes (older recordings: one each).
    batch = Event(
        time_s=30.0,
        kind="disconnect",
        message="restart of 3 nodes dropped 900 connections",
        data={"dropped": 900, "mass": True, "nodes": ["gw-1", "gw-2", "gw-3"]},
    )
    alone = Event(
        time_s=40.0,
        kind="disconnect",
        node="gw-4",
        message="gw-4 down, dropped 100",
        data={"dropped": 100, "mass": True},
    )
    review = reviewed("connections_drop", 35.0, rollout_running=False, actions=[])
    review.events[:] = [batch, alone]
    review.disconnect_times_s[:] = [30.0, 40.0]
    finding = drain_not_disconnect(review)
    assert finding is not None
    assert finding.evidence.startswith("1,000 connections cut abruptly (not drained) on 4 node(s)")


def test_findings_past_an_hour_read_the_clock_the_report_reads() -> None:
    # A ten-hour recording's finding said "drain÷inflow alarm fired at 594:01", in a report whose timeline
    # row for the same alarm read 9:54:01.
    from console.record.advice import losing_ground
    from console.record.clock import clock

    found = losing_ground(reviewed("drain_inflow_losing", 35_641.0, False, []))
    assert found is not None and found.evidence == f"drain÷inflow alarm fired at {clock(35_641.0)}"
    assert clock(35_641.0) == "9:54:01"


# --- headroom_low: "add capacity" by the fleet's room, as its frames said it ----------------------------

#: Today's words, kept where the frames say the fleet can add nodes and where they do not say (null).
CAN_ADD_TITLE = "Headroom below 35 %: add capacity, do not restart"
CAN_ADD_PRESCRIPTION = (
    "Provision 35 % headroom; above 65 % utilisation there is no safe restart — add capacity instead. What "
    "fixed the outage: stopping the restart and adding 200 nodes."
)


def reviewed_frames(
    max_nodes: int | Callable[[float], int | None] | None, actions: list[ActionRecord], alarm_s: float = 10.0
) -> Review:
    """Four nodes at 20 % headroom for 30 s, their frames saying `max_nodes` (null: an older server; or a
    function of the fleet time), and headroom_low raised at `alarm_s`."""
    from tests.fleet_builders import series as frames

    review = reviewed("headroom_low", alarm_s, rollout_running=False, actions=actions)
    review.series = Series()
    for f in frames(0, 30, headroom_pct=20.0):
        said = max_nodes(f.time_s) if callable(max_nodes) else max_nodes
        review.series.add(f.model_copy(update={"max_nodes": said}))
    return review


@pytest.mark.parametrize("max_nodes", [None, 16])
def test_headroom_advice_says_add_capacity_where_the_fleet_could_or_its_frames_do_not_say(
    max_nodes: int | None,
) -> None:
    found = add_capacity(reviewed_frames(max_nodes, [act("add_capacity", 20.0)]))
    assert found is not None and found.title == CAN_ADD_TITLE and found.prescription == CAN_ADD_PRESCRIPTION
    assert found.evidence == "headroom_low fired at 0:10" and found.done is True
    missed = add_capacity(reviewed_frames(max_nodes, [act("rollout_halt", 20.0)]))
    assert missed is not None and missed.done is False
    assert missed.what_was_done == "no capacity action recorded"


@pytest.mark.parametrize(
    ("max_nodes", "fleet"),
    [(0, "on a fleet that adds no nodes"), (4, "on a fleet at its most, 4 nodes")],
)
def test_headroom_advice_on_a_fleet_that_could_not_grow_says_what_it_could_do(
    max_nodes: int, fleet: str
) -> None:
    """A controller over a nodes file (`max_nodes` 0), or `fleet up` at its 4 of 4: "add capacity" is advice
    that fleet's `c` refused, and "no capacity action recorded" marked the operator down for not taking it."""
    found = add_capacity(reviewed_frames(max_nodes, []))
    assert found is not None
    assert found.title == "Headroom below 35 %: do not restart"
    assert found.evidence == f"headroom_low fired at 0:10, {fleet}: it could add no capacity"
    assert found.prescription == NO_ROOM_PRESCRIPTION.format(moves="shed load with admission")
    assert "more nodes" not in found.prescription and "add capacity" not in found.prescription
    assert found.done is False
    assert found.what_was_done == "no rollout halt, undrain or admission change recorded after it"


NO_ROOM_PRESCRIPTION = (
    "Provision 35 % headroom; above 65 % utilisation there is no safe restart. What fixed the outage was "
    "stopping the restart and adding 200 nodes; this fleet could add none, so: {moves}, and wait for headroom "
    "to come back."
)


def test_headroom_advice_without_room_names_only_the_moves_that_fleet_had_when_it_fired() -> None:
    """User pass on a controller over a nodes file (no restart command, nothing out of rotation): the report
    said "halt the restart, undrain the nodes out of rotation, … — and give it more nodes before its next
    rollout", on a fleet that could neither roll out nor add a node, while the alarm itself said "shed load
    with admission". The moves it had at the alarm, as the alarm names them: a rollout running to halt,
    nodes out of rotation to undrain."""
    from console.protocol import NodeState, RolloutState, RolloutStatus
    from tests.fleet_builders import node
    from tests.fleet_builders import series as frames

    fleet = [
        node("gw-000"),
        node("gw-001", state=NodeState.DRAINED),
        node("gw-002", state=NodeState.DRAINING),
    ]
    review = reviewed_frames(0, [])
    review.series = Series()
    running = RolloutStatus(state=RolloutState.RUNNING)
    for f in frames(0, 30, headroom_pct=20.0, fleet=fleet, rollout=running):
        review.series.add(f.model_copy(update={"max_nodes": 0}))
    found = add_capacity(review)
    assert found is not None and found.prescription == NO_ROOM_PRESCRIPTION.format(
        moves="halt the rollout, undrain the 2 nodes out of rotation, shed load with admission"
    )


def test_headroom_advice_without_room_counts_the_moves_that_fleet_had_after_the_alarm() -> None:
    moves = [act("admission", 5.0), act("undrain", 25.0), act("rollout_halt", 15.0), act("undrain", 40.0)]
    found = add_capacity(reviewed_frames(0, moves))
    assert found is not None and found.done is True
    # the first of each after the alarm at 0:10, in time order; the admission before it is not counted
    assert found.what_was_done == "rollout halted at 0:15; undrain at 0:25"


def test_the_fleets_room_is_read_when_the_alarm_fired() -> None:
    """Frames from before the alarm say the room then; a fleet that had room at the alarm was advised to add."""

    def room_from_11_s(time_s: float) -> int:
        return 16 if time_s >= 11 else 0

    found = add_capacity(reviewed_frames(room_from_11_s, [], alarm_s=10.0))
    assert found is not None and found.title == "Headroom below 35 %: do not restart"
    found = add_capacity(reviewed_frames(room_from_11_s, [], alarm_s=11.0))
    assert found is not None and found.title == CAN_ADD_TITLE
    # an alarm between two frames reads the frame before it
    found = add_capacity(reviewed_frames(room_from_11_s, [], alarm_s=10.5))
    assert found is not None and found.title == "Headroom below 35 %: do not restart"


def test_a_connections_drop_before_the_first_disconnect_recorded_is_never_a_negative_time_after_it() -> None:
    """Reviewer: "fired at 0:41, -29 s after the first mass disconnect at 1:10" — a recording begun during
    the incident, the alarm raised on the fall it caught. The order is said as it was."""
    found = connections_alarm(with_disconnects(reviewed("connections_drop", 41.0, False, []), [70.0]))
    assert found is not None
    assert found.evidence == (
        "connections_drop (−5 % in 60 s) fired at 0:41, 29 s before the first mass disconnect in the "
        "recording (1:10): connections were already falling"
    )
    after = connections_alarm(with_disconnects(reviewed("connections_drop", 71.0, False, []), [70.0]))
    assert after is not None and after.evidence.endswith(", 1 s after the first mass disconnect at 1:10")


def with_disconnects(review: Review, times_s: list[float]) -> Review:
    review.disconnect_times_s = times_s
    return review


# --- a move made before the alarm: done before it, when the frames show it still in force ----------------


def admitted_until(limit_until_s: float, actions: list[ActionRecord], alarm: str, alarm_s: float) -> Review:
    """Frames 0–59 s with an admission limit in force from 10 s until `limit_until_s`, `alarm` at `alarm_s`."""
    from console.protocol import AdmissionSettings
    from tests.fleet_builders import series as frames

    review = reviewed(alarm, alarm_s, rollout_running=False, actions=actions)
    review.series = Series()
    limited = AdmissionSettings(rate_per_s=250, burst=250, max_connections=None, retry_after_s=(1, 10))
    for f in frames(0, 60, admission=lambda t: limited if 10 <= t < limit_until_s else None):
        review.series.add(f)
    return review


@pytest.mark.parametrize("alarm", ["drain_inflow_kill_switch", "connections_drop"])
def test_an_admission_limit_set_before_the_alarm_and_in_force_is_done_before_it(alarm: str) -> None:
    from console.record.advice import losing_ground

    rule = losing_ground if alarm.startswith("drain_inflow") else connections_alarm
    found = rule(admitted_until(60.0, [act("admission", 10.0)], alarm, 31.0))
    assert found is not None and found.done is True and found.done_before_s == 10.0
    assert found.what_was_done == "the admission limit set then was still in force when it fired"
    # lifted before the alarm: nothing was in force when it fired
    lifted = rule(admitted_until(20.0, [act("admission", 10.0), act("admission", 20.0)], alarm, 31.0))
    assert lifted is not None and lifted.done is False and lifted.done_before_s is None


def test_an_admission_limit_set_on_some_nodes_before_the_alarm_counts_as_in_force() -> None:
    """A limit set with `nodes` shows as the frames' per-node admission (`admission_overrides`), the fleet's
    own staying unlimited: it is in force all the same."""
    from console.protocol import AdmissionSettings
    from tests.fleet_builders import series as frames

    review = reviewed("connections_drop", 31.0, rollout_running=False, actions=[act("admission", 10.0)])
    review.series = Series()
    on_two = AdmissionSettings(
        rate_per_s=250, max_connections=None, retry_after_s=(1, 10), nodes=["gw-000", "gw-001"]
    )
    for f in frames(0, 60, admission=AdmissionSettings.unlimited()):
        review.series.add(f.model_copy(update={"admission_overrides": [on_two] if f.time_s >= 10 else None}))
    found = connections_alarm(review)
    assert found is not None and found.done is True and found.done_before_s == 10.0
    assert found.what_was_done == "the admission limit set then was still in force when it fired"


def test_a_halt_before_the_abort_criterion_is_done_before_it_not_a_negative_time_after() -> None:
    """It read "rollout halted at 0:50, -10 s after the criterion"."""
    halted = abort_criterion(reviewed("cpu_abort", 60.0, True, [act("rollout_halt", 50.0)]))
    assert halted is not None and halted.done is True and halted.done_before_s == 50.0
    assert halted.what_was_done == "rollout halted 10 s before the criterion fired"


def test_headroom_advice_without_room_counts_an_admission_limit_in_force_at_the_alarm() -> None:
    review = admitted_until(60.0, [act("admission", 10.0)], "headroom_low", 31.0)
    for i in range(len(review.series.max_nodes)):
        review.series.max_nodes[i] = 0
    found = add_capacity(review)
    assert found is not None and found.done is True and found.done_before_s == 10.0
    assert found.what_was_done == "the admission limit set then was still in force when it fired"


@pytest.mark.parametrize(("index", "said"), [(None, "lockstep index not measured; "), (1.2, None)])
def test_lockstep_advice_over_a_storm_window_not_measured_rests_on_the_alarm(
    index: float | None, said: str | None
) -> None:
    """The storm window's index is None when too short or too quiet to judge (it was 0.0): the finding
    then rests on lockstep_waves alone, and says the index was not measured (not "0.0 over the storm")."""
    import dataclasses

    from console.record.advice import decorrelated_jitter

    figures = quiet_figures()
    assert figures.lockstep_index is None and figures.lockstep_note is not None
    review = reviewed("lockstep_waves", 1.0, False, [])
    review = dataclasses.replace(review, figures=dataclasses.replace(figures, lockstep_index=index))
    finding = decorrelated_jitter(review)
    if said is None:
        assert finding is not None and finding.evidence.startswith("lockstep index 1.2 over the storm")
    else:
        assert finding is not None and finding.evidence.startswith(said), finding.evidence
    quiet = dataclasses.replace(review, alarms=[])
    assert decorrelated_jitter(quiet) is None  # no alarm, nothing measured: no finding


# --- a move made after it mattered: not done in time, and said so ----------------------------------------
# Reviewer, on a recording of the demo: drain_inflow_kill_switch cleared at 0:25 and the storm was back at
# 0:35, yet "Drain ÷ inflow below 1" and the admission finding read "done — admission tightened at 1:15".


def spells(review: Review, name: str, *spans: tuple[float, float | None]) -> Review:
    """`review` with alarm `name` held over each (raised, cleared) span (cleared None: to the end)."""
    review.alarms = [AlarmSpan(name, "critical", since, cleared, "…") for since, cleared in spans]
    return review


def storm_back_at(review: Review, from_s: float, back_s: float | None, rejects: int = 1_000) -> Review:
    """`review` with key figures whose storm began at `from_s` and was back to ≥ 95 % for good at `back_s`
    (None: not recovered by the end)."""
    import dataclasses

    review.figures = dataclasses.replace(
        quiet_figures(),
        recovery_from_s=from_s,
        recovery_s=None if back_s is None else back_s - from_s,
        rejects_total=rejects,
    )
    return review


def quiet_figures() -> KeyFigures:
    """Two quiet frames' key figures: nothing measured (the lockstep index too quiet to judge)."""
    from console.record.review import key_figures

    series = Series(times_s=[1.0, 2.0], connections=[100, 100], max_cpu_pct=[10.0, 10.0])
    series.hottest_node = ["gw-000", "gw-000"]
    series.attempts_per_s = [0.0, 0.0]
    series.bins = [0] * 20
    for name in series.running:
        series.running[name] = [None, None]
    series.rejects_per_s = series.timeouts_per_s = [0.0, 0.0]
    series.span_s = [1.0, 1.0]
    series.epochs = ["e", "e"]
    figures = key_figures(series, [])
    assert figures is not None
    return figures


def admission(at_s: float, retry_after_s: tuple[int, int] = (2, 30)) -> ActionRecord:
    return ActionRecord(
        time_s=at_s,
        actor="trainee",
        action="admission",
        request={"rate_per_s": 400, "retry_after_s": list(retry_after_s)},
        outcome="applied",
        status=200,
    )


def test_shedding_load_after_the_drain_inflow_alarm_cleared_is_not_done_in_time() -> None:
    from console.record.advice import losing_ground

    late = spells(reviewed("x", 0.0, False, [admission(75.0)]), "drain_inflow_kill_switch", (11.0, 25.0))
    found = losing_ground(late)
    assert found is not None and found.done is False and found.done_late_s == 75.0
    assert found.what_was_done == "admission tightened at 1:15, 50 s after the alarm had cleared"
    # the alarm held again from 1:11: the same move at 1:15 came while it held
    again = spells(
        reviewed("x", 0.0, False, [admission(75.0)]), "drain_inflow_kill_switch", (11.0, 25.0), (71.0, 85.0)
    )
    found = losing_ground(again)
    assert found is not None and found.done is True and found.done_late_s is None
    assert found.what_was_done == "admission tightened at 1:15"
    # while the losing alarm still held, though the kill switch had cleared: in time
    losing = spells(reviewed("x", 0.0, False, [admission(75.0)]), "drain_inflow_kill_switch", (11.0, 25.0))
    losing.alarms.append(AlarmSpan("drain_inflow_losing", "warning", 11.0, 90.0, "…"))
    found = losing_ground(losing)
    assert found is not None and found.done is True
    # the alarm had cleared, the storm not yet recovered (back at 1:20): it still mattered
    under_way = spells(reviewed("x", 0.0, False, [admission(75.0)]), "drain_inflow_kill_switch", (11.0, 25.0))
    found = losing_ground(storm_back_at(under_way, 10.0, 80.0))
    assert found is not None and found.done is True
    # after both: how long after the later of them
    after_both = spells(
        reviewed("x", 0.0, False, [admission(75.0)]), "drain_inflow_kill_switch", (11.0, 25.0)
    )
    found = losing_ground(storm_back_at(after_both, 10.0, 35.0))
    assert found is not None and found.done is False
    assert found.what_was_done == "admission tightened at 1:15, 40 s after the storm had recovered"


def test_admission_set_after_the_storm_recovered_is_not_done_in_time() -> None:
    from console.record.advice import retry_after

    late = storm_back_at(reviewed("x", 0.0, False, [admission(75.0)]), 10.0, 35.0)
    late.alarms = []
    late.series.admission_limited = [t >= 75.0 for t in late.series.times_s]  # in force from 1:15 only
    found = retry_after(late)
    assert found is not None and found.done is False and found.done_late_s == 75.0
    assert found.what_was_done == (
        "admission set at 1:15 with a randomized Retry-After window, 40 s after the storm had recovered"
    )
    in_time = storm_back_at(reviewed("x", 0.0, False, [admission(20.0)]), 10.0, 35.0)
    in_time.alarms = []
    found = retry_after(in_time)
    assert found is not None and found.done is True and found.done_late_s is None
    assert found.what_was_done == "admission set at 0:20 with a randomized Retry-After window"
    # not recovered by the end: whenever it came, it came in the storm
    never_back = storm_back_at(reviewed("x", 0.0, False, [admission(75.0)]), 10.0, None)
    never_back.alarms = []
    found = retry_after(never_back)
    assert found is not None and found.done is True


def test_a_connections_drop_mattered_until_connections_were_back_or_the_alarm_cleared_whichever_later() -> (
    None
):
    review = spells(reviewed("x", 0.0, False, [act("drain", 130.0)]), "connections_drop", (11.0, 48.0))
    found = connections_alarm(storm_back_at(review, 10.0, 44.0))
    assert found is not None and found.done is False and found.done_late_s == 130.0
    assert found.what_was_done == "first action drain at 2:10, 82 s after the alarm had cleared"
    # back at 0:44, the alarm held to 0:48: an action at 0:46 came while it held
    review = spells(reviewed("x", 0.0, False, [act("drain", 46.0)]), "connections_drop", (11.0, 48.0))
    found = connections_alarm(storm_back_at(review, 10.0, 44.0))
    assert found is not None and found.done is True
    # the alarm cleared at 0:48 with connections still low until 1:40: an action at 1:30 still mattered
    review = spells(reviewed("x", 0.0, False, [act("drain", 90.0)]), "connections_drop", (11.0, 48.0))
    found = connections_alarm(storm_back_at(review, 10.0, 100.0))
    assert found is not None and found.done is True


def test_a_halt_after_the_abort_criterion_cleared_is_not_done_in_time() -> None:
    review = spells(reviewed("x", 0.0, True, [act("rollout_halt", 150.0)]), "cpu_abort", (60.0, 100.0))
    found = abort_criterion(review)
    assert found is not None and found.done is False and found.done_late_s == 150.0
    assert found.what_was_done == "rollout halted at 2:30, 50 s after the criterion had cleared"


def test_capacity_added_after_headroom_came_back_is_not_done_in_time() -> None:
    review = reviewed_frames(None, [act("add_capacity", 25.0)])
    found = add_capacity(spells(review, "headroom_low", (10.0, 20.0)))
    assert found is not None and found.done is False and found.done_late_s == 25.0
    assert found.what_was_done == "capacity added at 0:25, 5 s after the alarm had cleared"
    no_room = reviewed_frames(0, [act("undrain", 25.0)])
    found = add_capacity(spells(no_room, "headroom_low", (10.0, 20.0)))
    assert found is not None and found.done is False and found.done_late_s == 25.0
    assert found.what_was_done == "undrain at 0:25, 5 s after the alarm had cleared"


def test_the_report_says_a_move_after_it_mattered_was_not_in_time_without_calling_it_missed() -> None:
    from console.record.advice import losing_ground
    from console.record.report.markdown import seeds_section

    late = spells(reviewed("x", 0.0, False, [admission(75.0)]), "drain_inflow_kill_switch", (11.0, 25.0))
    found = losing_ground(late)
    assert found is not None
    said = [line for line in seeds_section([found]) if "In this session" in line]
    assert said == [
        "- **In this session:** not in time — admission tightened at 1:15, 50 s after the alarm had cleared."
    ]


# --- the storm's fix is judged against the storm's recovery ----------------------------------------------
# Reviewer, on thundering-herd's seeds' fix: "not in time — admission tightened at 04:03:25, 70 s after the
# alarm had cleared": a drain ÷ inflow alarm of 14 s after the second batch, while the hot nodes stayed over
# the abort line until 04:17:45 and connections never fell below 95 % (no recovery to measure by them).


def herd(*moves: ActionRecord) -> Review:
    """thundering-herd's seeds' fix as its recording reviews: batches at 0:30 and 2:00, drain ÷ inflow's
    kill switch 14 s after each, cpu_abort from 2:41 until 17:45; connections never below 95 %."""
    review = spells(
        reviewed("x", 0.0, True, list(moves)), "drain_inflow_kill_switch", (31.0, 45.0), (121.0, 135.0)
    )
    review.alarms.append(AlarmSpan("cpu_abort", "critical", 161.0, 1065.0, "…"))
    return storm_back_at(review, 30.0, 30.0)


def test_the_storms_fix_mattered_until_the_storm_was_over_not_until_a_short_alarm_cleared() -> None:
    from console.record.advice import losing_ground

    found = losing_ground(herd(admission(205.0)))
    assert found is not None and found.done is True and found.done_late_s is None
    assert found.what_was_done == "admission tightened at 3:25"
    # once the storm was over — its last alarm cleared, connections back — the same move came late
    found = losing_ground(herd(admission(1100.0)))
    assert found is not None and found.done is False and found.done_late_s == 1100.0
    assert found.what_was_done == "admission tightened at 18:20, 35 s after the storm had recovered"


def test_the_storm_is_on_while_any_of_its_alarms_holds_or_connections_are_not_back() -> None:
    from console.record.in_time import until_storm_over

    assert until_storm_over(herd()).spells == (Spell(30.0, 1065.0, "the storm had recovered"),)
    # connections back later than its alarms cleared: back then
    later = storm_back_at(herd(), 30.0, 1200.0)
    assert until_storm_over(later).spells == (Spell(30.0, 1200.0, "the storm had recovered"),)
    # an alarm of it still holding at the end: not over
    held = herd()
    held.alarms.append(AlarmSpan("reconnect_rate_high", "critical", 200.0, None, "…"))
    assert until_storm_over(held).spells == (Spell(30.0, None, "the storm had recovered"),)
    # headroom under its budget is no storm (the fleet may start under it), nor is an alarm over before it
    calm = storm_back_at(reviewed("x", 0.0, False, []), 30.0, 30.0)
    calm.alarms = [
        AlarmSpan("headroom_low", "critical", 1.0, None, "…"),
        AlarmSpan("cpu_abort", "critical", 1.0, 20.0, "…"),
    ]
    assert until_storm_over(calm).spells == ()


def test_a_connections_drop_keeps_its_own_window_connections_and_its_alarm() -> None:
    # Not the storm's fix: any first action after the alarm, while it held or connections were still down.
    review = spells(reviewed("x", 0.0, False, [act("drain", 205.0)]), "connections_drop", (31.0, 90.0))
    review.alarms.append(AlarmSpan("cpu_abort", "critical", 161.0, 1065.0, "…"))
    found = connections_alarm(storm_back_at(review, 30.0, 30.0))
    assert found is not None and found.done is False and found.done_late_s == 205.0


# --- no advice for a move the recording's own numbers show unneeded ------------------------------------------
# Reviewer, on regional-outage: headroom_low held 14 s while the region's gateways were down (0 in rotation),
# cleared when they came back, and with every client back headroom stayed over the budget on the region's
# own nodes — yet the report said "add capacity … not done — no capacity action recorded".


def outage(headroom: Callable[[float], float], *moves: ActionRecord) -> Review:
    """A region down from 0:10 to 0:20 (headroom 0 with no node in rotation, headroom_low held then),
    connections back for good at 1:00, `headroom` after that."""
    from tests.fleet_builders import series as frames

    review = spells(reviewed("x", 0.0, False, list(moves)), "headroom_low", (11.0, 21.0))
    review.series = Series()
    for f in frames(0, 120, headroom_pct=lambda t: 0.0 if 10 <= t < 21 else headroom(t)):
        review.series.add(f.model_copy(update={"max_nodes": 40}))
    return storm_back_at(review, 10.0, 60.0)


def test_capacity_the_fleet_never_needed_is_not_asked_for() -> None:
    found = add_capacity(outage(lambda t: 99.0 if t < 60 else 37.7))
    assert found is not None and found.title == CAN_ADD_TITLE
    assert found.needed is False and found.done is None
    assert found.what_was_done == (
        "headroom_low held only 0:11–0:21; with every client back (1:00) headroom stayed at or over the "
        "budget on the fleet's own nodes (lowest 37.7 %), no node added"
    )
    from console.record.report.markdown import seeds_section

    said = [line for line in seeds_section([found]) if "In this session" in line]
    assert said == [f"- **In this session:** not needed — {found.what_was_done}."]


def test_capacity_is_asked_for_where_headroom_was_short_with_the_clients_back_or_they_never_came_back() -> (
    None
):
    short = outage(lambda t: 99.0 if t < 60 else 30.0)
    short.alarms.append(AlarmSpan("headroom_low", "critical", 61.0, None, "…"))
    found = add_capacity(short)
    assert found is not None and found.needed is True and found.done is False
    assert found.what_was_done == "no capacity action recorded"
    never_back = storm_back_at(outage(lambda t: 99.0), 10.0, None)
    found = add_capacity(never_back)
    assert found is not None and found.needed is True and found.done is False
    added = add_capacity(outage(lambda t: 99.0 if t < 60 else 37.7, act("add_capacity", 15.0)))
    assert added is not None and added.needed is True and added.done is True
