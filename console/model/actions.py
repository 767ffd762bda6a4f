"""Guarded actions as the console sees them: which call each key makes, its form, and what the answer means.

Pure: no I/O, no clocks. The server judges (issue #4): this module only shapes the request, validates the
operator's typing before anything is sent (naming the field and its range, as the server would), reads the
server's answer into an `ActionAnswer`, and says what would pass when a guard blocks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from console.alarms.base import first_named
from console.client.actions import ActionAnswer, Reply, route
from console.errors import InputError
from console.guards import FleetCapacity, Thresholds, nodes_for_headroom, plan_drain
from console.guards.add_capacity import check_count
from console.guards.capacity import node_room
from console.guards.drain import HINT_START_MS, margin_kept_pct, planned_hint_ms
from console.guards.fleet import ROTATION_MOVE
from console.guards.rollout import HALTABLE, RESUMABLE
from console.protocol import (
    MAX_ADD_NODES,
    AdmissionSettings,
    Check,
    FleetSnapshot,
    Frame,
    NodeState,
    NodeStatus,
    RolloutStatus,
    Source,
    UnavailableReason,
    Verdict,
    VerdictLevel,
    limits,
)

#: The same upper bounds the server's request models carry (a billion): beyond them, a typo.
BILLION = limits.BILLION


class ActionKind(StrEnum):
    """As a verdict names the action (and the audit log, and a recording)."""

    DRAIN = "drain"
    UNDRAIN = "undrain"
    ROLLOUT_START = "rollout_start"
    ROLLOUT_HALT = "rollout_halt"
    ROLLOUT_RESUME = "rollout_resume"
    ADMISSION = "admission"
    ADD_CAPACITY = "add_capacity"

    @property
    def needs_node(self) -> bool:
        return self in (ActionKind.DRAIN, ActionKind.UNDRAIN)

    @property
    def title(self) -> str:
        return _TITLES[self]


_TITLES = {
    ActionKind.DRAIN: "drain",
    ActionKind.UNDRAIN: "undrain",
    ActionKind.ROLLOUT_START: "start rollout",
    ActionKind.ROLLOUT_HALT: "halt rollout",
    ActionKind.ROLLOUT_RESUME: "resume rollout",
    ActionKind.ADMISSION: "admission",
    ActionKind.ADD_CAPACITY: "add capacity",
}


@dataclass(frozen=True)
class FormField:
    """One input of an action's form. `low`/`high` bound the value (`low_open`: strictly above `low`);
    `optional` fields may be left blank (admission: blank = unlimited)."""

    name: str
    label: str
    kind: type = float
    low: float = 0.0
    high: float = BILLION
    low_open: bool = False
    optional: bool = False
    choices: tuple[str, ...] = ()

    def allowed(self) -> str:
        if self.choices:
            return " or ".join(self.choices)
        number = "an integer" if self.kind is int else "a number"
        low = f"> {_bound(self.low)}" if self.low_open else f"≥ {_bound(self.low)}"
        blank = " (blank: unlimited)" if self.optional else ""
        return f"{number} {low} and ≤ {_bound(self.high)}{blank}"

    def placeholder(self) -> str:
        """The input's hint: `allowed()`, with "blank: unlimited" first — at the end the field's width cut
        it off ("an integer ≥ 1 and ≤ 1,000,000,000 (blank:"). An optional field's upper bound is the
        protocol's billion, no operator's limit: left to the error message, it let the hint fit at 80
        columns ("blank: unlimited, or a number > 0 and" was cut there)."""
        if not self.optional:
            return self.allowed()
        if self.high == BILLION and not self.choices:
            number = "an integer" if self.kind is int else "a number"
            low = f"> {_bound(self.low)}" if self.low_open else f"≥ {_bound(self.low)}"
            return f"blank: unlimited, or {number} {low}"
        return "blank: unlimited, or " + self.allowed().removesuffix(" (blank: unlimited)")

    def parse(self, text: str) -> float | int | str | None:
        value = self.read(text)
        if not isinstance(value, int | float):
            return value
        too_low = value <= self.low if self.low_open else value < self.low
        if too_low or value > self.high or (isinstance(value, float) and not math.isfinite(value)):
            raise InputError(self.name, text.strip(), self.allowed())
        return value

    def read(self, text: str) -> float | int | str | None:
        """The value as typed, of the field's kind, its range not yet judged."""
        text = text.strip()
        if self.choices:
            if text not in self.choices:
                raise InputError(self.name, text, self.allowed())
            return text
        if not text and self.optional:
            return None
        try:
            return self.kind(text.replace("_", "").replace(",", ""))
        except ValueError:
            raise InputError(self.name, text, self.allowed()) from None


