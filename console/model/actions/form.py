"""An action's form: each kind of action's fields and their ranges (the kinds themselves are the protocol's
`ActionKind`, shared with the server), the typed form parsed into the call to send (the first bad field named
with its range), and a form's starting values (`Prefill`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from console.client.actions import route
from console.errors import InputError, MissingInput
from console.protocol import MAX_ADD_NODES, ActionKind, limits

#: The same upper bounds the server's request models carry (a billion): beyond them, a typo.
BILLION = limits.BILLION


class WindowOrderError(InputError):
    """A [min, max] pair upside down: "Retry-After min 40 is above max 30; expected min ≤ max". The order
    is the pair's, not either end's — blaming the max ("'30' is not allowed; expected ≥ Retry-After min")
    read wrong when the min was the one edited — so `field` is the pair as the server names it
    (`retry_after_s`), and the message names both ends as typed."""

    def __init__(self, field: str, low: tuple[str, str], high: tuple[str, str]) -> None:
        self.low, self.high = low, high  # (label without its unit, as typed)
        # The value as typed, as the pair travels ([min, max]): text, never the numbers parsed.
        super().__init__(field, f"[{low[1]}, {high[1]}]", f"{_end_word(low[0])} ≤ {_end_word(high[0])}")

    def _message(self) -> str:
        (low_label, low_text), (high_label, high_text) = self.low, self.high
        return f"{low_label} {low_text} is above {_end_word(high_label)} {high_text}; expected {self.allowed}"


def _end_word(label: str) -> str:
    """'Retry-After min' → 'min': the word that tells a pair's ends apart."""
    return label.rsplit(" ", 1)[-1]


def _unitless(label: str) -> str:
    """'Retry-After min (s)' → 'Retry-After min'."""
    return label.split(" (", 1)[0]


