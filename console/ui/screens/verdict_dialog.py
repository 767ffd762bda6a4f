"""The server's verdict on an action, in full, and the question its level asks (issue #4, section 4).

Every check with its value, limit and pass or fail; the projections; the forecast as sparklines (with and
without the action, on one scale). Then: `confirm` — Enter or y; `typed` — what would pass, and the node
id (or fleet name) typed back, a wrong one refused here with a message; `blocked` — why, and what would
pass. A dry run shows the verdict (and what would pass) and asks nothing. The dialog dismisses with `Confirmed` (an intent) or None.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.padding import Padding
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from console.model.actions.answer import (
    check_mark,
    forecast_series,
    format_value,
    limit_text,
    typed_matches,
    what_would_pass,
)
from console.model.downsample import spark_blocks
from console.model.thresholds import Level
from console.protocol import Check, Verdict, VerdictLevel
from console.ui.screens.action_form import QUIT_OVER_FIELDS
from console.ui.themes import LEVEL_GLYPHS, Palette
from console.ui.widgets.footer import ConsoleFooter

VERDICT_LEVELS = {
    VerdictLevel.OK: Level.OK,
    VerdictLevel.CONFIRM: Level.WARNING,
    VerdictLevel.TYPED: Level.WARNING,
    VerdictLevel.BLOCKED: Level.CRITICAL,
}
SPARK_CELLS = 30
#: A forecast row whose values stay within this share of their level draws flat: scaled to its own spread,
#: 1,299,262–1,299,965 (0.05 %) drew as a cliff ▁▁▁████, and 100–100 as a half bar.
FLAT_SHARE = 0.01
#: The verdict's rows at most, on a terminal tall enough (it scrolls beyond).
SCROLL_ROWS = 30


@dataclass(frozen=True)
class Confirmed:
    typed: str | None


#: The narrowest `why` column the checks are drawn as a table with. Narrower (at 80 columns the table's
#: fixed columns left it 17 cells: one reason took 7 lines, ten checks several pages), each check is a line
#: (mark, name, value, limit) with a failing one's reason under it, at the dialog's width.
WHY_MIN = 40
#: A failing check's reason, under its line: indented past the mark, under the name.
REASON_INDENT = 4
#: The table's columns but `why` take their cells and these: a separator and a cell of padding each side
#: between five columns, none at the edges.
TABLE_GUTTERS = 4 * 3
#: Severity, the most first: a check that blocks, then typed, confirm, and a note (it only warns).
SEVERITY = {VerdictLevel.BLOCKED: 0, VerdictLevel.TYPED: 1, VerdictLevel.CONFIRM: 2, VerdictLevel.OK: 3}


def ordered_checks(checks: Sequence[Check]) -> list[Check]:
    """The failing checks first, the most severe first, then the passing ones; else in the guard's order
    (a failing check listed 8th of 10 was on the dialog's third page at 80×24)."""
    return sorted(checks, key=_failing_first)


def _failing_first(check: Check) -> tuple[bool, int]:
    if check.ok:
        return True, 0  # the passing ones in the guard's order, whatever level they would fail to
    return False, SEVERITY[check.level or VerdictLevel.OK]


def check_style(check: Check, palette: Palette) -> tuple[str, Style]:
    """A check's glyph and mark (`✓ pass`, `▲ FAIL`, `✖ FAIL`, `▲ note`) and the style of its line."""
    if check.ok:
        level, glyph = Level.OK, "✓"
    else:
        level = Level.WARNING if check.level in (None, VerdictLevel.OK) else VERDICT_LEVELS[check.level]
        glyph = LEVEL_GLYPHS[level]
    return f"{glyph} {check_mark(check)}", palette.level_style(level, bold=not check.ok)


def _cells(texts: Iterable[str], header: str = "") -> int:
    return max([cell_len(header), *(cell_len(text) for text in texts)])


def table_fits(checks: Sequence[Check], width: int) -> bool:
    """Whether the table leaves its `why` column WHY_MIN cells at `width`."""
    fixed = (
        7
        + _cells((check.name for check in checks), "check")
        + _cells((format_value(check.value) for check in checks), "value")
        + _cells((limit_text(check) for check in checks), "limit")
    )
    return width - fixed - TABLE_GUTTERS >= WHY_MIN


def checks_table(checks: Sequence[Check], palette: Palette) -> Table:
    table = Table(expand=True, show_edge=False, pad_edge=False)
    table.add_column("", width=7, no_wrap=True)
    table.add_column("check", style="bold", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("limit", justify="right", no_wrap=True)
    table.add_column("why", ratio=1)
    for check in checks:
        mark, style = check_style(check, palette)
        table.add_row(
            Text(mark, style=style),
            Text(check.name, style=style),
            format_value(check.value),
            limit_text(check),
            Text(check.why, style="dim"),
        )
    return table


def checks_lines(checks: Sequence[Check], palette: Palette) -> Iterator[RenderableType]:
    """Each check a line, its value and limit aligned with the others'; a failing check's reason under it,
    wrapped at the dialog's width (a passing one's is in `PassingReasons`). A line wider than the dialog
    wraps, never cut."""
    names = _cells(check.name for check in checks)
    values = _cells(format_value(check.value) for check in checks)
    for check in checks:
        mark, style = check_style(check, palette)
        line = Text(f"{mark} ", style=style)
        line.append(check.name.ljust(names), style=style)
        line.append(f"  {format_value(check.value).rjust(values)}  {limit_text(check)}")
        yield line
        if not check.ok and check.why:
            yield Padding(Text(check.why), (0, 0, 0, REASON_INDENT))


class CheckList:
    """The verdict's checks, failing first: the table where its `why` column has WHY_MIN cells, else a line
    a check (`checks_lines`). Decided at the width it is drawn at (a Static's), so it follows a resize."""

    def __init__(self, verdict: Verdict, palette: Palette) -> None:
        self.checks = ordered_checks(verdict.checks)
        self.palette = palette

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if table_fits(self.checks, options.max_width):
            yield checks_table(self.checks, self.palette)
        else:
            yield from checks_lines(self.checks, self.palette)


class PassingReasons:
    """Where the checks are lines (`CheckList`), the passing checks' reasons, after the forecast: a passing
    check is one line up there, and what it guards is still in the dialog (PgDn), nothing cut. Nothing
    where the table shows them."""

    def __init__(self, verdict: Verdict) -> None:
        self.checks = ordered_checks(verdict.checks)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        passing = [check for check in self.checks if check.ok and check.why]
        if not passing or table_fits(self.checks, options.max_width):
            return
        yield Text("\nwhat the passing checks guard")
        for check in passing:
            yield Text.assemble((check.name, "bold"), f": {check.why}")


def projections_text(verdict: Verdict, width: int | None = None) -> Text:
    """`key value` pairs, three spaces apart; at `width`, a pair is never split over two lines (at 80
    columns `headroom_after_pct` ended a line and its 18.7 began the next)."""
    text = Text()
    used = 0
    for key, value in verdict.projections.items():
        pair = cell_len(f"{key} {format_value(value)}")
        if width is not None and used and used + pair > width:
            text.append("\n")
            used = 0
        text.append(f"{key} ", style="dim")
        text.append(f"{format_value(value)}   ")
        used += pair + 3
    return text


class Projections:
    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield projections_text(self.verdict, options.max_width)


def forecast_text(verdict: Verdict, palette: Palette, stacked: bool = False) -> Text:
    """Each series without the action and with it, on one scale, side by side; `stacked`, the one with it
    under the one without (at 80 columns side by side wrapped the `with` row under the label)."""
    rows = forecast_series(verdict.forecast)
    text = Text(no_wrap=True)
    if not rows:
        text.append("no forecast from this server", style="dim")
        return text
    forecast = verdict.forecast or {}
    text.append(
        f"{forecast.get('horizon_s', '?')} s ahead · tick {forecast.get('tick_ms', '?')} ms · "
        f"{forecast.get('model', 'forecast')}\n",
        style="dim",
    )
    line = palette.chart["line"]
    for label, without, acted in rows:
        low = min(min(without), min(acted))
        high = max(max(without), max(acted))
        level = max(abs(low), abs(high))
        # Both series on one scale; a change within 1 % of the level on a scale as tall as the level itself,
        # so it draws as the flat line (▁) it is.
        scale = (low, low + (level or 1.0)) if high - low <= FLAT_SHARE * level else (low, high)
        text.append(f"{label:<12} without ", style="dim")
        text.append(spark_blocks(np.asarray(without), SPARK_CELLS, scale), style=line)
        text.append(f"\n{'':<12} with    " if stacked else "  with ", style="dim")
        text.append(spark_blocks(np.asarray(acted), SPARK_CELLS, scale), style="bold " + line)
        text.append(f"  {format_value(low)}–{format_value(high)}\n")
    text.rstrip()  # no blank line under the last row
    return text


class Forecast:
    """`forecast_text`, stacked where a row side by side is wider than the dialog."""

    def __init__(self, verdict: Verdict, palette: Palette) -> None:
        self.verdict, self.palette = verdict, palette

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        side_by_side = forecast_text(self.verdict, self.palette)
        widest = max((cell_len(line) for line in side_by_side.plain.splitlines()), default=0)
        yield side_by_side if widest <= options.max_width else forecast_text(self.verdict, self.palette, True)


class TypedName(Input):
    """The typed confirmation's field: its Enter (the Input's submit, which sends the name) said in the
    footer as "apply", the question's word — the Input's own Enter is hidden, and the footer said nothing
    of Enter. (Not the form's FieldInput: that one runs every key the Input binds, and PgDn, which the
    Input passes on when it has nothing to scroll, would no longer reach the verdict.)"""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "submit", "apply")]


