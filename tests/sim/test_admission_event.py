"""The simulator's `admission` event says the whole setting, as the report's timeline and the console's events
show it. Review: "admission set: 400.0/s per node, ceiling ∞" left out the Retry-After window — the half of
the seeds' fix that spreads the returning clients."""

from __future__ import annotations

from console.protocol import AdmissionSettings
from console.sim.engine import Simulation
from console.sim.scenario_loader import load_scenario


def test_the_admission_event_names_the_rate_burst_ceiling_and_retry_after_window() -> None:
    sim = Simulation(load_scenario("graceful-drain", ["rollout.start_at_s=9999", "nodes.count=4"]))
    sim.set_admission(
        AdmissionSettings(rate_per_s=400.0, burst=400, max_connections=None, retry_after_s=(5, 30))
    )
    (event,) = [e for e in sim._pending_events if e.kind == "admission"]
    assert event.message == "admission set: rate 400/s per node, burst 400, Retry-After 5–30 s", event.message
