"""The instructor's inject form: an error on screen is about the words it judged, and goes when they change."""

from __future__ import annotations

from textual.app import App
from textual.widgets import Input, Label

from console.client.actions import ActionAnswer
from console.model.actions.answer import read_answer
from console.ui.inject import InjectForm


def _error(form: InjectForm) -> str:
    return str(form.query_one("#inject-error", Label).render())


async def test_an_error_goes_once_the_words_change() -> None:
    """Review: "'nodes' is not allowed" stayed on screen after the field was corrected, until Enter."""
    refusal = read_answer(
        ActionAnswer(
            422,
            {"type": "urn:stormdeck:problem:invalid", "detail": "'nodes' is not allowed", "field": "params"},
        )
    )
    app: App[None] = App()
    async with app.run_test() as pilot:
        form = InjectForm("add_nodes", "nodes=2", refusal)
        await app.push_screen(form)
        await pilot.pause()
        assert "'nodes' is not allowed" in _error(form)  # the server's words, over what was sent
        await pilot.press("end", "backspace")
        await pilot.pause()
        assert _error(form) == ""
        form.query_one(Input).value = "oops"
        await pilot.press("enter")
        await pilot.pause()
        assert "KEY=VALUE" in _error(form)  # refused in the form
        await pilot.press("s")
        await pilot.pause()
        assert form.query_one(Input).value == "oopss" and _error(form) == ""
