"""At 80×24 text is shortened or wrapped whole, never cut inside a word (the on-call pass on the loopback
fleet read "a admiss", "Ctrl+R:", "── st…", "— while it")."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from console.model.link import Received
from console.protocol import Event

from .conftest import fleet_ready
from .test_oncall import visible_lines

NARROW = (80, 24)


def shown_keys(footer: Footer) -> list[FooterKey]:
    return [key for key in footer.query(FooterKey) if key.region.width]


async def test_at_80_columns_the_node_detail_footer_shows_whole_keys(storm_app) -> None:
    """The node detail's footer ran its keys under the palette's: "a admiss" and "c capacity" past the edge."""
    node = next(iter(storm_app.model.nodes))
    async with storm_app.run_test(size=NARROW) as pilot:
        await fleet_ready(storm_app)
        storm_app.open_node(node)
        await fleet_ready(storm_app)
        await pilot.pause()
        footer = storm_app.screen.query_one(Footer)
        keys = sorted(shown_keys(footer), key=lambda key: key.region.x)
        for left, right in pairwise(keys):
            assert left.region.right <= right.region.x, (left.description, right.description)
        assert all(key.region.right <= footer.region.right for key in keys)
        said = {f"{key.key_display} {key.description}" for key in keys}
        assert {"esc back", "q quit", "? help"} <= said, said


async def test_a_wrapped_event_line_hangs_under_its_text(storm_app) -> None:
    """Recent events wrapped at 80 columns back to column 0, under the time: a second line read as a new
    event. A wrapped line starts under the message it continues."""
    node = next(iter(storm_app.model.nodes))
    now_s = storm_app.clock()
    long = "drain asked at 120/s, hint 500–1500 ms; the node closes its clients at that pace until empty"
    storm_app.feed(Received(Event(time_s=40, kind="action", node=node, message=long), now_s))
    async with storm_app.run_test(size=NARROW) as pilot:
        await fleet_ready(storm_app)
        storm_app.open_node(node)
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        lines = [line[2:-2] for line in visible_lines(storm_app.screen.query_one("#events"))[1:-1]]
        first = next(index for index, line in enumerate(lines) if "drain asked" in line)
        indent = lines[first].index("drain asked")
        rest = lines[first + 1]
        assert rest[:indent].strip() == "", lines
        assert f"{lines[first][indent:].strip()} {rest.strip()}" == long, lines  # every word, whole


@pytest.mark.parametrize("fleet", ["demo-fleet", "storm-simulator-fleet-eu-west"])
async def test_at_80_columns_the_reconnect_key_is_said_whole_or_not_at_all(storm_app, fleet: str) -> None:
    """The reconnecting header ended "next in 0.0 s)  Ctrl+R:" at 80 columns — the key without what it
    does; with two-digit figures the link's age went too ("age"). The hint is shortened, then left out,
    then the word "link", before anything is cut."""
    from console.model.link import LinkState, LinkStatus
    from console.ui.widgets.header import FleetHeader

    storm_app.model.fleet = fleet
    now_s = storm_app.clock()
    storm_app.model.apply(LinkStatus(LinkState.RECONNECTING, attempt=14, next_in_s=27.5, at_s=now_s))
    async with storm_app.run_test(size=NARROW) as pilot:
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        (line,) = visible_lines(storm_app.screen.query_one(FleetHeader))
        assert "next in 27.5 s)" in line, line
        assert line.rstrip().endswith(("now", "s)", "s")), line  # a whole word last, no "…"
        assert ("Ctrl+R" not in line or "Ctrl+R: now" in line) and ("^R" not in line or "^R now" in line)
        assert re.search(r"age \d+\.\d s$", line.rstrip()), line  # how stale the view is, whole


@pytest.mark.parametrize("lockstep", [0.0, 10.5], ids=["too-quiet", "lockstep"])
async def test_at_80_columns_the_wave_legend_is_whole(storm_app, lockstep: float) -> None:
    """A quiet fleet's wave box (the loopback fleet's) ended "lockstep — (too quiet to judge) · ── st…":
    the legend of the two lines cut. Shorter words first; a word never cut."""
    storm_app.model.lockstep = lockstep
    async with storm_app.run_test(size=NARROW) as pilot:
        await fleet_ready(storm_app)
        storm_app.refresh_views()
        await pilot.pause()
        bottom = visible_lines(storm_app.screen.query_one("#wave-box"))[-1]
        assert "…" not in bottom, bottom
        assert "── steady · ── admission" in bottom, bottom
        assert ("LOCKSTEP 10.5" if lockstep else "too quiet") in bottom, bottom
