"""Reading a file the user named (a scenario, a token file, a nodes file, a theme, a config file).

One place turns the ways such a read fails — missing, a directory, no permission, not UTF-8, not TOML —
into an `InputError` naming the option (or file) that gave the path, so no command shows a traceback.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from console.errors import InputError


def read_user_text(field: str, path: Path | str) -> str:
    """The text of the file at `path`; `field` is what named it (`--token-file`, `--nodes`, …)."""
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise InputError(field, str(path), "a readable file (it is a directory)") from None
    except OSError as error:
        raise InputError(field, str(path), f"a readable file ({error.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        where = f"byte {data[error.start]:#04x} at offset {error.start} is not UTF-8"
        raise InputError(field, str(path), f"a UTF-8 text file ({where})") from None


def read_user_toml(field: str, path: Path | str) -> dict[str, Any]:
    """The parsed TOML document of the file at `path` (errors as `read_user_text`, and invalid TOML)."""
    text = read_user_text(field, path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(field, str(path), f"valid TOML ({error})") from None
