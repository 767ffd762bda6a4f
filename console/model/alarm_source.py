"""The console's model wired to the alarm rules (`console.alarms`) and the shared thresholds."""

from __future__ import annotations

from console.alarms import AlarmEngine
from console.alarms.base import FleetView
from console.guards import Thresholds
from console.model.alarms import Acknowledgements, AlarmSource
from console.model.history import FleetModel
from console.model.node_readings import NodeReadings
from console.model.thresholds import GaugeThresholds
from console.protocol import AdmissionInForce, Alarm, Frame


def engine_source(engine: AlarmEngine) -> AlarmSource:
    """The engine judges each frame; the log wants the alarms it cleared (oldest first: among them any
    raised and cleared inside a sped-up frame) and those active after it."""

    def judged(frame: Frame, nodes: NodeReadings) -> list[Alarm]:
        fleet = FleetView.of_columns(
            nodes.ids,
            nodes.states,
            nodes.cpu_pct,
            nodes.drain_rate_per_s,
            AdmissionInForce.of(frame, nodes.ids),
            engine.thresholds,
            engine.capacity,
            nodes.history_unreachable,
            drain_status=nodes.drain_status,
        )
        engine.update(frame, fleet)
        return [*engine.last_cleared, *engine.active]

    return judged


def console_model(
    thresholds: Thresholds | None = None, acknowledged: Acknowledgements | None = None
) -> FleetModel:
    """What every console (live, bench, screenshots) starts from: one set of thresholds for the gauges'
    colours and the alarm rules, so a red gauge and its alarm never disagree about the line. `acknowledged`:
    the alarm spells acknowledged before this model (a replay's, across its seeks)."""
    shared = thresholds if thresholds is not None else Thresholds()
    model = FleetModel(GaugeThresholds.from_shared(shared), acknowledged=acknowledged)
    model.alarm_source = engine_source(AlarmEngine(shared))
    return model
