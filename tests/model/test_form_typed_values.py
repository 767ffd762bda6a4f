"""Every number field of every action form: a value refused is repeated as the operator typed it (found in
review: `0` came back as `0.0`, the number after parsing) — by the form's own ranges, by the fleet's
(add capacity's room) and by a window's order (Retry-After max under its min)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from console.errors import InputError, quoted
from console.guards import Thresholds
from console.model.actions.capacity import add_capacity_prefill_of
from console.model.actions.form import FORMS, FormField, parse_form
from console.protocol import ActionKind
from tests.guards.fleets import CAPACITY, fleet

#: A valid form of each kind: the field under test is typed over its own.
VALID = {
    ActionKind.DRAIN: {
        "rate_per_s": "50",
        "deadline_s": "600",
        "hint_min_ms": "1000",
        "hint_max_ms": "15000",
    },
    ActionKind.ROLLOUT_START: {"batch_size": "2", "interval_s": "90", "mode": "drain", "pause_cpu_pct": "75"},
    ActionKind.ADMISSION: {
        "rate_per_s": "",
        "burst": "",
        "max_connections": "",
        "retry_after_min_s": "1",
        "retry_after_max_s": "30",
    },
    ActionKind.ADD_CAPACITY: {"count": "1"},
}
NUMBER_FIELDS = [(kind, spec) for kind, specs in FORMS.items() for spec in specs if not spec.choices]

#: Add capacity judged against a fleet's room, as the console's form is (`Prefill.check`): 20 nodes of
#: a fleet of at most 30, so room for 10.
ROOM = add_capacity_prefill_of(fleet(20), dataclasses.replace(CAPACITY, max_nodes=30), Thresholds())


def _check(kind: ActionKind) -> Any:
    return ROOM.check if kind is ActionKind.ADD_CAPACITY else None


#: A number as an operator might type it: plain, with a point, an exponent, separators, a sign, spaces.
def typed_numbers() -> st.SearchStrategy[str]:
    whole = st.integers(min_value=-(10**12), max_value=10**12)
    spellings = st.one_of(
        whole.map(str),
        whole.map(lambda n: f"{n}.0"),
        whole.map(lambda n: f"{n:_}"),
        whole.map(lambda n: f"{n:,}"),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.sampled_from(
            ["0", "00", "0.0", "-0", "1e9", "2e9", "1e12", "-5", " 0 ", "nan", "inf", "1.5", "abc", ".5"]
        ),
    )
    return spellings


def _form(kind: ActionKind, name: str, text: str) -> Mapping[str, str]:
    return {**VALID[kind], name: text}


@given(st.sampled_from(NUMBER_FIELDS), typed_numbers())
def test_a_refused_number_is_repeated_as_typed(field: tuple[ActionKind, FormField], text: str) -> None:
    kind, spec = field
    try:
        parse_form(kind, None, _form(kind, spec.name, text), _check(kind))
    except InputError as error:
        assert isinstance(error.value, str), (error.field, error.value)  # the text, never the number
        if error.field == spec.name:
            assert quoted(error.value) == repr(text.strip()), str(error)
            assert str(error).startswith(f"{spec.name}: {text.strip()!r} is not allowed"), str(error)


def test_the_valid_forms_parse() -> None:
    for kind, values in VALID.items():
        parse_form(kind, None, values, _check(kind))


def test_a_count_beyond_the_fleets_room_is_repeated_as_typed() -> None:
    """The fleet's check read the count as a number: `011` came back as 11, `1,000` as 1000."""
    for text in ("011", "1,000", "0", " 12 "):
        try:
            parse_form(ActionKind.ADD_CAPACITY, None, {"count": text}, ROOM.check)
        except InputError as error:
            assert error.field == "count" and error.value == text.strip(), str(error)
            assert "room left in the fleet" in error.allowed or "[1, 10]" in error.allowed
        else:
            raise AssertionError(text)


def test_a_window_upside_down_names_both_ends_as_typed() -> None:
    """Review: min 40 over max 30 blamed the max field ("retry_after_max_s: '30' is not allowed; expected
    ≥ Retry-After min (s) (40)") even when the min was the one edited: the order is the pair's, so the
    message names both ends, as typed, and the pair."""
    for low, high in (("30.0", "5"), ("40", "30")):
        try:
            parse_form(
                ActionKind.ADMISSION,
                None,
                _form(ActionKind.ADMISSION, "retry_after_min_s", low) | {"retry_after_max_s": high},
            )
        except InputError as error:
            assert str(error) == f"Retry-After min {low} is above max {high}; expected min ≤ max"
            assert error.field == "retry_after_s"  # the pair, as the server names it: neither end alone
        else:
            raise AssertionError(f"{high} under {low} passed")
