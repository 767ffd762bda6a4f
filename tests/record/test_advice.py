"""The seeds' findings over a reviewed recording, directly: when each applies and what it says was done."""

from __future__ import annotations

import numpy as np

from console.protocol import Event
from console.record.advice import abort_criterion, connections_alarm, drain_not_disconnect
from console.record.records import ActionRecord
from console.record.review import AlarmSpan, Review, Series, peak_per_second
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
    from console.record.report import clock

    found = losing_ground(reviewed("drain_inflow_losing", 35_641.0, False, []))
    assert found is not None and found.evidence == f"drain÷inflow alarm fired at {clock(35_641.0)}"
    assert clock(35_641.0) == "9:54:01"
