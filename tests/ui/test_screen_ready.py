"""The fleet screen becomes ready (`MainScreen.ready`) even when another screen covers it from its mount.

Found as a flaky test (a trainee's console on a served drill, in the full suite under load): the hello's
briefing was pushed over the fleet screen before the fleet screen had handled its own `call_after_refresh`.
Textual hands such a callback to the screen on top *when it is handled* — the briefing — and runs it when
that screen next idles. Dismissed before then (Enter pressed at once; a loaded machine), the briefing was
removed with the callback, and the fleet screen stayed not ready for good: it drew nothing, ever.
"""

from __future__ import annotations

from textual.screen import Screen

from console.ui.app import ConsoleApp
from console.ui.scenes import SCENES_BY_NAME, fed_model, frozen_clock
from console.ui.screens.main import MainScreen

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE


class Cover(Screen[None]):
    """A screen removed before it ever idles, as the briefing dismissed at once on a loaded machine: the
    callbacks handed to it are dropped with it, never run."""

    async def _invoke_and_clear_callbacks(self) -> None:
        self._callbacks.clear()


class CoveredAtMount(MainScreen):
    def on_mount(self) -> None:
        super().on_mount()  # asks for `_ready` after the refresh: a message to itself, not yet handled
        self.app.push_screen(Cover())  # the hello's briefing, pushed before that message is handled


class CoveredApp(ConsoleApp):
    def get_default_screen(self) -> Screen:
        return CoveredAtMount()


async def test_the_fleet_screen_is_ready_once_a_screen_covering_it_from_its_mount_goes() -> None:
    scene = SCENES_BY_NAME["storm"]
    model = fed_model(scene.seconds, scene.storm_at_s)
    now_s = frozen_clock(model)
    app = CoveredApp(model=model, clock=lambda: now_s, remember_theme=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: isinstance(app.screen, Cover), what="the cover on top")
        fleet = app.screen_stack[0]
        assert isinstance(fleet, CoveredAtMount)
        await pilot.pause()
        app.pop_screen()
        await wait_for(lambda: app.screen is fleet, what="the fleet screen back on top")
        await wait_for(lambda: fleet.ready, what="the fleet screen ready")
        await wait_for(lambda: app.fleet_screen() is fleet, what="the app drawing into it")
