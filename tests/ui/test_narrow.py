"""At 80×24 text is shortened or wrapped whole, never cut inside a word (the on-call pass on the loopback
fleet read "a admiss", "Ctrl+R:", "── st…", "— while it")."""

from __future__ import annotations

from itertools import pairwise

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from .conftest import fleet_ready

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
