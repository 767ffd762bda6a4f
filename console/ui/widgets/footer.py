"""The footer: the keys of the focused panel, the screen and the app — and always how to quit and get help.

Textual's footer lists the bindings focused widget first, app last, and cuts what does not fit: at 80
columns the fleet screen's actions filled it and `q quit` and `? help` (the app's) were never seen. This
one drops keys from the end of the line, the app's own always kept, until the rest fits."""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: Actions always shown: how to leave and how to find every other key.
ALWAYS_SHOWN = frozenset({"quit", "help", "app.quit", "app.help"})


def key_cells(key: FooterKey) -> int:
    """A key's width in the footer: its key, a blank, its description, and a cell of padding each side."""
    return cell_len(key.key_display) + 1 + cell_len(key.description) + 2


class ConsoleFooter(Footer):
    _fitted_to = 0

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        # The footer spans the terminal: its width is the app's before the first layout gives it one, so
        # the first compose already fits (a recompose on the first resize made the screen's layout late).
        room = self.size.width or self.app.size.width
        self._fitted_to = room
        if not room or sum(key_cells(key) for key in keys if isinstance(key, FooterKey)) <= room:
            yield from keys
            return
        kept = [key for key in keys if not isinstance(key, FooterKey) or self._pinned(key)]
        used = sum(key_cells(key) for key in kept if isinstance(key, FooterKey))
        for key in keys:  # in order: the first of the rest while they fit
            if key not in kept and isinstance(key, FooterKey) and used + key_cells(key) <= room:
                kept.append(key)
                used += key_cells(key)
        yield from (key for key in keys if key in kept)

    def _pinned(self, key: FooterKey) -> bool:
        return key.action in ALWAYS_SHOWN or key.has_class("-command-palette")

    def on_resize(self) -> None:
        if self.size.width != self._fitted_to:  # what fits depends on the width
            self.refresh(recompose=True)
