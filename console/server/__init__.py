"""The fleet API v1 server (DESIGN.md, "The fleet API, v1") over a `FleetBackend`.

`console.server.app.create_app(backend, tokens)` builds the FastAPI app; `console.server.simulator`
serves the simulator (`stormdeck sim serve`); the controller over real gateway nodes (#6) is another
backend. Nothing is imported here, so `stormdeck` commands that only need the token file format or the
clock's limits do not pay for importing FastAPI.
"""
