"""What a fleet says it can do, typed, optional in v1: `rollout.unavailable_reason` (why it cannot roll out)
and `max_nodes` on frames and snapshots (whether it can add capacity) — read instead of guessed from text."""

from __future__ import annotations

import json

from console.protocol import FleetSnapshot, Frame, RolloutStatus, Source, UnavailableReason
from tests.fleet_builders import frame


def test_an_older_servers_rollout_status_and_frame_say_nothing_of_either() -> None:
    older = {"state": "idle", "unavailable": "restart: 'node-1' is not allowed; expected a restart command"}
    status = RolloutStatus.model_validate(older)
    assert status.unavailable_reason is None and status.unavailable is not None
    older_frame = json.loads(frame(3.0).model_dump_json())
    older_frame.pop("max_nodes")
    assert Frame.model_validate(older_frame).max_nodes is None


def test_the_reason_round_trips_and_a_newer_servers_reason_is_kept_by_its_name() -> None:
    status = RolloutStatus(
        unavailable="no restart command", unavailable_reason=UnavailableReason.NO_RESTART_COMMAND
    )
    said = json.loads(status.model_dump_json())
    assert said["unavailable_reason"] == "no_restart_command"
    assert RolloutStatus.model_validate(said).unavailable_reason == UnavailableReason.NO_RESTART_COMMAND
    # An open set, as `waiting_for.what`: a reason this console does not know is read, not refused (a
    # refused frame would blank the whole console).
    said["unavailable_reason"] = "change_freeze"
    assert RolloutStatus.model_validate(said).unavailable_reason == "change_freeze"


def test_max_nodes_round_trips_on_a_frame_and_its_snapshot_says_the_same() -> None:
    fleet_up = frame(5.0).model_copy(update={"max_nodes": 16})
    assert Frame.model_validate_json(fleet_up.model_dump_json()).max_nodes == 16
    assert FleetSnapshot.of_frame(fleet_up, "loopback", Source.LIVE).max_nodes == 16
    nodes_file = FleetSnapshot.of_frame(frame(5.0).model_copy(update={"max_nodes": 0}), "f", Source.LIVE)
    assert FleetSnapshot.model_validate_json(nodes_file.model_dump_json()).max_nodes == 0
