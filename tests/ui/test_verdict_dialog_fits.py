"""The verdict dialog on a small terminal: its question stays on screen (an 80×24 terminal cut off the
typed confirmation's input and the "type gw-… to apply" line), and the verdict above it scrolls."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.containers import VerticalScroll

from console.guards.verdict import check, verdict
from console.protocol import Verdict, VerdictLevel
from console.ui.screens.verdict_dialog import VerdictDialog
from console.ui.themes import load_themes

from ..client.fake_fleet_server import wait_for


def typed_drain_verdict() -> Verdict:
    """A drain at the typed level with as many checks and series as the real guard sends."""
    # The last a check the drain's rate sets: "what would pass" names the rate only where one fails.
    checks = [
        check(
            f"check_{k}" if k < 8 else "survivor_cpu_vs_pause_pct",
            80.0 + k,
            75.0,
            fails_to=VerdictLevel.TYPED,
            why="the busiest survivor's CPU " * 3,
        )
        for k in range(9)
    ]
    series = [float(1_000_000 - 500 * t) for t in range(60)]
    forecast = {
        "horizon_s": 60,
        "tick_ms": 10,
        "without_action": {"connections": series, "attempts_per_s": series},
        "with_action": {"connections": series[::-1], "attempts_per_s": series[::-1]},
    }
    # The rate a drain verdict suggests: with nine failing checks, the longest "what would pass" a typed
    # verdict says, over the question.
    projections = {
        "survivors": 47,
        "duration_s": 600.0,
        "largest_safe_rate_per_s": 434.0,
        "suggested_rate_per_s": 400.0,
        "suggested_cpu_margin_pct": 5.0,
    }
    return verdict("drain", checks, projections, typed_expected="gw-0017").model_copy(
        update={"confirm_token": "tok-1", "forecast": forecast}
    )


class DialogApp(App[None]):
    def on_mount(self) -> None:
        palette = load_themes()["dark"].palette
        self.push_screen(VerdictDialog("Drain gw-0017", typed_drain_verdict(), palette))


def inside(region, size) -> bool:
    return region.x >= 0 and region.y >= 0 and region.right <= size[0] and region.bottom <= size[1]


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 48)])
async def test_the_question_and_the_typed_input_stay_on_screen(size) -> None:
    app = DialogApp()
    async with app.run_test(size=size) as pilot:
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dialog")
        await pilot.pause()
        dialog = app.screen
        for selector in ("#verdict-title", "#ask", "#typed"):
            region = dialog.query_one(selector).region
            assert region.height > 0 and inside(region, size), (selector, region, size)
        assert inside(dialog.query_one("Vertical").region, size)
        # What would pass, over the question: on screen with it (the #ask region above, the input under it).
        ask = dialog.query_one("#ask")
        words = str(ask.content)
        assert words.startswith("What would pass: check_0 ≤ 75 (now 80)") and "≤ 400 closes/s" in words
        assert words.endswith("type gw-0017 and Enter to apply it · Esc cancels")


async def test_the_verdict_scrolls_with_page_down_while_the_name_is_typed() -> None:
    app = DialogApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dialog")
        await pilot.pause()
        scroll = app.screen.query_one(VerticalScroll)
        assert scroll.max_scroll_y > 0  # (the verdict is taller than the room left for it)
        assert "PgDn" in app.screen.query_one("Vertical").border_subtitle  # and the dialog says so
        await pilot.press("g", "w", "pagedown")
        await pilot.pause()
        assert scroll.scroll_y > 0
        assert app.screen.query_one("#typed").value == "gw"  # the keys typed are not taken
