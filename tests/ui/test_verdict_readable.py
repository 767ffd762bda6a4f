"""The verdict dialog reads at 80×24 (found in review): its table kept a 27-cell `check` column and wrapped
each check's `why` into ~17 cells, one reason taking 7 lines and ten checks several PgDn pages, the failing
ones wherever the guard listed them. At a width where the table's `why` would be that narrow, each check is
one line (mark, name, value, limit), the failing ones first, each with its reason under it at the dialog's
width; the passing checks stay one line each, their reasons after the forecast. Nothing is cut: every
check's reason is in the dialog. At 120 columns and wider the table stays, the failing checks first.

The reasons here are our own (or the real guard's, compared with what it said, not with set words)."""

from __future__ import annotations

import io
import math

import pytest
from rich.console import Console
from textual.app import App
from textual.containers import Vertical, VerticalScroll

from console.guards.verdict import check, note, verdict
from console.model.actions.answer import format_value, limit_text
from console.protocol import Check, Verdict, VerdictLevel
from console.ui.screens.verdict_dialog import VerdictDialog, ordered_checks
from console.ui.themes import load_themes

from ..client.fake_fleet_server import wait_for
from .conftest import fleet_ready
from .fake_actions import FakeFleetApi
from .test_actions import acting_app, drain_dialog
from .test_contrast import low_contrast_text

NODE = "gw-0017"
#: The indent of a reason under its check's line, and the lines a reason may take beyond its words' share
#: of the dialog's width (one: a word carried over).
SLACK_LINES = 1


def reason(k: int) -> str:
    """A reason as long as the guard's longest (~130 characters), its words unique to check `k`."""
    return f"reason{k} " + " ".join(f"w{k}x{j}" for j in range(22))


def guard_ordered_checks() -> list[Check]:
    """Ten checks in a guard's order, the failing ones 4th (typed), 7th (blocked) and 9th (a note)."""
    checks = []
    for k in range(10):
        fails_to = VerdictLevel.BLOCKED if k == 6 else VerdictLevel.TYPED
        value = 90.0 if k in (3, 6) else 10.0
        checks.append(check(f"check_number_{k}_of_ten_pct", value, 75.0, fails_to=fails_to, why=reason(k)))
    checks[8] = note("noted_check_8", "late", "on time", ok=False, why=reason(8))
    return checks


def built_verdict(level: VerdictLevel) -> Verdict:
    series = [float(1_000_000 - 500 * t) for t in range(60)]
    forecast = {
        "horizon_s": 60,
        "tick_ms": 10,
        "without_action": {"connections": series, "attempts_per_s": series},
        "with_action": {"connections": series[::-1], "attempts_per_s": series[::-1]},
    }
    checks = guard_ordered_checks()
    if level is VerdictLevel.TYPED:  # no blocking check
        checks[6] = check(
            "check_number_6_of_ten_pct", 10.0, 75.0, fails_to=VerdictLevel.BLOCKED, why=reason(6)
        )
    judged = verdict("drain", checks, {"survivors": 47, "duration_s": 600.0}, typed_expected=NODE)
    return judged.model_copy(update={"confirm_token": "tok-1", "forecast": forecast})


class DialogApp(App[None]):
    def __init__(self, judged: Verdict, title: str = f"drain {NODE}", **options) -> None:
        super().__init__()
        self.judged, self.title_said, self.options = judged, title, options

    def on_mount(self) -> None:
        palette = load_themes()["dark"].palette
        self.push_screen(VerdictDialog(self.title_said, self.judged, palette, **self.options))


def shown_rows(app: App) -> list[str]:
    """The verdict's rows as on screen, now (what is scrolled away is not there): the scroll's columns only,
    without the dialog's border and scrollbar."""
    scroll = app.screen.query_one(VerticalScroll)
    checks = app.screen.query_one("#checks")
    x0, width = checks.content_region.x, checks.content_region.width
    strips = app.screen._compositor.render_strips()
    region = scroll.content_region
    return [strips[y].text[x0 : x0 + width].rstrip() for y in range(region.y, region.bottom)]


def reason_under(rows: list[str], item: Check) -> list[str]:
    """The lines under `item`'s line up to the next check's (a line not indented), or the verdict's end."""
    start = next(i for i, row in enumerate(rows) if f" {item.name} " in f"{row} ")
    lines = []
    for row in rows[start + 1 :]:
        if not row.startswith(" ") or not row.strip():
            break
        lines.append(row.strip())
    return lines


def words(text: str) -> str:
    return " ".join(text.split())


def most_lines(text: str, width: int) -> int:
    """The lines `text` takes wrapped at `width` (the dialog's, less the indent), and one to spare."""
    return math.ceil(len(text) / width) + SLACK_LINES


