"""Client reconnect backoff policies — one definition, two users.

The simulator draws whole cohorts from a policy's delay distribution; the client SDK draws one delay at a
time. Both read the same `Policy.segments()`: every policy here is a mixture of at most a dozen uniform
segments and point masses, which is what lets the simulator split a cohort exactly (multinomial over
segments, then uniform within a segment) instead of simulating each client.

A policy's *state* is what the client remembers between attempts. For most policies it is the attempt
counter `n` (consecutive failures); `decorrelated` remembers its last delay instead. States are small
integers so the simulator can count clients per state:

* attempt-counter policies: state `n` is clamped to `max_state`, the first attempt whose distribution no
  longer changes (the cap is reached);
* `decorrelated`: state `k` is a log-spaced bin of the last delay between `base_ms` and `max_ms`.

Sources for the defaults are cited per policy (see ../shared/DESIGN.md, "Defaults from the seeds").
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

from console.errors import InputError


@dataclass(frozen=True)
class Segment:
    """One component of a delay distribution: uniform on [low_ms, high_ms), or a point when equal."""

    weight: float
    low_ms: float
    high_ms: float

    @property
    def is_point(self) -> bool:
        return self.high_ms <= self.low_ms


def sample_segments(segments: list[Segment], rng: random.Random | Any) -> float:
    """Draw one delay (ms) from a mixture. `rng` needs `random()` (stdlib Random or numpy Generator)."""
    u = rng.random()
    acc = 0.0
    chosen = segments[-1]
    for segment in segments:
        acc += segment.weight
        if u < acc:
            chosen = segment
            break
    if chosen.is_point:
        return chosen.low_ms
    return chosen.low_ms + (chosen.high_ms - chosen.low_ms) * rng.random()


@dataclass(frozen=True)
class Policy:
    """Base: subclasses define `segments(state)` and, when the state is not a counter, `state_after`."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    def segments(self, state: int) -> list[Segment]:
        raise NotImplementedError

    @property
    def max_state(self) -> int:
        """Largest state; states beyond it behave identically and are clamped to it."""
        raise NotImplementedError

    @property
    def state_from_delay(self) -> bool:
        """True when the next state is a function of the delay just slept (decorrelated)."""
        return False

    def state_after(self, state: int, delay_ms: float) -> int:
        """The state a client is in after sleeping `delay_ms` from `state` and failing again."""
        return min(state + 1, self.max_state)

    def next_delay_ms(self, state: int, rng: random.Random | Any) -> float:
        return sample_segments(self.segments(min(state, self.max_state)), rng)

    def describe(self) -> dict[str, Any]:
        return {"policy": self.name, **{f.name: getattr(self, f.name) for f in fields(self)}}


def _cap_state(base: float, factor: float, cap: float) -> int:
    """First n with base * factor**n >= cap (at least 0). A base of 0 never grows: every state draws alike."""
    if base >= cap or factor <= 1.0 or base <= 0.0:
        return 0
    return max(0, math.ceil(math.log(cap / base) / math.log(factor) - 1e-12))


@dataclass(frozen=True)
class Fixed(Policy):
    """The same delay every time: the lockstep baseline of the field guide's 'kill the server' rung."""

    name: ClassVar[str] = "fixed"
    summary: ClassVar[str] = "constant delay, optional additive jitter"
    delay_ms: float = 1000.0
    jitter_ms: float = 0.0

    def segments(self, state: int) -> list[Segment]:
        return [Segment(1.0, self.delay_ms, self.delay_ms + self.jitter_ms)]

    @property
    def max_state(self) -> int:
        return 0


@dataclass(frozen=True)
class Exponential(Policy):
    """min(base × multiplier^n, cap) + U(0, jitter): the outage's library (outage seed: 250 ms ×2, 30 s,
    0–100 ms). Additive jitter shrinks relative to the delay, so waves stay synchronised."""

    name: ClassVar[str] = "exponential"
    summary: ClassVar[str] = "base × multiplier^n capped, plus additive U(0, jitter)"
    base_ms: float = 250.0
    multiplier: float = 2.0
    max_ms: float = 30_000.0
    jitter_ms: float = 100.0

    def segments(self, state: int) -> list[Segment]:
        delay = min(self.base_ms * self.multiplier**state, self.max_ms)
        return [Segment(1.0, delay, delay + self.jitter_ms)]

    @property
    def max_state(self) -> int:
        return _cap_state(self.base_ms, self.multiplier, self.max_ms)


@dataclass(frozen=True)
class FullJitter(Policy):
    """U(0, min(cap, base × 2^n)) (interview seed; AWS's 'full jitter')."""

    name: ClassVar[str] = "full_jitter"
    summary: ClassVar[str] = "U(0, min(cap, base × multiplier^n))"
    base_ms: float = 1000.0
    multiplier: float = 2.0
    max_ms: float = 30_000.0

    def segments(self, state: int) -> list[Segment]:
        return [Segment(1.0, 0.0, min(self.max_ms, self.base_ms * self.multiplier**state))]

    @property
    def max_state(self) -> int:
        return _cap_state(self.base_ms, self.multiplier, self.max_ms)


