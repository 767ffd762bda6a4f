"""Reading a file the user named (a scenario, a token file, a nodes file, a theme, a config file).

One place turns the ways such a read fails — missing, a directory, no permission, not UTF-8, not TOML —
into an `InputError` naming the option (or file) that gave the path, so no command shows a traceback.
"""

from __future__ import annotations

import os
import stat
import sys
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


#: The secret files already warned about in this process (a file read twice is warned about once).
_WARNED: set[Path] = set()


def warn_if_others_may_read(field: str, path: Path | str) -> None:
    """Warn on stderr, once a file, when a file holding tokens may be read by others than its owner.

    Called once the file has given its tokens (a file refused anyway needs no second message). Anyone who
    can read a bearer token acts with its role, so a token file should be 0600 as the ones stormdeck
    writes are; one readable by its group or by everyone is still used (refusing it would stop a fleet
    over a mode), but the warning names it and the fix."""
    try:
        mode = os.stat(path).st_mode
        resolved = Path(path).resolve()
    except OSError:
        return
    exposed = [who for who, bits in (("its group", 0o040), ("everyone", 0o004)) if mode & bits]
    if exposed and resolved not in _WARNED:
        _WARNED.add(resolved)
        print(
            f"stormdeck: warning: {field} {path} is readable by {' and '.join(exposed)} "
            f"(mode {stat.S_IMODE(mode):04o}): anyone who can read it acts with its tokens; chmod 600 {path}",
            file=sys.stderr,
        )


def read_user_toml(field: str, path: Path | str) -> dict[str, Any]:
    """The parsed TOML document of the file at `path` (errors as `read_user_text`, and invalid TOML)."""
    text = read_user_text(field, path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(field, str(path), f"valid TOML ({error})") from None
