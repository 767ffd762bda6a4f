"""A real uvicorn serving the fleet API over a small calm simulation, with the write side on."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from console.audit import AuditLog
from console.guards import Thresholds
from console.server.app import create_app
from console.server.confirm import ConfirmTokens
from console.server.runner import ServerThread
from console.server.simulator import SimulatorBackend
from console.server.tokens import Role, parse_tokens
from console.sim.engine import Simulation
from console.sim.scenario_loader import build_scenario
from tests.server.conftest import TOKEN_FILE, TOKENS, auth

__all__ = ["TOKENS", "Acting", "auth", "calm_simulation"]

PROBLEM = "application/problem+json"
#: 8 nodes, 20 000 clients, nothing scheduled: every verdict is the test's doing.
CALM = {
    "name": "calm-test",
    "duration_s": 3600,
    "clients": {"count": 20_000},
    "nodes": {"count": 8, "capacity_connections": 50_000, "handshakes_per_s": 1500},
}


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def calm_simulation(**sections: Any) -> Simulation:
    data = {**CALM, **sections}
    return Simulation(build_scenario(data))


@dataclass
class Acting:
    url: str
    server: ServerThread
    backend: SimulatorBackend
    audit: AuditLog
    clock: FakeClock

    @property
    def simulation(self) -> Simulation:
        return self.backend.simulation

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, timeout=10)

    async def call(
        self, method: str, path: str, body: object = None, role: str | None = "operator", **headers: str
    ) -> httpx.Response:
        sent = {**(auth(role) if role else {}), **headers}
        async with self.client() as client:
            return await client.request(method, path, json=body, headers=sent)


def start_acting(
    tmp_path: Path,
    frame_interval_s: float = 0.05,
    forecast_horizon_s: int | None = None,
    thresholds: Thresholds | None = None,
    clock_role: Role = Role.OPERATOR,
    simulation: Simulation | None = None,
    **sections: Any,
) -> Acting:
    """`simulation`: one already run to the state a test needs (else a calm one with `sections`)."""
    simulation = simulation or calm_simulation(**sections)
    backend = SimulatorBackend(simulation, forecast_horizon_s=forecast_horizon_s)
    audit = AuditLog(tmp_path / "audit.jsonl")
    clock = FakeClock()
    app = create_app(
        backend,
        parse_tokens(TOKEN_FILE),
        frame_interval_s=frame_interval_s,
        audit_log=audit,
        thresholds=thresholds or Thresholds(),
        confirmations=ConfirmTokens(clock=clock),
        clock_role=clock_role,
    )
    server = ServerThread(app).start()
    return Acting(server.url, server, backend, audit, clock)


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels() -> None:
    """Compile (or load) the simulator's kernels once, before any server starts: on a fresh checkout
    numba's first compile takes longer than a server's ready timeout."""
    sim = calm_simulation()
    sim.step()
    sim.drain("gw-000", 100.0, 1.0, (100, 200))
    sim.step()
    sim.step()


@pytest.fixture
def acting(tmp_path: Path) -> Iterator[Acting]:
    running = start_acting(tmp_path)
    yield running
    running.server.stop()
    running.audit.close()
