"""`?`: every key binding, where it works, and every palette command."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from console.protocol import ActionKind

_KEY_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "exclamation_mark": "!",
    "enter": "⏎ enter",
    "right": "→ right",  # the node detail's charts, taking turns on a short terminal
    "left": "← left",
    # The replay's keys (help listed `right_square_bracket` where the footer shows `]`).
    "full_stop": ".",
    "comma": ",",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "left_curly_bracket": "{",
    "right_curly_bracket": "}",
    "left_parenthesis": "(",
    "right_parenthesis": ")",
}


def key_display(keys: str) -> str:
    return " / ".join(_KEY_NAMES.get(key.strip(), key.strip()) for key in keys.split(","))


def action_notes(actions_off: str | None, not_offered: Mapping[ActionKind, str]) -> dict[ActionKind, str]:
    """Why a fleet action's key or command will not act, by action, for help to say after what it does:
    every action while the console's are off (a replay, a viewer's token: `actions_disabled_reason`) —
    help listed drain with no word in a replay, where `d` answers "read-only console" — else those this
    fleet cannot take at all (`console.model.offered.not_on_this_fleet`; their keys are in no footer)."""
    if actions_off is not None:
        return {kind: actions_off_note(actions_off) for kind in ActionKind}
    return {kind: f"not on this fleet: {why}" for kind, why in not_offered.items()}


def actions_off_note(actions_off: str) -> str:
    """What help says after a key that will not act while the console's actions are off, and why."""
    return f"actions off: {actions_off}"


def noted(does: str, note: str | None) -> str:
    """What a key or command does, and the note saying why it will not (`action_notes`), if any."""
    return does if note is None else f"{does} — {note}"


def binding_rows(
    where: str, bindings: list[BindingType], notes: Mapping[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """(where, key, what it does) for each binding; `notes`: why, by a binding's action, a key will not do
    what it asks (`action_notes`)."""
    rows = []
    for binding in bindings:
        if isinstance(binding, Binding):
            # The footer's word is short; a tooltip, where a binding has one, says more here.
            key, description = binding.key, binding.tooltip or binding.description
            description = noted(description, (notes or {}).get(binding.action))
        else:
            key, description = binding[0], binding[2] if len(binding) > 2 else binding[1]
        rows.append((where, key_display(key), description))
    return rows


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90; max-width: 100%; height: 90%; border: thick $primary; background: $surface; padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "app.pop_screen", "close help")
    ]

    def __init__(
        self,
        sections: list[tuple[str, list[BindingType]]],
        commands: list[tuple[str, str]],
        notes: Mapping[str, str] | None = None,
    ) -> None:
        """`notes`: why a key will not do what it asks, by the binding's action (`action_notes`) — listed
        here all the same, with why, since the footers may not draw it (`binding_rows`)."""
        super().__init__()
        self.sections = sections
        self.commands = commands
        self.notes = dict(notes or {})

    def key_rows(self) -> list[tuple[str, str, str]]:
        """(where, key, what it does) for every binding listed, as the keys table shows them."""
        return [row for where, bindings in self.sections for row in binding_rows(where, bindings, self.notes)]

    def compose(self) -> ComposeResult:
        keys = Table(title="keys", expand=True, show_edge=False)
        keys.add_column("where", style="dim", width=12)
        keys.add_column("key", style="bold", width=22)
        keys.add_column("does")
        for row in self.key_rows():
            keys.add_row(*row)
        keys.add_row("anywhere", "ctrl+p", "command palette")
        keys.add_row(
            "mouse", "click / wheel", "select a row, sort by a column header, scroll; double-click opens"
        )
        palette = Table(title="command palette (ctrl+p)", expand=True, show_edge=False)
        palette.add_column("command", style="bold", width=34)
        palette.add_column("does")
        for title, help_text in self.commands:
            palette.add_row(title, help_text)
        with VerticalScroll():
            yield Static(Text("stormdeck — help   (Esc closes)", style="bold"))
            yield Static(keys)
            yield Static(palette)
