"""`GET /v1/thresholds`: the lines the server's guards judge with, each with where it came from — so a
console pre-fills its forms against the server's lines, not its own (a console with the defaults pre-filled
a rollout's 75 % pause line, and a server run with STORMDECK_CPU_PAUSE_PCT=60 asked for its name typed)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from console.client.actions import ActionClient
from console.guards import Thresholds
from console.guards.config import DEFAULT_SOURCE, GIVEN_SOURCE, load_thresholds
from console.protocol import API_VERSION, ThresholdsRecord
from tests.actions.conftest import Acting, start_acting
from tests.actions.test_api import problem
from tests.server.conftest import TOKENS


async def test_each_threshold_is_served_with_its_value_and_source(tmp_path: Path) -> None:
    project = tmp_path / "stormdeck.toml"
    project.write_text("[thresholds]\nheadroom_min_pct = 40\n", encoding="utf-8")
    loaded = load_thresholds(tmp_path, tmp_path / "user", {"STORMDECK_CPU_PAUSE_PCT": "60"})
    acting = start_acting(tmp_path, thresholds=loaded)
    try:
        response = await acting.call("GET", "/v1/thresholds", role="viewer")
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["api_version"] == API_VERSION
        served = body["thresholds"]
        assert served["cpu_pause_pct"] == {"value": 60, "source": "env STORMDECK_CPU_PAUSE_PCT"}
        assert served["headroom_min_pct"] == {"value": 40, "source": str(project)}
        assert served["cpu_abort_pct"] == {"value": 80, "source": DEFAULT_SOURCE}
        assert served["max_concurrent_drains"] == {"value": 30, "source": DEFAULT_SOURCE}  # a whole number
        # Every threshold, as the guards hold it, and as `stormdeck config check --json` reports it.
        guards = acting.server.app.state.desk.thresholds
        assert guards == loaded.thresholds
        assert served == loaded.report()
        assert {name: item["value"] for name, item in served.items()} == dataclasses.asdict(guards)
    finally:
        acting.server.stop()
        acting.audit.close()


async def test_thresholds_given_without_their_sources_say_default_or_given(tmp_path: Path) -> None:
    """A server handed plain `Thresholds` (a drill served headless, a test) knows no file or variable."""
    acting = start_acting(tmp_path, thresholds=Thresholds(cpu_pause_pct=60))
    try:
        served = (await acting.call("GET", "/v1/thresholds", role="viewer")).json()["thresholds"]
        assert served["cpu_pause_pct"] == {"value": 60, "source": GIVEN_SOURCE}
        assert served["cpu_abort_pct"] == {"value": 80, "source": DEFAULT_SOURCE}
    finally:
        acting.server.stop()
        acting.audit.close()


async def test_thresholds_are_a_read_any_token_may_make_and_no_token_may_not(acting: Acting) -> None:
    problem(await acting.call("GET", "/v1/thresholds", role=None), 401, "authorization")
    wrong = await acting.call("GET", "/v1/thresholds", role=None, Authorization="Bearer not-a-token-at-all")
    problem(wrong, 401, "authorization")
    for role in ("viewer", "operator", "admin"):
        assert (await acting.call("GET", "/v1/thresholds", role=role)).status_code == 200
    assert acting.audit.tail(10) == []  # a read: nothing audited


async def test_the_client_reads_them_as_the_typed_record(acting: Acting) -> None:
    async with ActionClient(acting.url, TOKENS["viewer"]) as client:
        record = await client.thresholds()
    assert isinstance(record, ThresholdsRecord)
    assert record.thresholds["cpu_pause_pct"].value == 75
    assert record.thresholds["cpu_pause_pct"].source == DEFAULT_SOURCE
    schema = acting.server.app.openapi()
    assert "ThresholdsRecord" in schema["components"]["schemas"]
    assert "get" in schema["paths"]["/v1/thresholds"]
