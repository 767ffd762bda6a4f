"""The frame history: seq/epoch stamping, resume (recovered or not), node history. Pure, no server."""

from __future__ import annotations

import gc
import json
import tracemalloc

import pytest

from console.protocol import DrainProgress, Event, Frame, NodeState
from console.server.history import FrameHistory
from tests.server.fleet_fixture import ScriptedFleet


def filled(frames: int, max_frames: int = 10, replay_cap_frames: int = 6) -> FrameHistory:
    fleet = ScriptedFleet(nodes=3)
    history = FrameHistory(max_frames, replay_cap_frames, epoch="e1")
    for _ in range(frames):
        frame, events = fleet.advance()
        history.stamp(frame, events)
    return history


def seqs(messages: list[str]) -> list[tuple[str, int]]:
    return [(json.loads(message)["type"], json.loads(message)["seq"]) for message in messages]


def test_the_server_owns_seq_and_epoch() -> None:
    history = filled(5)
    newest = history.newest
    assert newest is not None
    assert newest.seq == 5 and newest.frame.epoch == "e1"
    decoded = [json.loads(message) for message in newest.messages]
    # Frame 5 carries node-0's fifth-second event first, then the frame itself; both stamped 5/e1.
    assert [(item["type"], item["seq"], item["epoch"]) for item in decoded] == [
        ("event", 5, "e1"),
        ("frame", 5, "e1"),
    ]


def test_resume_within_the_window_replays_every_missed_message() -> None:
    history = filled(8)
    resume = history.resume(since=5, epoch="e1")
    assert resume.recovered
    assert seqs(resume.messages) == [("frame", 6), ("frame", 7), ("frame", 8)]


def test_resume_at_the_newest_frame_recovers_with_nothing_to_send() -> None:
    resume = filled(8).resume(since=8, epoch="e1")
    assert resume.recovered and resume.messages == []


@pytest.mark.parametrize(
    ("since", "epoch", "why"),
    [
        (5, "other", "another epoch: the server's history restarted"),
        (1, "e1", "frame 2 is no longer held (10 held, 12 published)"),
        (5, "e1", "frame 6 is held but beyond the replay cap of 6"),
        (13, "e1", "a seq from the future"),
        (None, "e1", "an epoch without a seq"),
    ],
)
def test_resume_outside_the_window_starts_fresh_with_the_newest_frame(since, epoch, why) -> None:
    resume = filled(12).resume(since=since, epoch=epoch)
    assert not resume.recovered, why
    assert seqs(resume.messages) == [("frame", 12)]


def test_the_replay_cap_is_the_boundary() -> None:
    history = filled(12)  # replay cap 6: frames 7..12 are replayable, so since=6 is the oldest resumable
    assert history.resume(since=6, epoch="e1").recovered
    assert not history.resume(since=5, epoch="e1").recovered


def test_a_plain_connection_gets_the_newest_frame() -> None:
    assert seqs(filled(3).resume(None, None).messages) == [("frame", 3)]
    assert FrameHistory(epoch="e1").resume(None, None).messages == []


def test_node_history_is_oldest_first_and_bounded() -> None:
    history = filled(12)
    samples = history.node_history("node-2", limit=4)
    assert [sample.seq for sample in samples] == [9, 10, 11, 12]
    assert [sample.connections for sample in samples] == [1011, 1012, 1013, 1014]
    assert [sample.time_s for sample in samples] == [9.0, 10.0, 11.0, 12.0]
    assert history.node_history("absent", limit=4) == []


def test_node_history_finds_a_node_whose_position_changed() -> None:
    fleet = ScriptedFleet(nodes=3)
    history = FrameHistory(epoch="e1")
    frame, _ = fleet.advance()
    history.stamp(frame, [])
    fleet.node_ids.reverse()
    frame, _ = fleet.advance()
    history.stamp(frame, [])
    assert [sample.seq for sample in history.node_history("node-0", limit=5)] == [1, 2]


def test_node_events_are_those_of_the_node() -> None:
    history = filled(10)
    assert [event.time_s for event in history.node_events("node-0", limit=5)] == [5.0, 10.0]
    assert history.node_events("node-1", limit=5) == []


def test_keep_refuses_an_entry_out_of_order() -> None:
    history = filled(2)
    from console.server.history import prepare

    frame = history.newest.frame  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        history.keep(prepare(frame, list[Event](), 7, "e1"))


def drained_fleet_frames(frames: int) -> list[Frame]:
    """ScriptedFleet frames in which node-1 drains (a DrainProgress a frame) and node-2 goes down."""
    fleet = ScriptedFleet(nodes=3)
    out = []
    for second in range(frames):
        frame, _ = fleet.advance()
        nodes = list(frame.nodes)
        nodes[1] = nodes[1].model_copy(
            update={
                "state": NodeState.DRAINING,
                "drain": DrainProgress(
                    remaining=900 - second,
                    rate_per_s=1.5,
                    hint_ms=(0, 5000),
                    started_at_s=1.0,
                    deadline_at_s=61.0,
                    eta_s=(900 - second) / 1.5,
                ),
            }
        )
        if second >= 2:
            nodes[2] = nodes[2].model_copy(update={"state": NodeState.DOWN, "cpu_pct": 0.1 * second})
        out.append(frame.model_copy(update={"nodes": nodes}))
    return out


def test_node_history_gives_back_every_field_the_frames_held() -> None:
    # Older frames are kept as columns, not records: every field must come back as it was, ints as ints.
    frames = drained_fleet_frames(6)
    history = FrameHistory(epoch="e1")
    for frame in frames:
        history.stamp(frame, [])
    for index, node_id in enumerate(("node-0", "node-1", "node-2")):
        samples = history.node_history(node_id, limit=10)
        assert [sample.model_dump(exclude={"seq", "time_s"}) for sample in samples] == [
            frame.nodes[index].model_dump() for frame in frames
        ]
        assert all(type(sample.connections) is int for sample in samples)


def test_a_node_with_fields_this_server_does_not_know_keeps_them_in_its_history() -> None:
    fleet = ScriptedFleet(nodes=2)
    history = FrameHistory(epoch="e1")
    for _ in range(3):
        frame, _ = fleet.advance()
        nodes = [frame.nodes[0].model_copy(update={"zone": "eu-west-1a"}), frame.nodes[1]]
        history.stamp(frame.model_copy(update={"nodes": nodes}), [])
    assert [sample.model_extra for sample in history.node_history("node-0", limit=5)] == [
        {"zone": "eu-west-1a"}
    ] * 3


def test_ten_minutes_of_a_480_node_fleet_fit_in_a_bounded_memory() -> None:
    # Kept as records (a pydantic model a node) with every message, 600 frames of 480 nodes took 456 MB (58 MB now):
    # a served thundering-herd passed 1 GB. Columns, and no messages past the replay cap, keep it small.
    fleet = ScriptedFleet(nodes=480)
    history = FrameHistory(max_frames=600, replay_cap_frames=300, epoch="e1")
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(600):
            frame, events = fleet.advance()
            history.stamp(frame, events)
        del frame, events
        gc.collect()
        held_mb = tracemalloc.get_traced_memory()[0] / 2**20
    finally:
        tracemalloc.stop()
    assert held_mb < 100, f"{held_mb:.0f} MB held for 600 frames of 480 nodes"
    # The oldest resumable point still replays every frame after it (messages dropped only past the cap).
    resume = history.resume(since=300, epoch="e1")
    assert len(history) == 600 and resume.recovered
    assert [seq for kind, seq in seqs(resume.messages) if kind == "frame"] == list(range(301, 601))
