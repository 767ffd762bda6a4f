"""Rollout and admission, read-only: state, batch k of n, pause reason, whether this fleet can roll out at
all, admission settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

from rich.cells import cell_len
from rich.text import Text
from textual.css.scalar import Unit
from textual.widgets import Static

from console.figures import first_named
from console.model.actions.refusals import rollout_lacks
from console.model.admission import (
    PER_NODE,
    burst_words,
    ceiling_words,
    rate_words,
    retry_after_words,
    where_said,
)
from console.model.units import fleet_clock, short_number
from console.protocol import (
    AdmissionGroup,
    AdmissionInForce,
    AdmissionSettings,
    RolloutMode,
    RolloutState,
    RolloutStatus,
    RolloutWait,
)
from console.ui.words import fill, fit

#: What an on-call operator can spare first when the panel is short (six lines at 80×24, where a wait of
#: two lines dropped the admission's ceiling): each gives way, in this order, only while the panel is still
#: too short — the window Retry-After is drawn from, the bucket's burst, the rollout's mode and the drain
#: rate it asked for (one reading, "drain 10/s"; set with it, and R's form and the audit log say them), the
#: connection ceiling, since when a halted or paused rollout stands still, batch k of n. Never given way: the
#: rollout's state, what explains it (a pause reason, what it waits for, why it cannot run: cut, with "…",
#: only once nothing else is left to give), the admission rate and the nodes it is set on (without them the
#: rate reads as every node's).
GIVES_WAY = ("retry_after", "burst", "mode", "ceiling", "since", "batch")


class Reading(NamedTuple):
    """Words and their style. Lines are made of readings, and a narrow panel breaks a line between two
    readings, never inside one: Textual wrapped "batch 1 of" / "8" at 80 columns."""

    words: str
    style: str = ""
    gives_way: str | None = None  # its name in GIVES_WAY; None: it is always shown
    explains: bool = False  # said under the state to explain it: shortened last


#: A panel row: its pieces of text and their styles (the gaps between readings included).
Row = list[tuple[str, str]]

_BOLD = "bold"
_GAP = "  "
_INDENT = Reading("")  # a line under a label starts with it: its readings line up under the label's


def rollout_text(
    rollout: RolloutStatus | None,
    admission: AdmissionInForce | AdmissionSettings | None,
    width: int | None = None,
    height: int | None = None,
    clock: Callable[[float], str] = fleet_clock,
) -> Text:
    """The panel's text; with `width` (cells), each line broken between its readings to fit; with `height`
    (lines), readings given way as `GIVES_WAY` orders until it fits. `admission`: what each node runs (the
    fleet's settings alone say every node runs them); `clock`: how a fleet time reads (the console's clock
    face: a drill's is the drill's)."""
    text = Text(no_wrap=True, overflow="ellipsis")
    for number, row in enumerate(_fitted(_lines(rollout, admission, clock), width, height)):
        if number:
            text.append("\n")
        for words, style in row:
            text.append(words, style=style)
    return text


def _fitted(lines: list[list[Reading]], width: int | None, height: int | None) -> list[Row]:
    """The rows of `lines`, giving way reading by reading (`GIVES_WAY`) while they are more than `height`;
    then the explanations shortened a row at a time; then the bottom rows cut (a height no screen gives)."""
    rows = _rows(lines, width)
    given: list[str] = []
    for name in GIVES_WAY:
        if height is None or len(rows) <= height:
            return rows
        given.append(name)
        rows = _rows(_without(lines, given), width)
    lines = _without(lines, given)
    explained = max((len(pieces) for pieces in _pieces_of(lines, width)), default=1)
    while height is not None and len(rows) > height and explained > 1:
        explained -= 1
        rows = _rows(lines, width, explained)
    return rows if height is None else rows[:height]


def _without(lines: list[list[Reading]], given: list[str]) -> list[list[Reading]]:
    """`lines` less the readings that gave way; a line left with nothing to say goes too."""
    kept = [[reading for reading in line if reading.gives_way not in given] for line in lines]
    return [line for line in kept if any(reading.words for reading in line)]


def _pieces_of(lines: list[list[Reading]], width: int | None) -> list[list[str]]:
    """How many rows each explaining reading takes at `width` (its pieces): what there is to shorten."""
    if width is None:
        return []
    return [fill(reading.words, width - len(_GAP)) for line in lines for reading in line if reading.explains]


def _rows(lines: list[list[Reading]], width: int | None, explained: int | None = None) -> list[Row]:
    """`lines` laid out at `width`: each broken between its readings, a reading longer than its room broken
    between its words (`console.ui.words`: a figure keeps its unit); `explained`: the most rows an
    explaining reading keeps (the last one cut with "…" at a word or a clause)."""
    rows: list[Row] = []
    for line in lines:
        row: Row = []
        rows.append(row)
        used = 0
        for index, reading in enumerate(line):
            gap = "" if index == 0 else _GAP
            # Broken only after something was said: a reason under its state starts with an empty reading,
            # and breaking off it left a blank line the six-line panel could not spare (found at 80x24).
            if used and width is not None and used + len(gap) + cell_len(reading.words) > width:
                row = []
                rows.append(row)
                gap, used = _GAP, 0  # a continued line is indented as the lines under a label are
            pieces = _pieces(reading, None if width is None else (width - used - len(gap), width), explained)
            for number_in, piece in enumerate(pieces):
                if number_in:
                    row = []
                    rows.append(row)
                    gap, used = _GAP, 0
                row += [(gap, ""), (piece, reading.style)]
                used += len(gap) + cell_len(piece)
    return rows


def _pieces(reading: Reading, rooms: tuple[int, int] | None, explained: int | None) -> list[str]:
    """`reading` in the rows it takes: whole where it fits where it starts (`rooms`: the rest of its row,
    the panel's width), else filled into continued lines (the width less their indent), an explanation
    cut to `explained` rows."""
    if rooms is None or cell_len(reading.words) <= rooms[0]:
        return [reading.words]
    room = rooms[1] - len(_GAP)
    if reading.explains and explained is not None:
        return fit(reading.words, room, explained)
    return fill(reading.words, room)


def _lines(
    rollout: RolloutStatus | None,
    admission: AdmissionInForce | AdmissionSettings | None,
    clock: Callable[[float], str],
) -> list[list[Reading]]:
    lines: list[list[Reading]] = []
    if rollout is None:
        lines.append([Reading("rollout  —")])
    else:
        first = [Reading("rollout", _BOLD), Reading(rollout.state_said())]
        since = _stopped_since(rollout)
        if since is not None:
            # Since when it stands still: an operator who comes to a halted rollout at 4 a.m. asks first
            # how long it has (the audit log had it; the panel said "halted" alone).
            first.append(Reading(f"since {clock(since)}", gives_way="since"))
        if rollout.batches and not rollout.scheduled:  # (a scheduled one's batches are said with its start)
            first.append(Reading(rollout.position(), gives_way="batch"))
        if rollout.mode:
            first.append(Reading(_mode_words(rollout), gives_way="mode"))
        lines.append(first)
        if rollout.scheduled:
            # Said under the state, as a reason is: "running, before batch 1 of 16" read as a rollout under
            # way that had not begun (thundering-herd's, for its first 30 s).
            lines.append([_INDENT, Reading(rollout.schedule_said(clock), explains=True)])
        reason = rollout.pause_reason
        if reason:
            # Said under the state it explains: a halt read "paused: halted by operator".
            state = rollout.state.value
            said = reason if reason.startswith(state) else f"{state}: {reason}"
            lines.append([_INDENT, Reading(said, explains=True)])
        if rollout.waiting_for is not None:
            # Said under the state, as a reason is: "running" alone for the 60 s a restarted node has to
            # come back read the same as a hang.
            lines.append([_INDENT, Reading(_wait_words(rollout.waiting_for), explains=True)])
        if rollout.unavailable or rollout.unavailable_reason:
            # One line, what is missing: R refuses with the fleet's own words, and every line here makes
            # one of the admission's readings give way in the panel's six lines at 80×24 (`GIVES_WAY`).
            lines.append([_INDENT, Reading(_unavailable_words(rollout), explains=True)])
    in_force = AdmissionInForce.said(admission)
    if in_force is None:
        lines.append([Reading("admission  —")])
        return lines
    groups = in_force.groups()
    # Each figure once where every node runs the same, else where each runs what: "5/s on 3 nodes,
    # unlimited elsewhere" — a per-node change showed as the fleet's unlimited (found in review).
    lines.append(
        [
            Reading("admission", _BOLD),
            *_per_group(groups, rate_words),
            *_per_group(groups, burst_words, "burst", gives_way="burst"),
        ]
    )
    lines.append(
        [
            _INDENT,
            *_per_group(groups, ceiling_words, "ceiling", gives_way="ceiling"),
            *_per_group(groups, retry_after_words, "Retry-After", gives_way="retry_after"),
        ]
    )
    return lines


def _stopped_since(rollout: RolloutStatus) -> float | None:
    """When a halted or paused rollout stopped, where its source says (`halted_at_s`, `paused_at_s`)."""
    if rollout.state is RolloutState.HALTED:
        return rollout.halted_at_s
    if rollout.state is RolloutState.PAUSED:
        return rollout.paused_at_s
    return None


def _per_group(
    groups: list[AdmissionGroup],
    words: Callable[[AdmissionSettings], str],
    label: str = "",
    gives_way: str | None = None,
) -> list[Reading]:
    """`label` and the `words` of the groups' settings: one reading where every node runs the same ("per
    node" left in), else one a value saying where it runs ("5/s on 3 nodes,", "none elsewhere": the
    nodes of groups that differ in other settings only counted together), the label before the first."""
    where: dict[str, AdmissionGroup] = {}
    for group in groups:
        text = words(group.settings)
        said = where.get(text)
        if said is None or group.rest:
            where[text] = group  # the rest of the fleet takes in the nodes that run the same as it
        elif not said.rest:
            where[text] = replace(said, nodes=(*(said.nodes or ()), *(group.nodes or ())))
    if len(where) == 1:
        texts = list(where)
    else:
        # The nodes no override names last, as "elsewhere": the rest of the fleet.
        ordered = sorted(where.items(), key=lambda item: item[1].rest)
        texts = [where_said(text.removesuffix(PER_NODE), group) for text, group in ordered]
    texts = [f"{text}," for text in texts[:-1]] + texts[-1:]
    if label:
        texts[0] = f"{label} {texts[0]}"
    return [Reading(text, gives_way=gives_way) for text in texts]


def _mode_words(rollout: RolloutStatus) -> str:
    """ "mode drain", or with the rate each batch node drains at where the rollout asked for one: "drain
    10/s" in its place, as wide, so it stays beside "batch 1 of 3" at 80×24 ("drains at 10/s per node"
    took a line of its own there, and gave way whenever the rollout waited for a drain)."""
    rate = rollout.drain_rate_per_s
    if rollout.mode is RolloutMode.DRAIN and rate is not None:
        return f"drain {short_number(rate)}/s"
    return f"mode {rollout.mode.value if rollout.mode else ''}"


#: Room for why a fleet cannot roll out: one line of the panel at 80×24 (28 columns, less the indent).
_UNAVAILABLE_ROOM = 26


def _unavailable_words(rollout: RolloutStatus) -> str:
    """Why this fleet cannot roll out, in one line: its typed reason (`unavailable_reason`); from an older
    server, which says it in words only (`unavailable`), their first clause where it fits whole, else that
    it cannot — the words are R's to show, not the panel's to search for a cause."""
    reason = rollout.unavailable_reason
    if reason is not None:
        # (what to do about it is R's to say, in the server's words)
        said = f"unable: {rollout_lacks(reason)}"
        return fit(said, _UNAVAILABLE_ROOM, 1)[0]
    clause = (rollout.unavailable or "").split(";", 1)[0].strip()
    return clause if len(clause) <= _UNAVAILABLE_ROOM else "unable to roll out — see R"


#: Nodes a wait names before it says how many more: the panel is a few words wide at 80×24.
_NAMED_NODES = 3

#: What each kind of wait waits for its nodes to do; a kind not here (a newer server's) is said by its name.
_WAITS_TO = {"restart": "to come back", "drain": "to drain"}


def _wait_words(wait: RolloutWait) -> str:
    """ "waiting for node-2 to come back (12 of 60 s)", "waiting for gw-0 to drain (24 s so far)", "next batch
    in 40 s"."""
    if wait.what == "interval" and wait.limit_s is not None:
        return f"next batch in {max(0.0, wait.limit_s - wait.waited_s):.0f} s"
    named = first_named(wait.nodes, _NAMED_NODES)
    to = _WAITS_TO.get(wait.what)
    if to is None:
        waiting = f"waiting for {wait.what}" + (f": {named}" if named else "")
    else:
        waiting = f"waiting for {named or 'the batch'} {to}"
    # "12 of 60 s", not "12 s of 60 s": at 80×24 the shorter one keeps the wait to two lines of the panel.
    # Without a limit, "so far": "to drain (24 s)" counting up read as the time left (review).
    waited = f"{wait.waited_s:.0f}" + (
        f" of {wait.limit_s:.0f} s" if wait.limit_s is not None else " s so far"
    )
    return f"{waiting} ({waited})"


