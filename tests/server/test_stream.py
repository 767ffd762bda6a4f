"""`/v1/stream` against a real uvicorn on loopback: hello, frames, events, resume, slow consumers."""

from __future__ import annotations

import asyncio

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.server.conftest import Live, auth, receive, receive_until, start_live


def open_stream(live: Live, query: str = "", **options):
    # max_queue=None: a websockets client whose incoming queue is full stops reading, and then waits its
    # whole close_timeout for our close frame when the test leaves the block with messages unread.
    options.setdefault("max_queue", None)
    return connect(live.ws_url + query, additional_headers=auth("viewer"), **options)


def frames_only(messages: list[dict]) -> list[dict]:
    return [message for message in messages if message["type"] == "frame"]


async def test_the_stream_needs_a_token(live: Live) -> None:
    with pytest.raises(InvalidStatus) as caught:
        async with connect(live.ws_url):
            pass
    response = caught.value.response
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert b"bearer token is required" in response.body


async def test_a_bad_resume_seq_is_refused_with_a_problem(live: Live) -> None:
    with pytest.raises(InvalidStatus) as caught:
        async with open_stream(live, "?since=ten&epoch=x"):
            pass
    assert caught.value.response.status_code == 422
    assert b"since" in caught.value.response.body


async def test_hello_then_frames_then_events_before_their_frame(live: Live) -> None:
    async with open_stream(live) as ws:
        hello = await receive(ws)
        assert hello["type"] == "hello"
        assert hello["fleet"] == "scripted" and hello["source"] == "simulator"
        assert hello["epoch"] == live.feed.epoch and hello["recovered"] is None
        assert hello["frame_interval_s"] == pytest.approx(0.05)
        assert hello["role"] == "viewer"  # the token's: a viewer's console offers no actions
        assert hello["actor"] == "viewer-person"  # the token's holder, as the audit log names who acted
        assert hello["scenario"] is None  # a fleet running no scenario (as a controller's): null
        assert hello["seed"] is None  # nor a seed
        messages = await receive_until(ws, lambda m: m["type"] == "frame" and m["time_s"] >= 10)
    frames = frames_only(messages)
    # First the newest frame at once, then every frame in order: the server's seq, not the backend's.
    assert frames[0]["seq"] == hello["seq"]
    assert [frame["seq"] for frame in frames] == list(range(hello["seq"], hello["seq"] + len(frames)))
    assert {frame["epoch"] for frame in frames} == {hello["epoch"]}
    assert all(frame["published_unix_s"] > 0 for frame in frames)
    events = [message for message in messages if message["type"] == "event"]
    assert events, "node-0 emits an event every fifth fleet second"
    for event in events:
        following = messages[messages.index(event) + 1]
        assert following["type"] == "frame" and following["seq"] == event["seq"]


async def test_resume_within_the_window_recovers_every_missed_frame(live: Live) -> None:
    async with open_stream(live) as ws:
        hello = await receive(ws)
        held = frames_only(
            await receive_until(ws, lambda m: m["type"] == "frame" and m["seq"] >= hello["seq"] + 2)
        )
    last_seq = held[-1]["seq"]
    await wait_for_seq(live, last_seq + 5)  # frames published while we were away
    async with open_stream(live, f"?since={last_seq}&epoch={hello['epoch']}") as ws:
        again = await receive(ws)
        assert again["type"] == "hello" and again["recovered"] is True
        assert again["seq"] >= last_seq + 5
        resumed = frames_only(
            await receive_until(ws, lambda m: m["type"] == "frame" and m["seq"] >= again["seq"] + 1)
        )
    assert [frame["seq"] for frame in resumed] == list(range(last_seq + 1, again["seq"] + 2))


async def test_resume_with_another_epoch_starts_fresh(live: Live) -> None:
    await wait_for_seq(live, 3)
    async with open_stream(live, "?since=2&epoch=an-old-epoch") as ws:
        hello = await receive(ws)
        assert hello["recovered"] is False and hello["epoch"] == live.feed.epoch
        first = await receive(ws)
    assert first["type"] == "frame" and first["seq"] == hello["seq"]  # the newest frame, not a replay


async def test_resume_from_a_seq_older_than_the_window_starts_fresh() -> None:
    # Frames every 0.5 s here: the second half of this test must reconnect within the 3-frame cap even on
    # a loaded machine.
    live = start_live(replay_cap_frames=3, frame_interval_s=0.5)
    try:
        await wait_for_seq(live, 8)
        async with open_stream(live, f"?since=2&epoch={live.feed.epoch}") as ws:
            hello = await receive(ws)
            assert hello["recovered"] is False and hello["seq"] >= 8
            first = await receive(ws)
        assert first["type"] == "frame" and first["seq"] == hello["seq"]
        # ... while the last frame the cap still covers does recover.
        newest = live.feed.history.newest_seq
        async with open_stream(live, f"?since={newest - 1}&epoch={live.feed.epoch}") as ws:
            assert (await receive(ws))["recovered"] is True
    finally:
        live.server.stop()


