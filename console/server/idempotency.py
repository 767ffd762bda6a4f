"""`Idempotency-Key`: a retried action gets the first answer again instead of being applied twice.

Keys are per token holder (one operator's key never collides with another's). The same key with the
same request replays the stored answer; with a different request it is refused (422, as the IETF
draft "The Idempotency-Key HTTP Header Field" advises); while the first is still being decided, 409.
Answers are kept for a day, at most MAX_KEYS of them.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from console.server.problems import ApiProblem

KEY_TTL_S = 24 * 3600.0
MAX_KEYS = 10_000
MAX_KEY_LENGTH = 200


@dataclass(frozen=True)
class StoredAnswer:
    status: int
    body: dict[str, Any]
    media_type: str


@dataclass
class _Entry:
    fingerprint: str
    stored_at: float
    answer: StoredAnswer | None = None  # None while the first request is being decided


def fingerprint(method: str, path: str, body: dict[str, Any]) -> str:
    text = json.dumps([method, path, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class IdempotencyKeys:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()

    def begin(self, actor: str, key: str, print_: str) -> StoredAnswer | None:
        """The stored answer for a retry, or None when this request is the first (then `finish` it)."""
        if not key or len(key) > MAX_KEY_LENGTH:
            raise ApiProblem(
                422, f"idempotency-key: 1 to {MAX_KEY_LENGTH} characters", field="idempotency-key"
            )
        self._forget_old()
        entry = self._entries.get((actor, key))
        if entry is None:
            self._entries[(actor, key)] = _Entry(print_, self._clock())
            return None
        if entry.fingerprint != print_:
            raise ApiProblem(
                422,
                "idempotency-key: already used for a different request; use a fresh key for each new request",
                field="idempotency-key",
            )
        if entry.answer is None:
            raise ApiProblem(
                409,
                "idempotency-key: the first request with this key is still being decided; retry shortly",
                field="idempotency-key",
            )
        return entry.answer

    def finish(self, actor: str, key: str, answer: StoredAnswer | None) -> None:
        """Store the answer (None: forget the key, so a retry decides afresh — after a server error)."""
        if answer is None:
            self._entries.pop((actor, key), None)
            return
        entry = self._entries.get((actor, key))
        if entry is not None:
            entry.answer = answer

    def _forget_old(self) -> None:
        now = self._clock()
        while self._entries:
            oldest_key, oldest = next(iter(self._entries.items()))
            if now - oldest.stored_at < KEY_TTL_S and len(self._entries) < MAX_KEYS:
                break
            del self._entries[oldest_key]