def _bound(value: float) -> str:
    """1000000000 as 1,000,000,000, not 1e+09: a range an operator reads at a glance."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


def field_label(kind: ActionKind, name: str) -> str:
    """The form's label for a field the server or the parser named (its own name when the form has none)."""
    return next((spec.label for spec in FORMS[kind] if spec.name == name), name)


FORMS: dict[ActionKind, tuple[FormField, ...]] = {
    ActionKind.DRAIN: (
        FormField("rate_per_s", "rate (closes/s)", low_open=True),
        FormField("deadline_s", "deadline (s)", high=limits.DRAIN_DEADLINE_S[1]),
        FormField("hint_min_ms", "hint min (ms)", int, high=limits.HINT_MS[1]),
        FormField("hint_max_ms", "hint max (ms)", int, high=limits.HINT_MS[1]),
    ),
    ActionKind.UNDRAIN: (),
    ActionKind.ROLLOUT_START: (
        FormField("batch_size", "batch (nodes)", int, low=1, high=limits.ROLLOUT_BATCH_SIZE[1]),
        FormField("interval_s", "interval (s)", low_open=True, high=limits.ROLLOUT_INTERVAL_S[1]),
        FormField("mode", "mode", str, choices=("drain", "abrupt")),
        FormField("pause_cpu_pct", "pause at CPU %", low_open=True, high=100),
    ),
    ActionKind.ROLLOUT_HALT: (),
    ActionKind.ROLLOUT_RESUME: (),
    ActionKind.ADMISSION: (
        FormField("rate_per_s", "rate (new conns/s per node)", low_open=True, optional=True),
        FormField("burst", "burst", int, low=1, optional=True),
        FormField("max_connections", "ceiling (conns per node)", int, low=1, optional=True),
        FormField("retry_after_min_s", "Retry-After min (s)", high=limits.RETRY_AFTER_S[1]),
        FormField("retry_after_max_s", "Retry-After max (s)", high=limits.RETRY_AFTER_S[1]),
    ),
    ActionKind.ADD_CAPACITY: (FormField("count", "nodes to add", int, low=1, high=MAX_ADD_NODES),),
}

#: Form fields that travel as one [min, max] pair in the request body.
PAIRED_FIELDS = {
    ActionKind.DRAIN: ("hint_ms", "hint_min_ms", "hint_max_ms"),
    ActionKind.ADMISSION: ("retry_after_s", "retry_after_min_s", "retry_after_max_s"),
}


@dataclass(frozen=True)
class ActionCall:
    """One call of the fleet API's write side: what to send, where."""

    kind: ActionKind
    node_id: str | None
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def method(self) -> str:
        return route(self.kind.value, self.node_id)[0]

    @property
    def path(self) -> str:
        return route(self.kind.value, self.node_id)[1]

    def describe(self) -> str:
        return f"{self.kind.title} {self.node_id}" if self.node_id else self.kind.title

    def with_controls(
        self, *, dry_run: bool = False, token: str | None = None, typed: str | None = None
    ) -> ActionCall:
        body = {k: v for k, v in self.body.items() if k not in ("dry_run", "confirm")}
        if dry_run:
            body["dry_run"] = True
        if token is not None:
            body["confirm"] = {"token": token, "typed": typed}
        return ActionCall(self.kind, self.node_id, body)


def parse_form(
    kind: ActionKind,
    node_id: str | None,
    values: Mapping[str, str],
    fleet_check: Callable[[Mapping[str, Any]], None] | None = None,
) -> ActionCall:
    """The form's text as a call; the first bad field raises `InputError` naming it and its range.

    `fleet_check` (`Prefill.check`): the fleet's own limits, within the API's bounds the form's fields
    carry. It judges the values as typed before those bounds do, so a value outside both is refused in the
    fleet's words: add capacity's count 5000 said "[1, 64] (room left in the fleet: …)" and 0 said "≥ 1 and
    ≤ 10,000", a range that fleet cannot take (maintenance-window pass)."""
    if fleet_check is not None:
        fleet_check(_form_body(kind, values, FormField.read))
    return ActionCall(kind, node_id, _form_body(kind, values, FormField.parse))


