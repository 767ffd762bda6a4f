"""Signed client tokens: `client_id.expires_s.signature`, verified after admission.

The signature is PBKDF2-HMAC-SHA256 with a work factor, so that verifying it costs what a real gateway's
handshake costs beyond the HTTP upgrade: a TLS 1.3 handshake signs with the server key (RSA-2048: ~1.5 ms
of one core) and the token check verifies a JWT — about 2 ms of CPU in all.
That is the cost admission exists to avoid paying for the clients it turns away, and the one the
`reject_cost_ratio` benchmark divides by. `work_factor` 1 makes it a plain, cheap HMAC.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

#: Loopback-only default key: the reference fleet is a test bench; real deployments pass a key file.
LOOPBACK_KEY = b"stormdeck-loopback-client-key"

#: PBKDF2 iterations: ~2 ms of one core here (0.19 µs an iteration, measured; see docs/gateway.md).
DEFAULT_WORK_FACTOR = 10_000


@dataclass(frozen=True)
class TokenSigner:
    key: bytes = LOOPBACK_KEY
    work_factor: int = DEFAULT_WORK_FACTOR

    def _signature(self, claims: str) -> str:
        return hashlib.pbkdf2_hmac("sha256", claims.encode(), self.key, self.work_factor).hex()[:32]

    def mint(self, client_id: str, expires_s: float) -> str:
        claims = f"{client_id}.{int(expires_s)}"
        return f"{claims}.{self._signature(claims)}"

    def verify(self, token: str, now_s: float) -> str | None:
        """The client id when the token is genuine and unexpired, else None."""
        claims, _, signature = token.rpartition(".")
        client_id, _, expires = claims.rpartition(".")
        if not client_id or not expires.isdigit() or int(expires) < now_s:
            return None
        if not hmac.compare_digest(signature, self._signature(claims)):
            return None
        return client_id
