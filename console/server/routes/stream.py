"""`GET /v1/stream`: a `hello`, then `event`s and `frame`s as they are published, with resume.

Each tick's events come before its frame, all tagged with the frame's `seq`; so a client that holds frame
N holds everything up to N, and `?since=N&epoch=E` is exact.
"""

from __future__ import annotations

import asyncio
import contextlib

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from console.protocol import Hello
from console.server.auth import authenticate
from console.server.backend import DrillServingBackend, ScenarioBackend
from console.server.fanout import Broadcaster, Subscriber
from console.server.feed import FleetFeed
from console.server.problems import ApiProblem, problem_response
from console.server.tokens import Role

router = APIRouter(tags=["stream"])

#: RFC 6455 "Try Again Later": the client is fine, the moment is not; it should resume.
CLOSE_TOO_SLOW = 1013
#: How long a too-slow client gets to take its close frame before we stop waiting for it.
CLOSE_TIMEOUT_S = 5.0
#: RFC 6455 "Policy Violation": what a server without the denial-response extension closes with.
CLOSE_POLICY = 1008


def _resume_params(websocket: WebSocket) -> tuple[int | None, str | None]:
    query = websocket.query_params
    since_text, epoch = query.get("since"), query.get("epoch")
    since: int | None = None
    if since_text is not None:
        try:
            since = int(since_text)
        except ValueError:
            raise ApiProblem(
                422, f"since: {since_text!r} is not a frame seq; expected an integer ≥ 0", field="since"
            ) from None
        if since < 0:
            raise ApiProblem(
                422, f"since: {since} is not a frame seq; expected an integer ≥ 0", field="since"
            )
    if epoch is not None and not (1 <= len(epoch) <= 64):
        raise ApiProblem(
            422, "epoch: expected the epoch string from a hello or a frame (1–64 characters)", field="epoch"
        )
    return since, epoch


async def _deny(websocket: WebSocket, problem: ApiProblem) -> None:
    try:
        await websocket.send_denial_response(problem_response(problem.problem, headers=problem.headers))
    except RuntimeError:  # the ASGI server lacks the websocket.http.response extension
        await websocket.close(code=CLOSE_POLICY, reason=problem.problem.detail[:120])


@router.websocket("/v1/stream", name="stream")
async def stream(websocket: WebSocket) -> None:
    feed: FleetFeed = websocket.app.state.feed
    try:
        principal = authenticate(websocket, websocket.app.state.tokens, Role.VIEWER)
        since, epoch = _resume_params(websocket)
    except ApiProblem as problem:
        await _deny(websocket, problem)
        return
    await websocket.accept()

    # No await between subscribing and reading the history: every frame is either replayed or queued.
    subscriber = feed.broadcaster.subscribe()
    resume = feed.history.resume(since, epoch)
    hello = Hello(
        fleet=feed.backend.fleet_name,
        source=feed.backend.source,
        epoch=feed.epoch,
        seq=feed.history.newest_seq,
        recovered=resume.recovered if (since is not None or epoch is not None) else None,
        frame_interval_s=feed.frame_interval_s,
        role=principal.role.label,
        actor=principal.name,
        drill=feed.backend.served_drill() if isinstance(feed.backend, DrillServingBackend) else None,
        scenario=feed.backend.scenario_name() if isinstance(feed.backend, ScenarioBackend) else None,
        seed=feed.backend.scenario_seed() if isinstance(feed.backend, ScenarioBackend) else None,
        overrides=feed.backend.scenario_overrides() if isinstance(feed.backend, ScenarioBackend) else None,
    )
    opening = [hello.model_dump_json(), *resume.messages]
    sender = asyncio.create_task(_send(websocket, feed.broadcaster, subscriber, opening, hello.seq))
    receiver = asyncio.create_task(_until_client_closes(websocket))
    try:
        done, _ = await asyncio.wait({sender, receiver}, return_when=asyncio.FIRST_COMPLETED)
        if sender in done and subscriber.overflowed:
            feed.broadcaster.unsubscribe(subscriber)  # free its backlog now, not after the close
            reason = (
                f"too slow: {feed.broadcaster.max_backlog_frames} frames behind; "
                f"resume with ?since={sender.result()}&epoch={feed.epoch}"
            )
            # A client that reads nothing never drains its socket, so the close frame might never leave.
            await asyncio.wait_for(websocket.close(code=CLOSE_TOO_SLOW, reason=reason[:123]), CLOSE_TIMEOUT_S)
    except (WebSocketDisconnect, OSError, RuntimeError, TimeoutError):
        pass  # the client went away mid-send; nothing to tell it
    finally:
        feed.broadcaster.unsubscribe(subscriber)
        for task in (sender, receiver):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, OSError, RuntimeError):
                await task


async def _send(
    websocket: WebSocket, broadcaster: Broadcaster, subscriber: Subscriber, opening: list[str], held_seq: int
) -> int:
    """Send the hello and the replay, then every published tick; return the last seq sent in full.

    Returns only when the subscriber overflowed (a closed client raises instead).
    """
    for message in opening:
        await websocket.send_text(message)
    while True:
        batch = await subscriber.take()
        if subscriber.overflowed:
            return held_seq
        for seq, messages in batch:
            for message in messages:
                await websocket.send_text(message)
            held_seq = seq
            broadcaster.delivered(seq)


async def _until_client_closes(websocket: WebSocket) -> None:
    """Clients have nothing to say on the stream; read only to notice their close at once."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
