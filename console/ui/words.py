"""Words laid out in cells by the console itself, not by Rich: Rich breaks a line at any space (a no-break
space too), and at 80 columns the alarm under the panel read "under the 35" / "% budget" — a bare 35.
Here a figure and its unit are one word, and a text cut by its room ends at a word, with "…"."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from rich.cells import cell_len

ELLIPSIS = "…"
#: The cells a box's border takes around its title or subtitle ("╭─ " and " ─╮").
BORDER_AROUND_TITLE = 6

Item = TypeVar("Item")

#: What follows a figure as its unit in the console's words (alarm messages, `console.figures.count`'s
#: "1.30 M", a drain's "500–1500 ms"): kept on the figure's line.
UNITS = frozenset(
    {"%", "s", "ms", "min", "h", "k", "M", "G", "×", "/s", "k/s", "M/s", "B", "KiB", "MiB", "GiB"}
)
#: What may close a unit's word: "5 %):", "1.21 M;".
_CLOSING = ").,;:!?]"
#: A word ending so ends a clause: a cut there reads as a whole thought.
_CLAUSE_ENDS = (",", ";", ":", ".", "—")


def words(text: str) -> list[str]:
    """`text`'s words for a line breaker: split at spaces, each unit joined to the figure before it
    ("35", "%" → "35 %"; "(1.30", "M;" → "(1.30 M;")."""
    joined: list[str] = []
    for word in text.split():
        if joined and joined[-1][-1:].isdigit() and word.rstrip(_CLOSING) in UNITS:
            joined[-1] = f"{joined[-1]} {word}"
        else:
            joined.append(word)
    return joined


def fill(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells, broken between `words` only. A word wider than a whole
    line (a long URL) is the one thing cut, into pieces of the line's width: it has nowhere else to go."""
    width = max(1, width)
    lines: list[str] = []
    line = ""
    for word in words(text):
        if line and cell_len(line) + 1 + cell_len(word) <= width:
            line = f"{line} {word}"
            continue
        if line:
            lines.append(line)
        pieces = _pieces(word, width)
        lines.extend(pieces[:-1])
        line = pieces[-1]
    if line:
        lines.append(line)
    return lines


def fit(text: str, width: int, rows: int) -> list[str]:
    """`text` in at most `rows` lines of `width` cells: `fill`'s lines where they are few enough, else the
    first `rows`, the last cut after a whole word and ended with "…" — after the clause before it where
    the cut would leave one word of a new clause alone ("no restart is safe; add…" says "add" of nothing),
    before an aside it would leave open after a word or two ("528/s (alarm at…")."""
    lines = fill(text, width)
    if rows <= 0:
        return []
    if len(lines) <= rows:
        return lines
    kept = lines[:rows]
    kept[-1] = _cut(kept[-1], max(1, width))
    return kept


def _cut(line: str, width: int) -> str:
    """`line` ended with "…" in `width` cells, cut between its words."""
    said = words(line)
    while said and cell_len(" ".join(said)) + 1 > width:
        said.pop()
    if not said:  # one word as wide as the line: only its own letters can make room
        return _pieces(line, width - 1)[0] + ELLIPSIS if width > 1 else ELLIPSIS
    if len(said) >= 3 and said[-2].endswith(_CLAUSE_ENDS):
        said.pop()
    opened = [index for index in (-1, -2) if len(said) > -index and _opens(said[index:])]
    if opened:  # "(alarm at…": an aside cut after a word or two says nothing of it, and is never closed
        del said[opened[-1] :]
    return " ".join(said).rstrip(",;:.—– ") + ELLIPSIS


def _opens(said: list[str]) -> bool:
    """`said` opens a bracket it does not close ("(alarm", "at")."""
    joined = " ".join(said)
    return said[0].startswith("(") and joined.count("(") > joined.count(")")


def _pieces(word: str, width: int) -> list[str]:
    """`word` in pieces of at most `width` cells (one piece where it fits)."""
    pieces = [""]
    for character in word:
        if pieces[-1] and cell_len(pieces[-1] + character) > width:
            pieces.append("")
        pieces[-1] += character
    return pieces


def kept_whole(
    items: Sequence[Item], room: int, cells: Callable[[Item], int], rank: Callable[[Item], int]
) -> list[Item]:
    """The `items` (keys: the footer's, the replay bar's) that fit in `room` cells whole, in their own
    order. Taken by `rank`, lowest first (within a rank, in their order), each kept while it still fits:
    the least important give way first, and a narrower one after them may take what room is left."""
    kept: set[int] = set()
    used = 0
    for index in sorted(range(len(items)), key=lambda i: rank(items[i])):  # stable: ties keep their order
        if used + cells(items[index]) <= room:
            kept.add(index)
            used += cells(items[index])
    return [item for index, item in enumerate(items) if index in kept]
