"""The instructor's palette: inject an event into a served drill from the console (issue #5, section 2).

`stormdeck attach URL --token-file ADMIN --instructor` adds one palette command per injection (restart
nodes, kill nodes, disconnect a fraction, add capacity, change the client mix). Each opens this form:
the event's parameters as `KEY=VALUE` words, parsed as `stormdeck inject` parses them (one function for
both), sent to `POST /v1/sim/inject`, which checks the event whole, audits it and applies it between two
fleet seconds. A refusal of the values (422) brings the form back with what was typed and the server's
words, as an action's form comes back (console.ui.actions); any other answer is a notification.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from console.client.inject import parse_params
from console.errors import InputError
from console.model.actions.answer import ActionReading
from console.protocol import INJECTIONS

#: What the form starts with: a small, valid example of each event's parameters.
EXAMPLES: dict[str, str] = {
    "restart_nodes": "nodes=3",
    "kill_nodes": "nodes=1",
    "disconnect_fraction": "fraction=0.3",
    "add_nodes": "count=2",
    "set_policy": "policy=fixed",
}


def inject_commands() -> list[tuple[str, str, str]]:
    """(title, help, action) of the instructor's palette commands: the fleet clock (a drill served with
    --paused waits for the instructor to start it) and the injections."""
    clock = [
        (
            "Fleet clock: start / resume",
            "run the served fleet's clock (POST /v1/sim/clock)",
            "fleet_clock(False)",
        ),
        ("Fleet clock: pause", "stop the served fleet's clock; frames keep coming", "fleet_clock(True)"),
    ]
    return clock + [(f"Inject: {event}", what, f"inject('{event}')") for event, what in INJECTIONS.items()]


def inject_body(event: str, words: str) -> dict[str, Any]:
    """The `POST /v1/sim/inject` body from the form's words (raises `InputError` on a malformed word)."""
    return {"event": event, "params": parse_params(words.split())}


class InjectForm(ModalScreen[dict[str, Any] | None]):
    """Asks for one event's parameters; dismisses with the request body, or None when cancelled."""

    DEFAULT_CSS = """
    InjectForm { align: center middle; }
    InjectForm #inject-box { width: 90; height: auto; border: round $warning; padding: 1 2;
                             background: $surface; }
    InjectForm #inject-error { color: $error; height: auto; }
    InjectForm Label { width: 100%; }  /* wrapped within the box: a long description was cut at its edge */
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, event: str, words: str | None = None, refusal: ActionReading | None = None) -> None:
        super().__init__()
        self.event = event
        self.words = EXAMPLES.get(event, "") if words is None else words  # what was typed, once sent
        self.refusal = refusal  # the server's 422 to what was sent from this form last
        self._judged = self.words  # the words the error on screen is about (the refusal's: those sent)

    def compose(self) -> ComposeResult:
        with Vertical(id="inject-box"):
            yield Label(f"[b]inject {escape(self.event)}[/] — {escape(INJECTIONS[self.event])}")
            yield Label("KEY=VALUE words; Enter sends it (admin, audited), Esc cancels")
            yield Input(self.words, id="inject-params")
            yield Label("", id="inject-error")

    def on_mount(self) -> None:
        self.query_one("#inject-box").border_title = "instructor · inject an event"
        self.query_one(Input).focus()
        if self.refusal is not None:  # as the action form says it (console.ui.screens.action_form)
            self.query_one("#inject-error", Label).update(
                f"✖ the server refused: {escape(self.refusal.message)}"
            )

    def on_input_changed(self, event: Input.Changed) -> None:
        # An error is about the words it judged: once they change it no longer is ("'nodes' is not allowed"
        # stayed on screen over the corrected words until Enter). The field's first value is no change.
        if event.value != self._judged:
            self.query_one("#inject-error", Label).update("")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._judged = event.value
        try:
            body = inject_body(self.event, event.value)
        except InputError as error:
            self.query_one("#inject-error", Label).update(f"✖ {error}")
            return
        self.words = event.value
        self.dismiss(body)

    def action_cancel(self) -> None:
        self.dismiss(None)
