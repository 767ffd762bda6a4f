"""A rollout may ask for its batches' drain rate (`drain_rate_per_s`, closes per second per draining node):
optional and additive in v1 — absent or null, each batch node drains at the backend's own rate, as before.
Its range is a drain's (`DrainRequest.rate_per_s`): > 0 and ≤ 10⁹, from `console.protocol.limits`."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from console.model.actions.form import FORMS
from console.protocol import ActionKind, DrainRequest, RolloutRequest, limits


def test_absent_or_null_is_the_backends_rate() -> None:
    assert RolloutRequest(batch_size=1, interval_s=90).drain_rate_per_s is None
    assert RolloutRequest(batch_size=1, interval_s=90, drain_rate_per_s=None).drain_rate_per_s is None
    assert RolloutRequest(batch_size=1, interval_s=90, drain_rate_per_s=20).drain_rate_per_s == 20.0


@pytest.mark.parametrize("rate", [0, -5, limits.BILLION + 1, "20", True, float("inf")])
def test_out_of_range_or_not_a_number_is_refused_naming_the_field(rate: object) -> None:
    with pytest.raises(ValidationError) as refused:
        RolloutRequest(batch_size=1, interval_s=90, drain_rate_per_s=rate)
    assert [error["loc"] for error in refused.value.errors()] == [("drain_rate_per_s",)]


def test_the_range_is_a_drains_and_the_forms() -> None:
    assert (0.0, float(limits.BILLION)) == limits.DRAIN_RATE_PER_S
    for model in (DrainRequest, RolloutRequest):
        name = "rate_per_s" if model is DrainRequest else "drain_rate_per_s"
        bounds = {type(m).__name__: m for m in model.model_fields[name].metadata}
        assert (bounds["Gt"].gt, bounds["Le"].le) == limits.DRAIN_RATE_PER_S, model
    spec = next(f for f in FORMS[ActionKind.ROLLOUT_START] if f.name == "drain_rate_per_s")
    assert (spec.low, spec.low_open, spec.high, spec.optional) == (
        0.0,
        True,
        limits.DRAIN_RATE_PER_S[1],
        True,
    )


def test_the_rollout_status_says_the_rate_it_was_started_with_and_an_older_frame_reads_as_before() -> None:
    """The status says the rate the rollout asked for (`RolloutStatus.drain_rate_per_s`, optional in v1):
    null where it asked for none (the backend's rate), and in a frame from an older server."""
    import json

    from console.client.decode import decode_message
    from console.protocol import Frame, RolloutStatus
    from tests.fleet_builders import frame

    assert RolloutStatus().drain_rate_per_s is None
    assert RolloutStatus(drain_rate_per_s=10).drain_rate_per_s == 10.0
    older = frame(3.0).model_dump(mode="json")
    older["rollout"] = {"state": "running", "mode": "drain", "batch": 1, "batches": 3}
    decoded = decode_message(json.dumps(older))
    assert isinstance(decoded, Frame) and decoded.rollout is not None
    assert decoded.rollout.drain_rate_per_s is None
