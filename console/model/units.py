"""Numbers as an operator reads them at a glance."""

from __future__ import annotations


def human_count(value: float) -> str:
    """12 345 678 → '12.3M', 640 → '640'."""
    magnitude = abs(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= limit:
            return f"{value / limit:.1f}{suffix}"
    return f"{value:.0f}"


def short_number(value: float) -> str:
    """Like human_count, but keeps small values' precision: 38 600 → '38.6k', 0.159 → '0.159'."""
    return human_count(value) if abs(value) >= 1e3 else f"{value:.3g}"
