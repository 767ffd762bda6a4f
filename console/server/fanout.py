"""Fan-out of stream messages to many WebSocket clients, none of which may stall the others.

Publishing never awaits: each subscriber has its own bounded backlog, counted in frames. A client that
falls `max_backlog_frames` behind is cut off with a close reason telling it how to resume; its socket's
own flow control (uvicorn awaits the transport's `writable`) is what makes a slow reader fall behind
instead of growing the server's memory.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

#: 30 s behind a 1 Hz stream is no longer live; the client does better to resume from history (600 s).
DEFAULT_MAX_BACKLOG_FRAMES = 30


@dataclass(eq=False)
class Subscriber:
    max_backlog_frames: int
    backlog: deque[tuple[int, Sequence[str]]] = field(default_factory=deque)  # (seq, its messages)
    overflowed: bool = False
    _ready: asyncio.Event = field(default_factory=asyncio.Event)

    def push(self, seq: int, messages: Sequence[str]) -> None:
        if self.overflowed:
            return
        if len(self.backlog) >= self.max_backlog_frames:
            self.overflowed = True
            self.backlog.clear()
        else:
            self.backlog.append((seq, messages))
        self._ready.set()

    async def take(self) -> list[tuple[int, Sequence[str]]]:
        """Wait for frames, then take every one queued (nothing once overflowed: the client is cut off)."""
        await self._ready.wait()
        self._ready.clear()
        taken = list(self.backlog)
        self.backlog.clear()
        return taken


class Broadcaster:
    def __init__(self, max_backlog_frames: int = DEFAULT_MAX_BACKLOG_FRAMES) -> None:
        self.max_backlog_frames = max_backlog_frames
        self._subscribers: set[Subscriber] = set()
        self.dropped_total = 0

    def subscribe(self) -> Subscriber:
        subscriber = Subscriber(self.max_backlog_frames)
        self._subscribers.add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.discard(subscriber)

    def publish(self, seq: int, messages: Sequence[str]) -> None:
        for subscriber in self._subscribers:
            was_overflowed = subscriber.overflowed
            subscriber.push(seq, messages)
            if subscriber.overflowed and not was_overflowed:
                self.dropped_total += 1

    def __len__(self) -> int:
        return len(self._subscribers)
