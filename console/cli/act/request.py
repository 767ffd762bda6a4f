"""The request each action sends, built from its options, and checked by the request's own model before it
is sent: an option out of range is refused naming the option and the value as typed."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any, get_args

from console.cli.checks import as_typed, check_finite, range_text
from console.client.actions import route
from console.errors import InputError
from console.protocol import limits
from console.protocol.requests import Window

if TYPE_CHECKING:
    from pydantic import BaseModel


# --- building requests ------------------------------------------------------------------------------------


def _window(text: str, option: str, kind: type) -> list[Any]:
    low, sep, high = text.partition(":")
    allowed = "MIN:MAX, two finite numbers with a colon, e.g. 1000:15000"
    try:
        if not sep:
            raise ValueError
        window = [kind(low), kind(high)]
    except ValueError:
        raise InputError(option, text, allowed) from None
    if not all(math.isfinite(value) for value in window):  # nan:inf parse as floats but are no JSON
        raise InputError(option, text, allowed)
    return window


def _controls(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"dry_run": bool(args.dry_run)}
    if args.override_reason:
        body["override_reason"] = args.override_reason
    return body


def _drain(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    body = {
        "rate_per_s": check_finite("--rate", args.rate),
        "deadline_s": check_finite("--deadline", args.deadline),
        "hint_ms": _window(args.hint, "--hint", int),
    }
    return (*route("drain", args.node), body | _controls(args))


def _undrain(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    return (*route("undrain", args.node), _controls(args))


def _rollout_start(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    body = {
        "batch_size": args.batch_size,
        "interval_s": check_finite("--interval", args.interval),
        "mode": args.mode,
        "pause_cpu_pct": check_finite("--pause-cpu", args.pause_cpu),
    }
    if args.drain_rate is not None:  # left out, not null: an older server refuses a field it does not know
        body["drain_rate_per_s"] = check_finite("--drain-rate", args.drain_rate)
    return (*route("rollout_start"), body | _controls(args))


def _rollout_step(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    return (*route(f"rollout_{args.step}"), _controls(args))


UNLIMITED = "unlimited"


def _limit(text: str | None, option: str, kind: type, high: float) -> float | int | None:
    """A limit as typed: a number in (0, high] — the API's range — or `unlimited` (null: no limit). nan and
    inf are no JSON; a limit out of range is refused here, before the big-change check would offer to
    send it with --yes."""
    if text is None or text.strip().lower() == UNLIMITED:
        return None
    allowed = f"{'an integer' if kind is int else 'a finite number'} in {range_text((0, high), True)}, or {UNLIMITED}"
    try:
        value = kind(text)
    except ValueError:
        raise InputError(option, text, allowed) from None
    if not (math.isfinite(value) and 0 < value <= high):  # (said as typed: '0', not 0.0)
        raise InputError(option, text, allowed)
    return value


#: The fields of an admission request that its options set (the rest: `nodes` and the two-phase controls).
ADMISSION_FIELDS = ("rate_per_s", "burst", "max_connections", "retry_after_s")


def _admission(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    """Only the options given: `_keep_current_admission` fills the others in before sending."""
    body: dict[str, Any] = {}
    if args.rate is not None:
        body["rate_per_s"] = _limit(args.rate, "--rate", float, limits.ADMISSION_RATE_PER_S[1])
    if args.burst is not None:
        body["burst"] = _limit(args.burst, "--burst", int, limits.ADMISSION_BURST[1])
    if args.max_connections is not None:
        body["max_connections"] = _limit(
            args.max_connections, "--max-connections", int, limits.ADMISSION_MAX_CONNECTIONS[1]
        )
    if args.retry_after is not None:
        body["retry_after_s"] = _window(args.retry_after, "--retry-after", float)
    if args.nodes:
        body["nodes"] = [node.strip() for node in args.nodes.split(",") if node.strip()]
    return (*route("admission"), body | _controls(args))


def _add_capacity(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    return (*route("add_capacity"), {"count": args.count} | _controls(args))


# --- checking a request before it is sent ----------------------------------------------------------------

#: The option that sets each request field: the API names fields, the operator typed options.
OPTION_OF = {
    "rate_per_s": "--rate",
    "deadline_s": "--deadline",
    "hint_ms": "--hint",
    "batch_size": "--batch-size",
    "interval_s": "--interval",
    "mode": "--mode",
    "pause_cpu_pct": "--pause-cpu",
    "drain_rate_per_s": "--drain-rate",
    "burst": "--burst",
    "max_connections": "--max-connections",
    "retry_after_s": "--retry-after",
    "nodes": "--nodes",
    "count": "--count",
    "override_reason": "--override-reason",
}


def options_of(model: type[BaseModel]) -> dict[str, str]:
    """The fields of `model` an option sets, and that option."""
    return {field: option for field, option in OPTION_OF.items() if field in model.model_fields}


def check_request(model: type[BaseModel], body: dict[str, Any], args: argparse.Namespace) -> None:
    """The request as the server will read it, checked here by its own model (the bounds of
    console.protocol's request models, and a window's MIN ≤ MAX by `limits.in_window`, as the guards
    judge it), so an option out of range is refused naming the option, the value as typed and its range,
    exit 2 — before anything is sent. It answered "cannot reach the fleet API" (exit 1) with no fleet
    running, and the API's field with one ("422 bad_input: rate_per_s: Input should be greater than 0")."""
    from pydantic import ValidationError

    try:
        request = model.model_validate(body)
    except ValidationError as error:
        first = error.errors()[0]
        field = str(first["loc"][0])
        raise _refused(model, field, body, args, fallback=str(first.get("msg", "a valid value"))) from None
    for field, info in model.model_fields.items():
        window = next((item for item in info.metadata if isinstance(item, Window)), None)
        value = getattr(request, field)
        if window is not None and value is not None and not limits.in_window(value, window.bounds):
            raise _refused(model, field, body, args)


