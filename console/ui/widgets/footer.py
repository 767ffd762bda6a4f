"""The footer: the keys of the focused panel, the screen and the app — and always how to quit and get help.

Textual's footer lists the bindings focused widget first, app last, and cuts what does not fit: at 80
columns the fleet screen's actions filled it and `q quit` and `? help` (the app's) were never seen, and
where the keys ran under the palette's (docked right) it drew "A ack al▏^p palette". This one lets keys
give way whole, in the reverse of their rank: the screen's essential keys (its own answer: apply, cancel,
start…) last, then quit and help, then what the moment makes urgent (`rank`: h and r while a rollout is
under way), then the palette's; the rest in the footer's order while they fit, what the moment makes
dispensable last. A key for an action the fleet cannot take at all is not drawn (`hide`;
console.model.offered)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from console.ui.words import kept_whole

#: Actions kept after a screen's essential ones: how to leave and how to find every other key.
ALWAYS_SHOWN = frozenset({"quit", "help", "app.quit", "app.help"})


def key_cells(key: FooterKey) -> int:
    """A key's width in the footer: its key, a blank, its description, and a cell of padding each side."""
    return cell_len(key.key_display) + 1 + cell_len(key.description) + 2


class ConsoleFooter(Footer):
    _fitted_to = 0
    #: The actions whose keys are not drawn: the fleet cannot take them (`hide`).
    _hidden: frozenset[str] = frozenset()
    #: Kept right after quit and help, and given way first, for now (`rank`).
    _urgent: tuple[str, ...] = ()
    _dispensable: frozenset[str] = frozenset()

    def __init__(self, *, essential: Iterable[str] = ()) -> None:
        """`essential`: the actions the screen cannot be used without (a form's apply, cancel and dry run),
        in the order they are kept — the last to give way on a narrow terminal, before quit and help."""
        super().__init__()
        self.essential = tuple(essential)

    def compose(self) -> ComposeResult:
        keys = [
            key
            for key in super().compose()
            if not (isinstance(key, FooterKey) and key.action in self._hidden)
        ]
        # The footer spans the terminal: its width is the app's before the first layout gives it one, so
        # the first compose already fits (a recompose on the first resize made the screen's layout late).
        room = self.size.width or self.app.size.width
        self._fitted_to = room
        footer_keys = [key for key in keys if isinstance(key, FooterKey)]
        if not room or sum(key_cells(key) for key in footer_keys) <= room:
            yield from keys
            return
        kept = kept_whole(footer_keys, room, key_cells, self._rank)  # within a rank, the footer's order
        yield from (key for key in keys if not isinstance(key, FooterKey) or key in kept)

    def _rank(self, key: FooterKey) -> int:
        """Kept first: the screen's essential keys, in their order; quit and help; the urgent ones, in their
        order; the palette's; the rest; the dispensable ones."""
        if key.action in self.essential:
            return self.essential.index(key.action)
        after = len(self.essential)
        if key.action in ALWAYS_SHOWN:
            return after
        if key.action in self._urgent:
            return after + 1 + self._urgent.index(key.action)
        after += 1 + len(self._urgent)
        if key.has_class("-command-palette"):
            return after
        return after + 2 if key.action in self._dispensable else after + 1

    def rank(self, urgent: tuple[str, ...], dispensable: frozenset[str] = frozenset()) -> None:
        """For now, keep `urgent` (bindings' action strings) right after quit and help, and let
        `dispensable` give way before any other key: a narrow footer (80 columns) cut the keys in its
        own order, and h halt went while a rollout ran, after / filter and s sort."""
        if (urgent, dispensable) != (self._urgent, self._dispensable):
            self._urgent, self._dispensable = urgent, dispensable
            self.refresh(recompose=True)

    def hide(self, actions: frozenset[str]) -> None:
        """Draw no key for `actions` (bindings' action strings): what this fleet cannot take at all, its
        keys left to answer why when pressed. Not Textual's `check_action`: False or None there makes the
        key itself do nothing, and the palette's command with it."""
        if actions != self._hidden:
            self._hidden = actions
            self.refresh(recompose=True)

    def on_resize(self) -> None:
        if self.size.width != self._fitted_to:  # what fits depends on the width
            self.refresh(recompose=True)
