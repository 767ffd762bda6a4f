"""The routes `sim serve --help` and `stormdeck controller --help` list are the routes those commands serve.

`sim serve --help` said it serves "GET /v1/fleet, GET /v1/nodes/{id}, the /v1/stream WebSocket, POST
/v1/sim/clock, and /openapi.json" — the read routes alone, long after drain, rollout, admission and add
capacity were served beside them. The help now comes from `console.server.route_table`, held here to the
apps the two commands build."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIWebSocketRoute
from starlette.routing import WebSocketRoute

from console.audit import AuditLog
from console.cli import main
from console.gateway.controller import Controller
from console.gateway.nodes_file import NodeEntry
from console.server.app import create_app
from console.server.route_table import OPENAPI_PATH, Server, routes_of
from console.server.simulator import SimulatorBackend
from console.server.tokens import parse_tokens
from console.sim.engine import Simulation
from console.sim.scenario_loader import load_scenario

TOKENS = "operator op-token ops\n"


def served(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of every route `app` serves ("WS" for a WebSocket), HEAD and the OpenAPI document
    left out."""
    found: set[tuple[str, str]] = set()

    def walk(routes: list) -> None:  # type: ignore[type-arg]
        for route in routes:
            included = getattr(route, "original_router", None)  # FastAPI ≥ 0.16x keeps included routers whole
            if included is not None:
                walk(included.routes)
            elif isinstance(route, APIWebSocketRoute | WebSocketRoute):
                found.add(("WS", route.path))
            elif route.path != OPENAPI_PATH:
                found.update((method, route.path) for method in route.methods - {"HEAD"})

    walk(app.routes)
    return found


def _app(server: Server, tmp_path: Path) -> FastAPI:
    """The app as the command serving as `server` builds it (with an audit log: the write side on)."""
    if server is Server.SIMULATOR:
        backend: object = SimulatorBackend(Simulation(load_scenario("demo")))
    else:
        backend = Controller([NodeEntry("a", "http://127.0.0.1:9")], "node-token")
    return create_app(backend, parse_tokens(TOKENS), audit_log=AuditLog(tmp_path / f"{server}.jsonl"))  # type: ignore[arg-type]


@pytest.mark.parametrize("server", list(Server))
def test_the_table_is_what_each_server_serves(server: Server, tmp_path: Path) -> None:
    app = _app(server, tmp_path)
    said = {(route.method, route.path) for route in routes_of(server)}
    assert said == served(app)
    assert app.openapi_url == OPENAPI_PATH


@pytest.mark.parametrize(
    ("argv", "server"),
    [
        (["sim", "serve"], Server.SIMULATOR),
        (["controller"], Server.CONTROLLER),
        (["fleet", "up"], Server.CONTROLLER),
    ],
)
def test_each_serving_commands_help_lists_every_route_it_serves(argv, server, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as ended:
        main([*argv, "--help"])
    assert ended.value.code == 0
    text = capsys.readouterr().out
    for route in routes_of(server):
        said = f"the {route.path} WebSocket" if route.method == "WS" else f"{route.method} {route.path}"
        assert said in text, said
    assert ("POST /v1/sim/inject" in text) is (server is Server.SIMULATOR)
    assert all(len(line) <= 80 for line in text.split("\nexamples:")[0].splitlines()), text


async def test_the_controllers_clock_answers_409_as_its_help_says(tmp_path: Path) -> None:
    (route,) = [r for r in routes_of(Server.CONTROLLER) if (r.method, r.path) == ("POST", "/v1/sim/clock")]
    assert "409" in route.said(Server.CONTROLLER)
    app = _app(Server.CONTROLLER, tmp_path)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://fleet",
        headers={"Authorization": "Bearer op-token"},
    ) as api:
        answer = await api.post("/v1/sim/clock", json={"paused": True})
    assert answer.status_code == 409, answer.text