def _form_body(
    kind: ActionKind, values: Mapping[str, str], parse: Callable[[FormField, str], float | int | str | None]
) -> dict[str, Any]:
    parsed = {spec.name: parse(spec, values.get(spec.name, "")) for spec in FORMS[kind]}
    pair = PAIRED_FIELDS.get(kind)
    if pair is not None:
        name, low_name, high_name = pair
        low, high = parsed.pop(low_name), parsed.pop(high_name)
        assert isinstance(low, int | float) and isinstance(high, int | float)
        if low > high:
            raise InputError(
                high_name, values.get(high_name, ""), f"≥ {field_label(kind, low_name)} ({low:g})"
            )
        parsed[name] = [low, high]
    return parsed


def _text(value: float | int | None) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Prefill:
    """The form's starting values and where they came from (shown under the form); `check`, when the
    console knows the fleet's own limits, raises `InputError` for a parsed body beyond them — as typed,
    before any big-change check (add capacity: the fleet's room, from its capacity record)."""

    values: dict[str, str]
    source: str
    check: Callable[[Mapping[str, Any]], None] | None = None


#: The drain planner's `limited_by`, as the form says it (console.guards.drain._safe_rate): its names are
#: the code's, and "limited by survivor_cpu" was read at 4 a.m.
PLAN_LIMITS = {
    "survivor_cpu": "the busiest survivor's CPU",
    "drain_pacing": "the survivors' spare admission",
    "hint_reach": "the fleet's longest reconnect hint",
    "no_survivors": "no node left in rotation",
}


#: The move when no drain rate is safe (hot or full survivors), where the fleet can grow or does not say…
CALM_MOVE = "add capacity or wait for the fleet to calm"
#: …and where it says it cannot (`room_nodes` 0: it adds no nodes, or is at its most): an add is refused.
NO_ROOM_CALM_MOVE = "wait for the fleet to calm (this fleet cannot add capacity)"


def calm_move(room_nodes: object) -> str:
    """What to do when no drain rate is safe, as the fleet's room says (`room_nodes` of a drain plan or a
    drain verdict's projections: `console.guards.capacity.snapshot_room`): "add capacity" only with room; an
    older server's plan, which does not say, keeps it."""
    return NO_ROOM_CALM_MOVE if room_nodes == 0 else CALM_MOVE


#: What to do when a plan has no rate, by its limit (`no_rate_text`): capacity helps hot or full survivors
#: (where the fleet can grow: `calm_move`), not a fleet with none left in rotation (the guard's
#: `nodes_in_rotation_after` says the same move).
NO_RATE_MOVES = {
    "survivor_cpu": "any drain is blocked; {calm}",
    "drain_pacing": "any drain is blocked; {calm}",
    # A hint the fleet cannot give is not widened by capacity, and its narrow window asks for confirmation
    # (hint_window_ms), not a block.
    "hint_reach": "adding capacity would not widen it: a fleet whose hints reach further would, or a smaller "
    "hint_window_min_ms in [thresholds]",
    "no_survivors": f"any drain is blocked; {ROTATION_MOVE}",
}


def plan_limit(plan: Mapping[str, Any]) -> str:
    """What limits a drain plan's rate, in the operator's words (a newer server's limit: its own name)."""
    key = str(plan.get("limited_by", "?"))
    return PLAN_LIMITS.get(key, key)


def plan_cpu_margin_pct(plan: Mapping[str, Any]) -> float:
    """The CPU points the plan keeps the busiest survivor under the pause line, where that margin set its
    rate (limited by the survivors' CPU, `margin_kept_pct`); 0 otherwise, and from a server whose plan
    does not say."""
    return margin_kept_pct(str(plan.get("limited_by")), float(plan.get("cpu_margin_pct") or 0.0))


