"""A hint counts the hot nodes from the fleet it is told on, not from the drill file's author.

Trainee reviewer (thundering-herd): the 135 s hint said "Three nodes carry more than their share" while
42 serving nodes were over 80 % CPU — the seed's three hashed-hot nodes are the load balancer's story,
and with this seed a restart batch puts most of the fleet over the line from 131 s."""

from __future__ import annotations

import pytest

from console.drills.schema import build_drill, load_drill
from console.drills.served import DrillNarrator
from console.errors import InputError
from tests.fleet_builders import frame, node

COUNTED = "Now {serving nodes over 80 % CPU}. For how long?"


def drill_with(text: str):  # type: ignore[no-untyped-def]
    return build_drill(
        {
            "name": "tiny",
            "title": "tiny",
            "seed_source": "none",
            "scenario": "demo",
            "clock_start": "02:00",
            "duration_s": 60,
            "briefing": "a tiny fleet",
            "hints": [{"after_s": 1, "text": text}],
            "objectives": [
                {"name": "admission set", "kind": "action_used", "action": "admission", "points": 1}
            ],
        }
    )


def told(text: str, cpus: list[float], state: str = "ready") -> str:
    fleet = [node(f"gw-{i:03d}", state=state, cpu_pct=cpu) for i, cpu in enumerate(cpus)]
    [hint] = DrillNarrator(drill_with(text), duration_s=60).due(1.0, frame=frame(1.0, fleet=fleet))
    return hint.message


def test_the_hint_says_how_many_serving_nodes_are_over_the_line_as_told() -> None:
    assert told(COUNTED, [95.0] * 42 + [40.0] * 6) == "Now 42 serving nodes over 80 % CPU. For how long?"
    assert told(COUNTED, [81.0, 80.0, 30.0]) == "Now 1 serving node over 80 % CPU. For how long?"
    assert told(COUNTED, [30.0, 30.0]) == "Now no serving node over 80 % CPU. For how long?"
    assert told(COUNTED, [99.0], state="restarting") == "Now no serving node over 80 % CPU. For how long?"


def test_the_packaged_herd_hint_counts_and_names_no_three() -> None:
    hint = next(h for h in load_drill("thundering-herd").hints if h.after_s == 135)
    assert "three" not in hint.text.lower() and "{serving nodes over 80 % CPU}" in hint.text


def test_a_counted_hint_is_judged_for_length_as_told() -> None:
    with pytest.raises(InputError, match=r"hints\.0\.text"):
        drill_with("{serving nodes over 80 % CPU} " + "x" * 90)  # 120 as written, 122 as told at 9999 nodes