@dataclass(frozen=True)
class EqualJitter(Policy):
    """c/2 + U(0, c/2) with c = min(cap, base × 2^n): keeps a floor, halves the spread."""

    name: ClassVar[str] = "equal_jitter"
    summary: ClassVar[str] = "c/2 + U(0, c/2), c = min(cap, base × multiplier^n)"
    base_ms: float = 1000.0
    multiplier: float = 2.0
    max_ms: float = 30_000.0

    def segments(self, state: int) -> list[Segment]:
        c = min(self.max_ms, self.base_ms * self.multiplier**state)
        return [Segment(1.0, c / 2.0, c)]

    @property
    def max_state(self) -> int:
        return _cap_state(self.base_ms, self.multiplier, self.max_ms)


@dataclass(frozen=True)
class Decorrelated(Policy):
    """U(base, min(cap, last × 3)) (outage seed's fix). The state is the last delay, binned log-spaced
    into `state_bins` bins between base and cap; a bin stands for its geometric midpoint, so the
    simulator's decorrelated clients remember their last delay to within one bin's width."""

    name: ClassVar[str] = "decorrelated"
    summary: ClassVar[str] = "U(base, min(cap, last × multiplier))"
    base_ms: float = 250.0
    multiplier: float = 3.0
    max_ms: float = 30_000.0
    state_bins: int = 32

    def _bin_edges(self) -> list[float]:
        ratio = self.max_ms / self.base_ms
        return [self.base_ms * ratio ** (k / self.state_bins) for k in range(self.state_bins + 1)]

    def last_ms(self, state: int) -> float:
        """The last delay a state stands for; state 0 is a fresh client (last = base)."""
        if state == 0:
            return self.base_ms
        edges = self._bin_edges()
        return math.sqrt(edges[state - 1] * edges[state])

    def segments(self, state: int) -> list[Segment]:
        high = min(self.max_ms, self.last_ms(state) * self.multiplier)
        return [Segment(1.0, self.base_ms, max(high, self.base_ms))]

    @property
    def max_state(self) -> int:
        return self.state_bins

    @property
    def state_from_delay(self) -> bool:
        return True

    def state_after(self, state: int, delay_ms: float) -> int:
        if delay_ms <= self.base_ms:
            return 1
        ratio = self.max_ms / self.base_ms
        k = math.floor(math.log(delay_ms / self.base_ms) / math.log(ratio) * self.state_bins) + 1
        return max(1, min(self.state_bins, k))


@dataclass(frozen=True)
class Grpc(Policy):
    """min(initial × 1.6^n, 120 s) × U(1 − 0.2, 1 + 0.2) (gRPC connection-backoff.md, field guide).
    The 20 s minimum connect timeout is a population setting (`connect_timeout_s`)."""

    name: ClassVar[str] = "grpc"
    summary: ClassVar[str] = "min(initial × 1.6^n, 120 s) ± 20 %"
    initial_ms: float = 1000.0
    multiplier: float = 1.6
    max_ms: float = 120_000.0
    jitter: float = 0.2

    def segments(self, state: int) -> list[Segment]:
        b = min(self.initial_ms * self.multiplier**state, self.max_ms)
        return [Segment(1.0, b * (1.0 - self.jitter), b * (1.0 + self.jitter))]

    @property
    def max_state(self) -> int:
        return _cap_state(self.initial_ms, self.multiplier, self.max_ms)


@dataclass(frozen=True)
class SocketIO(Policy):
    """socket.io-client's backo2 (field guide: 1 s, max 5 s, randomizationFactor 0.5, factor 2).

    backo2 draws one `rand` and uses it twice: deviation = floor(rand × jitter × ms), and the sign comes
    from floor(rand × 10) being even. So delays fall in ten bands of width jitter × ms / 10 (50 ms on the
    first reconnect) with gaps between them, and once ms − deviation exceeds the cap every client waits
    exactly the cap: lockstep at 5 s from attempt 4 on.
    """

    name: ClassVar[str] = "socketio"
    summary: ClassVar[str] = "backo2: ms × factor^n ± rand × 0.5 × ms in banded steps, then min(·, max)"
    base_ms: float = 1000.0
    factor: float = 2.0
    max_ms: float = 5000.0
    randomization: float = 0.5

    def segments(self, state: int) -> list[Segment]:
        ms = self.base_ms * self.factor**state
        out: list[Segment] = []
        at_cap = 0.0
        for decile in range(10):
            lo_dev = math.floor(decile / 10 * self.randomization * ms)
            hi_dev = math.floor((decile + 1) / 10 * self.randomization * ms)
            if decile % 2 == 0:
                low, high = ms - hi_dev, ms - lo_dev
            else:
                low, high = ms + lo_dev, ms + hi_dev
            if low >= self.max_ms:
                at_cap += 0.1
            elif high > self.max_ms:
                share = (self.max_ms - low) / (high - low)
                out.append(Segment(0.1 * share, low, self.max_ms))
                at_cap += 0.1 * (1.0 - share)
            else:
                out.append(Segment(0.1, low, high))
        if at_cap > 0:
            out.append(Segment(at_cap, self.max_ms, self.max_ms))
        return out

    @property
    def max_state(self) -> int:
        # The band's lowest point, ms × (1 − randomization), reaches the cap here; beyond it, all at cap.
        return _cap_state(self.base_ms * (1.0 - self.randomization), self.factor, self.max_ms)


