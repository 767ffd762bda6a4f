"""The top line: fleet, source, clock (the fleet's, or a drill's, whether the drill ended and whether the
clock is paused), link state and staleness, malformed-frame count."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from console.model.gauges import level_at_least
from console.model.history import FleetModel
from console.model.link import ENDED_GLYPH, PAUSED_GLYPH, LinkState
from console.model.thresholds import Level
from console.model.units import FLEET_CLOCK, ClockFace
from console.ui.themes import LEVEL_GLYPHS, Palette

#: The fewest characters of the fleet's name kept when it gives way to the link state (then "…").
FLEET_KEPT = 8

#: What Ctrl+R does while the link reconnects, longest first; "" when there is no room for it whole.
RETRY_HINTS = ("Ctrl+R: now", "^R now", "")


def header_text(
    model: FleetModel,
    now_s: float,
    palette: Palette,
    width: int | None = None,
    clock: ClockFace = FLEET_CLOCK,
    time_s: float | None = None,
) -> Text:
    """The line; when it is wider than `width`, without the source and with shorter labels — at 80 columns
    the link's age was cut to "age", and how stale the view is matters more than where it comes from. Then
    the fleet's name gives way (down to `FLEET_KEPT` characters), then the product's: a reconnecting link
    lost "next in 3.2 s" at 80 columns, and when the next try comes is what the operator is waiting for.
    Then the clock's label and the word "paused" beside its "⏸"; last, the reconnect key's hint (shorter,
    then gone) and the word "link" — a word is left out whole, never cut. `clock`: the fleet's, or a drill's own (`ClockFace`);
    `time_s`: the fleet second it reads (None: the newest frame's; a drill's, its scored last second)."""
    text = _header_text(model, now_s, palette, clock, time_s, compact=False)
    if width is None or text.cell_len <= width:
        return text
    text = _header_text(model, now_s, palette, clock, time_s, compact=True)
    fleet = model.fleet
    excess = text.cell_len - width
    kept = max(FLEET_KEPT, len(fleet) - excess - 1)
    if excess > 0 and kept < len(fleet):
        fleet = fleet[:kept] + "…"
        text = _header_text(model, now_s, palette, clock, time_s, compact=True, fleet=fleet)
    if text.cell_len > width:
        text = _header_text(model, now_s, palette, clock, time_s, compact=True, fleet=fleet, brand=False)
    if text.cell_len > width:
        # Then the clock's words: a drill's end and its paused clock beside the time left a reconnecting
        # link without its "next in" at 80 columns; "02:00:01" reads as a time without its label, and a
        # paused one by its "⏸".
        text = _header_text(
            model, now_s, palette, clock, time_s, compact=True, fleet=fleet, brand=False, terse=True
        )
    # Last, the reconnect key, said shorter, then not at all — cut, "Ctrl+R:" named a key without what it
    # does (the lost-link notification and help say it in full); then the word "link" before "✖
    # reconnecting (attempt 14, next in 27.5 s)", which says what it is: the age after it was cut to "age".
    for retry in RETRY_HINTS[1:]:
        if text.cell_len <= width:
            return text
        text = _header_text(
            model, now_s, palette, clock, time_s, True, fleet, brand=False, terse=True, retry=retry
        )
    if text.cell_len > width:
        unlabelled = _header_text(
            model,
            now_s,
            palette,
            clock,
            time_s,
            True,
            fleet,
            brand=False,
            terse=True,
            retry="",
            link_word=False,
        )
        text = unlabelled if unlabelled.cell_len <= width else text  # only if that makes the age whole
    return text


def _header_text(
    model: FleetModel,
    now_s: float,
    palette: Palette,
    clock: ClockFace,
    time_s: float | None,
    compact: bool,
    fleet: str | None = None,
    brand: bool = True,
    terse: bool = False,
    retry: str = RETRY_HINTS[0],
    link_word: bool = True,
) -> Text:
    t = model.thresholds
    gap = "  " if compact else "   "
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(" ◆ stormdeck " if brand else " ◆", style="bold")
    text.append(f" {model.fleet if fleet is None else fleet} ", style="bold reverse")
    if not compact:
        text.append(f"  source {model.source.value if model.source else '—'}")
    shown_s = time_s if time_s is not None else model.frame.time_s if model.frame else None
    time = clock.text(shown_s) if shown_s is not None else "—"
    label = "" if terse else "clock " if compact else f"{clock.label} "
    text.append(f"{gap}{label}{time}")
    if model.drill_ended is not None:
        # Lasting, where the clock is read: the end's notification is gone in 30 s, and a served drill's
        # fleet runs on after it as before.
        text.append(f" {ENDED_GLYPH} ended", style="bold")
    if model.frame is not None and model.frame.clock_paused:
        # A served drill's clock stopped by its instructor: the figures stand still on purpose, for every
        # console attached (the frames say it, `clock_paused`), not a link gone quiet.
        paused = f" {PAUSED_GLYPH}" if terse else f" {PAUSED_GLYPH} paused"
        text.append(paused, style=palette.level_style(Level.WARNING, bold=True))
    link = model.link
    stale = model.frame_age_s(now_s)
    if link.state in (LinkState.LIVE, LinkState.PAUSED):
        level = Level.OK if stale is None else level_at_least(stale, t.stale_warn_s, t.stale_crit_s)
    elif link.state is LinkState.CONNECTING:
        level = Level.WARNING
    else:
        level = Level.CRITICAL
    text.append(f"{gap}{link.label} " if link_word else gap)
    # A replay's ▶/⏸ is its state; the level's glyph joins it only when its frames run late.
    glyph = "" if link.replay_speed is not None and level is Level.OK else f"{LEVEL_GLYPHS[level]} "
    text.append(f"{glyph}{link.describe(now_s)}", style=palette.level_style(level, bold=True))
    if link.state is LinkState.RECONNECTING:
        text.append(f"  {retry}" if retry else "")
    if stale is not None:
        text.append(f"{gap}age {stale:.1f} s", style=palette.level_style(level))
    if model.gaps:
        text.append(f"  gaps {model.gaps}", style=palette.level_style(Level.WARNING))
    if model.malformed:
        text.append(
            f"  malformed {model.malformed} ({model.malformed_reason or '?'})",
            style=palette.level_style(Level.WARNING),
        )
    return text


class FleetHeader(Static):
    DEFAULT_CSS = """
    FleetHeader {
        height: 1;
        background: $panel;
    }
    """
