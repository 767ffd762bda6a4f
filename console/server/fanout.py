"""Fan-out of stream messages to many WebSocket clients, none of which may stall the others.

Publishing never awaits: each subscriber has its own bounded backlog, counted in frames. A client that
falls `max_backlog_frames` behind is cut off with a close reason telling it how to resume; its socket's
own flow control (uvicorn awaits the transport's `writable`) is what makes a slow reader fall behind
instead of growing the server's memory.
"""

from __future__ import annotations

import asyncio
import time
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


#: Recent deliveries kept for `delivery_ms` (50 clients × 400 frames).
DELIVERY_SAMPLES = 20_000


class Broadcaster:
    def __init__(self, max_backlog_frames: int = DEFAULT_MAX_BACKLOG_FRAMES) -> None:
        self.max_backlog_frames = max_backlog_frames
        self._subscribers: set[Subscriber] = set()
        self.dropped_total = 0
        # (published at, ms from publishing to the client's socket having taken it), one per client and
        # frame: the delay the server's fan-out adds, without the network or the client (`bench server`).
        self.deliveries: deque[tuple[float, float]] = deque(maxlen=DELIVERY_SAMPLES)
        self._published_at: dict[int, float] = {}

    def subscribe(self) -> Subscriber:
        subscriber = Subscriber(self.max_backlog_frames)
        self._subscribers.add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.discard(subscriber)

    def publish(self, seq: int, messages: Sequence[str]) -> None:
        self._published_at[seq] = time.time()
        self._published_at.pop(seq - 2 * self.max_backlog_frames, None)
        for subscriber in self._subscribers:
            was_overflowed = subscriber.overflowed
            subscriber.push(seq, messages)
            if subscriber.overflowed and not was_overflowed:
                self.dropped_total += 1

    def delivered(self, seq: int) -> None:
        """A client's socket has taken every message of frame `seq`."""
        published_at = self._published_at.get(seq)
        if published_at is not None:
            self.deliveries.append((published_at, (time.time() - published_at) * 1000))

    def __len__(self) -> int:
        return len(self._subscribers)
