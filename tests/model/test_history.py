"""The fleet model: gaps, resume, baseline, deltas, capacity, waves — from stream items alone."""

from __future__ import annotations

import json

import numpy as np

from console.client.decode import StreamDecoder
from console.client.synthetic import SyntheticFleet
from console.model import FleetModel, LinkState, LinkStatus, Malformed, Received
from console.protocol import Event, Frame, Hello


def frames(n: int, **kwargs) -> list[Frame]:
    fleet = SyntheticFleet(nodes=8, **kwargs)
    decoder = StreamDecoder()
    return [decoder.feed(json.dumps(fleet.next_frame())) for _ in range(n)]


def hello(epoch: str = "e1", recovered: bool | None = None) -> Hello:
    return Hello(fleet="f", source="simulator", epoch=epoch, seq=0, recovered=recovered)


def test_frames_fill_history_and_nodes():
    model = FleetModel()
    model.apply(Received(hello(), 0.0))
    for i, frame in enumerate(frames(5)):
        model.apply(Received(frame, float(i)))
    assert model.frames_applied == 5
    assert model.last_seq == 5
    assert len(model.nodes) == 8
    assert model.node_history("gw-0000", "connections").size == 5
    assert model.gaps == 0
    assert model.staleness_s(4.5) == 0.5


def test_a_skipped_seq_marks_a_gap_and_a_replayed_one_is_ignored():
    model = FleetModel()
    batch = frames(6)
    for frame in (batch[0], batch[1], batch[4], batch[4], batch[5]):
        model.apply(Received(frame, 0.0))
    assert model.gaps == 1
    assert model.frames_applied == 4
    assert np.isnan(model.totals.connections.values()).sum() == 1  # the chart breaks at the gap


def test_hello_not_recovered_marks_a_gap_recovered_does_not():
    model = FleetModel()
    model.apply(Received(hello(), 0.0))
    batch = frames(3)
    model.apply(Received(batch[0], 0.0))
    model.apply(Received(hello(recovered=True), 1.0))
    model.apply(Received(batch[1], 1.0))
    assert model.gaps == 0
    model.apply(Received(hello(epoch="e2", recovered=False), 2.0))
    assert model.gaps == 1
    assert model.last_seq is None  # a new epoch's seqs start over


def test_link_and_malformed_items_are_recorded():
    model = FleetModel()
    model.apply(LinkStatus(LinkState.RECONNECTING, attempt=3, next_in_s=2.0, at_s=10.0))
    assert model.link.describe(10.5) == "reconnecting (attempt 3, next in 1.5 s)"
    model.apply(Malformed("totals: missing", 11.0))
    assert model.malformed == 1 and model.malformed_reason == "totals: missing"


def test_baseline_follows_calm_frames_and_ignores_the_storm():
    model = FleetModel()
    assert model.baseline_attempts_per_s is None  # nothing seen yet
    for frame in frames(20, storm_at_s=None):
        model.apply(Received(frame, 0.0))
    assert model.baseline_attempts_per_s is None  # still learning (30 s, as the alarm engine does)
    model = FleetModel()
    for frame in frames(70, storm_at_s=40):  # the storm comes after the learning period
        model.apply(Received(frame, 0.0))
    calm = frames(39, storm_at_s=None)[-1].totals.attempts_per_s
    assert model.baseline_attempts_per_s is not None
    assert model.baseline_attempts_per_s < calm * 2  # the storm's 10–100× did not become the baseline


def test_connections_delta_over_60s_sees_the_drop():
    model = FleetModel()
    for frame in frames(45, storm_at_s=40):
        model.apply(Received(frame, 0.0))
    delta, pct, _ = model.connections_delta_60s()
    assert delta < 0 and pct < -5.0


def test_admission_capacity_counts_nodes_in_rotation():
    model = FleetModel()
    frame = frames(1)[0]
    model.apply(Received(frame, 0.0))
    ready = sum(1 for n in frame.nodes if n.state.value == "ready")
    assert model.admission_capacity_per_bin() == frame.admission.rate_per_s * ready * 0.1


def test_admission_capacity_adds_what_each_node_in_rotation_runs():
    """A per-node admission counts on its nodes; with any node in rotation unlimited there is no line a
    storm must stay under (its share goes to a node that admits it all)."""
    frame = frames(1)[0]
    assert frame.admission is not None and frame.admission.rate_per_s is not None
    ready = [n.id for n in frame.nodes if n.state.value == "ready"]
    slower = frame.admission.model_copy(
        update={"rate_per_s": frame.admission.rate_per_s / 2, "nodes": ready[:2]}
    )
    model = FleetModel()
    model.apply(Received(frame.model_copy(update={"admission_overrides": [slower]}), 0.0))
    per_s = frame.admission.rate_per_s * (len(ready) - 2) + slower.rate_per_s * 2
    assert model.admission_capacity_per_bin() == per_s * 0.1
    unlimited = slower.model_copy(update={"rate_per_s": None})
    lifted = FleetModel()
    lifted.apply(Received(frame.model_copy(update={"admission_overrides": [unlimited]}), 0.0))
    assert lifted.admission_capacity_per_bin() is None


