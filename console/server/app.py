"""The fleet API v1 as a FastAPI application over any `FleetBackend`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI

from console import __version__
from console.alarms.tracking import SteadyAttempts
from console.guards import Thresholds
from console.guards.config import LoadedThresholds, given_thresholds
from console.protocol import API_VERSION
from console.server.backend import FleetBackend, InjectingBackend
from console.server.bodylimit import BodyLimit
from console.server.clock import FleetClock
from console.server.events import COALESCE_OVER
from console.server.fanout import DEFAULT_MAX_BACKLOG_FRAMES, Broadcaster
from console.server.feed import AlarmWatch, FleetFeed
from console.server.history import DEFAULT_HISTORY_FRAMES, DEFAULT_REPLAY_CAP_FRAMES, FrameHistory
from console.server.problems import install_problem_handlers
from console.server.routes import actions, clock, fleet, stream
from console.server.routes import thresholds as thresholds_route
from console.server.tokens import Role, TokenRegistry

if TYPE_CHECKING:
    from console.audit import AuditLog
    from console.server.confirm import ConfirmTokens
    from console.server.idempotency import IdempotencyKeys

DESCRIPTION = """\
The fleet admin API of stormdeck (see DESIGN.md, "The fleet API, v1"). Every path under `/v1/` needs
`Authorization: Bearer TOKEN` (401 without one, 403 for a role too low). Errors are RFC 9457
`application/problem+json` whose `detail` names the field and the allowed range.

`GET /v1/stream` is a WebSocket: a `hello`, then one `frame` per second and `event`s (a tick's events
before its frame, tagged with its `seq`). Resume with `?since=SEQ&epoch=EPOCH`.
"""


def create_app(
    backend: FleetBackend,
    tokens: TokenRegistry,
    *,
    frame_interval_s: float = 1.0,
    speed: float = 1.0,
    history_frames: int = DEFAULT_HISTORY_FRAMES,
    replay_cap_frames: int = DEFAULT_REPLAY_CAP_FRAMES,
    max_backlog_frames: int = DEFAULT_MAX_BACKLOG_FRAMES,
    alarms: AlarmWatch | None = None,
    audit_log: AuditLog | None = None,
    thresholds: Thresholds | LoadedThresholds | None = None,
    confirmations: ConfirmTokens | None = None,
    idempotency: IdempotencyKeys | None = None,
    coalesce_events_over: int | None = COALESCE_OVER,
    paused: bool = False,
    clock_role: Role = Role.OPERATOR,
) -> FastAPI:
    """The app serving `backend`; its feed starts and stops with the app's lifespan.

    The write side (issue #4) needs an `audit_log` (the caller opens and closes it); without one the
    action routes are not served at all — a fleet API that acts must remember what it did.
    `clock_role`: the lowest role that may pause the fleet clock or change its speed (a served drill's
    clock is the instructor's: admin); its changes are audited when there is an `audit_log`.
    `thresholds`: the lines the guards judge with — as `console.guards.config` loaded them, so
    `GET /v1/thresholds` names the file or variable behind each; plain `Thresholds` are "default" or "given".
    """
    if not isinstance(thresholds, LoadedThresholds):
        thresholds = given_thresholds(thresholds or Thresholds())
    # Learned with the lines the guards judge by, over every frame the feed publishes.
    steady = SteadyAttempts.of(thresholds.thresholds)
    feed = FleetFeed(
        backend,
        steady=steady,
        frame_interval_s=frame_interval_s,
        clock=FleetClock(speed=speed, paused=paused),
        history=FrameHistory(history_frames, replay_cap_frames),
        broadcaster=Broadcaster(max_backlog_frames),
        alarms=alarms,
        coalesce_events_over=coalesce_events_over,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await feed.start()
        try:
            yield
        finally:
            await feed.stop()

    app = FastAPI(
        title="stormdeck fleet API",
        version=f"{API_VERSION} (stormdeck {__version__})",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # no third-party JavaScript from a CDN on an admin port; the contract is /openapi.json
        redoc_url=None,
    )
    app.state.feed = feed
    app.state.tokens = tokens
    app.add_middleware(BodyLimit)  # a body arrives before any route checks its token: bound it first
    install_problem_handlers(app)
    app.include_router(fleet.router)
    app.include_router(stream.router)
    app.include_router(clock.make_router(clock_role, audited=audit_log is not None))
    if audit_log is not None:
        from console.server.desk import ActionDesk

        app.state.desk = ActionDesk(
            backend,
            thresholds.thresholds,
            audit_log,
            confirmations=confirmations,
            idempotency=idempotency,
            tell=feed.tell,
            threshold_sources=thresholds.sources,
            steady=steady,
        )
        app.include_router(actions.router)
        app.include_router(actions.reads)
        app.include_router(thresholds_route.router)
        if isinstance(backend, InjectingBackend):
            from console.server.routes import inject

            app.include_router(inject.router)
    return app
