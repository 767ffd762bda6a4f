"""The console's model: fleet history and what is derived from it (gauges, node order, alarm log). Pure."""

from console.model.alarms import AlarmEntry, AlarmLog, AlarmSource
from console.model.gauges import Gauge, fleet_gauges, node_level
from console.model.history import FleetModel
from console.model.link import LinkState, LinkStatus, Malformed, Received, StreamItem
from console.model.nodes import NodeFilter, NodeQuery, select_nodes
from console.model.thresholds import GaugeThresholds, Level

__all__ = [
    "AlarmEntry",
    "AlarmLog",
    "AlarmSource",
    "FleetModel",
    "Gauge",
    "GaugeThresholds",
    "Level",
    "LinkState",
    "LinkStatus",
    "Malformed",
    "NodeFilter",
    "NodeQuery",
    "Received",
    "StreamItem",
    "fleet_gauges",
    "node_level",
    "select_nodes",
]
