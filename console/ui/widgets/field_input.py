"""An input field whose own keys act in the order they arrive.

Textual runs a widget's non-priority bindings (an Input's backspace, delete, ←, →, Home, End …) only once
the key has bubbled up to the app, a hop through each ancestor's message queue, while a printable key goes
in at once. Keys that arrive together — a fast typist, a slow ssh link, tmux — were then applied out of
order: '-5' and 'BSpace BSpace 99999' gave '-5999' in a drain form's rate.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class FieldInput(Input):
    async def _on_key(self, event: events.Key) -> None:
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority:  # (a priority binding was the app's to run before the key came here)
                event.stop()
                event.prevent_default()
                await self.run_action(binding.action)
                return
        await super()._on_key(event)
