"""The header on a small terminal: how stale the view is stays readable (at 80 columns it was cut to
"age", found in review); the source gives way first."""

from __future__ import annotations

import re

import pytest

from console.ui.widgets.header import FleetHeader

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
