"""Words laid out in cells by the console itself (`console.ui.words`): a figure keeps its unit on its line
("35" / "% budget" read as a bare 35), and a text cut by its room ends at a word or a clause, with "…"."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from console.ui.words import ELLIPSIS, fill, fit, kept_whole, words

#: What the alarm rules say (console/alarms/rules.py), as the storm scene and a loopback fleet raised them.
MESSAGES = [
    "Headroom 20 % is under the 35 % budget: no restart is safe; add capacity instead.",
    "Total connections fell 7.0 % within 60 s (1.30 M → 1.21 M; alarm over 5 %): clients are failing to "
    "reconnect. Hold the rollout and drains; shed with admission.",
    "Reconnects arrive in lockstep waves (a 100 ms bin 13.6× its 2 s mean, alarm at 4×): client jitter is "
    "too small. Spread them: wide Retry-After windows, wide drain hints.",
    "Reconnect attempts 39 k/s, 73× the steady 528/s (alarm at 10×). Ration them with admission.",
    "gw-0017 down 6 s, not a planned restart (killed, crashed or hung): its clients reconnect to the rest. "
    "Restart it; no rollout until it is back.",
    "Drain ÷ inflow 0.16 is under the kill switch (0.6): stop adding load and shed with admission.",
    "drain asked at 120/s, hint 500–1500 ms; the node closes its clients at that pace until empty",
    "Cleared 0:01:05 after 25 s (raised 0:00:40) — while it held: Total connections fell 8.5 % within 60 s.",
]
UNITS = {"%", "s", "ms", "M", "k", "×", "k/s"}


def test_a_figure_and_its_unit_are_one_word():
    assert words("Headroom 20 % is under the 35 % budget:") == [
        "Headroom",
        "20 %",
        "is",
        "under",
        "the",
        "35 %",
        "budget:",
    ]
    # the unit's punctuation goes with it, a bracket before the figure too
    assert words("within 60 s (1.30 M → 1.21 M; alarm over 5 %): clients") == [
        "within",
        "60 s",
        "(1.30 M",
        "→",
        "1.21 M;",
        "alarm",
        "over",
        "5 %):",
        "clients",
    ]
    assert words("39 k/s, 73× the steady 528/s, hint 500–1500 ms") == [
        "39 k/s,",
        "73×",
        "the",
        "steady",
        "528/s,",
        "hint",
        "500–1500 ms",
    ]
    # a word that is not a unit stays a word of its own, and a unit after a word is not joined to it
    assert words("12 nodes draining, the s key") == ["12", "nodes", "draining,", "the", "s", "key"]


def test_the_headroom_message_at_80_columns_keeps_35_with_its_percent():
    """Seen at 80×24: "Headroom 20 % is under the 35 │% budget: no restart is safe; │"."""
    message = MESSAGES[0]
    assert fill(message, 30) == [
        "Headroom 20 % is under the",
        "35 % budget: no restart is",
        "safe; add capacity instead.",
    ]


@pytest.mark.parametrize("message", MESSAGES)
@pytest.mark.parametrize("width", range(12, 64, 3))
def test_every_word_whole_and_no_figure_parted_from_its_unit(message: str, width: int):
    lines = fill(message, width)
    assert all(cell_len(line) <= width for line in lines), lines
    assert " ".join(lines).split() == message.split()  # every word, in order, none cut
    for above, below in pairwise(lines):
        first = below.split()[0].rstrip(").,;:")
        assert not (above[-1:].isdigit() and first in UNITS), (above, below)


def test_fit_cuts_after_a_word_with_an_ellipsis_when_the_rows_are_too_few():
    assert fit(MESSAGES[0], 30, 2) == ["Headroom 20 % is under the", "35 % budget: no restart is…"]
    assert fit(MESSAGES[1], 30, 3) == [
        "Total connections fell 7.0 %",
        "within 60 s (1.30 M → 1.21 M;",
        "alarm over 5 %): clients are…",
    ]
    assert fit(MESSAGES[5], 46, 1) == ["Drain ÷ inflow 0.16 is under the kill switch…"]
    assert fit(MESSAGES[1], 46, 3) == [
        "Total connections fell 7.0 % within 60 s",
        "(1.30 M → 1.21 M; alarm over 5 %): clients are",
        "failing to reconnect. Hold the rollout and…",
    ]
    # one word of a new clause alone before the cut ("safe; add…") says nothing: the cut is at the clause,
    # its mark giving way to the ellipsis
    assert fit(MESSAGES[0], 36, 2) == ["Headroom 20 % is under the 35 %", "budget: no restart is safe…"]
    # an aside opened a word or two before the cut is left out whole, not left open
    assert fit(MESSAGES[3], 30, 2) == ["Reconnect attempts 39 k/s, 73×", "the steady 528/s…"]
    assert fit(MESSAGES[4], 30, 2) == ["gw-0017 down 6 s, not a", "planned restart…"]


def test_fit_says_the_whole_where_it_fits():
    assert fit(MESSAGES[0], 30, 3) == fill(MESSAGES[0], 30)
    assert fit(MESSAGES[0], 30, 9) == fill(MESSAGES[0], 30)
    assert fit("", 30, 2) == []
    assert fit(MESSAGES[0], 30, 0) == []


def test_a_word_wider_than_the_room_is_cut_to_it():
    """The one cut inside a word: a token wider than the whole line (a long URL) has nowhere else to go."""
    assert fill("see https://example.invalid/a/very/long/path now", 12) == [
        "see",
        "https://exam",
        "ple.invalid/",
        "a/very/long/",
        "path now",
    ]


@given(
    st.lists(
        st.one_of(
            st.sampled_from(["35", "1.30", "(7.0", "60", "%", "s", "ms", "M;", "%):", "×", "→", "—"]),
            st.text(alphabet="abcdefghij:;,.", min_size=1, max_size=14),
        ),
        max_size=40,
    ),
    st.integers(min_value=1, max_value=70),
    st.integers(min_value=1, max_value=12),
)
def test_fit_never_overflows_its_room(tokens: list[str], width: int, rows: int):
    text = " ".join(tokens)
    lines = fit(text, width, rows)
    assert len(lines) <= rows
    assert all(cell_len(line) <= width for line in lines), lines
    whole = fill(text, width)
    if len(whole) <= rows:
        assert lines == whole
    else:
        assert lines[-1].endswith(ELLIPSIS), lines


def test_keys_give_way_whole_least_wanted_first_and_keep_their_order() -> None:
    """`kept_whole` (the footer's keys, the replay bar's): taken by rank while they fit, shown in their own
    order; a narrower key ranked after one that did not fit still takes the room left."""
    keys = ["space pause", ", . step", "g seek", "x"]
    ranks = {"g seek": 0, "space pause": 1, ", . step": 2, "x": 3}
    assert kept_whole(keys, 25, len, ranks.__getitem__) == ["space pause", ", . step", "g seek"]
    assert kept_whole(keys, 20, len, ranks.__getitem__) == ["space pause", "g seek", "x"]  # not the step
    assert kept_whole(keys, 5, len, ranks.__getitem__) == ["x"]
    assert kept_whole(keys, 0, len, ranks.__getitem__) == []
