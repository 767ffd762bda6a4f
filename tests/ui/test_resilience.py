"""Kill the server under an attached console, restart it, and the console recovers (in-test server)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from console.client.stream import StreamClient
from console.model import LinkState
from console.policies import FullJitter
from console.ui.app import ConsoleApp
from console.ui.widgets.header import FleetHeader

from ..client.fake_fleet_server import TOKEN, FakeFleetServer, wait_for
from .conftest import SIZE, fleet_ready


@pytest.fixture
async def server() -> AsyncIterator[FakeFleetServer]:
    """The fleet stream on loopback; stopped afterwards whatever the test did with it (stops, restarts)."""
    fake = FakeFleetServer(interval_s=0.05)
    await fake.start()
    yield fake
    await fake.stop()


async def test_console_shows_reconnecting_then_recovers_when_the_server_returns(server):
    client = StreamClient(server.url, TOKEN, policy=FullJitter(base_ms=100.0, max_ms=400.0))
    app = ConsoleApp(source=client, remember_theme=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: getattr(app.screen, "ready", False), what="the main screen")
        await wait_for(lambda: app.model.frames_applied >= 3, what="first frames")
        await server.stop()
        await wait_for(lambda: app.model.link.state is LinkState.RECONNECTING, what="reconnecting")
        await pilot.pause()
        app._tick()
        await pilot.pause()
        header = str(app.screen.query_one(FleetHeader).render())
        assert "reconnecting (attempt" in header and "next in" in header
        before = app.model.frames_applied
        await server.start()  # same port, same history: the console resumes
        await wait_for(
            lambda: app.model.frames_applied >= before + 3, timeout_s=15, what="frames after restart"
        )
        assert app.model.link.state is LinkState.LIVE
        assert client.connects >= 2
        assert any("since=" in path for path, _ in server.requests)


async def test_ctrl_r_reconnects_at_once_when_the_server_is_back(server):
    """A backoff of up to 30 s after the server was back, and no key to try now: Ctrl+R is that key."""
    import random

    slow = FullJitter(base_ms=3_600_000.0, max_ms=3_600_000.0)  # once down, the next try is minutes away
    client = StreamClient(server.url, TOKEN, policy=slow, rng=random.Random(3))
    app = ConsoleApp(source=client, remember_theme=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: app.model.frames_applied >= 3, what="first frames")
        await pilot.press("ctrl+r")  # live: nothing to cut short, and it says so
        await wait_for(lambda: any("not waiting" in n.message for n in app._notifications), what="the note")
        await server.stop()
        await wait_for(lambda: app.model.link.state is LinkState.RECONNECTING, what="reconnecting")
        assert app.model.link.next_in_s > 600
        await fleet_ready(app)  # `_tick` draws the header only into a ready screen
        app._tick()
        await pilot.pause()
        assert "Ctrl+R: now" in str(app.screen.query_one(FleetHeader).render())
        before = app.model.frames_applied
        await server.start()
        await pilot.press("ctrl+r")
        await wait_for(lambda: app.model.frames_applied > before, timeout_s=10, what="frames again")
        assert app.model.link.state is LinkState.LIVE


async def test_a_lost_link_says_why_and_what_to_do_once(server):
    """On-call walk: with `fleet up` stopped under it, the console said "reconnecting (attempt 7, next in
    12.6 s)" and never why (the server gone, its port refusing) nor what would help. Losing a live link is
    told once — the reason, the URL, and that Ctrl+R tries at once once the server is started again — not
    again on each failed attempt."""
    client = StreamClient(server.url, TOKEN, policy=FullJitter(base_ms=50.0, max_ms=100.0))
    app = ConsoleApp(source=client, remember_theme=False)
    async with app.run_test(size=SIZE):
        await wait_for(lambda: app.model.frames_applied >= 3, what="first frames")
        await server.stop()
        await wait_for(lambda: app.model.link.attempt >= 3, what="a few failed attempts")
        told = [n.message for n in app._notifications if "lost the fleet API" in n.message]
        assert len(told) == 1, told
        assert server.url in told[0] and "Ctrl+R" in told[0], told[0]


async def test_a_fleet_never_reached_is_not_told_as_a_lost_link(server):
    """Review as a new user: `attach http://127.0.0.1:1` told "link lost … keeps the last frame, marked
    stale; if the server was stopped … start it again" though no frame ever came. It says the fleet was
    never reached and why, once, and keeps waiting for it (an operator may start attach first)."""
    url = server.url
    await server.stop()
    client = StreamClient(url, TOKEN, policy=FullJitter(base_ms=50.0, max_ms=100.0))
    app = ConsoleApp(source=client, remember_theme=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: app.model.link.attempt >= 3, what="a few failed attempts")
        told = [n for n in app._notifications if url in n.message]
        assert len(told) == 1, [n.message for n in told]
        assert told[0].message.startswith(f"never reached {url}: connection refused — is the server running?")
        assert "lost" not in told[0].message + told[0].title and "last frame" not in told[0].message
        await fleet_ready(app)
        app._tick()
        await pilot.pause()
        header = str(app.screen.query_one(FleetHeader).render())
        assert "waiting for the fleet API (never reached: connection refused" in header, header