def rate_basis_text(cpu_margin_pct: float) -> str:
    """What a planned or suggested drain rate is: "largest safe rate less a 5-point CPU margin" (the margin
    that set it, `console.guards.drain.rate_basis`), or the largest safe rate itself. Said alike by the
    drain form, `stormdeck plan drain` and a refused drain's "what would pass"."""
    less = f" less a {cpu_margin_pct:g}-point CPU margin" if cpu_margin_pct > 0 else ""
    return f"largest safe rate{less}"


def keeps_margin_text(cpu_margin_pct: float) -> str:
    return f"keeps the busiest survivor's CPU {cpu_margin_pct:g} points under the pause line"


def plan_basis(plan: Mapping[str, Any]) -> str:
    """What a drain plan's rate is, as the form and `stormdeck plan drain` say it: "largest safe rate less
    a 5-point CPU margin, limited by the busiest survivor's CPU" — the rate on the pause line itself was
    typed at 75.1 % a few seconds after a real fleet's plan (fleet up), so the planner keeps a margin."""
    return f"{rate_basis_text(plan_cpu_margin_pct(plan))}, limited by {plan_limit(plan)}"


def no_rate_text(plan: Mapping[str, Any]) -> str:
    """Why a plan has no rate, naming the limit that left no room (`plan drain` said "no spare admission or
    CPU" when only the CPU was short). Out of spare admission any drain is blocked; within the planner's CPU
    margin of the pause line a slow drain may still pass now, but no rate keeps the margin — not said
    blocked. With no node left in rotation, or hints too short for any window, capacity is not the move:
    each says its own. Said alike by the drain form and `stormdeck plan drain`."""
    margin = plan_cpu_margin_pct(plan)
    calm = calm_move(plan.get("room_nodes"))
    if margin > 0:
        return f"no safe rate now (no rate {keeps_margin_text(margin)}) — {calm}"
    key = str(plan.get("limited_by", "?"))
    # A newer server's limit: named, and no remedy guessed for it (its verdict names what would pass).
    move = NO_RATE_MOVES.get(key, "a drain's verdict says what would pass").replace("{calm}", calm)
    return f"no safe rate now ({_no_rate_why(key, plan)}) — {move}"


def _no_rate_why(key: str, plan: Mapping[str, Any]) -> str:
    """The limit that left no rate, where its name alone does not say it."""
    if key == "no_survivors":
        return "no node would be left in rotation to take its clients"
    if key == "hint_reach":
        # At rate 0 the plan's hint is the fleet's whole reach from HINT_START_MS (`planned_hint_ms`): too
        # narrow for the guard's minimum window at any rate (`_hint_reach_rate`).
        low, high = (int(ms) for ms in plan["hint_ms"])
        return (
            f"the fleet's longest reconnect hint, {high:,} ms, leaves no window from {low:,} ms as wide as "
            "hint_window_min_ms"
        )
    return f"limited by {plan_limit(plan)}"


def no_rate_note(plan: Mapping[str, Any], source: str) -> str:
    return f"{source}: {no_rate_text(plan)}"


def drain_prefill_from_plan(plan: Mapping[str, Any], source: str) -> Prefill:
    """From a drain plan (the server's `drain-plan`, or `console.guards.plan_drain` as a dict)."""
    low, high = plan["hint_ms"]
    rate = float(plan["rate_per_s"])
    note = f"{source}: {plan_basis(plan)}"
    if rate <= 0:
        # No rate at all, not a token one: 0.1 closes/s read as the planner's suggestion, and was blocked.
        note = no_rate_note(plan, source)
    return Prefill(
        {
            # The planned rate however slow (a floor above it would pre-fill a refused drain); the form asks
            # for one when none is safe.
            "rate_per_s": _text(rate) if rate > 0 else "",
            "deadline_s": _text(float(plan["deadline_s"])),
            "hint_min_ms": str(int(low)),
            "hint_max_ms": str(int(high)),
        },
        note,
    )


