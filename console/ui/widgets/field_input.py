"""An input field whose own keys act in the order they arrive.

Textual runs a widget's non-priority bindings (an Input's backspace, delete, ←, →, Home, End …) only once
the key has bubbled up to the app, a hop through each ancestor's message queue, while a printable key goes
in at once. Keys that arrive together — a fast typist, a slow ssh link, tmux — were then applied out of
order: '-5' and 'BSpace BSpace 99999' gave '-5999' in a drain form's rate.

The keys that end the field (Enter, Esc) hand the focus on as they are read, when it has somewhere to go
(`leave_to`). The app hands each key to the widget focused as it takes the key from its queue: the keys
typed after Enter in the same read were already in the field's queue, behind it, and went in as text,
hidden by then — `/` `state:down` Enter `j` filtered and lost the `j`. Those keys are passed on, in order,
to the widget that has the focus now.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.widgets import Input

#: The keys that end a field: what follows them is no longer its text.
LEAVING_KEYS = frozenset({"enter", "escape"})


class FieldInput(Input):
    def __init__(self, *args: Any, leave_to: str | None = None, **kwargs: Any) -> None:
        """`leave_to`: the selector, on the screen, of the widget the focus goes to once Enter or Esc is read."""
        super().__init__(*args, **kwargs)
        self.leave_to = leave_to

    async def _on_key(self, event: events.Key) -> None:
        if self.leave_to is not None and self.screen.focused is not self:  # queued behind Enter or Esc
            event.stop()
            event.prevent_default()
            if self.screen.focused is not None:
                self.screen.focused.post_message(events.Key(event.key, event.character))
            return
        if event.key in LEAVING_KEYS and self.leave_to is not None:
            # Enter's submit reads the value first; Esc is the screen's binding, found from the new focus.
            if event.key == "enter":
                event.stop()
                event.prevent_default()
                await self.action_submit()
            self.screen.set_focus(self.screen.query_one(self.leave_to))
            return
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority:  # (a priority binding was the app's to run before the key came here)
                event.stop()
                event.prevent_default()
                await self.run_action(binding.action)
                return
        await super()._on_key(event)
