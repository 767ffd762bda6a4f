"""What a fleet API request body may hold: the operator's intents, read literally.

The records the fleet answers with are in `console.protocol.models`; the write side's answers in
`console.protocol.answers`. Field names are a contract: add fields freely; never rename one.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, ConfigDict, Field, Strict, StrictBool

from console.protocol import limits
from console.protocol.models import AdmissionSettings, Record, RolloutMode

# --- what a request body may hold ------------------------------------------------------------------
#
# A request is an operator's intent, so it is read literally: an unknown field (a typo: "dryrun") is
# refused rather than ignored — ignored, it would apply what was meant as a dry run — and values are not
# coerced: a bool is true or false (not "yes"), a number is a JSON number (not "100", not true). A whole
# number may come as 3.0 (what many JSON encoders write for it), as the scenario loader takes 1e6; 3.5 is
# refused, never truncated.


def whole_number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool | int):
        return int(value)  # numpy's integers, from the planners; never a bool
    return value


#: A JSON number (an int or a float; not a string, not a bool), finite (`_Request`'s allow_inf_nan).
Number = Annotated[float, Strict()]
#: A JSON whole number: 3 or 3.0; not 3.5, "3" or true.
WholeNumber = Annotated[int, Strict(), BeforeValidator(whole_number)]


@dataclass(frozen=True)
class Window:
    """Marks a [min, max] pair whose ends lie within `bounds` (each end's range is in the schema and
    checked by pydantic; min ≤ max is the guards' to judge, so the console's own planner meets it too)."""

    bounds: tuple[float, float]

    def allowed(self) -> str:
        return limits.window_text(self.bounds)


def _window(item: Any, bounds: tuple[float, float]) -> Any:
    end = Annotated[item, Field(ge=bounds[0], le=bounds[1])]
    return Annotated[tuple[end, end], Window(bounds)]


RetryAfterWindow = _window(Number, limits.RETRY_AFTER_S)
HintWindow = _window(WholeNumber, limits.HINT_MS)


class _Request(Record):
    model_config = ConfigDict(extra="forbid", frozen=False, allow_inf_nan=False)


class ClockRequest(_Request):
    """`POST /v1/sim/clock`: pause or resume the simulated fleet's clock, or change its speed."""

    paused: StrictBool | None = None
    speed: Number | None = Field(default=None, gt=0, le=100, description="fleet seconds per wall second")


# --- actions (#4 serves them; the shapes live here so every side agrees) -------------------------


class ConfirmAnswer(_Request):
    token: str = Field(max_length=200, description="the confirm_token of the 409 answer")
    typed: str | None = Field(
        default=None, max_length=200, description="for `typed`: the node id or fleet name"
    )


# Upper bounds keep every number a request may carry finite and meaningful (a week, a billion): beyond
# them a value is a typo, and the simulator's tick arithmetic must never see it. The scenario loader takes
# the same ends from console.protocol.limits.
_BILLION = limits.BILLION


class DrainRequest(_Request):
    rate_per_s: Number = Field(
        gt=limits.DRAIN_RATE_PER_S[0], le=limits.DRAIN_RATE_PER_S[1], description="closes per second"
    )
    deadline_s: Number = Field(
        ge=0, le=limits.DRAIN_DEADLINE_S[1], description="seconds until whatever remains is force-closed"
    )
    hint_ms: HintWindow = Field(description="reconnect hint window [min, max] in ms")
    dry_run: StrictBool = False
    confirm: ConfirmAnswer | None = None
    override_reason: str | None = Field(default=None, max_length=1000)


class RolloutRequest(_Request):
    batch_size: WholeNumber = Field(ge=limits.ROLLOUT_BATCH_SIZE[0], le=limits.ROLLOUT_BATCH_SIZE[1])
    interval_s: Number = Field(gt=0, le=limits.ROLLOUT_INTERVAL_S[1])
    mode: RolloutMode = RolloutMode.DRAIN
    pause_cpu_pct: Number = Field(default=75.0, gt=0, le=100)
    # Optional, added to v1 without a version change: an older server refuses it as an unknown field, so a
    # client leaves it out unless the operator asked for a rate.
    drain_rate_per_s: Number | None = Field(
        default=None,
        gt=limits.DRAIN_RATE_PER_S[0],
        le=limits.DRAIN_RATE_PER_S[1],
        description="closes per second per draining node, each drain-mode batch node; null: the backend's rate",
    )
    dry_run: StrictBool = False
    confirm: ConfirmAnswer | None = None
    override_reason: str | None = Field(default=None, max_length=1000)


