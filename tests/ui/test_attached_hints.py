"""A trainee on `stormdeck attach URL` to a served drill reads its hints as the drill console shows them: on
the hint line (`HintLine`), the newest whole, Tab to the line for the earlier ones — not as toasts."""

from __future__ import annotations

import tomllib

import httpx
from textual.widgets import Static

from console.client.stream import StreamClient
from console.drills.schema import build_drill
from console.ui.app import ConsoleApp
from console.ui.screens.main import MainScreen
from console.ui.widgets.hint_line import HintLine
from tests.drills.test_serve import SHORT_DRILL, served_in_process
from tests.server.conftest import TOKENS, auth

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE
from .test_instructor import past_the_briefing

#: SHORT_DRILL (04:00, 8 nodes, frames every 50 ms) with a second hint a second after its first.
TWO_HINTS = SHORT_DRILL.replace(
    "[[objectives]]", '[[hints]]\nafter_s = 2\ntext = "Look at the hottest node."\n\n[[objectives]]', 1
)


def _said(line: HintLine, part: str) -> str:
    return str(line.query_one(part, Static).render())


async def test_an_attached_trainee_reads_a_served_drills_hints_on_the_hint_line() -> None:
    """Found reviewing `attach` to `drill NAME --serve`: the local drill console keeps its hints on a line
    of their own (stacked toasts covered the objectives at 80×24, and went in seconds), while the attached
    trainee got them as toasts still."""
    # Paused until the trainee is attached, as an instructor's drill (`--serve --paused`): frames every 50 ms
    # would run its first seconds, and their hints, before the stream is open.
    server = served_in_process(build_drill(tomllib.loads(TWO_HINTS)), paused=True)
    app = ConsoleApp(
        source=StreamClient(server.url, TOKENS["operator"]), remember_theme=False, theme_name="dark"
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            await past_the_briefing(app, pilot)
            assert isinstance(app.screen, MainScreen)
            line = app.screen.query_one(HintLine)
            assert not line.display  # no line before the first hint
            async with httpx.AsyncClient(base_url=server.url, headers=auth("admin")) as instructor:
                started = await instructor.post("/v1/sim/clock", json={"paused": False})
            assert started.status_code == 200, started.text
            await wait_for(lambda: line.told == 2, what="both hints on the hint line")
            await pilot.pause()
            assert not [n for n in app._notifications if n.title.startswith("hint")]  # no toast
            assert line.display
            newest = _said(line, ".newest-hint")
            assert newest.startswith("hint 04:00:02 · Look at the hottest node.")  # on the drill's clock
            assert newest.endswith("1 earlier (Tab)")
            while app.focused is not line:  # Tab to the line, as in the drill console
                await pilot.press("tab")
            await pilot.pause()
            assert _said(line, ".all-hints").splitlines() == [
                "hint 04:00:02 · Look at the hottest node.",
                "hint 04:00:01 · Watch the attempts.",
            ]
    finally:
        server.stop()
