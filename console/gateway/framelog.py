"""A bounded log of admin frames with `seq` and `epoch`, and the same resume rule as the channel stream.

A stream client reconnecting with `?since=SEQ&epoch=E` gets the frames it missed when the log still holds
them (`recovered: true`), or a fresh start (`recovered: false`) — one rule, `plan_replay`, for both.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import deque

from console.gateway.history import Replay, plan_replay

#: Five minutes of 1 s frames.
FRAME_HISTORY = 300


class FrameLog:
    def __init__(self, cap: int = FRAME_HISTORY) -> None:
        self.epoch = secrets.token_hex(4)
        self.seq = 0
        self._held: deque[tuple[int, str]] = deque(maxlen=cap)
        self._listeners: set[asyncio.Queue[str]] = set()

    def next_seq(self) -> int:
        return self.seq + 1

    def append(self, text: str) -> None:
        """`text` is a frame already carrying `seq == next_seq()` and this log's epoch."""
        self.seq += 1
        self._held.append((self.seq, text))
        for queue in self._listeners:
            if queue.qsize() < 64:  # a stalled viewer loses frames, and learns it from the seq gap
                queue.put_nowait(text)

    def replay(self, since: int | None, epoch: str | None) -> Replay:
        return plan_replay(self.epoch, self.seq, list(self._held), since, epoch)

    def listen(self) -> asyncio.Queue[str]:
        queue: asyncio.Queue[str] = asyncio.Queue()
        self._listeners.add(queue)
        return queue

    def unlisten(self, queue: asyncio.Queue[str]) -> None:
        self._listeners.discard(queue)
