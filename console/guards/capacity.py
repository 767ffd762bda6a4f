"""What one node can absorb: the figures a backend knows and a frame does not carry.

The simulator fills it from its node model; a real fleet's controller from its load tests (the field guide:
"quote your own 3.3× number"). Guards, the drain planner and the drain-pacing alarm read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from console.errors import InputError


@dataclass(frozen=True)
class FleetCapacity:
    """Per-node capacity of the fleet's gateway nodes.

    handshakes_per_s: new connections one node completes per second at 100 % CPU budget for handshakes.
    cpu_pct_per_handshake_per_s: CPU percentage points one node spends on one handshake per second
        (the outage seed: reconnect, not holding, is what burns CPU).
    connections_per_node: connections one node holds at 100 % capacity (the planning target behind headroom).
    """

    handshakes_per_s: float
    cpu_pct_per_handshake_per_s: float
    connections_per_node: int

    def __post_init__(self) -> None:
        if not self.handshakes_per_s > 0:
            raise InputError("handshakes_per_s", self.handshakes_per_s, "a number > 0")
        if not self.cpu_pct_per_handshake_per_s > 0:
            raise InputError("cpu_pct_per_handshake_per_s", self.cpu_pct_per_handshake_per_s, "a number > 0")
        if self.connections_per_node <= 0:
            raise InputError("connections_per_node", self.connections_per_node, "a whole number > 0")