@dataclass(frozen=True)
class DrainHintRule:
    """The drain planner's hint window for a rate (`console.guards.drain.planned_hint_ms`), for the form
    to re-derive a hint the operator has not touched when they change the rate: the planner's window
    for its own rate failed the server's hint_window_ms check at theirs (1000:2000 at 833 closes/s)."""

    thresholds: Thresholds
    hint_max_ms: int = 0  # the fleet's longest hint (FleetCapacity.hint_max_ms); 0: none

    def for_rate(self, rate_per_s: float) -> tuple[int, int]:
        return planned_hint_ms(rate_per_s, self.thresholds, self.hint_max_ms)

    def describe(self) -> str:
        t = self.thresholds
        cap = f", ≤ {self.hint_max_ms:,} ms (the fleet's longest hint)" if self.hint_max_ms else ""
        window = f"max({t.hint_window_min_ms:,.0f}, 1000 × rate ÷ {t.hint_spread_per_s_max:g})"
        return f"hint min {HINT_START_MS:,}, max {HINT_START_MS:,} + {window} ms{cap}"


def local_drain_prefill(
    frame: Frame, fleet: str, node_id: str, capacity: FleetCapacity, thresholds: Thresholds
) -> Prefill:
    """The drain planner run here, over the newest frame, when the server offers no plan."""
    plan = plan_drain(FleetSnapshot.of_frame(frame, fleet, Source.SIMULATOR), capacity, [node_id], thresholds)
    return drain_prefill_from_plan(
        {
            "rate_per_s": plan.rate_per_s,
            "deadline_s": plan.deadline_s,
            "hint_ms": plan.hint_ms,
            "limited_by": plan.limited_by,
            "cpu_margin_pct": plan.cpu_margin_pct,
            "room_nodes": plan.room_nodes,
        },
        "the console's drain planner",
    )


def fallback_drain_prefill(connections: int, thresholds: Thresholds) -> Prefill:
    """No planner at hand: the rate that empties the node within the drain window (interview: 10 min)."""
    window_s = thresholds.drain_window_s
    rate = max(math.ceil(connections / window_s), 1)
    return Prefill(
        {
            "rate_per_s": str(rate),
            "deadline_s": _text(window_s),
            "hint_min_ms": "1000",
            "hint_max_ms": str(1000 + int(max(thresholds.hint_window_min_ms, 14_000))),
        },
        "no planner: the rate that empties the node within the drain window",
    )


def rollout_prefill(rollout: RolloutStatus | None, thresholds: Thresholds) -> Prefill:
    batch = rollout.batch_size if rollout is not None and rollout.batch_size else 2
    return Prefill(
        {
            "batch_size": str(batch),
            "interval_s": "90",  # the outage seed's cadence; the guards judge it against headroom
            "mode": "drain",
            "pause_cpu_pct": _text(float(thresholds.cpu_pause_pct)),
        },
        "drain mode pauses at the CPU line (outage seed: 75 %)",
    )


def admission_prefill(admission: AdmissionSettings | None) -> Prefill:
    if admission is None:
        return Prefill({"retry_after_min_s": "1", "retry_after_max_s": "30"}, "no admission settings seen")
    low, high = admission.retry_after_s
    return Prefill(
        {
            "rate_per_s": _text(admission.rate_per_s),
            "burst": _text(admission.burst),
            "max_connections": _text(admission.max_connections),
            "retry_after_min_s": _text(float(low)),
            "retry_after_max_s": _text(float(high)),
        },
        "the fleet's admission settings now",
    )


def add_capacity_prefill(
    frame: Frame | None, fleet: str, capacity: FleetCapacity | None, thresholds: Thresholds
) -> Prefill:
    """The nodes that would bring headroom back to the budget once ready (the outage seed: provision
    35 %), from the newest frame; one node when the console knows no capacity record."""
    if frame is None or capacity is None:
        return Prefill({"count": "1"}, "no capacity record here: the verdict shows the headroom then")
    return add_capacity_prefill_of(
        FleetSnapshot.of_frame(frame, fleet, Source.SIMULATOR), capacity, thresholds
    )


