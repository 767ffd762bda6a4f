"""The docs list every alarm name and every threshold: a new one without its line fails here."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from console.alarms import AlarmName
from console.guards import Thresholds

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_every_alarm_is_documented() -> None:
    text = (DOCS / "alarms.md").read_text(encoding="utf-8")
    assert [name for name in AlarmName if f"| `{name}` |" not in text] == []


def test_every_threshold_is_documented_with_its_default() -> None:
    text = (DOCS / "guards.md").read_text(encoding="utf-8")
    missing = [
        f.name for f in dataclasses.fields(Thresholds) if f"| `{f.name}` | {f.default:g} |" not in text
    ]
    assert missing == []
