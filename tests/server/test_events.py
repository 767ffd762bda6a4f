"""Coalescing a burst of like events. Pure."""

from __future__ import annotations

from console.protocol import Event
from console.server.events import coalesce_events
from console.server.history import FrameHistory
from tests.server.fleet_fixture import ScriptedFleet


def down(node: str, t: float = 30.0) -> Event:
    return Event(time_s=t, kind="node_state", node=node, message="ready → down")


def test_a_burst_becomes_one_event_naming_every_node_in_order() -> None:
    alarm = Event(time_s=30.0, kind="alarm", message="connections −7 % in 60 s")
    burst = [down(f"gw-{index}") for index in range(5)]
    merged = coalesce_events([burst[0], alarm, *burst[1:]], over=3)
    assert [event.kind for event in merged] == ["node_state", "alarm"]
    group = merged[0]
    assert group.node is None and group.data["nodes"] == [f"gw-{index}" for index in range(5)]
    assert group.message == "5 nodes: ready → down"
    assert merged[1] == alarm


def test_few_or_unlike_events_pass_unchanged() -> None:
    events = [
        down("gw-1"),
        down("gw-2"),
        Event(time_s=30.0, kind="node_state", node="gw-3", message="ready → draining"),
    ]
    assert coalesce_events(events, over=2) == events
    differing_data = [
        Event(time_s=1.0, kind="action", node=f"gw-{i}", message="drain", data={"rate_per_s": i})
        for i in range(5)
    ]
    assert coalesce_events(differing_data, over=2) == differing_data


def test_a_coalesced_event_still_belongs_to_each_of_its_nodes() -> None:
    merged = coalesce_events([down(f"gw-{index}") for index in range(4)], over=2)
    assert merged[0].names("gw-2") and not merged[0].names("gw-9")
    fleet = ScriptedFleet(nodes=2)
    history = FrameHistory(epoch="e1")
    frame, _ = fleet.advance()
    history.stamp(frame, merged)
    assert [event.message for event in history.node_events("gw-3", limit=5)] == ["4 nodes: ready → down"]


def test_events_that_name_their_own_node_coalesce_and_say_how_many() -> None:
    # The simulator's and the controller's node events carry the id in the message.
    restarts = [
        Event(
            time_s=30.0,
            kind="node_state",
            node=f"gw-{i:03d}",
            message=f"gw-{i:03d} restarted: ready → restarting",
        )
        for i in range(12)
    ]
    merged = coalesce_events(restarts, over=10)
    assert len(merged) == 1
    assert merged[0].message == "12 nodes restarted: ready → restarting"
    assert merged[0].node_ids() == tuple(f"gw-{i:03d}" for i in range(12))


def test_an_id_inside_a_longer_one_is_not_the_node() -> None:
    events = [
        Event(time_s=1.0, kind="action", node=f"gw-{i}", message=f"gw-{i} took over from gw-{i}0")
        for i in range(1, 5)
    ]
    merged = coalesce_events(events, over=2)
    assert merged == events  # "N took over from gw-10", "N took over from gw-20", …: not alike


def test_the_same_change_in_different_seconds_stays_apart() -> None:
    # At speed > 1 one frame carries several fleet seconds; when a node went down is the point.
    events = [down(f"gw-{i}", t=30.0 + i % 2) for i in range(8)]
    merged = coalesce_events(events, over=3)
    assert [(event.time_s, len(event.node_ids())) for event in merged] == [(30.0, 4), (31.0, 4)]


def test_what_an_event_is_about() -> None:
    batch = Event(time_s=1.0, kind="rollout", message="batch 1/2: 2 nodes", data={"nodes": ["gw-1", "gw-2"]})
    assert batch.node_ids() == ("gw-1", "gw-2") and batch.names("gw-2")
    assert down("gw-7").node_ids() == ("gw-7",)
    fleet = Event(time_s=1.0, kind="policy", message="clients switched to full_jitter", data={"nodes": 3})
    assert fleet.node_ids() == () and not fleet.names("gw-1")
