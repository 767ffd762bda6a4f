"""The console's remembered choices, in the user's XDG config dir (`$XDG_CONFIG_HOME/stormdeck/`)."""

from __future__ import annotations

from pathlib import Path

from platformdirs import user_config_path

from console.errors import InputError
from console.userfiles import read_user_toml

CONFIG_NAME = "console.toml"


def config_dir() -> Path:
    return user_config_path("stormdeck", appauthor=False)


def user_themes_dir() -> Path:
    return config_dir() / "themes"


def load_config(path: Path | None = None) -> dict[str, object]:
    """The remembered choices; {} when there are none yet. A file that is there but cannot be read (a
    directory, not UTF-8, not TOML) is refused by name: the operator can fix or remove it."""
    path = path or config_dir() / CONFIG_NAME
    if not path.exists():
        return {}
    return read_user_toml("config", path)


def remember_theme(name: str, path: Path | None = None) -> None:
    """Write `theme = NAME`; keeps other keys. Failing to write is not worth interrupting an operator."""
    path = path or config_dir() / CONFIG_NAME
    try:
        config = load_config(path)
    except InputError:
        return  # refused at start; never overwrite a file we could not read
    config["theme"] = name
    lines = [
        f"{key} = {_toml_value(value)}" for key, value in config.items() if _toml_value(value) is not None
    ]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError:
        pass


def _toml_value(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return None