def rendered(widget, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(widget.content)
    return console.file.getvalue()


@pytest.mark.parametrize("level", [VerdictLevel.TYPED, VerdictLevel.BLOCKED])
async def test_at_80x24_the_failing_checks_come_first_each_with_its_whole_reason(level) -> None:
    """The typed question (its name's input under the verdict: the least room) and a block: the first page
    holds the verdict's line and every failing check's line with its whole reason, failing first and the
    most severe first, each reason on at most its share of the dialog's width and a line."""
    judged = built_verdict(level)
    app = DialogApp(judged, back_to_form=level is VerdictLevel.BLOCKED)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dialog")
        await pilot.pause()
        dialog = app.screen
        assert level.value.upper() in str(dialog.query_one("#verdict-title").content)
        rows = shown_rows(app)
        width = dialog.query_one("#checks").content_region.width
        failing = [c for c in judged.checks if not c.ok]
        ordered = ordered_checks(judged.checks)
        assert {c.name for c in ordered[: len(failing)]} == {c.name for c in failing}
        assert ordered[len(failing) - 1].name == "noted_check_8"  # a note (it only warns) after the fails
        if level is VerdictLevel.BLOCKED:  # the block first: it is what stops the drain
            assert ordered_checks(judged.checks)[0].name == "check_number_6_of_ten_pct"
        for item in failing:
            lines = reason_under(rows, item)
            assert words(" ".join(lines)) == words(item.why), (item.name, rows)
            assert len(lines) <= most_lines(item.why, width - 4), (item.name, lines)
        # Then the passing checks, one line each (their value and limit beside the name).
        first_passing = next(c for c in ordered_checks(judged.checks) if c.ok)
        line = next(row for row in rows if f" {first_passing.name} " in f"{row} ")
        assert "10" in line and "≤ 75" in line and reason_under(rows, first_passing) == []


async def test_at_80x24_nothing_is_cut_every_reason_is_in_the_dialog() -> None:
    """Every check's name, value, limit and whole reason is in the dialog at its width (below the first page
    for the passing ones: PgDn reaches them), each reason once."""
    judged = built_verdict(VerdictLevel.BLOCKED)
    app = DialogApp(judged, back_to_form=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dialog")
        await pilot.pause()
        scroll = app.screen.query_one(VerticalScroll)
        width = app.screen.query_one("#checks").content_region.width
        text = words(
            "".join(rendered(app.screen.query_one(f"#{part}"), width) for part in ("checks", "passing-why"))
        )
        for item in judged.checks:
            assert text.count(words(item.why)) == 1, item.name
            assert f"{item.name} {format_value(item.value)} {limit_text(item)}" in text
        # And on screen, scrolled to the end: the last passing check's reason is there whole.
        while scroll.scroll_y < scroll.max_scroll_y:
            await pilot.press("pagedown")
            await pilot.pause()
        last = [c for c in ordered_checks(judged.checks) if c.ok][-1]
        assert words(last.why) in words(" ".join(shown_rows(app)))


async def test_at_80x24_a_real_blocked_drain_shows_its_blocking_reason_on_the_first_page() -> None:
    """The real drain guard's verdict on a drain too fast (500/s: the pause and abort lines, the pacing and
    the hint window fail), dry-run from the form at 80×24: a check that blocks comes first, its reason whole
    on the first page, on no more lines than its share of the width and one."""
    api = FakeFleetApi()
    app = acting_app(api, scene_name="calm")
    async with app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(app)
        dialog = await drain_dialog(app, pilot, "500", "ctrl+d", "the dry-run verdict")
        await pilot.pause()
        judged = dialog.verdict
        assert judged.level is VerdictLevel.BLOCKED
        first = ordered_checks(judged.checks)[0]
        assert not first.ok and first.level is VerdictLevel.BLOCKED
        rows = shown_rows(app)
        width = dialog.query_one("#checks").content_region.width
        lines = reason_under(rows, first)
        assert words(" ".join(lines)) == words(first.why), rows
        assert len(lines) <= most_lines(first.why, width - 4), lines


async def test_at_120x36_the_table_stays_with_the_failing_checks_first() -> None:
    """Wide enough for the table's `why` column (as at 120×36, the dialog's widest): the table, as before,
    now the failing checks on top."""
    judged = built_verdict(VerdictLevel.BLOCKED)
    app = DialogApp(judged, back_to_form=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dialog")
        await pilot.pause()
        rows = shown_rows(app)
        assert any("┃ check" in row and "┃ why" in row for row in rows), rows
        marks = [
            row.split("│")[0].strip() for row in rows if row.count("│") >= 4 and row.split("│")[0].strip()
        ]
        assert marks[:3] == ["✖ FAIL", "▲ FAIL", "▲ note"] and set(marks[3:]) == {"✓ pass"}, marks
        assert not app.screen.query_one("#passing-why").region.height  # its reasons are in the table


def test_the_passing_checks_keep_the_guards_order() -> None:
    """Only the failing ones move up: the passing checks were sorted by the level they would fail to."""
    checks = guard_ordered_checks()
    checks[9] = check("blocks_if_it_fails", 1.0, 75.0, fails_to=VerdictLevel.BLOCKED, why=reason(9))
    ordered = ordered_checks(checks)
    assert [c.name for c in ordered if c.ok] == [c.name for c in checks if c.ok]
    assert [c.name for c in ordered if not c.ok] == [
        "check_number_6_of_ten_pct",
        "check_number_3_of_ten_pct",
        "noted_check_8",
    ]


@pytest.mark.parametrize("theme", ["dark", "light", "high-contrast", "colorblind"])
async def test_at_80x24_the_lines_and_reasons_read_in_every_theme(theme) -> None:
    """The lines layout's text at 4.5:1 (as `test_contrast` reads the table's): the failing checks' lines
    and reasons on the first page, the passing checks' reasons (muted) at the end."""
    app = acting_app(FakeFleetApi(), scene_name="calm")
    async with app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(app)
        app.theme = theme
        dialog = await drain_dialog(app, pilot, "500", "ctrl+d", "the dry-run verdict")
        await pilot.pause()
        region = dialog.query_one(Vertical).region
        first_page = app.export_screenshot()
        scroll = dialog.query_one(VerticalScroll)
        seen = shown_rows(app)
        while scroll.scroll_y < scroll.max_scroll_y:
            await pilot.press("pagedown")
            await pilot.pause()
            seen += shown_rows(app)
        # (The passing checks' heading may be a page up: the reasons run longer than a page at 80×24.)
        assert "what the passing checks guard" in "\n".join(seen)
        assert "force_closed_at_deadline: connections still open" in "\n".join(shown_rows(app))
        last_page = app.export_screenshot()
    assert low_contrast_text(first_page, region) == []
    assert low_contrast_text(last_page, region) == []


async def test_at_80x24_the_typed_question_keeps_no_empty_error_line() -> None:
    """The typed name's error line sat empty under its input, a row the verdict did not get at 80×24: it
    shows only once there is an error (a wrong name, or the server's refusal passed in), and the verdict
    gives that row back then, so the input and the error stay inside the dialog (its fit forgot the
    footer's row: the error line, when there was one, fell under the dialog's border)."""
    app = DialogApp(built_verdict(VerdictLevel.TYPED))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dialog")
        await pilot.pause()
        dialog = app.screen
        error, field = dialog.query_one("#typed-error"), dialog.query_one("#typed")
        scroll = dialog.query_one(VerticalScroll)
        assert not error.display and error.region.height == 0
        rows = scroll.styles.max_height.value
        inside = dialog.query_one(Vertical).content_region
        assert field.region.bottom <= inside.bottom  # the input whole, inside the dialog's border
        await pilot.press(*"gw-0001", "enter")
        await wait_for(lambda: error.display and error.region.height > 0, what="the error line")
        await wait_for(lambda: scroll.styles.max_height.value < rows, what="the verdict giving its row back")
        assert "refused" in str(error.render())
        assert error.region.bottom <= inside.bottom  # and the error under it
    told = DialogApp(built_verdict(VerdictLevel.TYPED), typed_error="✖ the server refused the name: no")
    async with told.run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: isinstance(told.screen, VerdictDialog), what="the dialog")
        await pilot.pause()
        assert told.screen.query_one("#typed-error").display


async def test_at_80x24_a_start_over_a_halted_rollout_shows_what_it_drops_first() -> None:
    """The real rollout guard's start over a halted rollout (reviewer: a start silently dropped the halted
    one's remaining batches): the confirm dialog's first page holds `halted_rollout` — its value and limit in
    words, no sign — and its whole reason, the only failing check on a calm fleet."""
    from console.guards import judge_rollout_start

    from ..guards.fleets import CAPACITY, fleet
    from ..guards.test_rollout_replaces_halted import HALTED, REQUEST

    judged = judge_rollout_start(fleet(rollout=HALTED), CAPACITY, REQUEST)
    assert judged.level is VerdictLevel.CONFIRM
    app = DialogApp(judged.model_copy(update={"confirm_token": "tok-1"}), title="rollout start")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: isinstance(app.screen, VerdictDialog), what="the dialog")
        await pilot.pause()
        assert "CONFIRM" in str(app.screen.query_one("#verdict-title").content)
        item = ordered_checks(judged.checks)[0]
        assert item.name == "halted_rollout" and not item.ok
        rows = shown_rows(app)
        line = next(row for row in rows if " halted_rollout " in f" {row} ")
        assert "batch 3 of 16" in line and "no halted rollout" in line and "≤ no" not in line, line
        lines = reason_under(rows, item)
        assert words(" ".join(lines)) == words(item.why), rows
        assert "drops its 13 batches not yet started" in words(" ".join(lines))
