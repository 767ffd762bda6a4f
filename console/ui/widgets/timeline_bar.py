"""The replay's controls line and timeline bar: where the replay stands, its speed, and the markers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from console.model.link import ENDED_GLYPH, PAUSED_GLYPH
from console.model.thresholds import Level
from console.model.timeline import ACTION_GLYPH, ALARM_GLYPH, EVENT_GLYPH, timeline_cells
from console.model.units import FLEET_CLOCK, ClockFace, counted
from console.protocol import Event
from console.record.reader import AuditRecord, Marker
from console.record.records import (
    ActionRecord,
    Confirmation,
    DrillOutcome,
    injection_audit_record,
)
from console.record.replay import SPEEDS, ReplayStatus, damage_note
from console.ui.themes import Palette
from console.ui.words import kept_whole

_ALARM_LEVELS = {"critical": Level.CRITICAL, "warning": Level.WARNING}
_ACTION_LEVELS = {"blocked": Level.CRITICAL, "typed": Level.WARNING, "confirm": Level.WARNING}
#: The replay's keys, on the bar's first line, most wanted first: the footer, full at 160 columns, leaves
#: `(` `)` off. Where the line has no room for them all, they give way whole from the last (`kept_whole`,
#: as the footer's keys do): at 80×24 it read "space pause · , . st…".
CONTROLS = ("space pause", ", . step", "g seek", "x speed", "[ ] alarm", "{ } action", "( ) event")
#: The keys kept on the line wherever the status can make room for them (`status_text`), as a screen's
#: essential keys in its footer: the replay's own moves. `g seek` is in the footer at every width.
ESSENTIAL = ("space pause", ", . step", "x speed", "[ ] alarm")
_BETWEEN = " · "


@dataclass(frozen=True)
class _Form:
    """How much the status says: all of it, or — to leave the essential keys room — less of what the header
    says too ("replay ▶ ×5", "replay ⏸ paused", the clock) and the bar under it shows (where the head is)."""

    state_words: bool  # "replay ⏸ paused", not "⏸"
    frame: bool  # "frame 43 of 120"


#: Fullest first: at 120 columns the whole status; at about 100, the state by its glyph; at 80, the time and
#: the recording's end without the frame — there it named "space pause" alone, the step, speed and jump keys
#: in help only.
_FORMS = (_Form(state_words=True, frame=True), _Form(state_words=False, frame=True), _Form(False, False))


def status_text(status: ReplayStatus, clock: ClockFace = FLEET_CLOCK, width: int | None = None) -> Text:
    """Where the replay stands, whole, then the keys that fit in `width` cells (every key without one): the
    fullest status (`_FORMS`) that leaves the `ESSENTIAL` keys room, and then what other keys fit."""
    at = clock.text
    # Room kept for the widest this recording's status reads, so a key does not come and go as it plays.
    widest = replace(
        status,
        paused=False,
        finished=False,
        speed=max(SPEEDS),
        time_s=status.span_s[1] if status.span_s else status.time_s,
        frame_index=max(status.frame_count - 1, 0),
    )
    for form in _FORMS:
        said = max(cell_len(_state(s, form) + _where(s, at, form)) for s in (status, widest))
        room = None if width is None else width - said + len(_BETWEEN)  # (no " · " before the first)
        if room is None or sum(map(_key_cells, ESSENTIAL)) <= room:
            break
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(_state(status, form), style="bold")
    text.append(_where(status, at, form))
    keys = CONTROLS if room is None else kept_whole(CONTROLS, room, _key_cells, _rank)
    text.append(_BETWEEN.join(keys), style="dim")
    return text


def _rank(key: str) -> int:
    """The essential keys kept first, then the others in their order."""
    return CONTROLS.index(key) - (len(CONTROLS) if key in ESSENTIAL else 0)


def _state(status: ReplayStatus, form: _Form = _FORMS[0]) -> str:
    glyph, word = (
        (PAUSED_GLYPH, "paused")
        if status.paused
        else (ENDED_GLYPH, "end")
        if status.finished
        else ("▶", "playing")
    )
    said = f"replay {glyph} {word} " if form.state_words else glyph
    return f"{said} ×{status.speed:g}  "


def _where(status: ReplayStatus, at: Callable[[float], str], form: _Form = _FORMS[0]) -> str:
    end = at(status.span_s[1]) if status.span_s else "—"
    frame = status.frame_index + 1 if status.frame_count else 0
    where = f"{at(status.time_s)} / {end}"
    return f"{where}  frame {frame} of {status.frame_count}   " if form.frame else f"{where}   "


def _key_cells(key: str) -> int:
    return cell_len(key) + len(_BETWEEN)


def bar_text(status: ReplayStatus, markers: Sequence[Marker], width: int, palette: Palette) -> Text:
    text = Text(no_wrap=True)
    for cell in timeline_cells(status.span_s, markers, status.time_s, width):
        if cell.kind == "alarm":
            style = palette.level_style(_ALARM_LEVELS.get(cell.level, Level.WARNING), bold=True)
        elif cell.kind == "action":
            style = palette.level_style(_ACTION_LEVELS.get(cell.level, Level.OK), bold=True)
        elif cell.kind == "event":
            style = f"bold {palette.foreground}"  # the shape tells it from the head (●)
        elif cell.kind == "head":
            style = f"bold {palette.foreground}"
        elif cell.kind == "played":
            style = palette.chart["line"]
        else:
            style = "dim"
        text.append(cell.glyph, style=style)
    return text


@dataclass(frozen=True)
class LastEntry:
    """The newest audit entry the replay has passed, in words the bar can shorten: "last: drain gw-0003 by
    ops at 0:01:00 → blocked". Only `what` is ever cut — who, when and what became of it stay whole."""

    what: str  # "drain gw-0003", "injected kill_nodes(nodes=[gw-0004])", "drill ended"
    actor: str | None
    at: str  # the time on the replay's clock
    became: str | None  # the outcome, the answer, the drill's score

    @property
    def whole(self) -> str:
        return f"{_LAST}{self.what}{self._rest}"

    @property
    def _rest(self) -> str:
        by = f" by {self.actor}" if self.actor else ""
        return f"{by} at {self.at}" + (f" → {self.became}" if self.became else "")

    def text(self, room: int, cut: bool = False, least: int | None = None) -> str | None:
        """The entry in `room` cells — with `cut`, `what` ended "…" to fit, in no fewer than `least` cells
        (`_LEAST_WHAT`) — or None where it does not fit."""
        what_room = room - cell_len(_LAST) - cell_len(self._rest)
        if what_room >= cell_len(self.what):
            return self.whole
        if not cut or what_room < (_LEAST_WHAT if least is None else least):
            return None
        what = Text(self.what)
        what.truncate(what_room, overflow="ellipsis")
        return f"{_LAST}{what.plain}{self._rest}"


