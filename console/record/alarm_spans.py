"""The alarms of a recording as spans: raised (with what each said then), cleared (with its worst reading).

Built from `console.alarms.AlarmEngine`'s changes over the recorded frames, so every recording is judged by
the same rules. Pure: changes in, spans out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from console.protocol import Event


@dataclass(frozen=True)
class AlarmSpan:
    name: str
    severity: str
    since_s: float
    cleared_s: float | None
    message: str
    node: str | None = None
    # Its reading furthest past the limit while it held, when, and what it said then (from the cleared
    # change; None while it holds, or where it has no value): what the console's panel reports once it
    # cleared, so the report says the same.
    worst_value: float | None = None
    worst_s: float | None = None
    worst_message: str | None = None


class AlarmSpans:
    """Each alarm from the engine's changes: raised (with what it said then — not its latest reading),
    then cleared (with its worst reading). In time order; none forgotten however long the recording."""

    def __init__(self) -> None:
        self.spans: list[AlarmSpan] = []
        self._open: dict[tuple[str, str | None], int] = {}

    def take(self, changes: list[Event]) -> None:
        for change in changes:
            key = (str(change.data["name"]), change.node)
            if change.data["change"] == "raised":
                self._open[key] = len(self.spans)
                message = str(change.data.get("message") or change.message)
                span = AlarmSpan(
                    key[0], str(change.data["severity"]), change.time_s, None, message, change.node
                )
                self.spans.append(span)
            elif key in self._open:
                i = self._open.pop(key)
                worst = change.data.get("worst_value")
                worst_s = change.data.get("worst_s")
                worst_message = change.data.get("worst_message")
                self.spans[i] = replace(
                    self.spans[i],
                    cleared_s=change.time_s,
                    worst_value=float(worst) if isinstance(worst, int | float) else None,
                    worst_s=float(worst_s) if isinstance(worst_s, int | float) else None,
                    worst_message=str(worst_message) if worst_message else None,
                )
