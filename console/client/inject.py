"""An instructor's injection as a request body: `KEY=VALUE` words (`stormdeck inject`, the instructor's
palette) read into `POST /v1/sim/inject`'s params — one reader for the command line and the console."""

from __future__ import annotations

import json
import math
from typing import Any

from console.errors import InputError


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` words as the request's params: JSON values where they parse, comma lists, else text."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError("KEY=VALUE", pair, "a parameter as KEY=VALUE, e.g. fraction=0.3 or nodes=gw-001")
        if key in params:
            raise InputError(key, pair, "each parameter once")
        params[key] = _value(text.strip(), key)
    return params


def _value(text: str, key: str = "") -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        pass
    else:
        # json reads NaN and Infinity, and 1e999 as inf, which no JSON request body can carry.
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(key, text, "a finite number")
        return value
    if "," in text:
        return [part.strip() for part in text.split(",") if part.strip()]
    return text
