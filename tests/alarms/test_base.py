"""The figures alarm messages share (`console.alarms.base`)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from console.alarms.base import count, counts_apart

SCALE = {"": 1.0, "k": 1e3, "M": 1e6}


def read(shown: str) -> tuple[float, int, str]:
    """A figure as the operator reads it: its value, its decimals and its unit ("1.04 k" → 1040, 2, "k")."""
    match = re.fullmatch(r"(-?[\d,]+)(?:\.(\d+))?(?: ([kM]))?", shown)
    assert match, shown
    whole, decimals, unit = match.group(1), match.group(2) or "", match.group(3) or ""
    return float(f"{whole.replace(',', '')}.{decimals or 0}") * SCALE[unit], len(decimals), unit


def test_a_rate_over_a_limit_that_reads_the_same_gets_the_places_that_tell_them_apart() -> None:
    assert counts_apart(3.4, 3.0) == ("3.4", "3.0")
    assert counts_apart(3.02, 3.0) == ("3.02", "3.00")
    assert counts_apart(3.0, 2.0) == ("3.0", "2.0")
    assert counts_apart(12.0, 9.6) == ("12", "10")  # the larger's format for both
    assert counts_apart(10.4, 10.2) == ("10.4", "10.2")
    assert counts_apart(1040.0, 1030.0) == ("1,040", "1,030")  # not "1.0 k" over "1.0 k"
    assert counts_apart(1800.0, 1200.0) == ("1.8 k", "1.2 k")
    assert counts_apart(216_000.0, 180_000.0) == ("216 k", "180 k")
    assert counts_apart(13e6, 2e6) == ("13.00 M", "2.00 M")


figures = st.floats(min_value=0.0, max_value=1e8, allow_nan=False, allow_infinity=False)


@given(figures, figures)
def test_two_figures_read_on_the_sides_they_are_on_in_one_format(value: float, limit: float) -> None:
    shown_value, shown_limit = counts_apart(value, limit)
    (read_value, value_places, value_unit), (read_limit, limit_places, limit_unit) = (
        read(shown_value),
        read(shown_limit),
    )
    assert (value_places, value_unit) == (limit_places, limit_unit)
    side = (value > limit) - (value < limit)
    if value_places < 6:  # (past 6 places two figures that close are said as equal: none such in a fleet)
        assert (read_value > read_limit) - (read_value < read_limit) == side, (shown_value, shown_limit)


def test_a_pair_apart_at_the_usual_places_reads_as_count_would() -> None:
    for value, limit in ((833.0, 120.0), (3.4, 1.0), (13e6, 12e6)):
        assert counts_apart(value, limit) == (count(value), count(limit))


def test_clients_are_counted_whole() -> None:
    """ "beyond the 7.0 clients closed by drains" (review, a 300-client loopback fleet): clients come whole."""
    from console.alarms.base import count, whole_count

    assert [whole_count(v) for v in (7, 7.4, 999, 1_500, 216_000, 13_000_000)] == [
        "7",
        "7",
        "999",
        "1.5 k",
        "216 k",
        "13.00 M",
    ]
    assert count(7) == "7.0"  # a rate keeps its place
