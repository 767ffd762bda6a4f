"""One range per value wherever it enters: a scenario (file or `--set`), a fleet API body, a console form.

docs/actions.md: "rates ≤ 10⁹, times ≤ a week" for a body; `console.protocol.limits` is the one place the
scenario loader, the request models and the forms take their ends from, so a drain or rollout the API takes
is one a scenario could have run, and the other way round.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from console.errors import InputError
from console.model.actions.form import FORMS
from console.protocol import ActionKind, DrainRequest, RolloutRequest, limits
from console.sim.scenario_loader import load_scenario

WEEK_S = 7 * 86_400
#: The most nodes a fleet may have (the scenario's nodes.count, an add of capacity): a batch is never more.
NODES_MAX = 10_000
HINT = (1000, 5000)


def _form_high(kind: ActionKind, name: str) -> float | None:
    return next(spec.high for spec in FORMS[kind] if spec.name == name)


def test_a_week_is_the_documented_bound_of_a_time() -> None:
    assert limits.DRAIN_DEADLINE_S[1] == WEEK_S
    assert limits.ROLLOUT_INTERVAL_S[1] == WEEK_S


@pytest.mark.parametrize(
    ("scenario_key", "value"),
    [
        ("rollout.drain_deadline_s", WEEK_S),
        ("rollout.interval_s", WEEK_S),
        ("rollout.batch_size", NODES_MAX),
    ],
)
def test_the_api_upper_end_loads_in_a_scenario(scenario_key: str, value: float) -> None:
    overrides = [f"{scenario_key}={value}", f"nodes.count={NODES_MAX}"]
    scenario = load_scenario("demo", overrides)
    section, key = scenario_key.split(".")
    assert getattr(getattr(scenario, section), key) == value


@pytest.mark.parametrize(
    ("scenario_key", "value"),
    [
        ("rollout.drain_deadline_s", WEEK_S + 1),
        ("rollout.interval_s", WEEK_S + 1),
    ],
)
def test_beyond_the_end_is_refused_by_a_scenario(scenario_key: str, value: float) -> None:
    with pytest.raises(InputError) as error:
        load_scenario("demo", [f"{scenario_key}={value}"])
    assert error.value.field == scenario_key


def test_the_request_models_take_the_same_ends() -> None:
    DrainRequest(rate_per_s=1, deadline_s=WEEK_S, hint_ms=HINT)
    with pytest.raises(ValidationError):
        DrainRequest(rate_per_s=1, deadline_s=WEEK_S + 1, hint_ms=HINT)
    RolloutRequest(batch_size=NODES_MAX, interval_s=WEEK_S)
    with pytest.raises(ValidationError):
        RolloutRequest(batch_size=NODES_MAX + 1, interval_s=90)
    with pytest.raises(ValidationError):
        RolloutRequest(batch_size=1, interval_s=WEEK_S + 1)


def test_a_batch_is_never_larger_than_a_fleet_can_be() -> None:
    assert limits.ROLLOUT_BATCH_SIZE[1] == limits.NODE_COUNT[1] == NODES_MAX
    with pytest.raises(InputError) as error:
        load_scenario("demo", [f"nodes.count={NODES_MAX + 1}"])
    assert error.value.field == "nodes.count"


def test_the_forms_take_the_same_ends() -> None:
    assert _form_high(ActionKind.DRAIN, "deadline_s") == limits.DRAIN_DEADLINE_S[1]
    assert _form_high(ActionKind.ROLLOUT_START, "interval_s") == limits.ROLLOUT_INTERVAL_S[1]
    assert _form_high(ActionKind.ROLLOUT_START, "batch_size") == limits.ROLLOUT_BATCH_SIZE[1]
