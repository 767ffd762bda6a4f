"""Kill the server under an attached console, restart it, and the console recovers (in-test server)."""

from __future__ import annotations

from console.client.stream import StreamClient
from console.model import LinkState
from console.policies import FullJitter
from console.ui.app import ConsoleApp
from console.ui.widgets.header import FleetHeader

from ..client.fake_fleet_server import TOKEN, FakeFleetServer, wait_for
from .conftest import SIZE


async def test_console_shows_reconnecting_then_recovers_when_the_server_returns():
    server = FakeFleetServer(interval_s=0.05)
    await server.start()
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
        try:
            await wait_for(
                lambda: app.model.frames_applied >= before + 3, timeout_s=15, what="frames after restart"
            )
            assert app.model.link.state is LinkState.LIVE
            assert client.connects >= 2
            assert any("since=" in path for path, _ in server.requests)
        finally:
            await server.stop()
