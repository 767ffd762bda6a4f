"""Verdict building blocks: a check against a limit, and the level a set of checks adds up to.

The level is the strictest `fails_to` among the failed checks (ok < confirm < typed < blocked), never less
than the action's own floor (an abrupt rollout is always `typed`). A check that fails to `ok` is a warning:
shown, never escalating.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from console.protocol import Check, Verdict, VerdictLevel

LEVEL_RANK = {VerdictLevel.OK: 0, VerdictLevel.CONFIRM: 1, VerdictLevel.TYPED: 2, VerdictLevel.BLOCKED: 3}


def stricter(a: VerdictLevel, b: VerdictLevel) -> VerdictLevel:
    return a if LEVEL_RANK[a] >= LEVEL_RANK[b] else b


def check(
    name: str,
    value: float,
    limit: float,
    *,
    fails_to: VerdictLevel,
    why: str,
    bound: Literal["max", "min"] = "max",
    move: str = "",
) -> Check:
    """A numeric check. `bound="max"`: the value must not exceed the limit; `"min"`: not fall below it.
    A NaN value never passes. `move`: what to do about a failure, said after `why` (its own separator
    first) only when the check fails — a passing "headroom_pct 58.6 ≥ 35" that went on "…: wait for
    headroom to come back" told the operator to act on a failure there was not (found in review)."""
    within = value <= limit if bound == "max" else value >= limit
    ok = bool(within) and not math.isnan(value)
    return Check(
        name=name,
        value=_plain(value),
        limit=_plain(limit),
        ok=ok,
        why=why if ok else why + move,
        bound=bound,
        level=fails_to,
    )


def note(
    name: str, value: float | str | None, limit: float | str | None, *, ok: bool, why: str, move: str = ""
) -> Check:
    """A check whose failure only warns (level stays as it is); `move` as `check`'s, said only on failure."""
    return Check(
        name=name, value=value, limit=limit, ok=ok, why=why if ok else why + move, level=VerdictLevel.OK
    )


def any_of(moves: Sequence[str]) -> str:
    """The moves said, "a, b, or c", the empty ones (moves this fleet does not have) left out; "" for none."""
    said = [move for move in moves if move]
    if not said:
        return ""
    return ", ".join(said[:-1]) + (", or " if len(said) > 1 else "") + said[-1]


def verdict(
    action: str,
    checks: Iterable[Check],
    projections: dict[str, Any],
    *,
    floor: VerdictLevel = VerdictLevel.OK,
    typed_expected: str | None = None,
) -> Verdict:
    checks = list(checks)
    level = floor
    for item in checks:
        if not item.ok and item.level is not None:
            level = stricter(level, item.level)
    return Verdict(
        level=level,
        action=action,
        checks=checks,
        projections={k: _plain(v) for k, v in projections.items()},
        typed_expected=typed_expected if level is VerdictLevel.TYPED else None,
    )


def _plain(value: Any) -> Any:
    """Round floats for people and JSON: infinities become None (JSON has none), the rest 3 decimals."""
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            return None
        return round(value, 3)
    return value
