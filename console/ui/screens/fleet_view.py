"""What the fleet's screen and a node's share: the app draws the model into them once they are `ready`."""

from __future__ import annotations

from textual.screen import Screen

from console.model.history import FleetModel
from console.model.units import FLEET_CLOCK, ClockFace
from console.ui.intents import ScreenReady
from console.ui.themes import Palette
from console.ui.widgets.header import FleetHeader, header_text


class FleetView(Screen[None]):
    """A screen the app renders the model into (`ConsoleApp.fleet_screen`) once its children are composed
    and laid out: `ready`, set after its first refresh — the subclass's `on_mount` asks for `_ready`."""

    ready = False

    def on_screen_resume(self) -> None:
        # Textual hands a `call_after_refresh` to the screen on top when the request is handled. A screen
        # pushed over this one before then (a served drill's briefing, from the stream's hello) took the
        # `_ready` and, dismissed before it idled, dropped it: this screen drew nothing, ever. On top again,
        # it asks once more — now its own refresh runs it.
        if not self.ready:
            self.call_after_refresh(self._ready)

    def _ready(self) -> None:
        if self.ready:
            return  # (the first request ran after all)
        self.ready = True  # children are composed: the app may render into them now
        self.post_message(ScreenReady())

    def show_header(
        self,
        model: FleetModel,
        now_s: float,
        palette: Palette,
        clock: ClockFace = FLEET_CLOCK,
        time_s: float | None = None,
    ) -> None:
        """The header, one line, at `time_s` when the fleet's time is given (a drill's own last second)."""
        # query, not query_one: the half-second tick may land while the screen is being torn down
        for header in self.query(FleetHeader):
            header.update(
                header_text(model, now_s, palette, header.size.width or None, clock, time_s), layout=False
            )
