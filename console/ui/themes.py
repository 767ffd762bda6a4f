"""Theme files: themes/*.toml shipped with the package (and any in the user's config dir), loaded at start.

A theme gives Textual its colours and gives stormdeck its level colours and chart colours. Every level
also has a glyph, the same in every theme, so no meaning is carried by colour alone.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from rich.style import Style
from textual.theme import Theme

from console.errors import InputError
from console.model.thresholds import Level
from console.userfiles import read_user_text

#: Installed with the package: `console/themes` maps the repository's `themes/` (see pyproject.toml).
PACKAGED_THEMES_DIR = Path(__file__).resolve().parent.parent / "themes"
DEFAULT_THEME = "dark"

LEVEL_GLYPHS = {Level.UNKNOWN: "·", Level.OK: "✓", Level.WARNING: "▲", Level.CRITICAL: "✖"}
_THEME_COLOR_KEYS = (
    "primary", "secondary", "accent", "warning", "error", "success",
    "foreground", "background", "surface", "panel",
)  # fmt: skip


@dataclass(frozen=True)
class Palette:
    """What stormdeck's own widgets paint with, beyond Textual's colour system."""

    name: str
    description: str
    dark: bool
    levels: dict[Level, str]
    chart: dict[str, str]
    foreground: str
    background: str

    def level_style(self, level: Level, bold: bool = False) -> Style:
        return Style(color=self.levels[level], bold=bold)


@dataclass(frozen=True)
class ThemeFile:
    textual: Theme
    palette: Palette


def parse_theme(text: str, source: str) -> ThemeFile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError("theme", source, f"valid TOML ({error})") from None
    try:
        name = str(data["name"])
        colors = data["colors"]
        levels = data["levels"]
        chart = data["chart"]
        palette = Palette(
            name=name,
            description=str(data.get("description", name)),
            dark=bool(data.get("dark", True)),
            levels={level: str(levels[level.name.lower()]) for level in Level},
            chart={
                **{key: str(chart[key]) for key in ("line", "baseline", "capacity", "gap")},
                # A stale view's lines (`charts.wave_spec`): the theme's muted colour unless it names one.
                "stale": str(chart.get("stale", levels["unknown"])),
            },
            foreground=str(colors["foreground"]),
            background=str(colors["background"]),
        )
        theme = Theme(
            name=name,
            dark=palette.dark,
            **{key: str(colors[key]) for key in _THEME_COLOR_KEYS if key in colors},
        )
    except (KeyError, TypeError) as error:
        raise InputError(
            "theme", source, f"a theme with name, [colors], [levels], [chart] (missing {error})"
        ) from None
    return ThemeFile(theme, palette)


def load_themes(extra_dirs: tuple[Path, ...] = ()) -> dict[str, ThemeFile]:
    """Packaged themes, then the user's (which may override a packaged one by name)."""
    themes: dict[str, ThemeFile] = {}
    for directory in (PACKAGED_THEMES_DIR, *extra_dirs):
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            theme = parse_theme(read_user_text("theme", path), str(path))
            themes[theme.palette.name] = theme
    return themes