async def test_frames_keep_leaving_while_paused_and_carry_every_bin_at_speed(live: Live) -> None:
    async with open_stream(live) as ws:
        await receive(ws)
        live.feed.clock.set(paused=True)
        messages = await receive_until(ws, lambda m: m["type"] == "frame" and m["span_s"] == 0)
        still = frames_only(await receive_until(ws, lambda m: m["type"] == "frame"))[0]
        assert still["span_s"] == 0 and still["waves"]["attempts"] == []
        assert still["time_s"] == frames_only(messages)[-1]["time_s"]
        live.feed.clock.set(paused=False, speed=4)
        fast = frames_only(await receive_until(ws, lambda m: m["type"] == "frame" and m["span_s"] == 4))[-1]
    # The scripted fleet writes its fleet second into each of its 10 bins: all four seconds are there.
    t = int(fast["time_s"])
    assert fast["waves"]["attempts"] == [t - 3] * 10 + [t - 2] * 10 + [t - 1] * 10 + [t] * 10


async def test_every_frame_says_whether_the_fleet_clock_is_paused(live: Live) -> None:
    """Nothing on an attached console said a served drill's clock was paused: `span_s` 0 does not say it
    (a frame at half speed that runs no fleet second has it too, and so does the fleet as started), so
    each frame says it, `clock_paused`."""
    async with open_stream(live) as ws:
        await receive(ws)
        live.feed.clock.set(speed=0.5)
        still = await receive_until(ws, lambda m: m["type"] == "frame" and m["span_s"] == 0)
        assert still[-1]["clock_paused"] is False  # between two fleet seconds, not paused
        live.feed.clock.set(paused=True)
        paused = await receive_until(ws, lambda m: m["type"] == "frame" and m["clock_paused"])
        assert paused[-1]["span_s"] == 0
        live.feed.clock.set(paused=False, speed=2)
        running = await receive_until(ws, lambda m: m["type"] == "frame" and m["span_s"] == 2)
        assert running[-1]["clock_paused"] is False


async def test_a_fleet_without_a_clock_says_nothing_of_its_pausing() -> None:
    running = start_live()
    running.fleet.clock_control = False  # (after the first frame: the fleet as started had a clock)
    try:
        async with open_stream(running) as ws:
            await receive(ws)
            frame = frames_only(await receive_until(ws, lambda m: m["type"] == "frame" and m["seq"] > 2))[-1]
        assert frame["clock_paused"] is None
    finally:
        running.server.stop()


async def test_a_slow_consumer_is_cut_off_without_stalling_others() -> None:
    # Big frames (2000 nodes) so the slow client's socket buffers fill after a few frames.
    running = start_live(nodes=2000, max_backlog_frames=2)
    try:
        async with (
            open_stream(running, max_queue=1, max_size=None) as slow,
            open_stream(running, max_size=None) as fast,
        ):
            hello = await receive(fast)
            fast_frames = frames_only(
                await receive_until(
                    fast,
                    lambda m: m["type"] == "frame" and running.feed.broadcaster.dropped_total >= 1,
                    timeout_s=20,
                )
            )
            # The fast client saw every frame, in order, while the slow one fell behind.
            assert [f["seq"] for f in fast_frames] == list(
                range(hello["seq"], hello["seq"] + len(fast_frames))
            )
            with pytest.raises(ConnectionClosed) as caught:
                while True:
                    await asyncio.wait_for(slow.recv(), 10)
        close = caught.value.rcvd
        assert close is not None and close.code == 1013
        assert "too slow" in close.reason and f"epoch={running.feed.epoch}" in close.reason
    finally:
        running.server.stop()


async def wait_for_seq(live: Live, seq: int, timeout_s: float = 5.0) -> None:
    async def reached() -> None:
        while live.feed.history.newest_seq < seq:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(reached(), timeout_s)


async def test_a_refused_stream_is_not_logged_as_a_server_error(live: Live) -> None:
    """uvicorn logged "ASGI callable returned without completing handshake." at ERROR for every refused
    upgrade (its websockets-sansio protocol; uvicorn PR #3138): a wrong-token console read as a fault."""
    import logging

    from console.server.runner import DenialIsNotAnError

    error_log = logging.getLogger("uvicorn.error")
    assert any(isinstance(f, DenialIsNotAnError) for f in error_log.filters)  # installed with the server
    made = [
        error_log.makeRecord("uvicorn.error", logging.ERROR, __file__, 1, msg, (), None)
        for msg in (
            "ASGI callable returned without completing handshake.",
            "Exception in ASGI application\n",
        )
    ]
    assert [error_log.filter(record) for record in made] == [False, True]  # only that message goes
