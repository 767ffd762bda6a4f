"""The server's node history joined to the frames the console saw after asking."""

from __future__ import annotations

import numpy as np

from console.model.node_detail import ServerHistory, joined_events, joined_series, parse_node_detail
from console.protocol import Event


def payload(n: int) -> dict:
    history = [
        {"id": "gw-1", "connections": 100 + i, "cpu_pct": 50.0, "seq": i, "time_s": float(i)}
        for i in range(n)
    ]
    history.append({"connections": "lots"})  # a sample that does not parse is a gap, not an error
    events = [
        {"time_s": 3.0, "kind": "node_state", "node": "gw-1", "message": "ready → draining"},
        {"bad": 1},
    ]
    return {"node": {"id": "gw-1"}, "history": history, "events": events}


def test_server_history_then_the_frames_after_the_fetch():
    server = parse_node_detail(payload(5), frames_applied=10)
    assert server.length == 6 and np.isnan(server.series["connections"][-1])
    seen = np.array([1.0, 2.0, 3.0])  # the console saw 3 frames of this node; 2 arrived after the fetch
    joined = joined_series(server, seen, frames_applied=12, metric="connections")
    assert joined[:5].tolist() == [100, 101, 102, 103, 104] and joined[-2:].tolist() == [2.0, 3.0]


def test_the_console_own_history_wins_once_it_is_longer():
    server = parse_node_detail(payload(2), frames_applied=48)  # asked late: 3 samples, then 2 frames
    seen = np.arange(50.0)
    assert joined_series(server, seen, frames_applied=50, metric="connections").tolist() == seen.tolist()
    assert joined_series(None, seen, 50, "connections").size == 50


def test_events_merge_without_duplicates_newest_first():
    server = parse_node_detail(payload(1), frames_applied=0)
    seen = [Event(time_s=9.0, kind="action", node="gw-1", message="undrain"),
            Event(time_s=3.0, kind="node_state", node="gw-1", message="ready → draining")]  # fmt: skip
    assert [e.time_s for e in joined_events(server, seen, limit=10)] == [9.0, 3.0]


def test_events_of_one_second_are_newest_first_too():
    restart = Event(
        time_s=10.0, kind="node_state", node="gw-0", message="gw-0 rollout batch 1: ready → restarting"
    )
    cut = Event(time_s=10.0, kind="disconnect", message="restart of 6 nodes dropped 162,506 connections")
    server = ServerHistory({}, [restart, cut], 0)  # as the server held them: in the order they happened
    assert joined_events(server, [], limit=5) == [cut, restart]
    assert joined_events(None, [cut, restart], limit=5) == [cut, restart]  # the console's own, newest first
    assert joined_events(server, [cut, restart], limit=5) == [cut, restart]


def test_a_payload_that_is_not_an_object_is_an_empty_history():
    assert parse_node_detail(["nope"], 3).length == 0


def test_after_a_restart_of_the_server_its_new_events_come_first_and_say_how_a_drain_ended():
    """Seen live: `stormdeck controller` killed and restarted (a new epoch: its fleet clock starts again at
    0), then node-3, draining, hung (kill -STOP). The node detail listed the old controller's events —
    0:01:02 "restarting → ready" … — above the new one's 0:00:25, the newest out of sight, and the drain box
    read "not draining": the old epoch's "→ ready", sorted as newer by its fleet time, hid the drain's end."""
    from console.model.node_detail import ended_drain
    from tests.fleet_builders import node

    def event(epoch: str, time_s: float, kind: str, message: str, **data: object) -> Event:
        return Event(epoch=epoch, time_s=time_s, kind=kind, node="node-3", message=message, data=data)

    arrived = [  # oldest first, as they came
        event("old", 52.0, "node_state", "node-3: ready → draining", to="draining"),
        event("old", 55.0, "node_state", "node-3: drained → restarting", to="restarting"),
        event("old", 62.0, "node_state", "node-3: restarting → ready", to="ready"),
        event("new", 21.0, "node_state", "node-3: ready → draining", to="draining"),
        event("new", 25.0, "node_state", "node-3: draining → down", to="down"),
        event(
            "new", 25.0, "drain", "drain of node-3 ended: node stopped answering with 227 …", ended="silent"
        ),
    ]
    seen = arrived[::-1]  # FleetModel.node_events: newest first
    server = ServerHistory({}, arrived[3:], 0)  # what the new server holds (`GET /v1/nodes/{id}`)
    # the console's own events, joined to the server's, or only the old ones seen and the new ones asked
    for joined in ((None, seen), (server, seen), (server, arrived[2::-1])):
        recent = joined_events(*joined, limit=20)
        assert [(e.epoch, e.time_s) for e in recent] == [
            ("new", 25.0),
            ("new", 25.0),
            ("new", 21.0),
            ("old", 62.0),
            ("old", 55.0),
            ("old", 52.0),
        ]
        assert recent[0].kind == "drain"
        down = node("node-3", state="down", connections=0)
        assert ended_drain(down, recent) is recent[0]
