"""The verdict dialog's footer says what its keys do on that verdict, in the question's words: a dry run
said "Esc: back to the form" over a footer "esc cancel", a block after a confirmation "Esc closes" over the
same, and the typed name's footer said nothing of Enter (only the question did). The big-change check too."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets._footer import FooterKey

from console.guards.verdict import check, verdict
from console.model.big_changes import BigChange
from console.protocol import Verdict, VerdictLevel
from console.ui.screens.change_check import ChangeCheck
from console.ui.screens.verdict_dialog import Confirmed, VerdictDialog
from console.ui.themes import load_themes

from ..client.fake_fleet_server import wait_for

NODE = "gw-0017"


def level_verdict(level: VerdictLevel, token: str | None) -> Verdict:
    """A drain verdict at `level`: one check failing to it (none for ok), with a confirm token or none."""
    checks = [check("survivor_cpu_pct", 70.0, 75.0, fails_to=VerdictLevel.TYPED, why="the busiest survivor")]
    if level is not VerdictLevel.OK:
        checks.append(check("drain_pacing_per_s", 400.0, 300.0, fails_to=level, why="the pacing"))
    typed = NODE if level is VerdictLevel.TYPED else None
    judged = verdict("drain", checks, {"survivors": 47}, typed_expected=typed)
    return judged.model_copy(update={"confirm_token": token})


#: kind → (level, confirm token, dialog options, {key: the footer's word}, the question's last line)
KINDS = {
    "confirm": (
        VerdictLevel.CONFIRM,
        "tok-1",
        {},
        {"enter": "apply", "escape": "cancel"},
        "Enter or y applies it · Esc or n cancels",
    ),
    "typed": (
        VerdictLevel.TYPED,
        "tok-1",
        {},
        {"enter": "apply", "escape": "cancel"},
        f"type {NODE} and Enter to apply it · Esc cancels",
    ),
    "dry run ok": (
        VerdictLevel.OK,
        None,
        {"dry_run": True, "back_to_form": True},
        {"escape": "back to the form"},
        "Esc: back to the form",
    ),
    "dry run typed": (
        VerdictLevel.TYPED,
        None,
        {"dry_run": True, "back_to_form": True},
        {"escape": "back to the form"},
        "Esc: back to the form",
    ),
    "blocked from the form": (
        VerdictLevel.BLOCKED,
        None,
        {"back_to_form": True},
        {"escape": "back to the form"},
        "Esc: back to the form",
    ),
    # The server blocked what was confirmed (the verdict moved): nothing to go back to, the dialog closes.
    "blocked after a confirmation": (
        VerdictLevel.BLOCKED,
        None,
        {},
        {"escape": "close"},
        "Esc closes",
    ),
}


class DialogApp(App[None]):
    def __init__(self, screen) -> None:
        super().__init__()
        self.dialog = screen
        self.answers: list[object] = []

    def on_mount(self) -> None:
        self.push_screen(self.dialog, self.answers.append)


def footer_words(screen) -> dict[str, str]:
    """The footer's keys as drawn (each key shown once, by its first key), key → what it says it does."""
    return {key.key: key.description for key in screen.query(FooterKey) if key.region.width}


@pytest.mark.parametrize("kind", list(KINDS))
async def test_the_footer_says_what_esc_and_enter_do_on_each_verdict(kind) -> None:
    level, token, options, words, question = KINDS[kind]
    dialog = VerdictDialog(
        "Drain gw-0017", level_verdict(level, token), load_themes()["dark"].palette, **options
    )
    app = DialogApp(dialog)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: app.screen is dialog and footer_words(dialog), what="the dialog's footer")
        await pilot.pause()
        assert str(dialog.query_one("#ask").content).splitlines()[-1] == question
        shown = footer_words(dialog)
        assert {key: shown.get(key) for key in ("enter", "escape")} == {
            "enter": words.get("enter"),
            "escape": words["escape"],
        }, shown
        if kind == "typed":  # Enter in the name's field applies, as the footer says
            await pilot.press(*NODE, "enter")
            await wait_for(lambda: app.answers, what="the typed name's answer")
            assert app.answers == [Confirmed(NODE)]
        else:  # and Esc does what it says: the dialog answers None (the flow goes back, cancels or closes)
            await pilot.press("escape")
            await wait_for(lambda: app.answers, what="the dialog closed")
            assert app.answers == [None]


async def test_the_big_change_check_says_its_keys_as_its_question_does() -> None:
    """Checked for the same mismatch, found none: "Enter or y sends it · Esc or n goes back to the form",
    footer "enter send it", "esc back to the form". Kept as a guard."""
    check_screen = ChangeCheck("Add capacity", [BigChange("count", "10", "60", "six times the fleet")])
    app = DialogApp(check_screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: footer_words(check_screen), what="the check's footer")
        await pilot.pause()
        question = str(check_screen.query_one("#change-ask").content)
        assert question.endswith(
            "Enter or y sends it (the server still judges it) · Esc or n goes back to the form"
        )
        shown = footer_words(check_screen)
        assert (shown.get("enter"), shown.get("escape")) == ("send it", "back to the form"), shown
