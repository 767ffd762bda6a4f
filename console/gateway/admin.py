"""The node admin API (DESIGN.md, "The node admin API, v1"), served by FastAPI on the admin port.

Reads are open on loopback; the mutating calls need the controller's bearer token — nodes trust only the
controller, which is where the guards live.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time

from fastapi import Depends, FastAPI, Header, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import ValidationError

from console.figures import headroom_pct
from console.gateway.framelog import FrameLog
from console.gateway.node import GatewayNode
from console.protocol import (
    API_VERSION,
    AdmissionRequest,
    DrainRequest,
    Frame,
    Hello,
    Source,
    Totals,
    Waves,
)
from console.server.problems import ApiProblem, allowed_range, describe_invalid, problem_response


def node_frame(node: GatewayNode, log: FrameLog) -> Frame:
    """One second of this node, in the fleet API's frame shape (a fleet of one)."""
    second = node.meter.roll(time.time())
    status = node.status()
    # A fleet of one, as the controller folds it: its capacity only while it is in rotation.
    capacity = status.capacity_connections if status.state.in_rotation else 0
    return Frame(
        seq=log.next_seq(),
        epoch=log.epoch,
        time_s=round(time.time(), 3),
        nodes=[status],
        totals=Totals(
            connections=status.connections,
            attempts_per_s=status.attempts_per_s,
            accepts_per_s=status.accepts_per_s,
            rejects_per_s=status.rejects_per_s,
            timeouts_per_s=status.timeouts_per_s,
            drops_per_s=status.drops_per_s,
            headroom_pct=headroom_pct(status.connections, capacity),
            drain_inflow_ratio=None,
            max_cpu_pct=status.cpu_pct,
        ),
        waves=Waves(attempts=second.waves, start_s=second.waves_start_s),
        admission=node.admission.settings,
    )


def prometheus_text(node: GatewayNode) -> str:
    status = node.status()
    t = node.meter.totals
    labels = f'{{node="{node.config.node_id}"}}'
    rows = [
        ("counter", "attempts_total", t.attempts, "connection attempts (upgrade requests)"),
        ("counter", "accepts_total", t.accepts, "completed handshakes"),
        ("counter", "rejects_total", t.rejects, "upgrades answered 503 by admission or the ceiling"),
        (
            "counter",
            "not_in_rotation_total",
            t.not_in_rotation,
            "upgrades answered 503 while out of rotation (draining, drained): not rejects",
        ),
        ("counter", "timeouts_total", t.timeouts, "admitted handshakes the client abandoned"),
        ("counter", "closes_total", t.closes, "planned closes: drain, lifetime, shutdown"),
        ("counter", "drops_total", t.drops, "connections lost without a close frame"),
        ("counter", "auth_failures_total", t.auth_failures, "upgrades with a missing or invalid token"),
        (
            "counter",
            "process_cpu_seconds_total",
            round(time.process_time(), 4),
            "user + system CPU of the node",
        ),
        ("gauge", "connections", status.connections, "connections held"),
        ("gauge", "ready", int(status.state.in_rotation), "1 while in rotation"),
        ("gauge", "cpu_pct", status.cpu_pct, "process CPU over the last second"),
        ("gauge", "handshake_p99_ms", status.handshake_p99_ms, "p99 accept-to-open over the last second"),
        ("gauge", "drain_remaining", status.drain.remaining if status.drain else 0, "connections left"),
        (
            "gauge",
            "history_unreachable",
            int(status.history_unreachable is not None),
            "1 while the history's Redis does not answer",
        ),
    ]
    out: list[str] = []
    for kind, name, value, help_text in rows:
        metric = name if name.startswith("process_") else f"stormdeck_gateway_{name}"
        out += [f"# HELP {metric} {help_text}", f"# TYPE {metric} {kind}", f"{metric}{labels} {value}"]
    return "\n".join(out) + "\n"


async def _parse(model: type[DrainRequest] | type[AdmissionRequest], request: Request) -> object:
    """The body as `model`, or a 422 naming the field, the value given and the allowed range, as the fleet
    API's own (the controller hands a node's refusal on to the operator with its words)."""
    try:
        return model.model_validate_json((await request.body()) or b"{}")
    except ValidationError as error:
        first = error.errors()[0]
        path = [str(p) for p in first["loc"] if not isinstance(p, int)]  # an item names its list
        field = ".".join(path) or "body"
        raise ApiProblem(422, describe_invalid(first, field, allowed_range(model, path)), field) from error


