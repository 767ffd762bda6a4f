"""`POST /v1/sim/clock`: whose it is (an operator's on `sim serve`, the instructor's in a served drill) and
its audit records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from console.audit import verify_file
from console.server.tokens import Role
from tests.actions.conftest import Acting, start_acting
from tests.actions.test_api import problem


@pytest.fixture
def instructed(tmp_path: Path) -> Iterator[Acting]:
    """The server as a served drill has it: the clock is the instructor's (admin)."""
    running = start_acting(tmp_path, clock_role=Role.ADMIN)
    yield running
    running.server.stop()
    running.audit.close()


def clock_records(acting: Acting) -> list[dict]:
    return [r for r in acting.audit.tail(100) if r["action"] == "clock"]


async def test_an_operator_runs_a_plain_simulators_clock_and_each_change_is_audited(acting: Acting) -> None:
    paused = await acting.call("POST", "/v1/sim/clock", {"paused": True})
    assert paused.status_code == 200 and paused.json()["paused"] is True
    faster = await acting.call("POST", "/v1/sim/clock", {"speed": 5})
    assert faster.status_code == 200 and faster.json()["speed"] == 5
    records = clock_records(acting)
    assert [(r["actor"], r["role"], r["status"], r["outcome"]) for r in records] == [
        ("operator-person", "operator", 200, "applied"),
        ("operator-person", "operator", 200, "applied"),
    ]
    assert records[0]["parameters"] == {"paused": True} and records[1]["parameters"] == {"speed": 5.0}
    assert "paused" in records[0]["detail"] and "5" in records[1]["detail"]
    assert verify_file(acting.audit.path).intact


async def test_a_served_drills_clock_is_the_instructors_and_a_trainees_attempt_is_audited(
    instructed: Acting,
) -> None:
    for change in ({"paused": True}, {"speed": 100}):
        refused = await instructed.call("POST", "/v1/sim/clock", change)
        problem(refused, 403, "authorization", "admin", "operator-person")
    clock = (await instructed.call("GET", "/v1/sim/clock")).json()
    assert clock["paused"] is False and clock["speed"] == 1, "nothing applied"
    started = await instructed.call("POST", "/v1/sim/clock", {"paused": True}, role="admin")
    assert started.status_code == 200 and started.json()["paused"] is True
    records = clock_records(instructed)
    assert [(r["actor"], r["status"], r["outcome"]) for r in records] == [
        ("operator-person", 403, "forbidden"),
        ("operator-person", 403, "forbidden"),
        ("admin-person", 200, "applied"),
    ]
    assert verify_file(instructed.audit.path).intact
