"""Guards: thresholds, verdicts on actions, the drain planner — pure, shared by the server and the console."""

from console.guards.capacity import FleetCapacity
from console.guards.thresholds import DEFAULT_THRESHOLDS, Thresholds

__all__ = ["DEFAULT_THRESHOLDS", "FleetCapacity", "Thresholds"]
