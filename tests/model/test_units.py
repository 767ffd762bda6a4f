"""console.model.units: the one way the console writes a span of time."""

from __future__ import annotations

import pytest

from console.model.units import duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (39.6, "39 s"),
        (60, "1 min 00 s"),
        (66, "1 min 06 s"),
        (3599, "59 min 59 s"),
        (3600, "1 h 00 min"),
        (3725, "1 h 02 min"),
        (-3, "0 s"),
    ],
)
def test_a_duration_has_its_unit_after_a_space(seconds: float, text: str) -> None:
    """Alarm details read "after 39s", "after 1m 06s" beside "60 s" elsewhere: the project writes a unit after
    a space, and minutes as "min" (SI), so "1m" is not read as a metre or a million."""
    assert duration(seconds) == text
