"""The audit panel's time column says the day when the log holds records of other days."""

from __future__ import annotations

import calendar

from textual.app import App

from console.ui.screens.audit import AuditScreen, audit_row, needs_date
from console.ui.themes import DEFAULT_THEME, load_themes

NOW = calendar.timegm((2031, 5, 6, 12, 0, 0))
TODAY = {"time_unix_s": NOW - 3600, "actor": "ops", "action": "rollout_halt", "outcome": "applied"}
EARLIER = {**TODAY, "time_unix_s": NOW - 3 * 86_400}


def test_the_date_is_shown_when_records_are_not_all_from_today() -> None:
    """Found in review: `drill --serve` continues one audit log across sessions, and the panel showed the
    earlier sessions' records as bare times — indistinguishable from today's."""
    assert not needs_date([TODAY, TODAY], NOW)
    assert needs_date([EARLIER, TODAY], NOW)  # more than one day
    assert needs_date([EARLIER], NOW)  # one day, not today
    assert audit_row(TODAY)[0] == "11:00:00"
    assert audit_row(EARLIER, with_date=True)[0] == "2031-05-03 12:00:00"


async def test_the_panel_dates_every_row_of_a_log_spanning_days() -> None:
    palette = load_themes()[DEFAULT_THEME].palette
    screen = AuditScreen(palette, clock=lambda: NOW)

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(screen)

    async with Host().run_test() as pilot:
        await pilot.pause()
        screen.show([EARLIER, TODAY], "2 records")
        table = screen.query_one("#audit-table")
        assert [str(table.get_row_at(i)[0]) for i in range(2)] == [
            "2031-05-06 11:00:00",
            "2031-05-03 12:00:00",
        ]
        screen.show([TODAY], "1 record")
        assert str(table.get_row_at(0)[0]) == "11:00:00"


async def test_a_detail_with_words_in_brackets_is_shown_as_it_was_recorded() -> None:
    """User pass on `fleet up` (L): a refusal recorded as "hint_ms: [5000, 1000] is not allowed; expected
    [min, max] with 0 ≤ min ≤ max ≤ 3600000" was listed as "… expected  with 0": the row's cells went to
    the table as markup, and "[min, max]" was taken for a style and dropped."""
    palette = load_themes()[DEFAULT_THEME].palette
    screen = AuditScreen(palette, clock=lambda: NOW)
    detail = "hint_ms: [5000, 1000] is not allowed; expected [min, max] with 0 ≤ min"

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(screen)

    async with Host().run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        screen.show([{**TODAY, "detail": detail, "actor": "[bold]ops"}], "1 record")
        await pilot.pause()
        table = screen.query_one("#audit-table")
        shown = "\n".join(strip.text for strip in table.render_lines(table.region.reset_offset))
        assert detail in shown and "[bold]ops" in shown, shown