_LAST = "last: "
#: Cut shorter than this, what was done says nothing ("dr…"): the line is cut at its end instead.
_LEAST_WHAT = 8
#: Beside the counts, what was done is cut no shorter than this: a long injection's node list may give way
#: ("injected kill_nodes(nod…"), a drain's target never ("drain g…" beside "▲ 7 alarms" at 80 columns).
_LEAST_WHAT_BESIDE_COUNTS = 24


def last_entry(record: AuditRecord | DrillOutcome | None, clock: ClockFace = FLEET_CLOCK) -> LastEntry | None:
    """`record` (`ReplaySource.last_audit_record`) as the bar says it, on the replay's clock."""
    at = clock.text
    if isinstance(record, ActionRecord | Confirmation):
        what = f"{record.action} {record.target}" if record.target else record.action
        became = record.outcome if isinstance(record, ActionRecord) else record.answer
        return LastEntry(what, record.actor, at(record.time_s), became)
    if isinstance(record, Event):  # an instructor's injection, in the audit log's words
        row = injection_audit_record(record)
        return LastEntry(str(row["detail"]), str(row["actor"]), at(record.time_s), None)
    if isinstance(record, DrillOutcome):
        score = None if record.score is None else f"score {record.score:g}"
        return LastEntry("drill ended", None, at(record.time_s), score)
    return None


