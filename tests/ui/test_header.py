"""The header on a small terminal: how stale the view is stays readable (at 80 columns it was cut to
"age", found in review); the source gives way first."""

from __future__ import annotations

import re

import pytest

from console.ui.widgets.header import FleetHeader

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, fleet_ready
from .test_oncall import visible_lines


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_the_links_age_is_shown_whole(storm_app, size) -> None:
    async with storm_app.run_test(size=size) as pilot:
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        (line,) = visible_lines(storm_app.screen.query_one(FleetHeader))
        assert re.search(r"age \d+\.\d s", line), line
        assert ("source simulator" in line) == (size == SIZE), line  # dropped only when there is no room


async def test_at_80_columns_a_reconnecting_link_is_whole(storm_app) -> None:
    """User pass: "link ✖ reconnecting (attempt 4," — when to expect the next try was cut. The fleet's
    name and the clock's label give way first; the link state is what the operator is waiting on."""
    from console.model.link import LinkState, LinkStatus

    storm_app.model.fleet = "storm-simulator-fleet-eu-west"
    now_s = storm_app.clock()
    storm_app.model.apply(LinkStatus(LinkState.RECONNECTING, attempt=4, next_in_s=7.5, at_s=now_s))
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        (line,) = visible_lines(storm_app.screen.query_one(FleetHeader))
        assert "reconnecting (attempt 4, next in 7.5 s)" in line, line
        assert "storm-" in line, line  # the name shortened, not gone


@pytest.mark.parametrize("paused", [False, True], ids=["running", "paused"])
async def test_at_80_columns_a_drills_end_leaves_a_reconnecting_link_whole(storm_app, paused: bool) -> None:
    """The drill's end beside its clock ("⏹ ended", and "⏸ paused" when its clock stands) pushed the
    link's "next in 7.5 s" off an 80-column header; the clock's label, and "paused" beside its "⏸", give
    way last."""
    from console.model.link import LinkState, LinkStatus, Received
    from console.protocol import Event

    now_s = storm_app.clock()
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        ended = Event(
            time_s=60, kind="drill", message="02:01:00 the drill's time is up", data={"ended": True}
        )
        storm_app.feed(Received(ended, now_s))
        frame = storm_app.model.frame
        storm_app.model.frame = frame.model_copy(update={"clock_paused": paused})
        storm_app.model.apply(LinkStatus(LinkState.RECONNECTING, attempt=4, next_in_s=7.5, at_s=now_s))
        storm_app.refresh_views()
        await pilot.pause()
        (line,) = visible_lines(storm_app.screen.query_one(FleetHeader))
        assert "reconnecting (attempt 4, next in 7.5 s)" in line, line
        assert re.search(r"\d:\d\d:\d\d ⏹ ended" + (" ⏸" if paused else "") + "  link", line), line


@pytest.mark.parametrize("size", [(80, 24), (120, 40), SIZE, "resized"])
async def test_the_footer_always_shows_quit_and_help(storm_app, size) -> None:
    """User pass: at 80 columns the footer showed "/ s d u R h r ^p palette" and never `q quit`, `? help`.
    "resized": started at 160 columns, then made 80 wide."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    async with storm_app.run_test(size=SIZE if size == "resized" else size) as pilot:
        await fleet_ready(storm_app)
        await pilot.pause()
        footer = storm_app.screen.query_one(Footer)

        def shown() -> list[str]:
            return [
                f"{key.key_display} {key.description}".strip()
                for key in footer.query(FooterKey)
                if key.region.width and key.region.right <= footer.region.right
            ]

        if size == "resized":
            await pilot.resize_terminal(80, 24)
            # (the footer lays its keys out again after the resize: wait for that, not a number of frames)
            await wait_for(
                lambda: footer.region.width == 80 and "? help" in shown(), what="the 80-column footer"
            )
        assert "q quit" in shown() and "? help" in shown(), shown()