class AdmissionRequest(_Request):
    # The scenario's admission table has the same ranges (console.protocol.limits); null is unlimited.
    rate_per_s: Number | None = Field(
        default=None,
        gt=0,
        le=limits.ADMISSION_RATE_PER_S[1],
        description="new connections admitted per second per node (token bucket refill); null: unlimited",
    )
    burst: WholeNumber | None = Field(
        default=None, gt=0, le=limits.ADMISSION_BURST[1], description="token bucket depth per node"
    )
    max_connections: WholeNumber | None = Field(
        default=None,
        gt=0,
        le=limits.ADMISSION_MAX_CONNECTIONS[1],
        description="connection ceiling per node; null: unlimited",
    )
    retry_after_s: RetryAfterWindow = Field(
        default=(1.0, 30.0), description="window the randomized Retry-After is drawn from, seconds"
    )
    nodes: list[str] | None = None
    dry_run: StrictBool = False
    confirm: ConfirmAnswer | None = None
    override_reason: str | None = Field(default=None, max_length=1000)

    #: The fields a request and the settings it makes share (the rest are about asking, not the setting).
    SETTINGS: ClassVar[tuple[str, ...]] = ("rate_per_s", "burst", "max_connections", "retry_after_s", "nodes")

    def settings(self) -> AdmissionSettings:
        """What the fleet runs once this request is applied."""
        return AdmissionSettings(**{name: getattr(self, name) for name in self.SETTINGS})

    @classmethod
    def restoring(cls, settings: AdmissionSettings) -> AdmissionRequest:
        """The request that puts `settings` back as they were (a PUT replaces every field)."""
        return cls(**{name: getattr(settings, name) for name in cls.SETTINGS})


#: The most nodes one add-capacity request may ask for: the simulator's own node-count bound
#: (`nodes.count` ≤ 10 000). The fleet's room and the configured per-action maximum are judged by the guard.
MAX_ADD_NODES = limits.NODE_COUNT[1]


class CapacityRequest(_Request):
    """Add capacity: provision `count` more gateway nodes (ready after the fleet's provisioning time)."""

    count: WholeNumber = Field(ge=1, le=MAX_ADD_NODES, description="nodes to add")
    dry_run: StrictBool = False
    confirm: ConfirmAnswer | None = None
    override_reason: str | None = Field(default=None, max_length=1000)


class ActionRequest(_Request):
    """Body of undrain, rollout halt and rollout resume: only the two-phase controls (all optional)."""

    dry_run: StrictBool = False
    confirm: ConfirmAnswer | None = None
    override_reason: str | None = Field(default=None, max_length=1000)


#: What an instructor may inject, and its parameters (the palette of issue #5: restart nodes, kill a node,
#: disconnect a fraction, add capacity, change the client mix). Operator actions — drain, rollout,
#: admission — are the trainee's, through the guarded API, so they are not injections. Part of the
#: protocol: the console's palette lists them without reaching into the simulator.
INJECTIONS: dict[str, str] = {
    "restart_nodes": "restart nodes abruptly: nodes=ID[,ID…] or nodes=COUNT [first=INDEX]",
    "kill_nodes": "nodes go down and stay down: nodes=ID[,ID…] or nodes=COUNT [first=INDEX]",
    "disconnect_fraction": "reset a share of every node's connections at once: fraction in (0, 1]",
    "add_nodes": "add capacity: count=N nodes, ready after the scenario's nodes.provisioning_s",
    "set_policy": "change the client mix: policy=NAME [population=NAME] [any of the policy's parameters]",
}


#: The name `drill --serve` gives its own admin token, and the one an `injection` event stands for when it
#: names nobody (a recording made before events named their instructor): the instructor, no one in particular.
UNNAMED_INSTRUCTOR = "instructor"


def named_instructor(actor: object) -> str | None:
    """The instructor an `injection` event's `actor` names, or None where it names no one in particular
    (none, or the default name): the server that writes the event and the report that reads it back
    name the same instructor — "instructor dana", never "instructor instructor"."""
    return actor if isinstance(actor, str) and actor and actor != UNNAMED_INSTRUCTOR else None


class InjectionRequest(_Request):
    """`POST /v1/sim/inject` (admin): an instructor's event in a served drill (issue #5, section 2)."""

    event: str = Field(description="restart_nodes, kill_nodes, disconnect_fraction, add_nodes, set_policy")
    params: dict[str, Any] = Field(default_factory=dict, description="the event's parameters, e.g. fraction")
