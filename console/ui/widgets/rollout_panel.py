"""Rollout and admission, read-only: state, batch k of n, pause reason, whether this fleet can roll out at
all, admission settings."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from console.protocol import AdmissionSettings, RolloutStatus, RolloutWait

#: A reading: its words and their style. Lines are made of readings, and a narrow panel breaks a line
#: between two readings, never inside one: Textual wrapped "batch 1 of" / "8" at 80 columns.
Reading = tuple[str, str]
_BOLD = "bold"
_GAP = "  "


def rollout_text(
    rollout: RolloutStatus | None, admission: AdmissionSettings | None, width: int | None = None
) -> Text:
    """The panel's text; with `width` (cells), each line broken between its readings to fit."""
    text = Text(no_wrap=True, overflow="ellipsis")
    for number, line in enumerate(_lines(rollout, admission)):
        if number:
            text.append("\n")
        used = 0
        for index, (words, style) in enumerate(line):
            gap = "" if index == 0 else _GAP
            # Broken only after something was said: a reason under its state starts with an empty reading,
            # and breaking off it left a blank line the six-line panel could not spare (found at 80x24).
            if used and width is not None and used + len(gap) + len(words) > width:
                text.append("\n")
                gap, used = _GAP, 0  # a continued line is indented as the lines under a label are
            pieces = [words] if width is None else _fill(words, width - used - len(gap), width - len(_GAP))
            for number_in, piece in enumerate(pieces):
                if number_in:
                    text.append("\n")
                    gap, used = _GAP, 0
                text.append(gap)
                text.append(piece, style=style)
                used += len(gap) + len(piece)
    return text


#: Units a figure keeps on its line: "timed out after 60" / "s waiting …" read as a bare 60.
_UNITS = frozenset({"s", "ms", "%", "/s", "min"})


def _units_kept(words: list[str]) -> list[str]:
    """`words` with each unit joined to the figure before it ("60", "s" → "60 s"; "(12 s of 60 s)" too)."""
    kept: list[str] = []
    for word in words:
        if kept and word.rstrip(")") in _UNITS and kept[-1][-1:].isdigit():
            kept[-1] = f"{kept[-1]} {word}"
        else:
            kept.append(word)
    return kept


def _fill(words: str, first_room: int, room: int) -> list[str]:
    """A reading longer than its room (a pause or abort reason) broken between its words, so a narrow panel
    does not wrap it anywhere; a word longer than the room stays whole."""
    pieces = [""]
    for word in _units_kept(words.split(" ")):
        fits = first_room if len(pieces) == 1 else room
        if pieces[-1] and len(pieces[-1]) + 1 + len(word) > fits:
            pieces.append(word)
        else:
            pieces[-1] = f"{pieces[-1]} {word}" if pieces[-1] else word
    return pieces


def _lines(rollout: RolloutStatus | None, admission: AdmissionSettings | None) -> list[list[Reading]]:
    lines: list[list[Reading]] = []
    if rollout is None:
        lines.append([("rollout  —", "")])
    else:
        first = [("rollout", _BOLD), (rollout.state.value, "")]
        if rollout.batches:
            first.append((f"batch {rollout.batch} of {rollout.batches}", ""))
        if rollout.mode:
            first.append((f"mode {rollout.mode.value}", ""))
        lines.append(first)
        reason = rollout.pause_reason
        if reason:
            # Said under the state it explains: a halt read "paused: halted by operator".
            state = rollout.state.value
            lines.append([("", ""), (reason if reason.startswith(state) else f"{state}: {reason}", "")])
        if rollout.waiting_for is not None:
            # Said under the state, as a reason is: "running" alone for the 60 s a restarted node has to
            # come back read the same as a hang.
            lines.append([("", ""), (_wait_words(rollout.waiting_for), "")])
        if rollout.unavailable:
            # One line, what is missing: R refuses with the fleet's own words, and the panel (six lines at
            # 80×24, 28 columns) has room for one line more before the admission's last one falls off.
            lines.append([("", ""), (_unavailable_words(rollout.unavailable), "")])
    if admission is None:
        lines.append([("admission  —", "")])
        return lines
    rate = "unlimited" if admission.rate_per_s is None else f"{admission.rate_per_s:g}/s per node"
    # Per node, as the rate above it says: a bare "ceiling 300" beside "5/s per node" left it to guess.
    ceiling = "none" if admission.max_connections is None else f"{admission.max_connections:,} per node"
    burst = admission.burst if admission.burst is not None else "—"
    lines.append([("admission", _BOLD), (rate, ""), (f"burst {burst}", "")])
    low, high = admission.retry_after_s
    more = [("", ""), (f"ceiling {ceiling}", ""), (f"Retry-After {low:g}–{high:g} s", "")]
    if admission.nodes is not None:
        more.append((f"on {len(admission.nodes)} nodes", ""))
    lines.append(more)
    return lines


#: Room for why a fleet cannot roll out: one line of the panel at 80×24 (28 columns, less the indent).
_UNAVAILABLE_ROOM = 26


def _unavailable_words(why: str) -> str:
    """`rollout.unavailable` (the server's free text) in one line: "no restart command" is the only refusal
    the controller has (`fleet up`'s nodes, or a nodes file without `restart =`); another's first clause if
    it fits whole, else the key that says it all."""
    lowered = why.lower()
    if "restart" in lowered and "command" in lowered:
        return "unable: no restart command"
    clause = why.split(";", 1)[0].strip()
    return clause if len(clause) <= _UNAVAILABLE_ROOM else "not on this fleet — see R"


#: Nodes a wait names before it says how many more: the panel is a few words wide at 80×24.
_NAMED_NODES = 3

#: What each kind of wait waits for its nodes to do; a kind not here (a newer server's) is said by its name.
_WAITS_TO = {"restart": "to come back", "drain": "to drain"}


def _wait_words(wait: RolloutWait) -> str:
    """ "waiting for node-2 to come back (12 of 60 s)", "next batch in 40 s"."""
    if wait.what == "interval" and wait.limit_s is not None:
        return f"next batch in {max(0.0, wait.limit_s - wait.waited_s):.0f} s"
    named = ", ".join(wait.nodes[:_NAMED_NODES])
    if len(wait.nodes) > _NAMED_NODES:
        named += f" and {len(wait.nodes) - _NAMED_NODES} more"
    to = _WAITS_TO.get(wait.what)
    if to is None:
        waiting = f"waiting for {wait.what}" + (f": {named}" if named else "")
    else:
        waiting = f"waiting for {named or 'the batch'} {to}"
    # "12 of 60 s", not "12 s of 60 s": at 80×24 the shorter one keeps the wait to two lines of the panel.
    waited = f"{wait.waited_s:.0f}" + (f" of {wait.limit_s:.0f}" if wait.limit_s is not None else "")
    return f"{waiting} ({waited} s)"


class RolloutPanel(Static):
    DEFAULT_CSS = """
    RolloutPanel {
        height: auto;
        max-height: 6;
        padding: 0 1;
    }
    """

    _showing: tuple[RolloutStatus | None, AdmissionSettings | None, bool] | None = None

    def show(
        self, rollout: RolloutStatus | None, admission: AdmissionSettings | None, dim: bool = False
    ) -> None:
        """The text for this width (`dim`: the view is stale); laid out again when the panel is resized."""
        self._showing = (rollout, admission, dim)
        text = rollout_text(rollout, admission, self.content_size.width or None)
        if dim:
            text.stylize("dim")
        self.update(text)

    def on_resize(self) -> None:
        if self._showing is not None:
            self.show(*self._showing)
