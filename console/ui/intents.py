"""What screens ask of the app. Messages travel up; the app changes the query or the view and re-renders."""

from __future__ import annotations

from textual.message import Message

from console.model.nodes import NodeFilter


class ScreenReady(Message):
    """A screen has composed its widgets: the app may render the model into it."""


class FilterChosen(Message):
    def __init__(self, node_filter: NodeFilter) -> None:
        self.node_filter = node_filter
        super().__init__()