def add_capacity_prefill_of(
    snapshot: FleetSnapshot, capacity: FleetCapacity, thresholds: Thresholds
) -> Prefill:
    """`add_capacity_prefill` over a snapshot (`GET /v1/fleet`: what `act add-capacity` checks against)."""
    needed = nodes_for_headroom(snapshot, capacity, thresholds.headroom_min_pct)

    def room(body: Mapping[str, Any]) -> None:
        check_count(snapshot, capacity, int(body["count"]), thresholds)

    budget = f"{thresholds.headroom_min_pct:g} %"
    now = f"now {snapshot.totals.headroom_pct:.0f} %"
    # Nodes already provisioning count once ready: say so, or "at the budget" contradicts the gauge beside it.
    provisioning = sum(node.state is NodeState.PROVISIONING for node in snapshot.nodes)
    coming = f"the {provisioning} node{'s' if provisioning != 1 else ''} already provisioning"
    if not needed and provisioning:
        return Prefill(
            {"count": "1"}, f"headroom reaches the {budget} budget once {coming} are ready ({now})", room
        )
    if not needed:
        return Prefill({"count": "1"}, f"headroom already meets the {budget} budget ({now})", room)
    beyond = f", beyond {coming}" if provisioning else ""
    return Prefill(
        {"count": str(needed)}, f"the nodes that bring headroom to {budget} once ready{beyond} ({now})", room
    )


# --- the server's answer ----------------------------------------------------------------------------


class Outcome(StrEnum):
    APPLIED = "applied"
    DRY_RUN = "dry_run"
    NEEDS_CONFIRMATION = "needs_confirmation"
    BLOCKED = "blocked"
    TYPED_MISMATCH = "typed_mismatch"
    REFUSED = "refused"  # bad input, a wrong role, a read-only backend, a transport failure


@dataclass(frozen=True)
class ActionReading:
    """What the console makes of the server's answer: the outcome, the message, the verdict."""

    outcome: Outcome
    status: int
    message: str
    verdict: Verdict | None = None
    field_name: str | None = None
    overridden: bool = False  # a blocked action an admin forced (ActionResult.overridden)
    audit_seq: int | None = None  # the server's audit record of the attempt

    @property
    def forbidden(self) -> bool:
        return self.status in (401, 403)

    @property
    def refused_input(self) -> bool:
        """The server refused the values (422: out of its range, or the fleet refused them): the form's
        business, not a verdict's."""
        return self.outcome is Outcome.REFUSED and self.status == 422 and self.verdict is None


_OUTCOMES = {
    Reply.APPLIED: Outcome.APPLIED,
    Reply.DRY_RUN: Outcome.DRY_RUN,
    Reply.NEEDS_CONFIRMATION: Outcome.NEEDS_CONFIRMATION,
    Reply.BLOCKED: Outcome.BLOCKED,
    Reply.BAD_INPUT: Outcome.REFUSED,
    Reply.DENIED: Outcome.REFUSED,
}


def read_answer(answer: ActionAnswer) -> ActionReading:
    """The fleet API's answer, classified once by the client (`console.client.actions`), read for the
    dialogs: the verdict parsed, its confirm_token attached, a typed name the server refused told apart."""
    body = answer.body
    raw_verdict = answer.verdict
    verdict = Verdict.model_validate(raw_verdict) if raw_verdict is not None else None
    if verdict is not None and verdict.confirm_token is None and body.get("confirm_token"):
        verdict = verdict.model_copy(update={"confirm_token": body["confirm_token"]})
    message = str(body.get("message") or body.get("detail") or body.get("title") or f"HTTP {answer.status}")
    outcome = _OUTCOMES[answer.reply]
    if answer.reply is Reply.BAD_INPUT and answer.problem_type == "typed-mismatch":
        outcome = Outcome.TYPED_MISMATCH
    seq = body.get("audit_seq")
    return ActionReading(
        outcome,
        answer.status,
        message,
        verdict,
        body.get("field"),
        overridden=bool(body.get("overridden")),
        audit_seq=seq if isinstance(seq, int) else None,
    )


