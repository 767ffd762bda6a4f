"""Schemathesis against the running server's /openapi.json with an operator token: no 5xx in its
generated cases, and every 4xx is problem+json. Bounded: a few examples per operation and mode."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode

from tests.actions.conftest import PROBLEM, TOKENS, Acting, start_acting

EXAMPLES_PER_MODE = 10


@pytest.fixture
def quick(tmp_path: Path) -> Iterator[Acting]:
    running = start_acting(tmp_path, forecast_horizon_s=3)  # short forecasts: many cases, seconds in all
    yield running
    running.server.stop()
    running.audit.close()


def test_generated_requests_get_no_5xx_and_problems_for_every_4xx(quick: Acting) -> None:
    schema = schemathesis.openapi.from_url(quick.url + "/openapi.json")
    headers = {"Authorization": f"Bearer {TOKENS['operator']}"}
    seen: dict[str, set[int]] = {}
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert any(op.path == "/v1/nodes/{node_id}/drain" for op in operations)
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            _exercise(quick.url, operation, mode, headers, seen, failures)()
        if "{node_id}" in operation.path:  # random ids only meet "unknown node": also aim at real ones
            _exercise(quick.url, operation, GenerationMode.POSITIVE, headers, seen, failures, "gw-002")()
    assert not failures, "\n".join(failures[:20])
    # The generator reached the guarded paths, not only the validation layer.
    assert seen["POST /v1/nodes/{node_id}/drain"] & {200, 202, 409}


def _exercise(
    url: str,
    operation,
    mode,
    headers: dict[str, str],
    seen: dict,
    failures: list[str],
    node: str | None = None,
):
    fixed = {"node_id": node} if node else None

    @given(case=operation.as_strategy(generation_mode=mode, path_parameters=fixed))
    @settings(
        max_examples=EXAMPLES_PER_MODE, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def exercise(case) -> None:
        try:
            response = case.call(base_url=url, headers=headers, timeout=30)
        except (requests.exceptions.InvalidHeader, UnicodeEncodeError, ValueError):
            return  # a header the HTTP client itself refuses to send: nothing reached the server
        seen.setdefault(operation.label, set()).add(response.status_code)
        content_type = (response.headers.get("content-type") or [""])[0]  # schemathesis: lists of values
        if response.status_code >= 500:
            failures.append(f"{operation.label} {case.body!r}: {response.status_code} {response.text[:300]}")
        elif response.status_code >= 400 and content_type != PROBLEM:
            failures.append(f"{operation.label}: {response.status_code} as {content_type!r}")

    return exercise
