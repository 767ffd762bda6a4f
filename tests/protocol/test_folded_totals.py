"""`Frame.folded_totals`: each earlier second's totals of a frame folding several fleet seconds — optional,
added to v1 without breaking a reader, kept through JSON, recordings and the replay's columnar read."""

from __future__ import annotations

from pathlib import Path

from console.model.node_readings import columnar_frame_json
from console.protocol import API_VERSION, Frame
from console.server.backend import fold_frames
from tests.fleet_builders import frame
from tests.protocol.test_running_counts import OLD_FRAME


def folded(count: int = 4) -> Frame:
    return fold_frames(
        [frame(t, connections=1000 + int(t), drain_inflow_ratio=0.5 + t / 10) for t in range(1, count + 1)]
    )


def test_a_frame_without_it_still_reads_as_v1_and_does_not_say_its_seconds() -> None:
    old = Frame.model_validate(OLD_FRAME)  # span_s 10, as an older ×10 server sent it
    assert old.api_version == API_VERSION == "v1" and old.folded_totals is None
    assert old.totals_by_second() is None
    assert Frame.model_validate({**OLD_FRAME, "span_s": 1.0}).totals_by_second() == [old.totals]
    assert Frame.model_validate({**OLD_FRAME, "span_s": 0.0}).totals_by_second() == []


def test_it_round_trips_through_json_and_the_replays_columnar_read() -> None:
    sent = folded()
    assert [t.connections for t in sent.totals_by_second() or []] == [1001, 1002, 1003, 1004]
    payload = sent.model_dump_json()
    for read in (Frame.model_validate_json(payload), columnar_frame_json(payload)):
        assert read.folded_totals == sent.folded_totals
        assert read.totals_by_second() == sent.totals_by_second()


def test_it_is_kept_in_a_recording(tmp_path: Path) -> None:
    from console.record.container import RecordKind
    from console.record.reader import RecordingReader
    from console.record.writer import RecordingWriter
    from tests.record.conftest import header

    sent = folded().model_copy(update={"seq": 1})
    path = tmp_path / "sped-up.sdrec"
    with RecordingWriter(path, header(), fsync=False) as writer:
        writer.write(sent)
    with RecordingReader(path) as recording:
        (entry,) = [e for e in recording.entries() if e.kind is RecordKind.FRAME]
        whole, columnar = recording.read_entry(entry), recording.read_entry(entry, True)
    assert isinstance(whole, Frame) and isinstance(columnar, Frame)
    assert whole.folded_totals == columnar.folded_totals == sent.folded_totals


def test_folding_a_frame_that_does_not_say_its_seconds_leaves_it_null() -> None:
    """A partial list would put the seconds it has at the wrong fleet times."""
    old = Frame.model_validate(OLD_FRAME)  # 10 seconds, their totals unknown
    later = frame(71.0)
    assert fold_frames([old, later]).folded_totals is None
    assert fold_frames([folded(), later]).folded_totals == [*(folded().totals_by_second() or [])]


def test_the_spells_over_a_cpu_line_round_trip_and_say_each_earlier_second() -> None:
    """`Frame.folded_hot`: which serving nodes were over a CPU line in each earlier second, as spells."""
    from console.protocol import HotSpells, NodeState
    from tests.fleet_builders import node

    def fleet(t: int) -> list:
        hot = {"gw-000": t in (1, 2, 4), "gw-001": t >= 2, "gw-002": True}
        states = {"gw-002": NodeState.RESTARTING}  # not serving: its CPU is no signal
        return [
            node(i, state=states.get(i, NodeState.READY), cpu_pct=90.0 if h else 10.0) for i, h in hot.items()
        ]

    sent = fold_frames([frame(float(t), fleet=fleet(t)) for t in range(1, 6)], hot_lines=(80.0, 95.0))
    assert sent.folded_hot == [
        HotSpells(cpu_pct=80.0, nodes={"gw-000": [(1.0, 2.0), (4.0, 4.0)], "gw-001": [(2.0, 4.0)]}),
        HotSpells(cpu_pct=95.0, nodes={}),
    ]
    expected = [{"gw-000"}, {"gw-000", "gw-001"}, {"gw-001"}, {"gw-000", "gw-001"}]
    assert sent.hot_by_second(80.0) == expected and sent.nodes_over(80.0) == ["gw-001"]
    assert sent.hot_by_second(95.0) == [set()] * 4 and sent.hot_by_second(85.0) is None
    payload = sent.model_dump_json()
    for read in (Frame.model_validate_json(payload), columnar_frame_json(payload)):
        assert read.folded_hot == sent.folded_hot and read.hot_by_second(80.0) == expected
    # Folded again (a frame already folded, then one more second): the spells run on.
    again = fold_frames([sent, frame(6.0, fleet=fleet(6))], hot_lines=(80.0,))
    assert again.hot_by_second(80.0) == [*expected, {"gw-001"}]
    assert fold_frames([sent, frame(6.0)]).folded_hot is None  # no line asked for: none said
