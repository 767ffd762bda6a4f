"""Node order and filters; the alarm log; down-sampling that keeps spikes."""

from __future__ import annotations

import numpy as np
import pytest

from console.errors import InputError
from console.model import AlarmLog, GaugeThresholds, NodeFilter, NodeQuery, select_nodes
from console.model.alarms import Acknowledgements, alarm_rows
from console.model.downsample import downsample, finite_runs, spark_blocks
from console.protocol import Alarm, NodeStatus, Severity


def node(node_id: str, state: str = "ready", cpu: float = 40.0, conns: int = 100) -> NodeStatus:
    return NodeStatus(
        id=node_id, state=state, connections=conns, cpu_pct=cpu, attempts_per_s=10, accepts_per_s=10,
        rejects_per_s=0, timeouts_per_s=0, handshake_p99_ms=50,
    )  # fmt: skip


NODES = [
    node("gw-02", cpu=90),
    node("gw-01", "draining", conns=5),
    node("gw-10", "down", cpu=0),
    node("gw-03"),
]


def ids(rows: list[NodeStatus]) -> list[str]:
    return [n.id for n in rows]


def test_sort_by_any_column_with_stable_ties():
    t = GaugeThresholds()
    assert ids(select_nodes(NODES, NodeQuery("id"), t)) == ["gw-01", "gw-02", "gw-03", "gw-10"]
    assert ids(select_nodes(NODES, NodeQuery("cpu_pct", True), t)) == ["gw-02", "gw-01", "gw-03", "gw-10"]
    assert ids(select_nodes(NODES, NodeQuery("connections"), t))[0] == "gw-01"


def test_ids_sort_by_their_numbers_not_as_text():
    # Text order put gw-1000 … gw-1009 between gw-100 and gw-101 (a fleet of 1200 from a simulator whose ids
    # were not of one width), and the controller's node-10 … node-16 between node-1 and node-2.
    t = GaugeThresholds()
    unpadded = [node(f"gw-{i:03d}") for i in (1000, 101, 100, 999, 1001, 99)]
    assert ids(select_nodes(unpadded, NodeQuery("id"), t)) == [
        "gw-099", "gw-100", "gw-101", "gw-999", "gw-1000", "gw-1001",
    ]  # fmt: skip
    controller = [node(f"node-{i}") for i in (10, 2, 1, 16, 3)]
    assert ids(select_nodes(controller, NodeQuery("id"), t)) == [
        "node-1",
        "node-2",
        "node-3",
        "node-10",
        "node-16",
    ]
    assert ids(select_nodes(controller, NodeQuery("id", True), t))[0] == "node-16"
    # Ties of another column fall back to the same order.
    assert ids(select_nodes(controller, NodeQuery("cpu_pct"), t)) == [
        "node-1",
        "node-2",
        "node-3",
        "node-10",
        "node-16",
    ]


def test_next_sort_cycles_every_column():
    query, seen = NodeQuery(), set()
    for _ in range(10):
        seen.add(query.sort_key)
        query = query.next_sort()
    assert seen == {
        "id",
        "state",
        "connections",
        "accepts_per_s",
        "rejects_per_s",
        "timeouts_per_s",
        "cpu_pct",
        "handshake_p99_ms",
    }


def test_filters_by_state_pattern_and_alarming():
    t = GaugeThresholds()
    assert ids(select_nodes(NODES, NodeQuery(filter=NodeFilter.parse("state:down,draining")), t)) == [
        "gw-01",
        "gw-10",
    ]
    assert ids(select_nodes(NODES, NodeQuery(filter=NodeFilter.parse("id:gw-0*")), t)) == [
        "gw-01",
        "gw-02",
        "gw-03",
    ]
    assert ids(select_nodes(NODES, NodeQuery(filter=NodeFilter.parse("10")), t)) == ["gw-10"]
    alarming = NodeQuery(filter=NodeFilter.parse("alarming"))
    assert ids(select_nodes(NODES, alarming, t)) == ["gw-02", "gw-10"]  # CPU over 80 %, and down
    assert ids(select_nodes(NODES, alarming, t, {"gw-03"})) == ["gw-02", "gw-03", "gw-10"]


