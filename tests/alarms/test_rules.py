"""Each alarm rule, driven by hand-built frame sequences: fires past its limit, stays quiet under it."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from console.alarms import AlarmEngine, FleetCapacity, Thresholds, alarms_fired
from console.protocol import AdmissionSettings, RolloutState, RolloutStatus, UnavailableReason
from tests.alarms.judging import judged, with_room
from tests.fleet_builders import node, nodes, series


def first_fired(frames, **overrides) -> dict[str, float]:
    return alarms_fired(frames, Thresholds().replace(**overrides) if overrides else None)


# --- connections_drop: > 5 % in 60 s (outage seed) ------------------------------------------------


def test_connections_drop_fires_past_five_percent_in_a_minute() -> None:
    frames = series(0, 70, connections=lambda t: 100_000 if t < 40 else 94_000)
    assert first_fired(frames)["connections_drop"] == 40


def test_connections_drop_quiet_at_four_percent() -> None:
    frames = series(0, 70, connections=lambda t: 100_000 if t < 40 else 96_000)
    assert "connections_drop" not in first_fired(frames)


def test_slow_decline_spread_over_minutes_is_not_a_drop() -> None:
    # 1 % a minute for 10 minutes: 10 % in all but never 5 % within 60 s.
    frames = series(0, 600, connections=lambda t: int(100_000 * (1 - 0.01 * t / 60)))
    assert "connections_drop" not in first_fired(frames)


def test_connections_drop_window_is_configurable() -> None:
    frames = series(0, 400, connections=lambda t: int(100_000 * (1 - 0.01 * t / 60)))
    assert "connections_drop" in first_fired(frames, connections_drop_window_s=600)


# --- cpu_abort: any serving node > 80 % for 30 s ----------------------------------------------------


def hot_fleet(hot_from_s: float, cpu_pct: float = 85.0, hot_id: str = "gw-002"):
    return lambda t: [
        node(f"gw-{i:03d}", cpu_pct=cpu_pct if (f"gw-{i:03d}" == hot_id and t >= hot_from_s) else 40.0)
        for i in range(4)
    ]


def test_cpu_abort_fires_after_thirty_seconds_naming_the_node() -> None:
    engine = AlarmEngine()
    raised = []
    for f in series(0, 60, fleet=hot_fleet(10)):
        raised += [e.time_s for e in engine.update(f) if e.data["change"] == "raised"]
    assert raised == [40]
    (alarm,) = engine.active
    assert (alarm.name, alarm.nodes, alarm.value, alarm.limit) == ("cpu_abort", ["gw-002"], 85.0, 80.0)
    assert "gw-002 85 %" in alarm.message and "halt" in alarm.message


@pytest.mark.parametrize(
    ("state", "advice"),
    [
        (RolloutState.RUNNING, "halt the rollout and reassess"),
        (RolloutState.PAUSED, "halt the rollout and reassess"),
        (RolloutState.IDLE, "no rollout is running"),
        (RolloutState.COMPLETED, "no rollout is running"),
        (RolloutState.HALTED, "no rollout is running"),
    ],
)
def test_cpu_abort_tells_to_halt_a_rollout_only_while_one_runs(state: RolloutState, advice: str) -> None:
    """regional-outage (no rollout at all) read "…: halt the rollout and reassess." — the on-call's `h`
    then had nothing to halt. Without a rollout under way the advice is the load's, not the rollout's."""
    frames = series(0, 60, fleet=hot_fleet(10), rollout=RolloutStatus(state=state))
    message = active_messages(frames)["cpu_abort"]
    assert advice in message
    if state not in (RolloutState.RUNNING, RolloutState.PAUSED):
        assert "halt the rollout" not in message


def test_cpu_abort_is_one_alarm_for_many_nodes_hottest_first() -> None:
    def fleet(t: float):
        hot = [node(f"gw-{i:03d}", cpu_pct=81.0 + i) for i in range(6)]
        late = [node("gw-late", cpu_pct=99.0 if t >= 20 else 50.0)]  # hot, but not yet for 30 s
        return hot + late

    engine = AlarmEngine()
    for f in series(0, 35, fleet=fleet):
        engine.update(f)
    (alarm,) = engine.active
    assert alarm.nodes == ["gw-005", "gw-004", "gw-003", "gw-002", "gw-001", "gw-000"]
    assert alarm.value == 86.0
    assert "gw-005 86 %, gw-004 85 %, gw-003 84 % and 3 more" in alarm.message


def test_cpu_abort_needs_thirty_unbroken_seconds() -> None:
    # Hot for 29 s, one cool second, hot again for 29 s: never 30 in a row.
    def fleet(t: float):
        return [node("gw-000", cpu_pct=90.0 if int(t) % 30 != 29 else 50.0)]

    assert "cpu_abort" not in first_fired(series(0, 120, fleet=fleet))


def test_cpu_at_exactly_the_line_is_not_over_it() -> None:
    assert "cpu_abort" not in first_fired(series(0, 60, fleet=hot_fleet(0, cpu_pct=80.0)))


def test_a_restarting_node_is_not_a_survivor() -> None:
    fleet = [node("gw-000", state="restarting", cpu_pct=99.0), node("gw-001")]
    assert "cpu_abort" not in first_fired(series(0, 60, fleet=fleet))


# --- rollout_paused -----------------------------------------------------------------------------


def test_rollout_paused_fires_at_once_and_names_the_reason() -> None:
    def rollout(t: float) -> RolloutStatus:
        state = RolloutState.PAUSED if t >= 5 else RolloutState.RUNNING
        return RolloutStatus(state=state, batch=3, batches=16, pause_reason="gw-007 CPU 78 %")

    engine = AlarmEngine()
    for f in series(0, 6, rollout=rollout):
        engine.update(f)
    (alarm,) = engine.active
    assert alarm.name == "rollout_paused" and alarm.since_s == 5
    assert (alarm.value, alarm.limit) == (30.0, None)  # the hottest node now; no comparison (below)
    # (3 batches started of 16, paused: it pauses only between batches — `RolloutStatus.position`)
    assert "auto-paused before batch 4 of 16: gw-007 CPU 78 %" in alarm.message, alarm.message


def test_a_rollout_paused_before_its_first_batch_says_so_not_batch_0() -> None:
    """The message read "Rollout auto-paused at batch 0 of 3" before any batch had started: a batch
    numbered 0. It says where the rollout stands as the rollout panel does (`RolloutStatus.position`)."""
    paused = RolloutStatus(state=RolloutState.PAUSED, batch=0, batches=3, pause_reason="gw-007 CPU 78 %")
    engine = AlarmEngine()
    for f in series(0, 2, rollout=paused):
        engine.update(f)
    (alarm,) = engine.active
    assert "auto-paused before batch 1 of 3: " in alarm.message and "batch 0" not in alarm.message, (
        alarm.message
    )


def test_a_paused_rollouts_reading_never_argues_with_why_it_paused() -> None:
    """Review on a loopback fleet: the row read "12.2 < 15 %", then "7.5 < 10 %", then "10.6 > 10 %" while
    the rollout stayed paused on "c CPU 16 % > 10 %": the hottest CPU now, compared with the pause line,
    flipped its sign as the fleet cooled, and "<" read as the alarm's own condition gone. What holds is the
    pause; the CPU now is what the operator waits on, said with the line in words, not as a comparison."""
    from console.model.alarms import AlarmLog, alarm_rows

    def rollout(t: float) -> RolloutStatus:
        state = RolloutState.PAUSED if t >= 2 else RolloutState.RUNNING
        return RolloutStatus(
            state=state, batch=1, batches=3, pause_cpu_pct=10.0, pause_reason="c CPU 16 % > 10 %"
        )

    engine, log, shown = AlarmEngine(), AlarmLog(), []
    for f in series(0, 8, rollout=rollout, max_cpu_pct=lambda t: 16.0 - t):
        engine.update(f)
        log.update(engine.active, f.time_s)
        shown += [(row.value, row.message) for row in alarm_rows(log.active())]
    assert [value for value, _ in shown] == ["14 %", "13 %", "12 %", "11 %", "10 %", "9 %"]
    assert "Hottest node now 9 % CPU" in shown[-1][1] and "pause line (10 %)" in shown[-1][1], shown[-1]


# --- headroom_low ---------------------------------------------------------------------------------


def test_headroom_under_budget_fires_and_at_budget_does_not() -> None:
    assert first_fired(series(0, 3, headroom_pct=34.9)) == {"headroom_low": 0}
    assert first_fired(series(0, 3, headroom_pct=35.0)) == {}


# --- drain ÷ inflow (sync-engine essay) -----------------------------------------------------------


def test_losing_ground_needs_sixty_seconds_under_one() -> None:
    fired = first_fired(series(0, 100, drain_inflow_ratio=lambda t: 0.9 if t >= 20 else 1.2))
    assert fired == {"drain_inflow_losing": 80}


def test_nothing_flowing_in_breaks_the_losing_streak() -> None:
    fired = first_fired(series(0, 120, drain_inflow_ratio=lambda t: None if t == 50 else 0.9))
    assert fired == {"drain_inflow_losing": 51 + 60}


def test_kill_switch_trips_at_once_under_point_six() -> None:
    fired = first_fired(series(0, 10, drain_inflow_ratio=lambda t: 0.55 if t >= 3 else 1.0))
    assert fired == {"drain_inflow_kill_switch": 3}


# --- lockstep_waves -------------------------------------------------------------------------------


def spiky(t: float) -> list[int]:
    # A 1 000-attempt wave every 2.5 s, near silence between: the outage seed's synchronised retries.
    return [1000 if (int(t * 10) + i) % 25 == 0 else 2 for i in range(10)]


def smeared(t: float) -> list[int]:
    rng = random.Random(int(t))
    return [rng.randint(90, 110) for _ in range(10)]


def test_lockstep_waves_fire_on_spikes_not_on_a_smear() -> None:
    assert "lockstep_waves" in first_fired(series(0, 30, attempts=spiky))
    assert "lockstep_waves" not in first_fired(series(0, 30, attempts=smeared))


def test_lockstep_forgets_waves_older_than_its_window() -> None:
    engine = AlarmEngine(Thresholds().replace(lockstep_window_s=10, clear_after_s=0))
    for f in series(0, 10, attempts=spiky):
        engine.update(f)
    assert [a.name for a in engine.active] == ["lockstep_waves"]
    for f in series(10, 11, attempts=smeared):
        engine.update(f)
    assert engine.active == []


def one_wave(background: int, wave: int):
    """Every 100 ms bin `background` attempts, but one bin of `wave` at 4 s: its index is `wave` ÷ the mean
    of its 2 s window (21 bins), exactly."""
    return lambda t: [wave if t == 4 and i == 0 else background for i in range(10)]


def test_lockstep_index_on_a_two_place_limit_reads_at_it_not_under_it() -> None:
    """The index was written to one place against the limit as configured: at a limit of 4.05 an index of
    exactly 4.05 (it fires at or above) read "a 100 ms bin 4.0× its 2 s mean, alarm at 4.05×" — under the
    line it fired at; over a 4.04 one, 4.045 read "4.0×" too."""
    at = active_messages(series(0, 8, attempts=one_wave(339, 1620)), lockstep_index_max=4.05)
    assert "a 100 ms bin 4.05× its 2 s mean, alarm at 4.05×" in at["lockstep_waves"]
    over = active_messages(series(0, 8, attempts=one_wave(3391, 16180)), lockstep_index_max=4.04)
    assert "a 100 ms bin 4.045× its 2 s mean, alarm at 4.04×" in over["lockstep_waves"]


def test_lockstep_index_keeps_one_place_where_it_tells_it_from_the_limit() -> None:
    message = active_messages(series(0, 30, attempts=spiky))["lockstep_waves"]
    assert re.search(r"a 100 ms bin \d+\.\d× its 2 s mean, alarm at 4×", message), message


def accepted(rate_per_s: Callable[[float], float]) -> dict[str, Callable[[float], float]]:
    """Attempts at `rate_per_s`, every one accepted: a rate storm the fleet keeps up with, whose calm
    seconds are calm (`calm_second`: attempts the fleet leaves unaccepted are a storm's mark, and the
    builder's 100 accepts/s under 1333 attempts/s left 92 % of them so)."""
    return {"attempts_per_s": rate_per_s, "accepts_per_s": rate_per_s}


# --- reconnect_rate_high (outage seed: ~80 k/min steady, 13 M/min in the storm) --------------------


def test_storm_many_times_the_learned_baseline_fires_after_five_seconds() -> None:
    steady, storm = 80_000 / 60, 13_000_000 / 60
    frames = series(0, 200, **accepted(lambda t: storm if t >= 120 else steady))
    assert first_fired(frames) == {"reconnect_rate_high": 125}


def test_doubling_of_the_steady_rate_is_not_a_storm() -> None:
    frames = series(0, 400, attempts_per_s=lambda t: 2000.0 if t >= 120 else 1000.0)
    assert "reconnect_rate_high" not in first_fired(frames)


def test_no_rate_alarm_while_the_baseline_is_still_learning() -> None:
    frames = series(0, 29, attempts_per_s=lambda t: 1e6 if t >= 10 else 100.0)
    assert first_fired(frames) == {}


def test_a_configured_baseline_replaces_learning() -> None:
    frames = series(0, 20, attempts_per_s=50_000.0)
    assert first_fired(frames, reconnect_baseline_per_s=1333.0) == {"reconnect_rate_high": 5}


def test_a_storm_does_not_teach_the_baseline() -> None:
    engine = AlarmEngine()
    for f in series(0, 1000, **accepted(lambda t: 50_000.0 if t >= 60 else 1000.0)):
        engine.update(f)
    assert [a.name for a in engine.active] == ["reconnect_rate_high"]
    assert "50 k/s, 50× the steady 1.0 k/s" in engine.active[0].message


def test_a_storm_that_begins_while_learning_is_not_learned() -> None:
    """Attached 10 s before the storm (the demo): the baseline is the calm, and the storm fires once the
    learning period is over."""
    frames = series(0, 60, **accepted(lambda t: 200_000.0 if t >= 10 else 2000.0))
    engine = AlarmEngine()
    for f in frames:
        engine.update(f)
    assert [a.name for a in engine.active] == ["reconnect_rate_high"]
    assert "100× the steady 2.0 k/s" in engine.active[0].message


def test_the_message_names_the_steady_rate_the_multiple_is_taken_against() -> None:
    """A calm of 0 attempts/s learns 0; the 10/s floor sets the line. The message said "4952× the steady
    0.0/s" (the report of a drill at --speed 20), a multiple of nothing; the console's gauge said 10/s."""
    engine = AlarmEngine()
    for f in series(0, 60, attempts_per_s=lambda t: 50_000.0 if t >= 35 else 0.0):
        engine.update(f)
    assert [a.name for a in engine.active] == ["reconnect_rate_high"]
    # (the floor said as the floor: "the steady 10/s" of a fleet whose steady rate was 0/s — review)
    assert "50 k/s, 5000× the 10/s floor (steady 0/s)" in engine.active[0].message


# --- resync_share_rising ---------------------------------------------------------------------------


def test_resync_share_over_ten_percent_of_accepts_fires() -> None:
    assert "resync_share_rising" in first_fired(
        series(0, 20, accepts_per_s=1000.0, full_resyncs_per_s=lambda t: 200.0 if t >= 10 else 10.0)
    )
    assert "resync_share_rising" not in first_fired(
        series(0, 20, accepts_per_s=1000.0, full_resyncs_per_s=50.0)
    )


def test_resync_share_ignores_a_trickle() -> None:
    assert first_fired(series(0, 20, accepts_per_s=3.0, full_resyncs_per_s=2.0)) == {}


# --- abnormal_closes_rising (1006) -----------------------------------------------------------------


def test_abnormal_closes_rising_over_their_baseline() -> None:
    frames = series(0, 100, abnormal_closes_per_s=lambda t: 60.0 if t >= 60 else 4.0)
    assert first_fired(frames) == {"abnormal_closes_rising": 65}


def test_abnormal_closes_under_the_floor_never_page() -> None:
    frames = series(0, 100, abnormal_closes_per_s=lambda t: 3.0 if t >= 60 else 0.0)
    assert first_fired(frames) == {}


def test_bursty_abnormal_closes_learn_the_floor_and_a_burst_of_six_pages() -> None:
    """Calm abnormal closes are mostly 0 with a burst of 8/s now and then: the lower quartile learns 0, so
    the 1/s floor sets the line at 5/s (a mean would have learned 2/s, a line of 10/s). A sustained 6/s
    pages; the calm bursts alone never last the 5 s it takes."""
    calm = series(0, 120, abnormal_closes_per_s=lambda t: 8.0 if t % 4 == 0 else 0.0)
    assert first_fired(calm) == {}
    sustained = series(
        0, 120, abnormal_closes_per_s=lambda t: 6.0 if t >= 60 else (8.0 if t % 4 == 0 else 0.0)
    )
    assert first_fired(sustained) == {"abnormal_closes_rising": 65}


# --- drain_pacing_exceeded (field guide) -----------------------------------------------------------


def pacing_fleet(drain_rate_per_s: float):
    return [
        node("gw-000", state="draining", drain_rate_per_s=drain_rate_per_s),
        *nodes(3)[1:],
        node("gw-003"),
    ]


def test_drain_pacing_against_admission_rate() -> None:
    # Three nodes in rotation admit 500/s each: 1 500/s; they admit 100/s besides the drain.
    admission = AdmissionSettings(rate_per_s=500.0, max_connections=None, retry_after_s=(1, 30))
    slow = series(0, 3, fleet=pacing_fleet(1000.0), admission=admission, accepts_per_s=1100.0)
    fast = series(0, 3, fleet=pacing_fleet(1500.0), admission=admission, accepts_per_s=1600.0)
    assert first_fired(slow) == {}
    assert first_fired(fast) == {"drain_pacing_exceeded": 0}


def test_drain_pacing_against_handshake_capacity_when_admission_is_unlimited() -> None:
    capacity = FleetCapacity(
        handshakes_per_s=400.0, cpu_pct_per_handshake_per_s=0.1, connections_per_node=50_000
    )
    frames = series(0, 3, fleet=pacing_fleet(1500.0), accepts_per_s=100.0)
    assert alarms_fired(frames) == {}  # unlimited admission and no capacity given: nothing to judge by
    engine = AlarmEngine(capacity=capacity)
    for f in frames:
        engine.update(f)
    (alarm,) = engine.active
    assert alarm.name == "drain_pacing_exceeded"
    assert (alarm.value, alarm.limit) == (1500.0, 1200.0 - 0.0)


# --- node_down: a node down outside any planned restart -------------------------------------------


def states_at(schedule: dict[str, Callable[[float], str]]) -> Callable[[float], list]:
    """Four nodes, ready unless `schedule` gives a node's state as a function of the fleet time."""
    return lambda t: [
        node(f"gw-{i:03d}", state=schedule.get(f"gw-{i:03d}", lambda _: "ready")(t)) for i in range(4)
    ]


def test_node_down_is_raised_at_once_for_that_node_and_clears_once_it_is_back() -> None:
    fleet = states_at({"gw-002": lambda t: "down" if 10 <= t < 30 else "ready"})
    engine = AlarmEngine()
    changes = []
    for f in series(0, 40, fleet=fleet):
        changes += [(e.time_s, e.data["name"], e.node, e.data["change"]) for e in engine.update(f)]
        if f.time_s == 25:
            (alarm,) = engine.active
            assert (alarm.node, alarm.severity.value, alarm.value, alarm.limit) == (
                "gw-002",
                "warning",
                15,
                None,
            )
            assert (
                alarm.message.startswith("gw-002 down 15 s, not a planned restart")
                and "Restart it" in alarm.message
            )
    # Cleared after the engine's quiet spell (clear_after_s, 5 s) once it is back at 30.
    assert changes == [(10, "node_down", "gw-002", "raised"), (34, "node_down", "gw-002", "cleared")]


def _node_down_advice(rollout: RolloutStatus, max_nodes: int | None, as_columns: bool = False) -> str:
    """The advice of gw-002's node_down (4 nodes, gw-002 down) on a fleet whose frames say `rollout` and
    `max_nodes`; `as_columns`: judged as the console judges, each frame without its node records."""
    fleet = states_at({"gw-002": lambda t: "down"})
    frames = with_room(series(0, 3, fleet=fleet, rollout=rollout), max_nodes)
    (alarm,) = judged(frames, as_columns).active
    assert alarm.message.startswith("gw-002 down 2 s, not a planned restart"), alarm.message
    return alarm.message.split("clients reconnect to the rest. ", 1)[1]


#: What the controller says on a fleet whose nodes have no restart command (`fleet up`, or a nodes file
#: without `restart =`): the typed reason beside its words.
NO_RESTART = RolloutStatus(
    unavailable="restart: 'node-1' is not allowed; expected a node with a restart command",
    unavailable_reason=UnavailableReason.NO_RESTART_COMMAND,
)


def test_node_down_on_fleet_up_says_add_capacity_the_one_way_that_fleet_has() -> None:
    """`fleet up`: a killed node stays down — nothing there restarts it, and it runs no rollout — yet the
    alarm said "Restart it; no rollout until it is back", then "add capacity, or start it again where it
    runs" (the frame did not say which). Its frames say it can add nodes (`max_nodes` 16 > its 4)."""
    advice = _node_down_advice(NO_RESTART, max_nodes=16)
    assert "no restart command" in advice and "add capacity" in advice, advice
    assert "room for 12 more nodes" in advice, advice
    assert "start it again" not in advice and "Restart it" not in advice, advice
    # As the console judges it: frames without their node records, the nodes gathered as columns.
    assert _node_down_advice(NO_RESTART, max_nodes=16, as_columns=True) == advice
    assert "room for 1 more node)" in _node_down_advice(NO_RESTART, max_nodes=5), (
        "one node of room: no plural"
    )


def test_node_down_over_a_nodes_file_says_start_it_again_where_it_runs() -> None:
    """A controller over a nodes file without restart commands has no provisioner (`max_nodes` 0): adding
    capacity is refused there, so the one way on is to start the node again where it runs."""
    advice = _node_down_advice(NO_RESTART, max_nodes=0)
    assert "no restart command" in advice and "start it again where it runs" in advice, advice
    assert "add capacity" not in advice and "Restart it" not in advice, advice


def test_node_down_on_a_fleet_at_its_most_nodes_names_no_way_it_does_not_have() -> None:
    """`fleet up` at its 4 of 4 nodes (the down one counts): an add is refused ("at its most"), so the advice
    does not send the operator there either."""
    advice = _node_down_advice(NO_RESTART, max_nodes=4)
    assert "at its most, 4 nodes" in advice, advice
    assert "add capacity" not in advice.replace("cannot add capacity", ""), advice
    assert "Restart it" not in advice, advice


def test_node_down_from_an_older_server_keeps_both_ways() -> None:
    """An older server says why only in words (`rollout.unavailable`) and nothing of `max_nodes`: the advice
    is the one it had, both ways named — not guessed from the words."""
    older = RolloutStatus(unavailable=NO_RESTART.unavailable)
    advice = _node_down_advice(older, max_nodes=None)
    assert "add capacity, or start it again where it runs" in advice, advice
    # The reason said, the capacity not (a server saying one and not the other): both ways still.
    assert "add capacity, or start it again where it runs" in _node_down_advice(NO_RESTART, None)


def test_node_down_on_a_fleet_that_can_roll_out_says_restart_it() -> None:
    assert _node_down_advice(RolloutStatus(), max_nodes=0).startswith("Restart it; no rollout until")
    # A newer server's reason this console does not know: nothing says its nodes cannot be restarted, and
    # no rollout runs meanwhile either way — its reason named, no remedy guessed for it.
    newer = RolloutStatus(unavailable="frozen until Monday", unavailable_reason="change_freeze")
    advice = _node_down_advice(newer, max_nodes=0)
    assert advice.startswith("Restart it;") and "change freeze" in advice, advice


def test_node_down_is_one_alarm_per_node() -> None:
    fleet = states_at({"gw-001": lambda t: "down", "gw-003": lambda t: "down" if t >= 2 else "ready"})
    engine = AlarmEngine()
    for f in series(0, 5, fleet=fleet):
        engine.update(f)
    assert [(a.name, a.node, a.value) for a in engine.active] == [
        ("node_down", "gw-001", 4),
        ("node_down", "gw-003", 2),
    ]


def test_a_planned_restart_and_other_states_out_of_rotation_are_not_down() -> None:
    planned = {
        "gw-000": lambda t: "restarting",
        "gw-001": lambda t: "drained",
        "gw-002": lambda t: "provisioning",
        "gw-003": lambda t: "draining",
    }
    assert "node_down" not in alarms_fired(series(0, 30, fleet=states_at(planned)))


# --- history_unreachable: nodes that cannot reach their Redis, for 10 s ------------------------------

AWAY = "Redis at redis://127.0.0.1:6379/0: ConnectionError: Connection refused"


def test_history_unreachable_waits_out_a_blip_then_names_the_nodes_in_one_alarm() -> None:
    def fleet(t: float):
        away = {0, 1} if 20 <= t < 50 else {0} if 5 <= t < 9 else set()  # a 4 s blip, then 30 s away
        return [node(f"gw-{i:03d}", history_unreachable=AWAY if i in away else None) for i in range(4)]

    engine = AlarmEngine()
    changes = []
    for f in series(0, 60, fleet=fleet):
        changes += [(e.time_s, e.data["name"], e.data["change"]) for e in engine.update(f)]
        if f.time_s == 34:
            (alarm,) = engine.active
            assert (alarm.nodes, alarm.value, alarm.limit, alarm.severity.value, alarm.node) == (
                ["gw-000", "gw-001"],
                14,
                10,
                "warning",
                None,
            )
            assert alarm.message.startswith("gw-000, gw-001 cannot reach Redis (their history) for 14 s")
            assert "1013" in alarm.message
    assert changes == [(30, "history_unreachable", "raised"), (54, "history_unreachable", "cleared")]


def test_history_unreachable_of_one_node_speaks_of_it_in_the_singular() -> None:
    """One node away read "gw-000 cannot reach Redis (their history) …; the nodes catch up by themselves"."""
    frames = series(0, 12, fleet=[node("gw-000", history_unreachable=AWAY), node("gw-001")])
    message = active_messages(frames)["history_unreachable"]
    assert message.startswith("gw-000 cannot reach Redis (its history) for 11 s: "), message
    assert message.endswith("Bring Redis back; the node catches up by itself."), message
    two = series(
        0, 12, fleet=[node("gw-000", history_unreachable=AWAY), node("gw-001", history_unreachable=AWAY)]
    )
    message = active_messages(two)["history_unreachable"]
    assert message.startswith("gw-000, gw-001 cannot reach Redis (their history) for 11 s: "), message
    assert message.endswith("Bring Redis back; the nodes catch up by themselves."), message


def test_history_unreachable_line_is_configurable() -> None:
    frames = series(0, 5, fleet=[node("gw-000", history_unreachable=AWAY)])
    assert "history_unreachable" not in first_fired(frames)
    assert first_fired(frames, history_unreachable_for_s=3) == {"history_unreachable": 3}


# --- a value beside its limit never rounds onto it (user pass: "Headroom 35 % is under the 35 % budget") --


def active_messages(frames, **overrides) -> dict[str, str]:
    engine = AlarmEngine(Thresholds().replace(**overrides) if overrides else None)
    for f in frames:
        engine.update(f)
    return {a.name: a.message for a in engine.active}


def test_headroom_just_under_the_budget_reads_under_it() -> None:
    message = active_messages(series(0, 3, headroom_pct=34.6))["headroom_low"]
    assert "Headroom 34.6 % is under the 35 % budget" in message
    assert "Headroom 20 % is under" in active_messages(series(0, 3, headroom_pct=20.2))["headroom_low"]


def test_values_compared_with_a_line_do_not_read_as_the_line() -> None:
    kill = active_messages(series(0, 3, drain_inflow_ratio=0.598))["drain_inflow_kill_switch"]
    assert "Drain ÷ inflow 0.598 is under the kill switch (0.6)" in kill
    losing = active_messages(series(0, 70, drain_inflow_ratio=0.998))["drain_inflow_losing"]
    assert "Drain ÷ inflow 0.998 for" in losing
    # Under the kill switch too, the losing message names it: "0.60 … before the kill switch (0.6)" read as
    # not yet past it (the kill switch's own message said 0.599).
    losing = active_messages(series(0, 70, drain_inflow_ratio=0.599))["drain_inflow_losing"]
    assert "Drain ÷ inflow 0.599 for" in losing, losing
    # … and does not ask to act "before" a kill switch already tripped.
    assert "before the kill switch" not in losing and "the kill switch (0.6) has tripped" in losing, losing
    above = active_messages(series(0, 70, drain_inflow_ratio=0.8))["drain_inflow_losing"]
    assert "before the kill switch (0.6)" in above, above
    share = active_messages(
        series(0, 20, accepts_per_s=1000.0, full_resyncs_per_s=lambda t: 102.0 if t >= 5 else 0.0)
    )["resync_share_rising"]
    assert "Full resyncs are 10.2 % of accepts" in share
    drop = active_messages(series(0, 70, connections=lambda t: 100_000 if t < 40 else 94_960))
    assert "fell 5.04 % within" in drop["connections_drop"]


def test_cpu_just_over_the_abort_line_reads_over_it() -> None:
    message = active_messages(series(0, 60, fleet=hot_fleet(10, cpu_pct=80.3)))["cpu_abort"]
    assert "gw-002 80.3 %" in message


def test_a_storm_just_over_its_multiple_reads_over_it() -> None:
    message = active_messages(series(0, 60, **accepted(lambda t: 20_600.0 if t >= 35 else 2000.0)))
    assert "10.3× the steady 2.0 k/s (alarm at 10×)" in message["reconnect_rate_high"]


def test_drain_pacing_over_a_spare_capacity_that_reads_the_same_says_by_how_much() -> None:
    """1,040 closes/s over a spare 1,030/s read "1.0 k closes/s … over the spare (1.0 k/s)"."""
    admission = AdmissionSettings(rate_per_s=500.0, max_connections=None, retry_after_s=(1, 30))
    frames = series(0, 3, fleet=pacing_fleet(1040.0), admission=admission, accepts_per_s=1510.0)
    message = active_messages(frames)["drain_pacing_exceeded"]
    assert "1,040 closes/s in all, over the spare admission capacity (1,030/s)" in message, message


def pacing_message(drain_rate_per_s: float, admit_per_node_per_s: float, accepts_per_s: float) -> str:
    """The drain_pacing_exceeded message of `pacing_fleet`: three nodes in rotation, admitting
    `admit_per_node_per_s` each; spare = 3 × that − (accepts − the drain's own reconnects)."""
    admission = AdmissionSettings(
        rate_per_s=admit_per_node_per_s, max_connections=None, retry_after_s=(1, 30)
    )
    frames = series(
        0, 3, fleet=pacing_fleet(drain_rate_per_s), admission=admission, accepts_per_s=accepts_per_s
    )
    return active_messages(frames)["drain_pacing_exceeded"]


def test_drain_pacing_of_one_node_just_over_a_small_spare_reads_over_it() -> None:
    """The real loopback fleet read "1 nodes draining at 3 closes/s in all, over the spare admission capacity
    (3/s)": a plural for one node, and 3.02 over 3.00 rounded to 3 over 3 (an earlier firing said "(2.0/s)",
    so even the format changed between firings)."""
    message = pacing_message(3.02, 1.0, 3.02)
    assert message.startswith("1 node draining at 3.02 closes/s in all, "), message
    assert "over the spare admission capacity (3.00/s)" in message, message


def test_drain_pacing_says_both_rates_in_one_format() -> None:
    # 3.4 over 3.0: one decimal tells them apart, and the spare keeps it too ("3.0", not "3").
    message = pacing_message(3.4, 1.0, 3.4)
    assert "1 node draining at 3.4 closes/s in all, over the spare admission capacity (3.0/s)" in message
    # A spare of 2.0 beside a drain of 3: "3.0 … (2.0/s)", not "3 … (2.0/s)".
    assert "at 3.0 closes/s in all, over the spare admission capacity (2.0/s)" in pacing_message(
        3.0, 1.0, 4.0
    )


def test_drain_pacing_of_several_nodes_counts_them_in_the_plural() -> None:
    fleet = [
        node("gw-000", state="draining", drain_rate_per_s=900.0),
        node("gw-001", state="draining", drain_rate_per_s=900.0),
        *nodes(4)[2:],
    ]
    admission = AdmissionSettings(rate_per_s=500.0, max_connections=None, retry_after_s=(1, 30))
    message = active_messages(series(0, 3, fleet=fleet, admission=admission, accepts_per_s=1800.0))
    assert message["drain_pacing_exceeded"].startswith("2 nodes draining at 1.8 k closes/s"), message


# --- every message names its line and what to do (user pass: six said neither, or only the reading) -----


@pytest.mark.parametrize(
    ("name", "frames", "words"),
    [
        (
            "connections_drop",
            series(0, 70, connections=lambda t: 100_000 if t < 40 else 94_000),
            ["alarm over 5 %", "admission"],
        ),
        (
            "drain_inflow_losing",
            series(0, 70, drain_inflow_ratio=0.9),
            ["alarm under 1", "admission", "kill switch (0.6)"],
        ),
        ("lockstep_waves", series(0, 30, attempts=spiky), ["alarm at 4×", "Retry-After", "hint"]),
        (
            "resync_share_rising",
            series(0, 20, accepts_per_s=1000.0, full_resyncs_per_s=200.0),
            ["alarm over 10 %", "admission"],
        ),
        (
            "abnormal_closes_rising",
            series(0, 100, abnormal_closes_per_s=lambda t: 60.0 if t >= 60 else 4.0),
            ["alarm at 5×", "nodes down or hot", "load balancer"],
        ),
    ],
)
def test_each_message_names_its_line_and_what_to_do(name, frames, words) -> None:
    message = active_messages(frames)[name]
    for word in words:
        assert word in message, message


def test_rollout_paused_names_the_rollouts_own_pause_line() -> None:
    """A rollout started with pause_cpu_pct 70 and no pause_reason read "a surviving node went over 75 % CPU.
    Resume only once CPU is back under the pause line." — the console's 75, not the rollout's 70, and no
    figure for the line to wait for."""

    def rollout(t: float) -> RolloutStatus:
        state = RolloutState.PAUSED if t >= 5 else RolloutState.RUNNING
        return RolloutStatus(state=state, batch=3, batches=16, pause_cpu_pct=70.0)

    message = active_messages(series(0, 6, rollout=rollout))["rollout_paused"]
    assert "went over 70 % CPU" in message and "under the pause line (70 %)" in message, message


def test_a_reconnect_storm_says_what_to_do() -> None:
    """It said the rate, the multiple and the line, and nothing of the move: rationing with admission."""
    frames = series(0, 200, **accepted(lambda t: 13_000_000 / 60 if t >= 120 else 80_000 / 60))
    assert "Ration them with admission." in active_messages(frames)["reconnect_rate_high"]


def _dropping(**fields) -> list:
    return series(0, 70, connections=lambda t: 100_000 if t < 40 else 90_000, **fields)


@pytest.mark.parametrize(
    ("rollout", "fleet", "hold"),
    [
        # A rollout under way and a node draining: both held, as the outage seed's runbook says.
        (
            RolloutStatus(state=RolloutState.RUNNING),
            [node("gw-000", "draining"), *nodes(3)],
            "Hold the rollout and drains; shed",
        ),
        (RolloutStatus(state=RolloutState.PAUSED), nodes(4), "Hold the rollout; shed"),
        (
            RolloutStatus(state=RolloutState.IDLE),
            [node("gw-000", "draining"), *nodes(3)],
            "Hold the drains; shed",
        ),
        # Nothing to hold (a fleet that cannot roll out, nothing draining): only what it can do.
        (
            RolloutStatus(state=RolloutState.IDLE, unavailable_reason=UnavailableReason.NO_RESTART_COMMAND),
            nodes(4),
            "Shed",
        ),
        # A source that does not say its rollout: today's words.
        (None, nodes(4), "Hold the rollout and drains; shed"),
    ],
)
def test_connections_drop_asks_to_hold_only_what_is_under_way(rollout, fleet, hold) -> None:
    message = active_messages(_dropping(rollout=rollout, fleet=fleet))["connections_drop"]
    assert message.endswith(f"clients are failing to reconnect. {hold} with admission."), message


def test_every_alarm_has_a_short_label_of_whole_words_told_apart() -> None:
    """A narrow panel (80 columns) draws each rule by its short label, not its name cut ("connectio…"):
    every rule has one, none shared, none longer than `SHORT_LABEL_MAX` cells, none cut."""
    from console.alarms.base import SHORT_LABEL_MAX, SHORT_LABELS, AlarmName, short_label

    assert set(SHORT_LABELS) == set(AlarmName)
    assert len(set(SHORT_LABELS.values())) == len(SHORT_LABELS)
    assert all(len(label) <= SHORT_LABEL_MAX and "…" not in label for label in SHORT_LABELS.values())
    assert short_label("connections_drop") == "conns drop"
    assert short_label("from_a_newer_server") == "from_a_newer_server"  # (its name: no label known)


def drained_clients_back(seed: int, clients: int = 150, hint_s: tuple[float, float] = (1.0, 5.58)):
    """A small fleet's drain (review: node-1 of a 300-client loopback fleet, ~150 clients after node-2's
    drain, at 458/s with hints of 1–5.58 s): each client back at a uniform point of its hint, from 2 s; a
    smooth smear, no wave — bins of ~3 attempts against a 2 s mean of ~3, where one of 13 by chance reads
    over 4×."""
    rng = random.Random(seed)
    bins = [0] * 100
    for _ in range(clients):
        bins[int((2.0 + rng.uniform(*hint_s)) * 10)] += 1
    return lambda t: bins[int(t) * 10 : int(t) * 10 + 10]


def test_a_small_drains_clients_coming_back_raise_no_lockstep_by_chance() -> None:
    """The review saw lockstep_waves 4.38 > 4 after a drain of ~100 clients: Poisson noise in bins of a
    few attempts, not waves. Over 300 such drains none may raise it (at the old minimum, 50 attempts in a
    2 s window, one did)."""
    fired = [
        s
        for s in range(300)
        if "lockstep_waves" in first_fired(series(0, 10, attempts=drained_clients_back(s)))
    ]
    assert fired == []


def test_a_wave_of_a_few_hundred_still_reads_as_one() -> None:
    """Not too quiet to judge: a real wave of a small fleet — 300 clients back in one 100 ms bin over a
    trickle of 5 a bin — still fires."""
    assert "lockstep_waves" in first_fired(series(0, 8, attempts=one_wave(5, 300)))


def test_under_admission_in_force_the_storm_is_not_told_to_ration_with_admission_again() -> None:
    """Review (regional-outage drill): with admission at 250/s a node set, reconnect_rate_high kept saying
    "Ration them with admission" for two minutes, as if nothing had been done. It says admission is
    rationing them: keep it (its rate is in the admission panel; the line under the alarms has no room)."""
    from console.protocol import AdmissionSettings

    limited = AdmissionSettings(rate_per_s=250.0, burst=250, max_connections=None, retry_after_s=(1, 10))
    frames = series(0, 200, admission=limited, **accepted(lambda t: 50_000.0 if t >= 60 else 1000.0))
    engine = AlarmEngine()
    for f in frames:
        engine.update(f)
    (storm,) = engine.active
    assert storm.message.endswith("Admission is on: keep it."), storm.message
    unlimited = series(0, 200, **accepted(lambda t: 50_000.0 if t >= 60 else 1000.0))
    engine = AlarmEngine()
    for f in unlimited:
        engine.update(f)
    assert engine.active[0].message.endswith("Ration them with admission."), engine.active[0].message