def counts_text(
    markers: Sequence[Marker], last: LastEntry | None, width: int, entries: Sequence[LastEntry] = ()
) -> Text:
    """The markers counted, then the last entry passed, in `width` cells. The counts always read the same
    words, units named ("▲ 7 alarms  ◆ 2 actions  ◇ 2 events"); where they leave the recording's widest
    entry (of `entries`, every one the bar can show) too little room, closer together, then beside what
    was done cut "…" (a long one: `_LEAST_WHAT_BESIDE_COUNTS`), then not at all — chosen for the whole
    recording at this width, not entry by entry: at 80 columns they read "▲ 7 alarms …" before the first
    entry and "▲ 7  ◆ 2" after it, bare numbers. Who, when and what became of an entry stay whole; before
    the first, the counts are the line."""
    alarms = sum(m.kind == "alarm" for m in markers)
    actions = sum(m.kind == "action" for m in markers)
    events = len(markers) - alarms - actions
    # Actions and events counted where the recording has any (a drill where nobody acted: "◆ 0 actions",
    # a glyph the bar never draws, pushed the counts off the line beside the drill's end at 80 columns).
    parts = [f"{ALARM_GLYPH} {counted(alarms, 'alarm')}"]
    parts += [f"{ACTION_GLYPH} {counted(actions, 'action')}"] if actions else []
    parts += [f"{EVENT_GLYPH} {counted(events, 'event')}"] if events else []
    wide, close = ("   ".join(parts) + "   ", "  ".join(parts) + "  ")
    shown = [*entries, *([last] if last is not None else [])]

    def fits(form: tuple[str, bool]) -> bool:
        counts, cut = form
        least = _LEAST_WHAT_BESIDE_COUNTS if counts else _LEAST_WHAT
        return all(entry.text(width - cell_len(counts), cut, least) is not None for entry in shown)

    forms = ((wide, False), (close, False), (close, True), ("", False), ("", True))
    counts, cut = next((form for form in forms if fits(form)), forms[-1])
    if last is None:  # nothing passed yet: the counts alone, whatever room an entry will need
        counts, said = (counts or (wide if cell_len(wide) <= width else close)), ""
    else:  # too narrow for who, when and what became of it alone: cut at its end
        least = _LEAST_WHAT_BESIDE_COUNTS if counts else _LEAST_WHAT
        said = last.text(width - cell_len(counts), cut, least) or last.whole
    text = Text(no_wrap=True, style="dim")
    text.append(counts)
    text.append(said, style="")
    text.truncate(width, overflow="ellipsis")
    return text


class TimelineBar(Static):
    DEFAULT_CSS = """
    TimelineBar {
        height: auto;  /* 3 lines; a 4th says where a damaged recording ends */
        padding: 0 1;
        background: $panel;
    }
    """

    def show(
        self,
        status: ReplayStatus,
        markers: Sequence[Marker],
        palette: Palette,
        last: LastEntry | None = None,
        clock: ClockFace = FLEET_CLOCK,
        entries: Sequence[LastEntry] = (),
    ) -> None:
        """`last`: the newest audit entry the replay has passed (`last_entry`); `entries`: every one it can
        pass (the counts' form is fitted to the widest). `clock`: how times read — the fleet's, or the
        recorded drill's (`recorded_clock`)."""
        width = max(self.content_size.width, 10)
        # The status and the counts are cut to the width here: Textual wraps a Text whatever its no_wrap,
        # and at 120 columns the controls' last word took a line of its own, pushing the bar down. The keys
        # fit whole (`status_text`); the cut is for a width too narrow for where the replay stands.
        text = status_text(status, clock, width)
        text.truncate(width, overflow="ellipsis")
        text.append("\n")
        text.append(bar_text(status, markers, width, palette))
        text.append("\n")
        text.append(counts_text(markers, last, width, entries))
        note = damage_note(status)
        if note is not None:  # the frame count and the bar end there: say why, on a line of its own
            text.append(f"\n✖ {note}", style=palette.level_style(Level.CRITICAL))
        self.update(text)
