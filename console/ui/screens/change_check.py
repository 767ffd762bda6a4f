"""The console's own check before a big change leaves: what the fleet runs now → what was typed.

An ok verdict applies on Enter without a dialog, and a form selects its pre-filled value so the first key
replaces it: `a`, `2`, Enter cut admission from 500 to 2 per node; `c`, `30`, Enter added 30 nodes. Before
such a change is sent (console.model.big_changes says which), this asks once, showing before → after.
The server still judges what is sent. Dismisses with True (send it) or False (back to the form). The same
question offers an admission change the fleet refused for nodes that do not answer to the nodes that do.
"""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from console.model.big_changes import BigChange
from console.ui.widgets.footer import ConsoleFooter


class ChangeCheck(ModalScreen[bool]):
    DEFAULT_CSS = """
    ChangeCheck { align: center middle; }
    ChangeCheck > Vertical {
        width: 96; max-width: 100%; height: auto; border: thick $warning; background: $surface; padding: 0 1;
    }
    ChangeCheck #change-title { text-style: bold; padding-bottom: 1; }
    ChangeCheck #change-ask { padding-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "back", "back to the form"),
        Binding("enter,y", "send", "send it"),
        Binding("q", "app.quit", "quit (asks again: an action is open)", show=False),
    ]

    def __init__(
        self, title: str, changes: list[BigChange], headline: str | None = None, ask: str | None = None
    ) -> None:
        """`headline` and `ask`: the question's own words, where it is not a big change's (the fleet's
        refusal, and the answering nodes offered instead: `answering_offer`)."""
        super().__init__()
        self.title_text = title
        self.changes = changes
        self.headline = headline or f"▲ {title}: a big change — is this what you meant?"
        self.ask = ask or "Enter or y sends it (the server still judges it) · Esc or n goes back to the form"
        self._answered = False

    def compose(self) -> ComposeResult:
        table = Table(expand=True, show_edge=False, pad_edge=False, show_header=False, box=None)
        table.add_column("field", style="bold", no_wrap=True)
        table.add_column("change", no_wrap=True)
        table.add_column("why", style="dim", ratio=1)
        for change in self.changes:
            table.add_row(change.label, f"{change.before} → {change.after}", change.why)
        with Vertical():
            yield Static(Text(self.headline), id="change-title")
            yield Static(table, id="changes")
            yield Static(Text(self.ask), id="change-ask")
        yield ConsoleFooter(essential=("back", "send"))  # the way out kept longest

    def action_send(self) -> None:
        self._close(True)

    def action_back(self) -> None:
        self._close(False)

    def _close(self, send: bool) -> None:
        """Once: a held Enter must not answer twice."""
        if not self._answered:
            self._answered = True
            self.dismiss(send)