async def _forward(websocket: WebSocket, queue: asyncio.Queue[str], last: int) -> None:
    """Live frames newer than the replayed ones."""
    while True:
        text = await queue.get()
        seq = json.loads(text)["seq"]
        if seq > last:
            await websocket.send_text(text)
            last = seq


def create_admin_app(node: GatewayNode, log: FrameLog, controller_token: str) -> FastAPI:
    app = FastAPI(
        title=f"stormdeck gateway node {node.config.node_id}",
        version=API_VERSION,
        docs_url=None,  # as the fleet API: no third-party JavaScript from a CDN on an admin port
        redoc_url=None,
    )

    @app.exception_handler(ApiProblem)
    async def _problem(request: Request, error: ApiProblem) -> JSONResponse:
        return problem_response(error.problem, request, error.headers)

    def controller_only(authorization: str | None = Header(default=None)) -> None:
        if authorization is None or not authorization.startswith("Bearer "):
            raise ApiProblem(
                401, "Authorization: a Bearer token is required for node actions", "Authorization"
            )
        if not hmac.compare_digest(authorization.removeprefix("Bearer ").encode(), controller_token.encode()):
            raise ApiProblem(
                403, "Authorization: only the controller's token may act on a node", "Authorization"
            )

    def node_body() -> dict[str, object]:
        return {
            "api_version": API_VERSION,
            **node.status().model_dump(mode="json"),
            "admission": node.admission.settings.model_dump(mode="json"),
            "port": node.port,
            "channel": node.config.channel,
        }

    @app.get("/v1/node")
    async def get_node() -> dict[str, object]:
        return node_body()

    @app.get("/v1/node/ready")
    async def get_ready() -> JSONResponse:
        ready = node.state.in_rotation
        return JSONResponse({"ready": ready, "state": node.state.value}, 200 if ready else 503)

    @app.post("/v1/node/drain", dependencies=[Depends(controller_only)])
    async def post_drain(request: Request) -> JSONResponse:
        drain = await _parse(DrainRequest, request)
        assert isinstance(drain, DrainRequest)
        if drain.dry_run:
            return JSONResponse({"applied": False, "node": node_body()})
        progress = node.drain(drain)
        return JSONResponse({"applied": True, "drain": progress.model_dump(mode="json")})

    @app.post("/v1/node/undrain", dependencies=[Depends(controller_only)])
    async def post_undrain() -> dict[str, object]:
        node.undrain()
        return {"applied": True, "state": node.state.value}

    @app.put("/v1/node/admission", dependencies=[Depends(controller_only)])
    async def put_admission(request: Request) -> JSONResponse:
        admission = await _parse(AdmissionRequest, request)
        assert isinstance(admission, AdmissionRequest)
        if admission.nodes is not None and node.config.node_id not in admission.nodes:
            return JSONResponse(
                {"applied": False, "admission": node.admission.settings.model_dump(mode="json")}
            )
        if admission.dry_run:
            return JSONResponse({"applied": False, "admission": admission.model_dump(mode="json")})
        settings = node.admission.update(admission)
        return JSONResponse({"applied": True, "admission": settings.model_dump(mode="json")})

    @app.get("/metrics")
    async def metrics() -> PlainTextResponse:
        return PlainTextResponse(prometheus_text(node), media_type="text/plain; version=0.0.4")

    @app.websocket("/v1/node/stream")
    async def stream(websocket: WebSocket, since: int | None = None, epoch: str | None = None) -> None:
        await websocket.accept()
        queue = log.listen()  # listen before reading the log, so no frame falls between the two
        try:
            replay = log.replay(since, epoch)
            hello = Hello(
                fleet=node.config.node_id,
                source=Source.LIVE,
                epoch=log.epoch,
                seq=replay.head,
                recovered=replay.recovered if since is not None else None,
            )
            await websocket.send_text(hello.model_dump_json())
            last = since if replay.recovered and since is not None else replay.head
            for seq, text in replay.messages:
                await websocket.send_text(text)
                last = seq
            sender = asyncio.create_task(_forward(websocket, queue, last))
            try:
                # Reading is how a disconnect (or uvicorn's shutdown) reaches this handler.
                while (await websocket.receive())["type"] != "websocket.disconnect":
                    pass
            finally:
                sender.cancel()
        except WebSocketDisconnect:
            pass
        finally:
            log.unlisten(queue)

    return app