@dataclass(frozen=True)
class Phoenix(Policy):
    """Phoenix socket.js reconnectAfterMs: a stepped schedule, then 5 s; no randomization (field guide)."""

    name: ClassVar[str] = "phoenix"
    summary: ClassVar[str] = "stepped schedule 10 … 2000 ms, then 5 s; no jitter"
    schedule_ms: tuple[float, ...] = (10, 50, 100, 150, 200, 250, 500, 1000, 2000)
    after_ms: float = 5000.0

    def segments(self, state: int) -> list[Segment]:
        delay = self.schedule_ms[state] if state < len(self.schedule_ms) else self.after_ms
        return [Segment(1.0, delay, delay)]

    @property
    def max_state(self) -> int:
        return len(self.schedule_ms)


POLICIES: dict[str, type[Policy]] = {
    cls.name: cls
    for cls in (Fixed, Exponential, FullJitter, EqualJitter, Decorrelated, Grpc, SocketIO, Phoenix)
}


def make_policy(name: str, params: Mapping[str, Any] | None = None) -> Policy:
    """Build a policy by name with overrides; unknown names, unknown or out-of-range params raise InputError."""
    if name not in POLICIES:
        raise InputError("policy", name, "one of " + ", ".join(sorted(POLICIES)))
    cls = POLICIES[name]
    known = {f.name: f for f in fields(cls)}
    policy = cls()
    for key, value in (params or {}).items():
        if key not in known:
            raise InputError(f"policy.{key}", value, f"a parameter of {name}: " + ", ".join(sorted(known)))
        default = getattr(policy, key)
        if isinstance(default, tuple):
            if (
                not isinstance(value, list | tuple)
                or not value
                or any(
                    isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < math.inf
                    for v in value
                )
            ):
                raise InputError(f"policy.{key}", value, "a non-empty list of delays ≥ 0 ms")
            value = tuple(float(v) for v in value)
        elif isinstance(default, int) and not isinstance(default, bool):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 256:
                raise InputError(f"policy.{key}", value, "an integer in [1, 256]")
        else:
            if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value < math.inf:
                raise InputError(f"policy.{key}", value, "a finite number ≥ 0")
            value = float(value)
        policy = replace(policy, **{key: value})
    _validate(policy)
    return policy


def _validate(policy: Policy) -> None:
    for attr, low in (("multiplier", 1.0), ("factor", 1.0)):
        if hasattr(policy, attr) and getattr(policy, attr) < low:
            raise InputError(f"policy.{attr}", getattr(policy, attr), f"a number ≥ {low}")
    for attr in ("jitter", "randomization"):
        if hasattr(policy, attr) and not 0.0 <= getattr(policy, attr) < 1.0:
            raise InputError(f"policy.{attr}", getattr(policy, attr), "a fraction in [0, 1)")
    for attr in ("base_ms", "initial_ms"):
        if hasattr(policy, attr) and hasattr(policy, "max_ms") and getattr(policy, attr) > policy.max_ms:
            raise InputError(f"policy.{attr}", getattr(policy, attr), f"at most max_ms ({policy.max_ms})")
    if isinstance(policy, Decorrelated) and policy.base_ms <= 0:
        raise InputError("policy.base_ms", policy.base_ms, "a number > 0 for decorrelated")
    if isinstance(policy, Decorrelated) and policy.base_ms >= policy.max_ms:
        # Its states are log-spaced bins between the two: equal, there is no range (state_after divided by 0).
        raise InputError(
            "policy.base_ms",
            policy.base_ms,
            f"below max_ms ({policy.max_ms:g}) for decorrelated, whose states bin the range",
        )


@dataclass
class Backoff:
    """One client's reconnect schedule: the SDK's view of a policy (state, next delay, reset)."""

    policy: Policy
    state: int = 0
    _rng: random.Random = field(default_factory=random.Random, repr=False)

    def next_delay_ms(self) -> float:
        delay = self.policy.next_delay_ms(self.state, self._rng)
        self.state = self.policy.state_after(self.state, delay)
        return delay

    def reset(self) -> None:
        self.state = 0
