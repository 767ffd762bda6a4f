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

_KEY_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "exclamation_mark": "!",
    "enter": "⏎ enter",
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


def not_here(does: str, why: str) -> str:
    """What a key or command does, and why this fleet cannot have it done (its key is in no footer)."""
    return f"{does} — not on this fleet: {why}"


def binding_rows(
    where: str, bindings: list[BindingType], not_offered: Mapping[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """(where, key, what it does) for each binding; `not_offered`: why, by a binding's action, the fleet
    cannot take what a key asks (`console.model.offered`)."""
    rows = []
    for binding in bindings:
        if isinstance(binding, Binding):
            # The footer's word is short; a tooltip, where a binding has one, says more here.
            key, description = binding.key, binding.tooltip or binding.description
            why = (not_offered or {}).get(binding.action)
            description = description if why is None else not_here(description, why)
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
        not_offered: Mapping[str, str] | None = None,
    ) -> None:
        """`not_offered`: why this fleet cannot take what a key asks, by the binding's action — listed here
        all the same, with why, since the footers do not draw it (`binding_rows`)."""
        super().__init__()
        self.sections = sections
        self.commands = commands
        self.not_offered = dict(not_offered or {})

    def key_rows(self) -> list[tuple[str, str, str]]:
        """(where, key, what it does) for every binding listed, as the keys table shows them."""
        return [
            row
            for where, bindings in self.sections
            for row in binding_rows(where, bindings, self.not_offered)
        ]

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