@dataclass(frozen=True)
class FormField:
    """One input of an action's form. `low`/`high` bound the value (`low_open`: strictly above `low`);
    `optional` fields may be left blank, which means `blank` (admission: unlimited, sent as null); `omitted`:
    a blank one is left out of the body — a field added to v1 that an older server refuses by name, even
    null (a rollout's drain rate: blank is the backend's rate)."""

    name: str
    label: str
    kind: type = float
    low: float = 0.0
    high: float = BILLION
    low_open: bool = False
    optional: bool = False
    choices: tuple[str, ...] = ()
    blank: str = "unlimited"
    omitted: bool = False

    def allowed(self) -> str:
        if self.choices:
            return " or ".join(self.choices)
        number = "an integer" if self.kind is int else "a number"
        low = f"> {_bound(self.low)}" if self.low_open else f"≥ {_bound(self.low)}"
        blank = f" (blank: {self.blank})" if self.optional else ""
        return f"{number} {low} and ≤ {_bound(self.high)}{blank}"

    def placeholder(self, required: bool = False) -> str:
        """The input's hint: `allowed()`, with what blank means first ("blank: unlimited") — at the end the
        field's width cut it off ("an integer ≥ 1 and ≤ 1,000,000,000 (blank:"). An optional field's upper
        bound is the protocol's billion, no operator's limit: left to the error message, it let the hint
        fit at 80 columns ("blank: unlimited, or a number > 0 and" was cut there). `required`: blank is
        refused here (`Prefill.required`: the nodes run different values), so the hint does not offer it
        and says why; the word stands for it."""
        if required:
            word = f", or {self.blank}" if self.optional else ""
            return f"the nodes differ (below): {self._number()}{word}"
        if not self.optional:
            return self.allowed()
        if self.high == BILLION and not self.choices:
            return f"blank: {self.blank}, or {self._number()}"
        return f"blank: {self.blank}, or " + self.allowed().removesuffix(f" (blank: {self.blank})")

    def _number(self) -> str:
        """ "a number > 0", "an integer ≥ 1": the kind and the lower bound (the upper one, a billion, is
        said only when exceeded)."""
        number = "an integer" if self.kind is int else "a number"
        low = f"> {_bound(self.low)}" if self.low_open else f"≥ {_bound(self.low)}"
        return f"{number} {low}"

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
        if self.optional and (not text or text.lower() == self.blank):
            return None  # (the word too: blank may be taken, a setting the nodes differ in — `required`)
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
        FormField(
            "drain_rate_per_s",
            "drain rate (closes/s/node)",
            low=limits.DRAIN_RATE_PER_S[0],
            high=limits.DRAIN_RATE_PER_S[1],
            low_open=True,
            optional=True,
            blank="backend's rate",
            omitted=True,
        ),
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
        """ "drain gw-003", "admission", "admission on n1, n2" (sent to the answering nodes: its dialogs and
        notice said "admission", as for the fleet)."""
        if self.node_id:
            return f"{self.kind.title} {self.node_id}"
        nodes = self.body.get("nodes")
        if nodes:
            return f"{self.kind.title} on " + (
                ", ".join(nodes) if len(nodes) <= 3 else f"{len(nodes):,} nodes"
            )
        return self.kind.title

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
    required: Mapping[str, str] | None = None,
) -> ActionCall:
    """The form's text as a call; the first bad field raises `InputError` naming it and its range.

    `fleet_check` (`Prefill.check`): the fleet's own limits, within the API's bounds the form's fields
    carry. It judges the values as typed before those bounds do, so a value outside both is refused in the
    fleet's words: add capacity's count 5000 said "[1, 64] (room left in the fleet: …)" and 0 said "≥ 1 and
    ≤ 10,000", a range that fleet cannot take (maintenance-window pass). Its refusal of a field repeats
    that field as typed: it judges numbers, and `011` came back as 11.

    `required` (`Prefill.required`): fields that must not be left blank, and why — an admission setting
    the nodes run differently, which blank would send as unlimited to all."""
    for name, why in (required or {}).items():
        if not values.get(name, "").strip():
            raise MissingInput(name, why)
    if fleet_check is not None:
        try:
            fleet_check(_form_body(kind, values, FormField.read))
        except InputError as error:
            if error.field not in values:
                raise
            raise InputError(error.field, values[error.field].strip(), error.allowed) from None
    return ActionCall(kind, node_id, _form_body(kind, values, FormField.parse))


def _form_body(
    kind: ActionKind, values: Mapping[str, str], parse: Callable[[FormField, str], float | int | str | None]
) -> dict[str, Any]:
    parsed: dict[str, Any] = {}
    for spec in FORMS[kind]:
        value = parse(spec, values.get(spec.name, ""))
        if value is not None or not spec.omitted:
            parsed[spec.name] = value
    pair = PAIRED_FIELDS.get(kind)
    if pair is not None:
        name, low_name, high_name = pair
        low, high = parsed.pop(low_name), parsed.pop(high_name)
        assert isinstance(low, int | float) and isinstance(high, int | float)
        if low > high:  # both ends as typed: the min said as parsed read 30 for a typed 30.0
            raise WindowOrderError(
                name,
                (_unitless(field_label(kind, low_name)), values.get(low_name, "").strip()),
                (_unitless(field_label(kind, high_name)), values.get(high_name, "").strip()),
            )
        parsed[name] = [low, high]
    return parsed


def form_text(value: float | int | None) -> str:
    """A value as a form's starting text: blank for none, a float by `:g` (30, not 30.0)."""
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Prefill:
    """The form's starting values and where they came from (shown under the form); `check`, when the
    console knows the fleet's own limits, raises `InputError` for a parsed body beyond them — as typed,
    before any big-change check (add capacity: the fleet's room, from its capacity record); `unchanged`,
    why a parsed body would change nothing in the fleet as it is when asked (admission: its settings
    already), said in the form in place of sending it, or None."""

    values: dict[str, str]
    source: str
    check: Callable[[Mapping[str, Any]], None] | None = None
    unchanged: Callable[[Mapping[str, Any]], str | None] | None = None
    required: dict[str, str] = field(default_factory=dict)  # left blank, refused: `parse_form`'s