def pointless(kind: ActionKind, node: NodeStatus | None, rollout: RolloutStatus | None = None) -> str | None:
    """Why a drain or undrain of `node`, or a halt or resume of `rollout`, could only be refused (the server
    refuses a drain of a node out of rotation, an undrain of one in it, a halt of a rollout neither running
    nor paused, a resume of one neither paused nor halted), or None. Not a verdict — the server judges —
    only sparing the operator a form whose answer is known, and the audit log a failed action. A rollout
    start on a fleet that says it cannot start one (`rollout_unavailable`: `fleet up`'s nodes have no
    restart command) is answered with the fleet's words, which say what to do."""
    unavailable = rollout_unavailable(rollout) if kind is ActionKind.ROLLOUT_START else None
    if unavailable is not None:
        return f"this fleet cannot start a rollout — {unavailable}; nothing sent"
    if rollout is not None and kind is ActionKind.ROLLOUT_HALT and rollout.state not in HALTABLE:
        return f"the rollout is {rollout.state.value}: only a running or paused rollout halts; nothing sent"
    if rollout is not None and kind is ActionKind.ROLLOUT_RESUME and rollout.state not in RESUMABLE:
        return f"the rollout is {rollout.state.value}: only a paused or halted rollout resumes; nothing sent"
    if node is None:
        return None
    if kind is ActionKind.UNDRAIN and node.state not in (NodeState.DRAINING, NodeState.DRAINED):
        return f"{node.id} is {node.state.value}: only a draining or drained node undrains"
    if kind is ActionKind.DRAIN and node.state is not NodeState.READY:
        hint = " (u undrains it)" if node.state in (NodeState.DRAINING, NodeState.DRAINED) else ""
        return f"{node.id} is {node.state.value}: only a ready node drains{hint}"
    return None


#: What a fleet lacks to roll out, by `rollout.unavailable_reason`; a reason not here (a newer server's) is
#: said by its name (`rollout_lacks`).
_LACKS = {UnavailableReason.NO_RESTART_COMMAND: "no restart command"}


def rollout_lacks(reason: str) -> str:
    """What a fleet lacks to roll out, named from its typed `unavailable_reason`: "no restart command"."""
    return _LACKS.get(reason, reason.replace("_", " "))


def rollout_unavailable(rollout: RolloutStatus | None) -> str | None:
    """Why this fleet cannot start a rollout whatever the guards say, as its frame says it: the server's
    words (`unavailable`: they say what to do), else its typed reason named; None where it can, or does not
    say. One rule for refusing R at the key (`pointless`) and for not offering it (`console.model.offered`):
    a start hidden from the footer opened its form when only the typed reason was sent."""
    if rollout is None:
        return None
    if rollout.unavailable:
        return rollout.unavailable
    return rollout_lacks(rollout.unavailable_reason) if rollout.unavailable_reason else None


def cannot_add_capacity(max_nodes: int | None, nodes: Sequence[NodeStatus]) -> str | None:
    """Why an add of capacity could only be refused here, and what this fleet can do instead; None where it
    can add, or its frame does not say (`max_nodes` null: an older server). `nodes`: every node the frame
    lists, down and provisioning too, as the add guard counts the room. A controller over a nodes file adds
    no nodes (`max_nodes` 0): its c opened a form pre-filled with the nodes headroom wanted, and only the
    submit was refused. Its down nodes are started again where they run (node_down's way on there); a
    fleet at its most, `fleet up` at 16, started its down nodes itself, so that is not said there."""
    room = node_room(max_nodes, len(nodes))
    why_not = room.why_not() if room is not None else None
    if room is None or why_not is None:
        return None
    moves: list[str] = []
    down = [node.id for node in nodes if node.state is NodeState.DOWN]
    if down and room.max_nodes <= 0:
        where = "it runs" if len(down) == 1 else "they run"
        moves.append(f"start {first_named(down)} again where {where}")
    out = [node.id for node in nodes if node.state in (NodeState.DRAINING, NodeState.DRAINED)]
    if out:  # capacity this fleet still has: headroom counts the nodes in rotation
        moves.append(f"undrain {first_named(out)}")
    moves.append("shed load with admission")
    said = moves[0] if len(moves) == 1 else ", ".join(moves[:-1]) + f", or {moves[-1]}"
    return f"this fleet cannot add capacity — it {why_not}: {said}; nothing sent"


def check_mark(check: Check) -> str:
    """pass; FAIL for a check that raises the verdict's level; note for one that only warns (its level is
    ok): 'FAIL' under an 'OK' verdict read as a contradiction."""
    if check.ok:
        return "pass"
    return "note" if check.level in (None, VerdictLevel.OK) else "FAIL"


def what_would_pass(verdict: Verdict) -> list[str]:
    """For a blocked or typed verdict: the limits of the failing checks that set its level, and the drain
    rate to type when one is known."""
    hints = []
    for check in verdict.checks:
        if check.ok or check.level is not verdict.level:
            continue
        hints.append(f"{check.name} {limit_text(check)} (now {_fmt(check.value)})")
    rate_hint = _drain_rate_hint(verdict.projections)
    if rate_hint:
        hints.append(rate_hint)
    return hints


