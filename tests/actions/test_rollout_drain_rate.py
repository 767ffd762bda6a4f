"""`POST /v1/rollout` with `drain_rate_per_s`: bad input names the field and its range; a dry run judges
the batch's drain at the rate asked for, not the backend's."""

from __future__ import annotations

import pytest

from tests.actions.conftest import Acting
from tests.actions.test_api import problem

START = {"batch_size": 1, "interval_s": 30, "mode": "drain"}


@pytest.mark.parametrize("rate", [0, -1, 2_000_000_000, "20"])
async def test_a_drain_rate_out_of_range_is_bad_input_naming_the_field_and_range(
    acting: Acting, rate: object
) -> None:
    response = await acting.call("POST", "/v1/rollout", {**START, "drain_rate_per_s": rate})
    body = problem(response, 422, "drain_rate_per_s", "drain_rate_per_s: ", "allowed: ")
    assert "closes per second per draining node" in body["detail"], body["detail"]
    if not isinstance(rate, str):
        assert "allowed: (0, 1000000000]" in body["detail"], body["detail"]


async def test_a_dry_run_judges_the_drain_rate_asked_for(acting: Acting) -> None:
    asked = await acting.call("POST", "/v1/rollout", {**START, "drain_rate_per_s": 20, "dry_run": True})
    assert asked.status_code == 200, asked.text
    pacing = next(c for c in asked.json()["verdict"]["checks"] if c["name"] == "drain_pacing_per_s")
    assert "20/s per node" in pacing["why"] and pacing["value"] == pytest.approx(20.0, abs=1.0), pacing
    assert acting.simulation.rollout.state.value == "idle"  # a dry run: nothing started