class TypedError(Label):
    """The typed name's error line, shown only with an error in it (class `-error`): empty, it cost the
    verdict a row at 80×24. Shown or hidden, its height changes, and its dialog fits the verdict to the rows
    left (`Changed`): fitted on the next refresh instead, the line had not been laid out yet."""

    class Changed(Message):
        """The line's height changed (shown, hidden, or wrapped anew)."""

    def say(self, message: str) -> None:
        self.update(message)
        self.set_class(bool(message), "-error")

    def on_resize(self) -> None:
        self.post_message(self.Changed())


class VerdictDialog(ModalScreen[Confirmed | None]):
    DEFAULT_CSS = """
    VerdictDialog { align: center middle; }
    VerdictDialog > Vertical {
        width: 100%; max-width: 120; height: auto; max-height: 100%; border: thick $primary;
        background: $surface; padding: 0 1;
    }
    VerdictDialog VerticalScroll { height: auto; max-height: 30; }  /* SCROLL_ROWS; less when short: _fit */
    VerdictDialog .section { color: $text-muted; padding-top: 1; }
    VerdictDialog #passing-why { color: $text-muted; }
    VerdictDialog #ask { text-style: bold; padding-top: 1; height: auto; }
    /* Shown only with an error in it: empty, it cost the verdict a row at 80×24. */
    VerdictDialog #typed-error { color: $error; height: auto; display: none; }
    VerdictDialog #typed-error.-error { display: block; }
    VerdictDialog #typed { display: none; }
    VerdictDialog.-typed #typed { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        # Enter first, as on the form (and as the typed name's field, focused, shows it). Its word is the
        # question's ("Enter or y applies it"); `check_action` shows it only where it applies.
        Binding(
            "enter,y", "confirm", "apply", tooltip="apply: a confirm question (typed: Enter in the name)"
        ),
        # Esc answers None on every verdict, but what that does differs, and the footer says it in the
        # question's words: one binding a meaning, `check_action` showing the verdict's one.
        Binding("escape,n", "cancel", "cancel", tooltip="cancel: a confirm or typed question"),
        Binding(
            "escape,n",
            "back",
            "back to the form",
            tooltip="back to the form: a dry run, or a block of what the form sent",
        ),
        Binding("escape,n", "close", "close", tooltip="close: a block of what was confirmed"),
        # The verdict scrolls under the question, which stays put (on a small terminal most of it is below);
        # page keys only: the arrows and Home/End belong to the typed name's input.
        Binding("pagedown", "page(1)", "scroll the verdict down", show=False),
        Binding("pageup", "page(-1)", "scroll the verdict up", show=False),
        # As in the action form: the app's `q` does not reach a modal screen; typed into the name, it is a q.
        *QUIT_OVER_FIELDS,
    ]

    def __init__(
        self,
        title: str,
        verdict: Verdict,
        palette: Palette,
        *,
        dry_run: bool = False,
        message: str = "",
        typed_fallback: str | None = None,
        typed_error: str = "",
        back_to_form: bool = False,
    ) -> None:
        """`back_to_form`: closing it returns to the action's form (a block the operator can type around, a
        dry run) — said so: "Esc closes" read as closing the action."""
        super().__init__()
        self.back_to_form = back_to_form
        self.title_text = title
        self.verdict = verdict
        self.palette = palette
        self.dry_run = dry_run
        self.message = message
        self.typed_fallback = typed_fallback
        self.initial_typed_error = typed_error
        self._answered = False

    @property
    def asks(self) -> VerdictLevel | None:
        """The question this dialog asks: confirm, typed, or None (a dry run, a block, an ok)."""
        if self.dry_run or self.verdict.confirm_token is None:
            return None
        if self.verdict.level in (VerdictLevel.CONFIRM, VerdictLevel.TYPED):
            return self.verdict.level
        return None

    def compose(self) -> ComposeResult:
        verdict, palette = self.verdict, self.palette
        level = VERDICT_LEVELS[verdict.level]
        head = Text()
        head.append(f"{self.title_text}  ", style="bold")
        head.append(
            f"{LEVEL_GLYPHS[level]} {verdict.level.value.upper()}",
            style=palette.level_style(level, bold=True),
        )
        if self.dry_run and not self.message:
            head.append(" · dry run, nothing applied", style="dim")
        with Vertical():
            yield Static(head, id="verdict-title")
            if self.message:
                yield Static(Text(self.message, style="dim"), id="verdict-message")
            with VerticalScroll():
                yield Static(f"checks ({len(verdict.checks)})", classes="section")
                yield Static(CheckList(verdict, palette), id="checks")
                yield Static("projections", classes="section")
                yield Static(Projections(verdict), id="projections")
                yield Static("forecast", classes="section")
                yield Static(Forecast(verdict, palette), id="forecast")
                yield Static(PassingReasons(verdict), id="passing-why")
            yield Static(self._ask_text(), id="ask")
            yield TypedName(placeholder=f"type {self._expected()!r} to confirm", id="typed")
            yield TypedError(
                self.initial_typed_error,
                id="typed-error",
                classes="-error" if self.initial_typed_error else "",
            )
        # Its own keys: without a footer the main screen's showed through (d drain, R rollout, q quit…),
        # none of which does anything here.
        # The way out kept longest, then the answer.
        yield ConsoleFooter(essential=("cancel", "back", "close", "confirm", "submit"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter/y confirms only a `confirm` verdict (a typed one takes the name, Enter in its field): off
        the footer elsewhere, rather than offered and doing nothing. Esc's meaning is the one the question
        says (`_esc_does`); the others are off, so the key falls through to it."""
        if action == "confirm":
            return self.asks is VerdictLevel.CONFIRM
        if action in ("cancel", "back", "close"):
            return action == self._esc_does()
        return True

    def _esc_does(self) -> str:
        """What Esc (or n) does here: cancels a question; goes back to the form a dry run or a block of
        what the form sent came from; closes the rest (a block of what was confirmed)."""
        if self.asks is not None:
            return "cancel"
        return "back" if self.back_to_form else "close"

    def on_mount(self) -> None:
        if self.asks is VerdictLevel.TYPED:
            self.add_class("-typed")
            self.query_one("#typed", Input).focus()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The verdict gets the rows the question does not need, at most 30: on a small terminal the
        question (and the typed name's input) must stay on screen, and the verdict scrolls (PgUp/PgDn)."""
        if self._answered or not self.query(VerticalScroll):
            return  # (called after a refresh: the dialog may have been answered and taken down since)
        scroll = self.query_one(VerticalScroll)
        box = self.query_one("Vertical", Vertical)
        others = sum(
            child.outer_size.height for child in box.children if child is not scroll and child.display
        )
        # The footer, docked under the dialog, takes its row from the screen's: left out, the last row of
        # the question (the typed name's error line, or the input's edge) fell under the dialog's border.
        docked = sum(child.outer_size.height for child in self.children if child is not box and child.display)
        room = self.size.height - docked - box.styles.gutter.height - others
        rows = max(3, min(SCROLL_ROWS, room))
        if scroll.styles.max_height is None or scroll.styles.max_height.value != rows:
            scroll.styles.max_height = rows
        # Said on the border, which costs no row.
        box.border_subtitle = (
            "PgDn/PgUp: the rest of the verdict" if scroll.virtual_size.height > rows else ""
        )

    def _expected(self) -> str:
        return self.verdict.typed_expected or self.typed_fallback or "?"

    def _ask_text(self) -> Text:
        """The question, under what would pass of a typed or blocked verdict (as `stormdeck act` prints
        it): a typed name was asked with the limits left to be found in the table."""
        asks = self.asks
        if asks is VerdictLevel.CONFIRM:
            return Text("Enter or y applies it · Esc or n cancels")
        blocked = self.verdict.level is VerdictLevel.BLOCKED and not self.dry_run
        # A block is said in the critical colour, all of it; the rest in the question's own.
        text = Text(style=self.palette.level_style(Level.CRITICAL, True) if blocked else "")
        if blocked:
            text.append("✖ blocked: nothing applied. ")
        hints = (
            what_would_pass(self.verdict)
            if self.verdict.level in (VerdictLevel.TYPED, VerdictLevel.BLOCKED)
            else []
        )
        if hints:
            text.append("What would pass: " + "; ".join(hints))
        if text.plain:
            text.append("\n")
        if asks is VerdictLevel.TYPED:
            text.append(f"type {self._expected()} and Enter to apply it · Esc cancels")
        else:
            text.append("Esc: back to the form" if self._esc_does() == "back" else "Esc closes")
        return text

    def action_confirm(self) -> None:
        if self.asks is VerdictLevel.CONFIRM:
            self._close(Confirmed(None))
        # typed: only the input's Enter confirms. A dialog that asks nothing (a dry run, a block) closes
        # with Esc only, as it says: Enter closed a dry run and a second Enter applied it from the form.

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        typed = event.value.strip()
        if typed_matches(self.verdict, typed, self.typed_fallback):
            self._close(Confirmed(typed))
            return
        self.query_one(TypedError).say(
            f"✖ {typed!r} is not {self._expected()!r}: refused, nothing sent. Type the name exactly."
        )
        event.input.value = ""  # typed again from the start (a retype was appended to the refused name)

    def on_typed_error_changed(self, event: TypedError.Changed) -> None:
        """The error line takes its rows from the verdict's, so the input stays on screen."""
        event.stop()
        self._fit()

    def action_page(self, direction: int) -> None:
        scroll = self.query_one(VerticalScroll)
        if direction > 0:
            scroll.scroll_page_down()
        else:
            scroll.scroll_page_up()

    def action_cancel(self) -> None:
        self._close(None)

    def action_back(self) -> None:
        self._close(None)  # the flow (console.ui.actions) opens the form again

    def action_close(self) -> None:
        self._close(None)

    def _close(self, result: Confirmed | None) -> None:
        """Once: a second key in the same moment must not dismiss (or confirm) twice."""
        if not self._answered:
            self._answered = True
            self.dismiss(result)
