"""Frames judged by a fresh alarm engine, as the gateway judges them or as the console does."""

from __future__ import annotations

from collections.abc import Iterable

from console.alarms import AlarmEngine
from console.alarms.base import FleetView
from console.protocol import Frame


def with_room(frames: Iterable[Frame], max_nodes: int | None) -> list[Frame]:
    """`frames` saying the fleet may hold `max_nodes` (None: they do not say, as an older server's)."""
    return [f.model_copy(update={"max_nodes": max_nodes}) for f in frames]


def judged(frames: Iterable[Frame], as_columns: bool = False) -> AlarmEngine:
    """A fresh engine once it has judged `frames`; `as_columns`: as the console judges them, each frame
    without its node records (the nodes gathered as columns)."""
    engine = AlarmEngine()
    for f in frames:
        if as_columns:
            engine.update(f.model_copy(update={"nodes": []}), FleetView.of(f, engine.thresholds, None))
        else:
            engine.update(f)
    return engine