@pytest.mark.parametrize("text", ["state:sleeping", "colour:red"])
def test_bad_filters_name_the_field_and_what_is_allowed(text):
    with pytest.raises(InputError) as error:
        NodeFilter.parse(text)
    assert "expected" in str(error.value)


def alarm(name: str, severity: Severity = Severity.WARNING, node_id: str | None = None) -> Alarm:
    return Alarm(name=name, severity=severity, since_s=1.0, message=name, node=node_id)


def test_alarm_log_raises_clears_and_acknowledges():
    log = AlarmLog()
    log.update([alarm("headroom_low"), alarm("cpu_abort", Severity.CRITICAL, "gw-01")], 1.0)
    assert [e.alarm.name for e in log.active()] == ["cpu_abort", "headroom_low"]  # worst first
    assert log.alarming_nodes() == {"gw-01"}
    assert log.acknowledge(("headroom_low", None))
    assert not log.acknowledge(("headroom_low", None))  # already acknowledged
    assert log.unacknowledged == 1
    log.update([alarm("headroom_low", Severity.CRITICAL)], 2.0)
    assert [e.alarm.name for e in log.past()] == ["cpu_abort"]
    assert log.past()[0].cleared_at_s == 2.0
    assert log.active()[0].acknowledged is False  # worse severity: needs a fresh acknowledgement


def spell(name: str, since_s: float, severity: Severity = Severity.WARNING) -> Alarm:
    return Alarm(name=name, severity=severity, since_s=since_s, message=name)


def test_an_acknowledgement_outlives_its_log_for_the_spell_it_was_given_to():
    """A replay starts a fresh log at every seek; `Acknowledgements` kept beside it say which spells the
    operator acknowledged. The same spell (up at some moment it was up when acknowledged) comes back
    acknowledged, wherever the seek lands in it; a later spell of the same rule, or the spell grown worse,
    shouts again, as in a live console."""
    acks = Acknowledgements()
    watched = AlarmLog(acknowledged=acks)
    watched.update([spell("lockstep_waves", 41.0)], 105.0)
    assert watched.acknowledge(("lockstep_waves", None))  # at 105 s, the spell up since 41 s
    for landed_s, since_s in ((50.0, 41.0), (41.0, 41.0), (120.0, 60.0), (90.0, 47.0)):
        fresh = AlarmLog(acknowledged=acks)  # (the engine's own since where the recording has none: 60 s)
        fresh.update([spell("lockstep_waves", since_s)], landed_s)
        assert fresh.active()[0].acknowledged, (landed_s, since_s)
    later = AlarmLog(acknowledged=acks)
    later.update([spell("lockstep_waves", 130.0)], 135.0)  # raised again after the ack: another spell
    assert not later.active()[0].acknowledged
    worse = AlarmLog(acknowledged=acks)
    worse.update([spell("lockstep_waves", 41.0)], 60.0)
    assert worse.active()[0].acknowledged
    worse.update([spell("lockstep_waves", 41.0, Severity.CRITICAL)], 61.0)
    assert not worse.active()[0].acknowledged  # acknowledged as a warning: critical needs a fresh one
    other = AlarmLog(acknowledged=acks)
    other.update([spell("headroom_low", 41.0)], 60.0)
    assert not other.active()[0].acknowledged


def test_downsample_by_max_keeps_a_one_bin_spike():
    bins = np.ones(600)
    bins[333] = 500
    _, peaks = downsample(bins, 50, how="max")
    assert peaks.size == 50 and peaks.max() == 500
    _, means = downsample(bins, 50, how="mean")
    assert means.max() < 50


def test_gaps_survive_down_sampling_and_split_lines():
    values = np.concatenate([np.ones(100), np.full(20, np.nan), np.ones(100)])
    x, y = downsample(values, 22, how="mean")
    assert np.isnan(y).any()
    assert len(finite_runs(x, y)) == 2


def test_spark_blocks_width_and_blank_without_data():
    assert len(spark_blocks(np.arange(300.0), 16)) == 16
    assert spark_blocks(np.arange(300.0), 16)[-1] == "█"
    assert spark_blocks(np.full(10, np.nan), 8) == " " * 8


def test_a_flat_series_of_nothing_lies_on_the_floor():
    """A provisioning node's 0 connections drew a mid-height ▄ line, like a steady load (found in review)."""
    assert spark_blocks(np.zeros(10), 5) == "▁" * 5
    assert spark_blocks(np.full(10, 20_000.0), 5) == "▄" * 5


