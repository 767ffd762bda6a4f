"""The console's reconnect baseline on frame sequences: calm → storm → calm, and attached mid-storm.

Reviewer's drill (regional-outage, attached after the power cut): the attempts gauge read "1.0× steady
(42.8k/s)" while every node was at 100 % CPU with ~35k handshake timeouts a second."""

from __future__ import annotations

from console.model import FleetModel, Received
from console.protocol import Frame
from tests.fleet_builders import node, series

CALM = {"attempts_per_s": 100.0, "accepts_per_s": 100.0, "max_cpu_pct": 30.0}
#: regional-outage at 02:02:41, its 20 nodes as 4: 44.4k attempts/s, 9.1k accepted, 35.3k timed out.
STORM = {
    "attempts_per_s": 44_435.0,
    "accepts_per_s": 9_141.0,
    "timeouts_per_s": 35_294.0,
    "max_cpu_pct": 100.0,
}
HOT = [node(f"gw-{i:03d}", cpu_pct=100.0, timeouts_per_s=8_800.0) for i in range(4)]


def fed(*spells: list[Frame]) -> FleetModel:
    model = FleetModel()
    for spell in spells:
        for frame in spell:
            model.apply(Received(frame, frame.time_s))
    return model


def test_attached_mid_storm_the_console_learns_no_baseline_until_it_is_calm() -> None:
    model = fed(series(60, 120, fleet=HOT, **STORM))
    assert model.baseline_attempts_per_s is None and not model.calm_seen
    model = fed(series(60, 120, fleet=HOT, **STORM), series(180, 31, **CALM))
    assert model.calm_seen and model.baseline_attempts_per_s == 100.0


def test_calm_then_storm_then_calm_keeps_the_calm_baseline() -> None:
    """A storm under the 10× line (5× here, every node at 100 % CPU, 80 % of attempts timing out): the
    average of frames "under the line" followed it, 100/s → ~350/s in five minutes."""
    storm = {"attempts_per_s": 500.0, "accepts_per_s": 100.0, "timeouts_per_s": 400.0, "max_cpu_pct": 100.0}
    model = fed(series(0, 40, **CALM), series(40, 300, fleet=HOT, **storm))
    assert model.baseline_attempts_per_s == 100.0  # frozen at the last calm value through the storm
    model = fed(series(0, 40, **CALM), series(40, 300, fleet=HOT, **storm), series(340, 60, **CALM))
    assert model.baseline_attempts_per_s == 100.0


def test_a_hot_node_marks_a_storm_when_the_totals_do_not_say_the_hottest() -> None:
    """An older source's totals carry no max_cpu_pct: the nodes' own CPU says it."""
    model = fed(series(0, 60, fleet=HOT, attempts_per_s=100.0, accepts_per_s=100.0))
    assert not model.calm_seen


def test_a_baseline_under_the_floor_is_said_as_the_floor() -> None:
    """A quiet loopback fleet (0 attempts/s while calm) read "0.0× steady (10/s)": a steady rate nobody had
    seen, the 10/s floor (review). Over the floor it is the steady rate, as before."""
    from console.model.gauges import fleet_gauges

    def attempts_gauge(model: FleetModel):
        return next(g for g in fleet_gauges(model) if g.key == "attempts")

    quiet = fed(series(0, 60, attempts_per_s=0.0, accepts_per_s=0.0))
    assert quiet.baseline_attempts_per_s == 10.0 and quiet.baseline_at_floor
    assert attempts_gauge(quiet).detail == "0.0× floor (10/s)"
    busy = fed(series(0, 60, **CALM))
    assert not busy.baseline_at_floor and attempts_gauge(busy).detail == "1.0× steady (100/s)"
