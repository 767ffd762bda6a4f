"""Coalescing a burst of like events. Pure."""

from __future__ import annotations

from console.protocol import Event
from console.server.events import coalesce_events, names_node
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
    assert names_node(merged[0], "gw-2") and not names_node(merged[0], "gw-9")
    fleet = ScriptedFleet(nodes=2)
    history = FrameHistory(epoch="e1")
    frame, _ = fleet.advance()
    history.stamp(frame, merged)
    assert [event.message for event in history.node_events("gw-3", limit=5)] == ["4 nodes: ready → down"]