def test_one_rule_on_many_nodes_is_one_row_and_acks_as_one():
    log = AlarmLog()
    many = [alarm("cpu_abort", Severity.CRITICAL, f"gw-{i:03d}") for i in range(40)]
    for i, a in enumerate(many):
        a.value = 80.0 + i / 10
    log.update([*many, alarm("headroom_low"), alarm("cpu_abort", Severity.CRITICAL, None)], 5.0)
    rows = alarm_rows(log.active())
    assert len(rows) == 3
    grouped = next(row for row in rows if row.where == "40 nodes")
    assert len(grouped.keys) == 40 and grouped.value == "max 83.9 %"
    for key in grouped.keys:
        log.acknowledge(key)
    assert next(row for row in alarm_rows(log.active()) if row.where == "40 nodes").acknowledged
    few = AlarmLog()
    few.update(many[:3], 1.0)
    assert [row.where for row in alarm_rows(few.active())] == ["gw-000", "gw-001", "gw-002"]


def test_a_small_wobble_is_a_flat_line_and_a_drop_fills_the_cell():
    wobble = np.linspace(27_063.0, 27_105.0, 40)  # +0.15 % over the window
    assert spark_blocks(wobble, 10)[0] == "▁" and spark_blocks(wobble, 10)[-1] == "█"  # its own min–max
    assert set(spark_blocks(wobble, 10, min_span_share=0.05)) <= {"▄", "▅"}  # a flat line, mid-cell
    drop = np.concatenate([np.full(20, 27_000.0), np.full(20, 24_000.0)])  # −11 %
    assert spark_blocks(drop, 10, min_span_share=0.05) == "█████▁▁▁▁▁"


def test_a_nodes_cpu_level_is_over_the_line_as_the_alarm_rules_say() -> None:
    """cpu_abort fires *above* 80 %, a rollout pauses *above* its pause CPU: a node at exactly 80.0 read
    critical in the table with no alarm."""
    from console.model.gauges import node_cpu_level
    from console.model.thresholds import Level

    t = GaugeThresholds()
    levels = [node_cpu_level(node("gw-1", cpu=cpu), t) for cpu in (75.0, 75.1, 80.0, 80.1)]
    assert levels == [Level.OK, Level.WARNING, Level.WARNING, Level.CRITICAL]


def test_alarm_values_carry_their_units() -> None:
    """ "8.54 > 5" was a percentage, "38.6k > 5.3k" a rate per second, "13.6 > 4" an index: say which."""
    from console.alarms import AlarmName

    def shown(name: AlarmName, value: float, limit: float) -> str:
        log = AlarmLog()
        log.update(
            [Alarm(name=name, severity=Severity.WARNING, since_s=1, value=value, limit=limit, message="m")], 1
        )
        return alarm_rows(log.active())[0].value

    assert shown(AlarmName.CONNECTIONS_DROP, 8.54, 5) == "8.54 > 5 %"
    assert shown(AlarmName.RECONNECT_RATE_HIGH, 38_600, 5_300) == "38.6k > 5.3k/s"
    assert shown(AlarmName.HEADROOM_LOW, 15.3, 35) == "15.3 < 35 %"
    assert shown(AlarmName.DRAIN_INFLOW_KILL_SWITCH, 0.159, 0.6) == "0.159 < 0.6"  # a ratio: no unit
    assert shown(AlarmName.LOCKSTEP_WAVES, 13.6, 4) == "13.6 > 4"  # an index
    # Three figures round 34.96 onto its 35: the sign said "<" between two equal numbers.
    assert shown(AlarmName.HEADROOM_LOW, 34.96, 35) == "34.96 < 35 %"
    assert shown(AlarmName.DRAIN_INFLOW_KILL_SWITCH, 0.59996, 0.6) == "0.59996 < 0.6"


def test_capacity_still_provisioning_is_not_alarming_but_a_restart_is():
    """Twenty nodes added filled 'alarming only' (as warnings) and hid the nodes that were (found in
    review): a provisioning node was asked for; a restarting one is out of rotation unasked."""
    fleet = [
        *NODES,
        node("gw-04", "restarting", cpu=0, conns=0),
        node("gw-05", "provisioning", cpu=0, conns=0),
    ]
    alarming = NodeQuery(filter=NodeFilter.parse("alarming"))
    assert ids(select_nodes(fleet, alarming, GaugeThresholds())) == ["gw-02", "gw-04", "gw-10"]


