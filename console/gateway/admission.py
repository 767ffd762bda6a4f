"""Admission control: a token bucket on new connections plus a connection ceiling — pure, no clocks.

The node answers an over-limit upgrade with 503 and a `Retry-After` drawn from a window, before any
handshake work (DESIGN.md, "admission"). The draw is what spreads the rejected clients out: a fixed
Retry-After would send them all back in the same instant (Centrifugo's bare 503 is the anchor that falls
short, issue #6).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from console.protocol import AdmissionRequest, AdmissionSettings


class Rejection(StrEnum):
    RATE = "rate"  # the token bucket is empty
    CEILING = "ceiling"  # the node holds max_connections already
    NOT_IN_ROTATION = "not_in_rotation"  # draining or drained: the load balancer should not send it here


@dataclass
class TokenBucket:
    """`rate_per_s` tokens a second, at most `burst` banked. `now_s` comes from the caller's clock."""

    rate_per_s: float
    burst: int
    tokens: float = 0.0
    updated_s: float | None = None

    def take(self, now_s: float) -> bool:
        if self.updated_s is None:
            self.tokens = float(self.burst)
        else:
            self.tokens = min(float(self.burst), self.tokens + (now_s - self.updated_s) * self.rate_per_s)
        self.updated_s = now_s
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


@dataclass(frozen=True)
class Decision:
    admitted: bool
    reason: Rejection | None = None
    retry_after_ms: int = 0

    @property
    def retry_after_header(self) -> str:
        """RFC 9110 delay-seconds is an integer; round up so a client never comes back early."""
        return str(max(1, -(-self.retry_after_ms // 1000)))


class Admission:
    """The node's admission state: settings, the bucket, and the Retry-After draw."""

    def __init__(self, settings: AdmissionSettings, rng: random.Random) -> None:
        self._rng = rng
        self.settings = settings
        self._bucket = self._make_bucket(settings)

    @staticmethod
    def _make_bucket(settings: AdmissionSettings) -> TokenBucket | None:
        if settings.rate_per_s is None:
            return None
        burst = settings.burst if settings.burst is not None else max(1, round(settings.rate_per_s))
        return TokenBucket(settings.rate_per_s, burst)

    def update(self, request: AdmissionRequest) -> AdmissionSettings:
        self.settings = AdmissionSettings(
            rate_per_s=request.rate_per_s,
            burst=request.burst,
            max_connections=request.max_connections,
            retry_after_s=request.retry_after_s,
            nodes=request.nodes,
        )
        self._bucket = self._make_bucket(self.settings)
        return self.settings

    def decide(self, now_s: float, connections: int, in_rotation: bool) -> Decision:
        """The ceiling and rotation are checked first so a refused upgrade never spends a bucket token."""
        if not in_rotation:
            return self._reject(Rejection.NOT_IN_ROTATION)
        ceiling = self.settings.max_connections
        if ceiling is not None and connections >= ceiling:
            return self._reject(Rejection.CEILING)
        if self._bucket is not None and not self._bucket.take(now_s):
            return self._reject(Rejection.RATE)
        return Decision(admitted=True)

    def _reject(self, reason: Rejection) -> Decision:
        low_s, high_s = self.settings.retry_after_s
        return Decision(False, reason, round(1000 * self._rng.uniform(low_s, high_s)))


def default_settings(
    rate_per_s: float | None = None,
    burst: int | None = None,
    max_connections: int | None = None,
    retry_after_s: tuple[float, float] = (1.0, 30.0),
) -> AdmissionSettings:
    return AdmissionSettings(
        rate_per_s=rate_per_s, burst=burst, max_connections=max_connections, retry_after_s=retry_after_s
    )
