"""A Markdown table's cell: what the report's tables hold, escaped. Pure."""

from __future__ import annotations


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