def _refused(
    model: type[BaseModel], field: str, body: dict[str, Any], args: argparse.Namespace, fallback: str = ""
) -> InputError:
    """`field` refused, named by its option with the value as the operator typed it."""
    option = OPTION_OF.get(field, field)
    typed = _typed(args, option)
    return InputError(
        option, body.get(field) if typed is None else typed, allowed_of(model, field) or fallback
    )


def allowed_of(model: type[BaseModel], field: str) -> str:
    """What the request model allows in `field`, as an option's refusal says it: "a number in (0,
    1000000000] (closes per second)", "MIN:MAX with 0 ≤ MIN ≤ MAX ≤ 3600000"; "" where it says no range."""
    from console.server.problems import allowed_range

    info = model.model_fields[field]
    window = next((item for item in info.metadata if isinstance(item, Window)), None)
    if window is not None:  # typed MIN:MAX, not the API's [min, max]
        low, high = (_bound(end) for end in window.bounds)
        return f"MIN:MAX with {low} ≤ MIN ≤ MAX ≤ {high}"
    allowed = allowed_range(model, [field])
    longest = next((item.max_length for item in info.metadata if hasattr(item, "max_length")), None)
    if allowed and allowed[0] in "([":  # a range: of what
        whole = int in (info.annotation, *get_args(info.annotation))
        return f"{'a whole number' if whole else 'a number'} in {allowed}"
    if not allowed and longest is not None:  # ("a number in " had said nothing of a text's length)
        return f"a text of at most {longest:,} characters"
    return allowed


def option_allowed(model: type[BaseModel], option: str) -> str:
    """What the request model allows for the field `option` sets ("" for an option that sets none)."""
    field = next((name for name, named in OPTION_OF.items() if named == option), None)
    return allowed_of(model, field) if field is not None and field in model.model_fields else ""


def _typed(args: argparse.Namespace, option: str) -> object:
    """What the operator typed for `option` (its text: '0', not 0.0), None where it was not given."""
    return as_typed(getattr(args, option.removeprefix("--").replace("-", "_"), None))


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
