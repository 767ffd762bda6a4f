"""Checks of command-line values that several commands share: ports, fleet API URLs, finite numbers.

Each raises `InputError` naming the option, so a command refuses a typo before it starts anything.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from console.errors import InputError

if TYPE_CHECKING:
    pass

FLEET_URL_EXAMPLE = "http://127.0.0.1:8470"


def check_port(option: str, port: int) -> int:
    """A TCP port (0: any free one). Checked before binding: `bind()` answers 99999 with OverflowError."""
    if not 0 <= port <= 65535:
        raise InputError(option, port, "a port in [0, 65535] (0: any free port)")
    return port


def check_fleet_url(url: str, field: str = "URL") -> str:
    """A fleet API's base URL. Without this check a typo reaches the client, which retries it forever
    (`attach`) or reports a name lookup failure (`act`)."""
    wrong = _fleet_url_fault(url)
    if wrong is not None:
        raise InputError(field, url, f"a fleet API URL: {wrong}")
    return url


def _fleet_url_fault(url: str) -> str | None:
    """What a fleet API URL needs, when `url` is not one; None when it is."""
    try:
        parts = urlsplit(url)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        _ = parts.port  # a port that is not a number in [0, 65535] raises ValueError
    except ValueError:
        valid = False
    if valid:
        return None
    scheme = f" (http://{url}?)" if "://" not in url and ":" in url else ""
    return f"http:// or https:// and a host, e.g. {FLEET_URL_EXAMPLE}{scheme}"


def fleet_url_argument(command: str, following: str, words: Collection[str] = ()) -> Callable[[str], str]:
    """The argparse `type` of a fleet API URL that another positional follows: `act URL ACTION`,
    `plan drain URL NODE`, `inject URL EVENT`.

    With the URL forgotten argparse takes the next word for it, then faults the word after: `plan drain
    gw-010` said "required: NODE" and `act drain gw-010 …` "invalid choice: 'gw-010'", naming what the user
    did give. Checked while it is parsed, the URL is what the error names. `words` are those the following
    positional takes (action or event names); one of them given as the URL gets the command back in order.
    """

    def fleet_url(value: str) -> str:
        if value in words:
            raise argparse.ArgumentTypeError(
                f"{value!r} is not allowed; expected a fleet API URL before the {following.lower()}, e.g. "
                f"stormdeck {command} {FLEET_URL_EXAMPLE} {value} …"
            )
        wrong = _fleet_url_fault(value)
        if wrong is not None:
            raise argparse.ArgumentTypeError(
                f"{value!r} is not allowed; expected a fleet API URL before {following} "
                f"(stormdeck {command} URL {following} …): {wrong}"
            )
        return value

    return fleet_url


class TypedFloat(float):
    """A number option as the user typed it: a float to compute and send with, its `typed` text for an
    error — `--rate 0` came back as "--rate: 0.0 is not allowed", the number argparse made of it."""

    typed: str

    def __new__(cls, text: str) -> TypedFloat:
        number = super().__new__(cls, text)
        number.typed = text
        return number


class TypedInt(int):
    """A whole-number option as the user typed it (`TypedFloat`'s kin): `--count 00` is said as '00'."""

    typed: str

    def __new__(cls, text: str) -> TypedInt:
        number = super().__new__(cls, text)
        number.typed = text
        return number


def typed_float(text: str) -> TypedFloat:
    """argparse's `type` for a number option that remembers its text (argparse names it in its error:
    "invalid typed_float value", which `CommandParser` says in the option's words)."""
    return TypedFloat(text)


def typed_int(text: str) -> TypedInt:
    """argparse's `type` for a whole-number option that remembers its text."""
    return TypedInt(text)


def as_typed(value: object) -> object:
    """`value` as the user gave it: an option's text where it was read with `typed_float`/`typed_int`."""
    return value.typed if isinstance(value, TypedFloat | TypedInt) else value


def check_finite(option: str, value: float | None, allowed: str = "a finite number") -> float | None:
    """nan and inf parse as floats but are no JSON: the request could not even be sent."""
    if value is not None and not math.isfinite(value):
        raise InputError(option, as_typed(value), allowed)
    return value


def check_in_range(
    option: str, value: float, bounds: tuple[float, float], what: str = "a number", low_open: bool = False
) -> float:
    """`value` in [low, high], or (low, high] when `low_open`; refuses nan, which passes every `<=`."""
    low, high = bounds
    if not (low < value <= high if low_open else low <= value <= high):
        raise InputError(option, as_typed(value), f"{what} in {range_text(bounds, low_open)}")
    return value


def range_text(bounds: tuple[float, float], low_open: bool = False) -> str:
    """An interval as "[0, 600]" or "(0, 86400]", for an error message and an option's --help alike."""
    low, high = (str(int(b)) if isinstance(b, int) or b.is_integer() else f"{b:g}" for b in bounds)
    return f"{'(' if low_open else '['}{low}, {high}]"


def check_console_settings(theme: str | None) -> None:
    """What the console reads at start — the user's themes and console.toml — and `--theme`, checked
    before anything starts (`attach` and `replay` alike): an unknown theme is refused, not replaced."""
    from console.ui.config import load_config, user_themes_dir
    from console.ui.themes import load_themes

    names = load_themes((user_themes_dir(),))
    load_config()
    if theme is not None and theme not in names:
        raise InputError("--theme", theme, "one of " + ", ".join(sorted(names)))


#: Messages a second a node or the fleet's publisher may publish (`gateway publish`, `fleet up`).
MAX_PUBLISH_RATE_PER_S = 10_000
#: PBKDF2 iterations of a client token; the default is 10,000 (~2 ms), a million is ~0.2 s a connect.
MAX_WORK_FACTOR = 1_000_000


def check_work_factor(option: str, work_factor: int) -> int:
    """hashlib refuses 0 or less with a ValueError — in every client, or every node, after they started."""
    if not 1 <= work_factor <= MAX_WORK_FACTOR:
        raise InputError(
            option, work_factor, f"PBKDF2 iterations in [1, {MAX_WORK_FACTOR}] (1: a plain HMAC)"
        )
    return work_factor


def check_policy(option: str, name: str) -> str:
    """A backoff policy's name, named as the option typed (`make_policy`'s own error says `policy`)."""
    from console.policies import POLICIES

    if name not in POLICIES:
        raise InputError(option, name, "one of " + ", ".join(sorted(POLICIES)))
    return name


def check_publish_rate(option: str, rate_per_s: float) -> float:
    if not 0 <= rate_per_s <= MAX_PUBLISH_RATE_PER_S:  # also refuses nan
        raise InputError(option, rate_per_s, f"messages a second in [0, {MAX_PUBLISH_RATE_PER_S}] (0: off)")
    return rate_per_s


def check_output_file(option: str, path: Path, make_directory: bool = True) -> Path:
    """A file a command will write (or continue): not empty, not a directory, in a directory it may write
    (made when missing and `make_directory`) — checked before anything starts, so nothing runs and is then
    refused, and nothing is half-written."""
    if not str(path).strip():
        raise InputError(option, str(path), "a file path")
    if path.is_dir():
        raise InputError(option, str(path), "a file path, not a directory")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise InputError(option, str(path), "a file this user may write")
        return path
    check_output_dir(option, path.parent, create=make_directory)
    return path


def check_output_dir(option: str, directory: Path, create: bool = True) -> Path:
    """A directory a command will write into (made when missing and `create`)."""
    if not str(directory).strip():
        raise InputError(option, str(directory), "a directory path")
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(option, str(directory), "a directory (or a path where one can be made)")
    if existing != directory and not create:
        raise InputError(option, str(directory), "an existing directory (it is not made for you)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(option, str(directory), "a directory this user may write")
    return directory


def check_recording_out(option: str, path: Path) -> Path:
    """Where `record --out`, `attach --record` and `drill --record` write: a new file or a recording to
    continue, in an existing directory this user may write (as `sim run --frames` has it: a typo in the
    directory is refused, not made)."""
    from console.record.writer import check_recording_path

    return check_recording_path(option, check_output_file(option, path, make_directory=False))


#: `--coalesce-events`: 0 sends every event on its own; more than a fleet's nodes would never merge any.
COALESCE_EVENTS_BOUNDS = (0, 100_000)
COALESCE_EVENTS_RANGE = f"a count in {range_text(COALESCE_EVENTS_BOUNDS)} (0: every event on its own)"


def check_coalesce_events(over: int) -> int:
    if not COALESCE_EVENTS_BOUNDS[0] <= over <= COALESCE_EVENTS_BOUNDS[1]:
        raise InputError("--coalesce-events", over, COALESCE_EVENTS_RANGE)
    return over
