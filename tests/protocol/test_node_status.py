"""A node status's optional fields: present when they say something, left out of the JSON when null."""

from __future__ import annotations

import json

from console.protocol import NodeStatus
from tests.fleet_builders import node


def test_history_unreachable_is_left_out_while_null_and_read_back_when_set() -> None:
    # Null on every node of every frame made a frame ~11 % larger for a field a simulated node never sets.
    calm = json.loads(node("gw-000").model_dump_json())
    assert "history_unreachable" not in calm
    assert NodeStatus.model_validate(calm).history_unreachable is None  # an older node's frame reads as calm
    why = "Redis at redis://127.0.0.1:6379/0: ConnectionError: Connection refused"
    away = node("gw-000", history_unreachable=why).model_dump_json()
    assert NodeStatus.model_validate_json(away).history_unreachable == why
