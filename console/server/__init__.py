"""The fleet API v1 server (DESIGN.md, "The fleet API, v1") over a `FleetBackend`.

`create_app(backend, tokens)` builds the FastAPI app; `console.server.simulator.SimulatorBackend` serves
the simulator (`stormdeck sim serve`); the controller over real gateway nodes (#6) is another backend.
"""

from console.server.app import create_app
from console.server.backend import FleetBackend, Tick
from console.server.tokens import Principal, Role, TokenRegistry, load_token_file, parse_tokens

__all__ = [
    "FleetBackend",
    "Principal",
    "Role",
    "Tick",
    "TokenRegistry",
    "create_app",
    "load_token_file",
    "parse_tokens",
]
