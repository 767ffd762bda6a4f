"""The fleet API's routes as the commands that serve it say them in their --help.

`sim serve --help` listed the read routes alone (no drain, rollout, admission …), as written when the API
had nothing else; nothing checked it. This table is the help's only source, and
`tests/server/test_route_table.py` holds it to the apps `sim serve` and `stormdeck controller` really
serve, so a route added to one of them and not here fails a test. Plain data: a command's --help must not
pay for importing FastAPI.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Server(StrEnum):
    """Which command serves the app: the simulator (`sim serve`) or the controller over real nodes
    (`stormdeck controller`, `fleet up`)."""

    SIMULATOR = "simulator"
    CONTROLLER = "controller"


class Area(StrEnum):
    """A group of routes as --help says them, with who may call them."""

    READS = "reads (any token, viewer or higher)"
    ACTIONS = "actions (operator or higher; guarded, confirmed when risky, audited)"
    CLOCK = "the clock"
    INJECTIONS = "injections (admin)"


@dataclass(frozen=True)
class RouteSaid:
    method: str  # GET, POST, PUT; WS for a WebSocket
    path: str
    area: Area
    what: str = ""  # said after the route where its path does not say it
    servers: frozenset[Server] = frozenset(Server)
    # What the route answers on a server that serves it but cannot do it (the controller's clock).
    refused_on: dict[Server, str] | None = None

    def said(self, server: Server) -> str:
        route = f"the {self.path} WebSocket" if self.method == "WS" else f"{self.method} {self.path}"
        notes = [self.what] if self.what else []
        if self.refused_on is not None and server in self.refused_on:
            notes = [self.refused_on[server]]
        return route + (f" ({'; '.join(notes)})" if notes else "")


ROUTES: tuple[RouteSaid, ...] = (
    RouteSaid("GET", "/v1/fleet", Area.READS),
    RouteSaid("GET", "/v1/nodes/{node_id}", Area.READS),
    RouteSaid("GET", "/v1/nodes/{node_id}/drain-plan", Area.READS),
    RouteSaid("GET", "/v1/capacity", Area.READS),
    RouteSaid("GET", "/v1/thresholds", Area.READS),
    RouteSaid("GET", "/v1/audit", Area.READS),
    RouteSaid("GET", "/v1/sim/clock", Area.READS),
    RouteSaid("WS", "/v1/stream", Area.READS, "a frame a second and the events"),
    RouteSaid("POST", "/v1/nodes/{node_id}/drain", Area.ACTIONS),
    RouteSaid("POST", "/v1/nodes/{node_id}/undrain", Area.ACTIONS),
    RouteSaid("POST", "/v1/rollout", Area.ACTIONS, "start"),
    RouteSaid("POST", "/v1/rollout/halt", Area.ACTIONS),
    RouteSaid("POST", "/v1/rollout/resume", Area.ACTIONS),
    RouteSaid("PUT", "/v1/admission", Area.ACTIONS),
    RouteSaid("POST", "/v1/capacity", Area.ACTIONS, "add nodes"),
    RouteSaid(
        "POST",
        "/v1/sim/clock",
        Area.CLOCK,
        "pause, resume, speed; operator or higher",
        refused_on={Server.CONTROLLER: "answers 409: a real fleet runs on the wall clock"},
    ),
    RouteSaid("POST", "/v1/sim/inject", Area.INJECTIONS, servers=frozenset({Server.SIMULATOR})),
)

#: Served without a token: the contract itself.
OPENAPI_PATH = "/openapi.json"


def routes_of(server: Server) -> list[RouteSaid]:
    return [route for route in ROUTES if server in route.servers]


#: The title of the routes' section in a serving command's --help.
SECTION_TITLE = "routes of the fleet API v1 (under /v1/: Authorization: Bearer TOKEN)"


def routes_said(server: Server) -> list[tuple[str, list[str]]]:
    """The routes `server` serves by area, for a command's --help: ("reads (…)", ["GET /v1/fleet", …]),
    ("actions (…)", ["POST /v1/nodes/{node_id}/drain", …]), …, ("no token", ["/openapi.json"])."""
    areas: dict[Area, list[str]] = {}
    for route in routes_of(server):
        areas.setdefault(route.area, []).append(route.said(server))
    return [*((area.value, routes) for area, routes in areas.items()), ("no token", [OPENAPI_PATH])]


def routes_section(server: Server) -> tuple[str, list[tuple[str, list[str]]]]:
    """`CommandParser(sections=[…])`'s entry for a command serving the fleet API as `server`."""
    return SECTION_TITLE, routes_said(server)
