"""The alarm engine's life cycle: raise, update, acknowledge, clear after a quiet spell, new histories."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.alarms import AlarmEngine, FleetCapacity, Thresholds, alarms_fired
from console.errors import InputError
from console.protocol import AdmissionSettings, NodeState, RolloutState, RolloutStatus
from tests.fleet_builders import frame, node, nodes, series


def low_headroom(t: float) -> float:
    return 20.0 if 10 <= t < 20 else 50.0


def test_raised_then_cleared_after_five_quiet_seconds() -> None:
    engine = AlarmEngine()
    changes = [
        (e.time_s, e.data["name"], e.data["change"])
        for f in series(0, 40, headroom_pct=low_headroom)
        for e in engine.update(f)
    ]
    assert changes == [(10, "headroom_low", "raised"), (24, "headroom_low", "cleared")]
    (past,) = engine.history
    assert (past.active, past.since_s, past.cleared_s) == (False, 10, 24)
    assert engine.active == []


def test_a_flapping_condition_stays_one_alarm() -> None:
    engine = AlarmEngine()
    raised = [
        e
        for f in series(0, 30, headroom_pct=lambda t: 20.0 if int(t) % 3 else 50.0)
        for e in engine.update(f)
        if e.data["change"] == "raised"
    ]
    assert len(raised) == 1


def test_value_and_message_follow_the_latest_frame() -> None:
    engine = AlarmEngine()
    for f in series(0, 3, headroom_pct=lambda t: 30.0 - t):
        engine.update(f)
    (alarm,) = engine.active
    assert alarm.value == 28.0 and "28 %" in alarm.message and alarm.since_s == 0


def test_acknowledge_marks_without_clearing_and_unknown_names_are_input_errors() -> None:
    engine = AlarmEngine()
    engine.update(frame(0, headroom_pct=10.0))
    engine.acknowledge("headroom_low")
    assert engine.active[0].acknowledged and engine.active[0].active
    with pytest.raises(InputError, match="headroom_low"):
        engine.acknowledge("cpu_abort", node="gw-001")


def test_active_lists_critical_first() -> None:
    paused = RolloutStatus(state=RolloutState.PAUSED, batch=1, batches=4)  # a warning, raised first
    engine = AlarmEngine()
    engine.update(frame(0, rollout=paused))
    engine.update(frame(1, drain_inflow_ratio=0.3, rollout=paused))
    assert [a.name for a in engine.active] == ["drain_inflow_kill_switch", "rollout_paused"]


def test_a_new_epoch_whose_clock_starts_over_clears_everything() -> None:
    engine = AlarmEngine()
    engine.update(frame(100, headroom_pct=10.0))
    changes = engine.update(frame(0, epoch="e2", headroom_pct=50.0))
    assert [(c.data["name"], c.data["change"]) for c in changes] == [("headroom_low", "cleared")]
    assert engine.active == [] and len(engine.history) == 1


def test_a_new_epoch_whose_clock_goes_on_keeps_its_alarms() -> None:
    """A restarted controller serves the same fleet under a new stream epoch, its fleet clock going on (the
    fleet did not restart): the new epoch cleared every active alarm, and a rule that holds before raising
    (cpu_abort: 30 s) raised it again half a minute later. One alarm, from its first second, throughout."""
    engine = AlarmEngine()
    hot = nodes(4, cpu_pct=90.0)
    changes = [e for f in series(0, 40, fleet=hot) for e in engine.update(f)]
    raised = [(e.data["name"], e.time_s) for e in changes if e.data["change"] == "raised"]
    assert ("cpu_abort", 30) in [(name, round(t)) for name, t in raised]
    before = [(a.name, a.node, a.since_s) for a in engine.active]
    # The controller down for 12 s, then its frames again: a new epoch, the same clock.
    after = [e for t in range(52, 90) for e in engine.update(frame(t, fleet=hot, epoch="e2"))]
    assert after == [] and engine.history == []
    assert [(a.name, a.node, a.since_s) for a in engine.active] == before


def test_time_running_backwards_is_a_new_history() -> None:
    engine = AlarmEngine()
    for f in series(0, 40, connections=lambda t: 100_000 if t < 30 else 90_000):
        engine.update(f)
    assert [a.name for a in engine.active] == ["connections_drop"]
    engine.update(frame(5, connections=90_000))  # same epoch, earlier time: the drop's peak is forgotten
    assert engine.active == []


def test_alarm_events_carry_what_the_stream_needs() -> None:
    (event,) = AlarmEngine().update(frame(7, headroom_pct=10.0))
    assert event.kind == "alarm" and event.time_s == 7
    assert event.data == {
        "name": "headroom_low",
        "change": "raised",
        "severity": "critical",
        "value": 10.0,
        "limit": 35.0,
        "since_s": 7,
        "nodes": None,
        "message": "Headroom 10 % is under the 35 % budget: no restart is safe; add capacity instead.",
    }
    assert event.message == f"headroom_low raised: {event.data['message']}"


def test_alarms_fired_reports_the_first_time_only() -> None:
    frames = series(0, 60, headroom_pct=lambda t: 20.0 if t in (3, 4, 40) else 50.0)
    assert alarms_fired(frames) == {"headroom_low": 3}


def test_every_threshold_is_overridable() -> None:
    frames = series(0, 3, headroom_pct=30.0)
    assert alarms_fired(frames, Thresholds().replace(headroom_min_pct=25.0)) == {}


# --- arbitrary valid frames never crash the engine ---------------------------------------------------

finite = st.floats(min_value=0, max_value=1e9, allow_nan=False)
pct = st.floats(min_value=0, max_value=100, allow_nan=False)

node_strategy = st.builds(
    node,
    node_id=st.sampled_from([f"gw-{i}" for i in range(6)]),
    state=st.sampled_from(list(NodeState)),
    cpu_pct=pct,
    connections=st.integers(0, 10**6),
    drain_rate_per_s=st.none() | st.floats(min_value=0.001, max_value=1e6),
)

frame_fields = st.fixed_dictionaries(
    {
        "fleet": st.lists(node_strategy, max_size=6),
        "epoch": st.sampled_from(["e1", "e2"]),
        "attempts": st.lists(st.integers(0, 10**7), max_size=30),
        "rollout": st.none() | st.builds(RolloutStatus, state=st.sampled_from(list(RolloutState))),
        "admission": st.none()
        | st.builds(
            AdmissionSettings,
            rate_per_s=st.none() | st.floats(min_value=0.1, max_value=1e6),
            max_connections=st.none() | st.integers(1, 10**6),
            retry_after_s=st.just((1.0, 30.0)),
            nodes=st.none() | st.lists(st.sampled_from([f"gw-{i}" for i in range(6)]), max_size=3),
        ),
        "connections": st.integers(0, 10**8),
        "attempts_per_s": finite,
        "accepts_per_s": finite,
        "headroom_pct": pct,
        "drain_inflow_ratio": st.none() | st.floats(min_value=0, max_value=100),
        "full_resyncs_per_s": finite,
        "abnormal_closes_per_s": finite,
    }
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(st.tuples(st.floats(min_value=-5, max_value=120), frame_fields), min_size=1, max_size=25),
    thresholds=st.builds(Thresholds, clear_after_s=st.floats(0, 10), rate_alarm_for_s=st.floats(0, 10)),
    capacity=st.none()
    | st.builds(
        FleetCapacity,
        handshakes_per_s=st.floats(1, 1e5),
        cpu_pct_per_handshake_per_s=st.floats(1e-4, 1),
        connections_per_node=st.integers(1, 10**6),
    ),
)
def test_arbitrary_frames_never_crash(steps, thresholds, capacity) -> None:
    engine = AlarmEngine(thresholds, capacity)
    time_s = 0.0
    for step_s, fields in steps:
        time_s += step_s
        for change in engine.update(frame(time_s, **fields)):
            assert change.data["change"] in ("raised", "cleared")
    for alarm in engine.active:
        assert alarm.active and alarm.cleared_s is None
    for alarm in engine.history:
        assert not alarm.active and alarm.cleared_s is not None
    keys = [(a.name, a.node) for a in engine.active]
    assert len(keys) == len(set(keys))


# --- cost: the console calls update once per frame with 2000 nodes -----------------------------------


def test_update_with_two_thousand_nodes_is_cheap() -> None:
    engine = AlarmEngine()
    fleet = nodes(2000, cpu_pct=85.0)  # every node over the abort line: the per-node path at its worst
    frames = [frame(t, fleet=fleet, attempts=[100] * 10) for t in range(60)]
    started = time.perf_counter()
    for f in frames:
        engine.update(f)
    per_update_ms = (time.perf_counter() - started) / len(frames) * 1000
    (alarm,) = engine.active
    assert alarm.name == "cpu_abort" and len(alarm.nodes) == 2000
    # Target is well under 5 ms (see docs/alarms.md for measured figures); the bound leaves room for a
    # loaded 2-core CI machine.
    assert per_update_ms < 25


def test_an_alarm_whose_condition_ended_says_it_is_clearing() -> None:
    """User pass: drain÷inflow back at 46.87 on the gauge while the panel still listed the kill switch at
    0.322 as if it held. An alarm waits `clear_after_s` after its condition ends (no flapping); meanwhile it
    says since when the condition no longer holds, and holding again takes that back."""
    from tests.fleet_builders import series

    engine = AlarmEngine()
    ratios = {3: 0.322, 4: 46.87, 5: 46.87, 6: 0.4, 7: 46.87}
    seen = []
    for f in series(0, 10, drain_inflow_ratio=lambda t: ratios.get(t, 1.0)):
        engine.update(f)
        seen.append([(a.name, a.value, a.clearing_since_s) for a in engine.active])
    kill = "drain_inflow_kill_switch"
    assert seen[3] == [(kill, 0.322, None)]
    assert seen[4] == seen[5] == [(kill, 0.322, 4.0)]
    assert seen[6] == [(kill, 0.4, None)]
    assert seen[7] == seen[9] == [(kill, 0.4, 7.0)]


def conns_dip(t: float) -> float:
    """A fleet of 3,000 that falls to 1,695 (43.5 % under its peak) by 0:00:18, then climbs back."""
    if t < 10:
        return 3000.0
    if t <= 18:
        return 3000.0 - (t - 9) * 145.0  # 2,855 … 1,695
    return min(3000.0, 1695.0 + (t - 18) * 400.0)  # back over 95 % of the peak by 0:00:21


def test_a_cleared_alarm_keeps_its_worst_reading_not_its_last() -> None:
    """Review: the panel showed "connections_drop 43.8 > 5 %", and once it cleared "was 6.43 > 5 %" and
    "fell 6.4 %" — an operator reviewing afterwards was told a 44 % drop was 6 %. The engine keeps the
    reading furthest past the limit while the alarm held, with its time and its words; the cleared event
    carries them."""
    engine = AlarmEngine()
    changes = [e for f in series(0, 40, connections=conns_dip) for e in engine.update(f)]
    (past,) = [a for a in engine.history if a.name == "connections_drop"]
    assert past.value == pytest.approx(16.8, abs=0.1)  # its last reading, climbing back
    assert past.worst_value == pytest.approx(43.5, abs=0.1) and past.worst_s == 18
    assert past.worst_message is not None and "fell 43.5 %" in past.worst_message
    (cleared,) = [
        e for e in changes if e.data["change"] == "cleared" and e.data["name"] == "connections_drop"
    ]
    assert cleared.data["worst_value"] == past.worst_value and cleared.data["worst_s"] == 18
    assert "fell 43.5 %" in cleared.message  # the event's words are of its worst, not its last


def test_a_below_rule_keeps_its_lowest_reading() -> None:
    """ "Below" rules (headroom, drain÷inflow) are worst at their lowest, "over" rules at their highest."""
    dip = {10: 30.0, 11: 12.0, 12: 25.0, 13: 33.0}
    engine = AlarmEngine()
    for f in series(0, 30, headroom_pct=lambda t: dip.get(int(t), 50.0)):
        engine.update(f)
    (past,) = engine.history
    assert (past.value, past.worst_value, past.worst_s) == (33.0, 12.0, 11)
    assert past.worst_message is not None and "12 %" in past.worst_message