@pytest.mark.parametrize(
    "times", [0.5, 7.33, 99.94, 99.96, 127.4, 1265.6, 9999.4, 9999.6, 12_700, 999_600, 3.2e6]
)
def test_a_multiple_of_the_steady_rate_fits_a_gauges_brief_line(times) -> None:
    """At 80 columns the attempts gauge read '1265.6× ste…' (found in review)."""
    from console.model.gauges import BRIEF_CELLS, times_text

    assert len(f"{times_text(times)}× steady") <= BRIEF_CELLS
    assert float(times_text(times).rstrip("kM")) * {"k": 1e3, "M": 1e6}.get(
        times_text(times)[-1], 1
    ) == pytest.approx(times, rel=0.05)


def test_an_alarm_waiting_to_clear_shows_its_last_reading_as_past() -> None:
    """The panel listed "✖ drain_inflow_kill_switch 0.322 < 0.6 NEW" beside a gauge back at 46.87: the
    alarm was only waiting out `clear_after_s`. Its row says so, and that 0.322 is what it was."""
    from console.alarms import AlarmName

    alarm = Alarm(
        name=AlarmName.DRAIN_INFLOW_KILL_SWITCH, severity=Severity.CRITICAL, since_s=3, value=0.322,
        limit=0.6, message="m", clearing_since_s=4,
    )  # fmt: skip
    log = AlarmLog()
    log.update([alarm], 5)
    (row,) = alarm_rows(log.active())
    assert (row.value, row.clearing, row.cleared) == ("was 0.322 < 0.6", True, False)
    version = log.version
    log.update([alarm.model_copy(update={"clearing_since_s": None})], 6)
    (row,) = alarm_rows(log.active())
    assert (row.value, row.clearing, log.version > version) == ("0.322 < 0.6", False, True)


def test_a_row_waiting_to_clear_says_since_when_its_condition_has_not_held() -> None:
    """Its value is the last reading before then (the line under the panel says the time); a group's, once
    none of its nodes holds, its last node's."""
    from console.alarms import AlarmName

    alarm = Alarm(
        name=AlarmName.LOCKSTEP_WAVES, severity=Severity.WARNING, since_s=94, value=10.5, limit=4.0,
        message="m", clearing_since_s=95,
    )  # fmt: skip
    log = AlarmLog()
    log.update([alarm], 96)
    (row,) = alarm_rows(log.active())
    assert (row.value, row.clearing_since_s) == ("was 10.5 > 4", 95)
    log.update([alarm.model_copy(update={"clearing_since_s": None})], 97)
    assert alarm_rows(log.active())[0].clearing_since_s is None

    def hot(node: str, since: float | None) -> Alarm:
        return Alarm(
            name=AlarmName.CPU_ABORT, severity=Severity.CRITICAL, since_s=90, value=90.0, limit=80.0,
            message="m", node=node, clearing_since_s=since,
        )  # fmt: skip

    group = AlarmLog()
    group.update([hot("gw-1", 95), hot("gw-2", 96), hot("gw-3", 94), hot("gw-4", 95)], 97)
    (row,) = alarm_rows(group.active())
    assert (row.where, row.clearing, row.clearing_since_s) == ("4 nodes", True, 96)
    group.update([hot("gw-1", 95), hot("gw-2", None), hot("gw-3", 94), hot("gw-4", 95)], 98)
    (row,) = alarm_rows(group.active())
    assert (row.clearing, row.clearing_since_s) == (False, None)


def test_a_cleared_alarm_shows_its_last_reading_as_past() -> None:
    """User pass on `fleet up`: after a drain the alarms panel read "connections_drop fleet 10.2 > 5 %
    cleared" under "was 33.3 < 35 % clearing" — the same kind of figure, the last reading over the line,
    said as past on the row waiting to clear and as current on the row that had cleared."""
    from console.alarms import AlarmName

    alarm = Alarm(
        name=AlarmName.CONNECTIONS_DROP, severity=Severity.CRITICAL, since_s=3, value=10.2, limit=5.0,
        message="m", clearing_since_s=4,
    )  # fmt: skip
    log = AlarmLog()
    log.update([alarm], 5)
    log.update([], 9)
    (row,) = alarm_rows(log.past())
    assert (row.value, row.cleared) == ("was 10.2 > 5 %", True)


