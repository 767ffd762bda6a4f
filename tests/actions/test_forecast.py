"""The forecast: twins of the running simulation, run ahead with and without the action."""

from __future__ import annotations

import pytest

from console.errors import InputError
from console.protocol import ActionKind, DrainRequest, NodeState
from console.server.actions import FleetAction
from console.server.simulator import apply_action
from console.sim.forecast import forecast, fork_pair, run_ahead
from tests.actions.conftest import calm_simulation

DRAIN = FleetAction(
    ActionKind.DRAIN, DrainRequest(rate_per_s=200, deadline_s=600, hint_ms=(1000, 5000)), "gw-002"
)


def warmed(seconds: int = 5):
    sim = calm_simulation()
    for _ in range(seconds):
        sim.step()
    return sim


def test_the_twin_without_the_action_is_the_fleet_itself() -> None:
    sim = warmed()
    without, _ = fork_pair(sim, lambda twin: None)
    ahead = run_ahead(without, 10)
    live = [int(sim.step().connections[: sim.n_nodes].sum()) for _ in range(10)]
    assert ahead.connections == live  # same state, same random stream: the forecast is the fleet's future


def test_forking_leaves_the_fleet_as_it_was() -> None:
    sim = warmed()
    time_s, state = sim.time_s, sim.state_of(2)
    with pytest.raises(InputError):
        fork_pair(
            sim, lambda twin: apply_action(twin, FleetAction(ActionKind.UNDRAIN, DRAIN.request, "gw-002"))
        )
    result = forecast(sim, lambda twin: apply_action(twin, DRAIN), horizon_s=20)
    assert sim.time_s == time_s and sim.state_of(2) is state is NodeState.READY
    assert result.tick_ms == sim.tick_ms and result.horizon_s == 20
    assert len(result.with_action.connections) == len(result.without_action.attempts_per_s) == 20


def test_the_forecast_shows_the_drain() -> None:
    sim = warmed()
    result = forecast(sim, lambda twin: apply_action(twin, DRAIN), horizon_s=20)
    base, drained = result.without_action, result.with_action
    # 2500 clients leave gw-002 at 200/s and come back within 1–5 s: attempts rise, connections dip.
    assert drained.attempts_per_s_peak > base.attempts_per_s_peak + 150
    assert drained.connections_min < base.connections_min
    assert (
        drained.connections_min == min(drained.connections)
        and drained.connections_end == drained.connections[-1]
    )
    assert result.as_dict()["with_action"]["cpu_max_pct"] == drained.cpu_max_pct
