"""TOML documents shipped inside the package (scenarios, drills) or given by path — one loader for both."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from console.errors import InputError
from console.userfiles import read_user_text


def list_packaged(package: str) -> list[tuple[str, str]]:
    """(name, title) of every TOML file shipped in `package`, sorted by name."""
    out = []
    for entry in resources.files(package).iterdir():
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
            out.append((entry.name.removesuffix(".toml"), str(data.get("title", ""))))
    return sorted(out)


def read_packaged(kind: str, package: str, name_or_path: str) -> dict[str, Any]:
    """The parsed TOML of a packaged `kind` by name, or of a file by path; errors name what is allowed."""
    if name_or_path.endswith(".toml"):
        path = Path(name_or_path)
        if not path.is_file():
            raise InputError(kind, name_or_path, f"an existing .toml file, or a packaged {kind}'s name")
        text = read_user_text(kind, path)
    else:
        entry = resources.files(package) / f"{name_or_path}.toml"
        if not entry.is_file():
            names = ", ".join(name for name, _ in list_packaged(package))
            raise InputError(kind, name_or_path, f"one of {names} (or a path to a .toml file)")
        text = entry.read_text(encoding="utf-8")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(kind, name_or_path, f"valid TOML ({error})") from None
