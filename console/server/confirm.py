"""Confirmation tokens of the two-phase actions: single-use, short-lived, bound to what was confirmed.

A token is issued with a 409 and names exactly one action: who asked, the kind, the target, its
parameters, and the verdict as it stood (its level and the checks that failed). Redeeming it with anything
else is refused with the reason, so an operator never confirms one thing and applies another. The clock
is injected (tests move it past the expiry; the server uses the monotonic clock).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from console.guards import LEVEL_RANK
from console.protocol import Verdict, VerdictLevel

#: DESIGN.md: "a short-lived single-use confirm_token"; issue #4: it expires in 60 s.
TOKEN_TTL_S = 60.0
#: Tokens kept at most (issued and spent), so a flood of 409s cannot grow the server without bound.
MAX_TOKENS = 10_000


@dataclass(frozen=True)
class Binding:
    actor: str
    kind: str
    target: str
    parameters: dict[str, Any]
    level: VerdictLevel
    failed_checks: frozenset[str]

    @classmethod
    def of(cls, actor: str, kind: str, target: str, parameters: dict[str, Any], verdict: Verdict) -> Binding:
        failed = frozenset(
            check.name
            for check in verdict.checks
            if not check.ok and check.level is not None and check.level is not VerdictLevel.OK
        )
        return cls(actor, kind, target, parameters, verdict.level, failed)


class TokenRefused(Exception):
    """Why a confirmation token cannot be used: `reason` is a stable word, `detail` a sentence."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass
class _Issued:
    binding: Binding
    expires_at: float
    spent: bool = False


class ConfirmTokens:
    def __init__(self, clock: Callable[[], float] = time.monotonic, ttl_s: float = TOKEN_TTL_S) -> None:
        self._clock = clock
        self.ttl_s = ttl_s
        self._tokens: dict[str, _Issued] = {}

    def issue(self, binding: Binding) -> tuple[str, float]:
        """A fresh token for `binding`, and the seconds it stays valid."""
        self._forget_old()
        token = secrets.token_urlsafe(18)
        self._tokens[token] = _Issued(binding, self._clock() + self.ttl_s)
        return token, self.ttl_s

    def check(self, token: str, binding: Binding) -> None:
        """Raise `TokenRefused` unless `token` may confirm `binding` now. Does not spend it."""
        issued = self._tokens.get(token)
        if issued is None:
            raise TokenRefused(
                "unknown", "confirm.token: not a token this server issued (or one long expired)"
            )
        if issued.spent:
            raise TokenRefused("reused", "confirm.token: already used; a confirmation is good for one call")
        if self._clock() >= issued.expires_at:
            raise TokenRefused(
                "expired", f"confirm.token: expired ({self.ttl_s:g} s after it was issued); ask again"
            )
        bound = issued.binding
        if bound.actor != binding.actor:
            raise TokenRefused("other_actor", "confirm.token: issued to another token's holder")
        if (bound.kind, bound.target) != (binding.kind, binding.target):
            raise TokenRefused(
                "changed",
                f"confirm.token: issued for {bound.kind} {bound.target}, not {binding.kind} {binding.target}",
            )
        changed = sorted(
            name
            for name in set(bound.parameters) | set(binding.parameters)
            if bound.parameters.get(name) != binding.parameters.get(name)
        )
        if changed:
            shown = "; ".join(
                f"{name} was {bound.parameters.get(name)!r}, now {binding.parameters.get(name)!r}"
                for name in changed
            )
            raise TokenRefused(
                "changed", f"confirm.token: the parameters changed since it was issued ({shown})"
            )
        # The verdict may have moved with the fleet: a confirmation covers what it was shown, not more.
        stricter = LEVEL_RANK[binding.level] > LEVEL_RANK[bound.level]
        new_failures = sorted(binding.failed_checks - bound.failed_checks)
        if stricter or new_failures:
            raise TokenRefused(
                "verdict_changed",
                f"confirm.token: the verdict changed since it was issued (was {bound.level.value}, now "
                f"{binding.level.value}"
                + (f"; newly failing: {', '.join(new_failures)}" if new_failures else "")
                + "); confirm the new verdict",
            )

    def spend(self, token: str) -> None:
        self._tokens[token].spent = True

    def _forget_old(self) -> None:
        now = self._clock()
        # Spent and expired tokens are kept one more TTL so a late reuse is told "reused"/"expired".
        for token in [t for t, issued in self._tokens.items() if now >= issued.expires_at + self.ttl_s]:
            del self._tokens[token]
        while len(self._tokens) >= MAX_TOKENS:
            del self._tokens[next(iter(self._tokens))]