def _drain_rate_hint(projections: Mapping[str, Any]) -> str | None:
    """The rate a refused drain should be typed at: the verdict's suggestion, the planner's rate a CPU margin
    under the pause line — the largest safe rate on the line, typed back seconds later on a live fleet,
    was refused again. From an older server, which suggests none: the largest safe rate. None for a drain
    that leaves no survivor: no rate helps, and "add capacity or wait for the fleet to calm" buried the
    reason its verdict names (`nodes_in_rotation_after`: undrain a node first)."""
    safe = projections.get("largest_safe_rate_per_s")
    if not isinstance(safe, int | float) or projections.get("survivors") == 0:
        return None
    calm = calm_move(projections.get("room_nodes"))
    if safe <= 0:
        return f"no drain rate is safe now: {calm}"
    suggested = projections.get("suggested_rate_per_s")
    if not isinstance(suggested, int | float):
        return f"a drain at ≤ {safe:g} closes/s per node passes these checks"
    margin = float(projections.get("suggested_cpu_margin_pct") or 0.0)
    if suggested > 0:
        return f"a drain at ≤ {suggested:g} closes/s per node ({rate_basis_text(margin)}) passes these checks"
    # Within the margin of the line already: a slow drain passes at this second's CPU, none keeps the margin.
    return (
        f"no drain rate {keeps_margin_text(margin)} (≤ {safe:g} closes/s per node passes at this second's CPU): "
        f"{calm}"
    )


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return "—" if value is None else str(value)


def format_value(value: object) -> str:
    return _fmt(value)


def limit_text(check: Check) -> str:
    """A check's limit as shown: a number with its bound (≤, ≥), a limit in words as it is ("not in the
    batch under way" read "≤ not in the batch under way"), none as —."""
    if check.limit is None or isinstance(check.limit, str):
        return _fmt(check.limit)
    return f"{'≤' if check.bound == 'max' else '≥'} {_fmt(check.limit)}"


def typed_matches(verdict: Verdict, typed: str, fallback: str | None) -> bool:
    expected = verdict.typed_expected or fallback
    return expected is not None and typed.strip() == expected


#: Why the console offers no actions (`actions_disabled_reason`).
READ_ONLY = "read-only console"
NO_FLEET_API = "no fleet API"
VIEWER_TOKEN = "a viewer's token: it may watch, not act"
REFUSED_403 = "the server refused (403): a viewer token?"
#: The same in fewer words, for a narrow box's border: the rollout box's holds 26 cells at 80×24.
_BRIEF_REASONS = {VIEWER_TOKEN: "viewer token: watch only", REFUSED_403: "server refused (403)"}


def actions_disabled_reason(
    read_only: bool, can_act: bool, refused: str | None, role: str | None = None
) -> str | None:
    """Why the console offers no actions (short: it goes in a box's border), or None when it does. Never
    hidden: the screens show it, and a key press says it again. `role`: the stream's hello's, so a
    viewer's console says so from the start instead of after its first refused action."""
    if read_only:
        return READ_ONLY
    if not can_act:
        return NO_FLEET_API
    if role == "viewer":
        return VIEWER_TOKEN
    return refused


def brief_reason(reason: str) -> str:
    """`reason` in fewer words where it has them (`_BRIEF_REASONS`), else as it is."""
    return _BRIEF_REASONS.get(reason, reason)


def forecast_series(forecast: Mapping[str, Any] | None) -> list[tuple[str, list[float], list[float]]]:
    """(label, without the action, with it) for each forecast series the server sent (console.sim.forecast)."""
    if not forecast:
        return []
    without, acted = forecast.get("without_action") or {}, forecast.get("with_action") or {}
    rows = []
    for key, label in (
        ("connections", "connections"),
        ("cpu_max_pct_series", "max CPU %"),
        ("attempts_per_s", "attempts/s"),
    ):
        a, b = without.get(key), acted.get(key)
        if isinstance(a, list) and isinstance(b, list) and a and b:
            rows.append((label, [float(x) for x in a], [float(x) for x in b]))
    return rows