class RolloutPanel(Static):
    DEFAULT_CSS = """
    RolloutPanel {
        height: auto;
        max-height: 6;
        padding: 0 1;
    }
    """

    _showing: (
        tuple[
            RolloutStatus | None,
            AdmissionInForce | AdmissionSettings | None,
            bool,
            Callable[[float], str],
        ]
        | None
    ) = None

    def show(
        self,
        rollout: RolloutStatus | None,
        admission: AdmissionInForce | AdmissionSettings | None,
        dim: bool = False,
        clock: Callable[[float], str] = fleet_clock,
    ) -> None:
        """The text for this width (`dim`: the view is stale; `clock`: the console's clock face's text);
        laid out again when the panel is resized."""
        self._showing = (rollout, admission, dim, clock)
        text = rollout_text(rollout, admission, self.content_size.width or None, self._most_lines(), clock)
        if dim:
            text.stylize("dim")
        self.update(text)

    def _most_lines(self) -> int | None:
        """The most lines the panel shows (its max-height, in cells): the readings that matter least give
        way within it (`GIVES_WAY`), where the height cut the bottom lines whatever they said."""
        most = self.styles.max_height
        return int(most.value) if most is not None and most.unit is Unit.CELLS else None

    def on_resize(self) -> None:
        if self._showing is not None:
            self.show(*self._showing)