def test_lockstep_is_computed_on_the_live_bins():
    model = FleetModel()
    for frame in frames(50, storm_at_s=30, lockstep=True):
        model.apply(Received(frame, 0.0))
    assert model.lockstep >= 4.0
    smooth = FleetModel()
    for frame in frames(50, storm_at_s=30, lockstep=False):
        smooth.apply(Received(frame, 0.0))
    assert smooth.lockstep < 4.0  # a smear; the storm's onset step alone reads about 2


def test_a_history_restarted_under_the_same_epoch_is_taken_after_three_old_frames():
    model = FleetModel()
    batch = frames(10)
    for frame in batch:
        model.apply(Received(frame, 0.0))
    for frame in batch[:3]:  # seqs 1, 2, 3 again, same epoch
        model.apply(Received(frame, 1.0))
    assert model.last_seq == 3 and model.gaps == 1
    model.apply(Received(batch[3], 2.0))
    assert model.last_seq == 4 and model.gaps == 1


def test_connections_delta_counts_only_the_current_history_after_a_restart():
    """A server restart starts its clock over: Δ60s compared the new fleet with the oldest sample of the
    old history (seen live: −8.9 % on a console reattached to a restarted demo, from the previous run)."""
    model = FleetModel()
    model.apply(Received(hello("e1"), 0.0))
    for i, frame in enumerate(frames(120, storm_at_s=None, load=0.5)):
        model.apply(Received(frame, float(i)))
    model.apply(Received(hello("e2", recovered=False), 121.0))
    restarted = frames(1, storm_at_s=None, load=0.3, epoch="e2")
    model.apply(Received(restarted[0], 121.0))
    assert model.connections_delta_60s() is None  # one frame of the new history: nothing to compare
    for i, frame in enumerate(frames(10, storm_at_s=None, load=0.3, epoch="e2")[1:]):
        model.apply(Received(frame, 122.0 + i))
    pct = model.connections_delta_60s().pct
    assert abs(pct) < 5.0  # a calm fleet, not −40 % against the old one


def test_a_nodes_events_include_those_sent_for_a_group_of_nodes():
    # The server sends a burst of alike node events as one naming the nodes; a rollout batch names its own.
    model = FleetModel()
    model.apply(Received(hello(), 0.0))
    own = Event(time_s=5.0, kind="node_state", node="gw-0001", message="gw-0001 drained")
    group = Event(
        time_s=6.0,
        kind="node_state",
        message="12 nodes restarted: ready → restarting",
        data={"nodes": [f"gw-{i:04d}" for i in range(12)]},
    )
    other = Event(time_s=7.0, kind="node_state", node="gw-0002", message="gw-0002 drained")
    for event in (own, group, other):
        model.apply(Received(event, event.time_s))
    assert model.node_events("gw-0001") == [group, own]
    assert model.node_events("gw-0011") == [group]
    assert model.node_events("gw-0012") == []


def test_the_wave_charts_lockstep_is_the_alarms_over_its_window():
    """Reviewer, demo 0:01:38: the wave chart's footer read LOCKSTEP 14.6 (60 s of bins) beside the alarm
    row's lockstep_waves 10.5 > 4 (its 30 s window): two figures for one thing. One index, one window — the
    alarm's (`lockstep_window_s`), as configured."""
    from console.guards import Thresholds
    from console.model.alarm_source import console_model
    from tests.fleet_builders import series

    def two_waves(t: float) -> list[int]:
        # A 3 000-attempt wave at 5 s, a 1 000 one at 40 s, 100 a bin else: at 60 s only the second is
        # within the alarm's 30 s.
        wave = {5: 3000, 40: 1000}.get(int(t), 100)
        return [wave if i == 0 else 100 for i in range(10)]

    for window_s in (30.0, 20.0):
        model = console_model(Thresholds().replace(lockstep_window_s=window_s, clear_after_s=0))
        for i, frame in enumerate(series(0, 61, attempts=two_waves)):
            model.apply(Received(frame, float(i)))
            alarm = next((e.alarm for e in model.alarms.active() if e.alarm.name == "lockstep_waves"), None)
            if alarm is not None and alarm.value is not None:
                assert model.lockstep == alarm.value, (frame.time_s, window_s)
        assert model.lockstep is not None and model.lockstep < 14  # the 5 s wave is out of the window
