"""A bar above the footer that takes one line of text: the fleet's filter (`/`), the replay's seek (`g`).

An input, what its keys do beside it (in the placeholder they went at the first key typed), and over it an
error line shown only while there is an error: at 80×24 a bordered input and an empty error line left the
node table one row. Closed, it takes no row. Enter ends it either way (left open with its error, the bar
took the operator's next `q` as text): a refused value stays, selected, beside its error when it is opened
again; the error wraps at words, every word of it on screen. The screen owns what the text means and where
the focus goes after.

Every key typed after the bar's own goes into it, in order, even all in one read (a fast typist, tmux, a
paste). Textual hands each key to the widget focused when the app takes it from its queue, and runs a
screen's ordinary bindings only once the key has bubbled back up to the app: by then the keys typed after
`/` had all gone to the node table, to bubble up as the screen's `s` sort, `d` drain… (and `focus()` itself
waits its turn behind them). So the bar's key is a priority binding (`opening_key`), run as the app takes
it, and `open` focuses at once: the keys behind it are handed to the field.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label

from console.ui.widgets.field_input import FieldInput


def opening_key(key: str, action: str, description: str) -> Binding:
    """The binding of the key that opens a bar: a priority one, so the bar is open and focused before the
    app hands on the keys typed after it. While a field has the focus Textual leaves out the bindings of
    the keys it takes as text (`Screen._binding_chain`, `check_consume_key`): a `g` typed in the filter's
    "id:gw-*" stays text, it does not open the seek."""
    return Binding(key, action, description, priority=True)


class InputBar(Vertical):
    """Its parts take ids from `field_id`: the input `field_id`, `{field_id}-keys`, `{field_id}-error` and
    the row `{field_id}-row` (tests and the contrast checks find them so)."""

    DEFAULT_CSS = """
    InputBar { height: auto; display: none; }
    InputBar.-open { display: block; }
    /* The screen's width, wrapped at words: a Label's own width (auto) ran a long error past the edge, "…
       with minutes and second" at 80 columns. */
    InputBar > .input-bar--error { color: $error; width: 100%; height: auto; display: none; }
    InputBar > .input-bar--error.-said { display: block; }
    InputBar > .input-bar--row { height: 1; }
    InputBar .input-bar--field { width: 1fr; }
    InputBar .input-bar--keys { width: auto; padding: 0 1; }
    """

    def __init__(self, *, field_id: str, keys: str, placeholder: str, id: str, leave_to: str) -> None:
        """`leave_to`: the selector of the widget that takes the focus as Enter or Esc ends the field."""
        super().__init__(id=id)
        self._leave_to = leave_to
        self.field_id = field_id
        self._keys = keys
        self._placeholder = placeholder

    def compose(self) -> ComposeResult:
        yield Label("", id=f"{self.field_id}-error", classes="input-bar--error")
        with Horizontal(id=f"{self.field_id}-row", classes="input-bar--row"):
            # Its own keys in order too: a backspace in the same read as the digits (`FieldInput`).
            yield FieldInput(
                placeholder=self._placeholder,
                id=self.field_id,
                classes="input-bar--field",
                compact=True,
                leave_to=self._leave_to,
            )
            yield Label(self._keys, id=f"{self.field_id}-keys", classes="input-bar--keys")

    @property
    def field(self) -> Input:
        return self.query_one(f"#{self.field_id}", Input)

    @property
    def refused(self) -> bool:
        """An error is said: what was typed is still in the field, to retype or edit."""
        return self.query_one(f"#{self.field_id}-error", Label).has_class("-said")

    def open(self) -> None:
        """Shown, focused, what is in it selected: typing replaces it, an arrow key edits it."""
        self.add_class("-open")
        # Now, not as `focus()` does (after the messages already queued, the keys typed after the bar's).
        self.screen.set_focus(self.field)
        self.field.select_all()

    def close(self) -> None:
        """Hidden, and its error said no more."""
        self.remove_class("-open")
        self._say("")

    def refuse(self, words: str) -> None:
        """Hidden, `words` said over what was typed for when it is opened again."""
        self._say(words)
        self.remove_class("-open")

    def _say(self, words: str) -> None:
        error = self.query_one(f"#{self.field_id}-error", Label)
        error.update(words)
        error.set_class(bool(words), "-said")
