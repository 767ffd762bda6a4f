"""Loading thresholds: defaults, then TOML files, then environment variables — recording who set what.

Precedence, weakest first (a later source overrides an earlier one, field by field):

1. the defaults in `console.guards.thresholds` (the seeds' numbers);
2. the user's file: `<user_config_dir("stormdeck")>/stormdeck.toml` (platformdirs, XDG on Linux);
3. the project's file: `./stormdeck.toml` — closer to the fleet at hand, so it beats the user's;
4. environment variables `STORMDECK_<FIELD>` (e.g. `STORMDECK_HEADROOM_MIN_PCT=30`) — for one run.

In a file the values live in a `[thresholds]` table (nothing else may be in the file). Unknown names,
keys outside the table, non-numbers (in a file, a quoted "30" too: only the environment is text) and
out-of-range values raise `InputError` naming the field (in a file, its dotted path `thresholds.NAME`),
the value, the allowed range and the file that supplied it.

`load_thresholds` takes the directories and the environment as arguments (tests pass their own);
`load_default_thresholds` fills them from the process.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from console.client.token import TOKEN_ENV
from console.errors import InputError
from console.guards.thresholds import INTEGER_FIELDS, Thresholds, field_range, threshold_fields
from console.userfiles import read_user_toml

CONFIG_NAME = "stormdeck.toml"
ENV_PREFIX = "STORMDECK_"
DEFAULT_SOURCE = "default"
#: The source of a value handed over in code, with no file or variable to name (`given_thresholds`).
GIVEN_SOURCE = "given"


@dataclass(frozen=True)
class LoadedThresholds:
    thresholds: Thresholds
    sources: dict[str, str]  # field → "default", a file path, "env STORMDECK_<FIELD>" or "given"
    files: tuple[Path, ...]  # the files that were found and read, weakest first
    searched: tuple[Path, ...] = ()  # every place a file was looked for, weakest first

    def report(self) -> dict[str, dict[str, float | int | str]]:
        """Each threshold's value and who set it, field by field: what `stormdeck config check --json`
        prints and `GET /v1/thresholds` serves."""
        return {
            item.name: {"value": getattr(self.thresholds, item.name), "source": self.sources[item.name]}
            for item in threshold_fields()
        }


def given_thresholds(thresholds: Thresholds) -> LoadedThresholds:
    """Thresholds handed over without their sources (a drill served headless, a test): a value at its
    default is the default's, any other was given."""
    defaults = Thresholds()
    sources = {
        item.name: (
            DEFAULT_SOURCE if getattr(thresholds, item.name) == getattr(defaults, item.name) else GIVEN_SOURCE
        )
        for item in threshold_fields()
    }
    return LoadedThresholds(thresholds=thresholds, sources=sources, files=())


def config_files(cwd: Path, user_config_dir: Path) -> list[Path]:
    """Where config files are looked for, weakest first."""
    return [user_config_dir / CONFIG_NAME, cwd / CONFIG_NAME]


def _allowed(name: str) -> str:
    low, high = field_range(name)
    kind = "a whole number" if name in INTEGER_FIELDS else "a number"
    return f"{kind} in [{low:g}, {high:g}]"


def _where(name: str, source: str) -> str:
    """A threshold as its source spells it: thresholds.NAME in a file (the key's dotted path), NAME in
    the environment (whose variable the source names) or the defaults."""
    in_file = source not in (DEFAULT_SOURCE,) and not source.startswith("env ")
    return f"{'thresholds.' if in_file else ''}{name} (from {source})"


def _coerce(name: str, raw: Any, source: str) -> float | int:
    where = _where(name, source)
    if isinstance(raw, str) and source.startswith("env "):  # the environment holds only text
        try:
            raw = float(raw.strip())
        except ValueError:
            raise InputError(where, raw, _allowed(name)) from None
    # In a file a number is a TOML number: "30" is refused, as the scenario loader refuses '40'.
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise InputError(where, raw, _allowed(name))
    if name in INTEGER_FIELDS:
        if not float(raw).is_integer():
            raise InputError(where, raw, _allowed(name))
        raw = int(raw)
    low, high = field_range(name)
    if not low <= raw <= high:
        raise InputError(where, raw, _allowed(name))
    return raw


def _read_file(path: Path) -> dict[str, Any]:
    document = read_user_toml("config file", path)
    names = {item.name for item in threshold_fields()}
    for key in document:  # a key outside [thresholds] would be ignored: a typo must not keep the default
        if key != "thresholds":
            hint = f"[thresholds] {key} = …" if key in names else "only a [thresholds] table"
            raise InputError(f"{key} (from {path})", document[key], f"{hint} in this file")
    table = document.get("thresholds", {})
    if not isinstance(table, dict):
        raise InputError(f"thresholds (from {path})", table, "a [thresholds] table")
    for key in table:
        if key not in names:
            raise InputError(
                f"thresholds.{key} (from {path})",
                table[key],
                f"a known threshold — {key} is not one{_did_you_mean(key, names)} (they are: "
                + ", ".join(sorted(names))
                + ")",
            )
    return table


def load_thresholds(cwd: Path, user_config_dir: Path, env: Mapping[str, str]) -> LoadedThresholds:
    values: dict[str, float | int] = {}
    sources = {item.name: DEFAULT_SOURCE for item in threshold_fields()}
    found: list[Path] = []
    searched = config_files(cwd, user_config_dir)
    for path in searched:
        if not path.exists():  # a directory of that name is refused, not skipped
            continue
        found.append(path)
        for name, raw in _read_file(path).items():
            values[name] = _coerce(name, raw, str(path))
            sources[name] = str(path)
    for item in threshold_fields():
        variable = ENV_PREFIX + item.name.upper()
        if variable in env:
            values[item.name] = _coerce(item.name, env[variable], f"env {variable}")
            sources[item.name] = f"env {variable}"
    _refuse_unknown_variables(env)
    try:
        thresholds = Thresholds(**values)
    except InputError as error:  # a cross-field rule (e.g. pause above abort): say where the value came from
        raise InputError(
            _where(error.field, sources.get(error.field, DEFAULT_SOURCE)), error.value, error.allowed
        ) from None
    return LoadedThresholds(
        thresholds=thresholds, sources=sources, files=tuple(found), searched=tuple(searched)
    )


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    """ "; did you mean X?" for the known name closest to a misspelt one, or nothing."""
    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f"; did you mean {close[0]}?" if close else ""


def _refuse_unknown_variables(env: Mapping[str, str]) -> None:
    """A misspelt STORMDECK_ variable must not leave the default in force unnoticed, as a file's typo
    must not (`STORMDECK_HEADROOM_BUDGET_PCT=30` was silently ignored)."""
    known = {ENV_PREFIX + item.name.upper() for item in threshold_fields()} | {TOKEN_ENV}
    for variable in sorted(env):
        if variable.startswith(ENV_PREFIX) and variable not in known:
            hint = _did_you_mean(variable, known)
            raise InputError(
                f"env {variable}",
                env[variable],
                f"a STORMDECK_ variable stormdeck reads: STORMDECK_<THRESHOLD> (`stormdeck config check` "
                f"lists them) or {TOKEN_ENV}{hint}",
            )


def load_default_thresholds() -> LoadedThresholds:
    """Thresholds for this process: ./stormdeck.toml, the user's config dir, and the environment."""
    from platformdirs import user_config_dir

    return load_thresholds(Path.cwd(), Path(user_config_dir("stormdeck")), os.environ)
