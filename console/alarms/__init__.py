"""Alarm rules over the frame history — pure: frames in, alarms out (../shared/DESIGN.md, "Alarms").

    engine = AlarmEngine()              # thresholds default to the seeds' numbers
    for frame in frames:
        for change in engine.update(frame):  # Events: kind "alarm", data.change "raised" | "cleared"
            ...
    engine.active, engine.history, engine.acknowledge("cpu_abort", node="gw-017")

Names and rules are listed in docs/alarms.md.
"""

from console.alarms.engine import HISTORY_LIMIT, AlarmEngine, alarms_fired
from console.alarms.rules import AlarmName, FleetView, Reading
from console.guards.capacity import FleetCapacity
from console.guards.thresholds import Thresholds

#: The alarm engine's thresholds are the one shared record guards use too.
AlarmThresholds = Thresholds

__all__ = [
    "HISTORY_LIMIT",
    "AlarmEngine",
    "AlarmName",
    "AlarmThresholds",
    "FleetCapacity",
    "FleetView",
    "Reading",
    "alarms_fired",
]