def test_a_cleared_alarm_reports_its_worst_reading_and_its_words_then() -> None:
    """Review on a loopback fleet: the panel showed "connections_drop 43.8 > 5 %" at 0:01:13; once it
    cleared, the row read "was 6.43 > 5 %" and the detail "while it held: Total connections fell 6.4 %" —
    a 44 % drop told as 6 %. A cleared row reads its worst (`Alarm.worst_value`), and says what the alarm
    said then, and when; an alarm still up (or waiting to clear) reads its last."""
    from console.alarms import AlarmName

    alarm = Alarm(
        name=AlarmName.CONNECTIONS_DROP, severity=Severity.CRITICAL, since_s=55, value=6.43, limit=5.0,
        message="Total connections fell 6.4 %", clearing_since_s=90, worst_value=43.8, worst_s=73,
        worst_message="Total connections fell 43.8 %",
    )  # fmt: skip
    log = AlarmLog()
    log.update([alarm], 92)
    (row,) = alarm_rows(log.active())
    assert (row.value, row.message) == ("was 6.43 > 5 %", "Total connections fell 6.4 %")
    log.update([], 95)
    (row,) = alarm_rows(log.past())
    assert (row.value, row.message, row.worst_at_s) == (
        "worst 43.8 > 5 %",
        "Total connections fell 43.8 %",
        73,
    )
    below = alarm.model_copy(
        update={"name": AlarmName.HEADROOM_LOW, "value": 33.0, "limit": 35.0, "worst_value": 12.0}
    )
    log.update([below], 100)
    log.update([], 110)
    assert alarm_rows(log.past())[0].value == "worst 12 < 35 %"


def test_a_cleared_row_carries_when_it_cleared_as_the_log_dated_it() -> None:
    """The alarms panel said only when a cleared alarm was raised ("cleared 0:00:11" read as the clear's
    time). The row carries the log's cleared time — the engine's `cleared_s` for one that cleared inside a
    sped-up frame, not the frame's time — and a group of node alarms the last of its clears."""
    from console.alarms import AlarmName

    log = AlarmLog()
    log.update([alarm("headroom_low")], 5)
    assert alarm_rows(log.active())[0].cleared_at_s is None
    folded = alarm("connections_drop").model_copy(
        update={"active": False, "since_s": 20.0, "cleared_s": 27.0}
    )
    log.update([folded], 60)  # a frame folding 6–60 s: raised at 20 s and cleared at 27 s inside it
    by_name = {row.name: row for row in alarm_rows(log.past())}
    assert (by_name["connections_drop"].raised_at_s, by_name["connections_drop"].cleared_at_s) == (20.0, 27.0)
    assert by_name["headroom_low"].cleared_at_s == 60  # gone from the frame: cleared at its time

    nodes = AlarmLog()
    down = [alarm(AlarmName.NODE_DOWN, node_id=f"gw-{i:03d}") for i in range(5)]
    nodes.update(down, 2)
    nodes.update(down[:2], 9)
    nodes.update([], 14)
    (group,) = alarm_rows(nodes.past())
    assert (group.where, group.raised_at_s, group.cleared_at_s) == ("5 nodes", 1.0, 14)


@pytest.mark.parametrize("text", ["cpu>80", "conns<100", "cpu_pct=50", "state:ready cpu>=75"])
def test_a_comparison_is_refused_not_taken_for_an_id(text):
    """On-call walk: "cpu>1" was taken as an id pattern (*cpu>1*) and showed "0 of 3" nodes — an empty table
    and no word why. A comparison is refused, saying the filter has none and that `s` sorts by a column."""
    with pytest.raises(InputError) as error:
        NodeFilter.parse(text)
    assert "no comparisons" in error.value.allowed and "s sorts" in error.value.allowed


def test_a_pattern_with_brackets_is_still_an_id_pattern():
    assert NodeFilter.parse("gw-0[12]").id_pattern == "gw-0[12]"
