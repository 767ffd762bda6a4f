"""Themes: four or more, complete, found where an installed package finds them, remembered."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from rich.color import Color, ColorSystem

from console.errors import InputError
from console.model.thresholds import Level
from console.ui import config
from console.ui.themes import LEVEL_GLYPHS, PACKAGED_THEMES_DIR, load_themes, parse_theme

REPO = Path(__file__).resolve().parents[2]


def test_the_four_required_themes_ship_with_the_package():
    themes = load_themes()
    assert {"dark", "light", "high-contrast", "colorblind"} <= set(themes)
    assert PACKAGED_THEMES_DIR.resolve() == (REPO / "themes").resolve()
    assert themes["light"].palette.dark is False


def test_pyproject_installs_the_themes_as_package_data():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "*.toml" in pyproject["tool"]["setuptools"]["package-data"]["console.themes"]


@pytest.mark.parametrize("name", ["dark", "light", "high-contrast", "colorblind"])
def test_levels_are_distinct_and_carry_glyphs(name):
    palette = load_themes()[name].palette
    colours = [palette.levels[level] for level in (Level.OK, Level.WARNING, Level.CRITICAL)]
    assert len(set(colours)) == 3
    assert len({LEVEL_GLYPHS[level] for level in Level}) == len(Level)  # meaning never by colour alone


def contrast(foreground: str, background: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours."""

    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("name", ["dark", "light", "high-contrast", "colorblind"])
def test_level_colours_read_as_text_on_every_background(name):
    """Levels are text: the header's link and age sit on the panel colour, tables on the surface. WCAG AA
    asks 4.5:1 for text; the colour-blind theme's critical was 3.75:1 on the panel, high-contrast's 4.44."""
    data = tomllib.loads((PACKAGED_THEMES_DIR / f"{name}.toml").read_text())
    backgrounds = {key: data["colors"][key] for key in ("background", "surface", "panel")}
    texts = {f"levels.{key}": colour for key, colour in data["levels"].items()}
    texts["colors.error"] = data["colors"]["error"]
    low = {
        (what, where): round(contrast(colour, behind), 2)
        for what, colour in texts.items()
        for where, behind in backgrounds.items()
        if contrast(colour, behind) < 4.5
    }
    assert not low


@pytest.mark.parametrize("name", ["dark", "light", "high-contrast", "colorblind"])
@pytest.mark.parametrize("system", [ColorSystem.STANDARD, ColorSystem.EIGHT_BIT])
def test_levels_stay_apart_on_16_and_256_colour_terminals(name, system):
    """On a 16- or 256-colour terminal (TERM=xterm, TEXTUAL_COLOR_SYSTEM=standard) each colour becomes the
    nearest the terminal has (Rich's downgrade). Light's ok (#177033) became bright black, as its unknown:
    a healthy node and one never heard from drew alike, and ok was not green."""
    levels = load_themes()[name].palette.levels
    shown = {level: Color.parse(colour).downgrade(system).number for level, colour in levels.items()}
    assert len(set(shown.values())) == len(Level), shown


def test_colorblind_theme_does_not_pair_red_with_green():
    levels = load_themes()["colorblind"].palette.levels

    def hue_family(colour: str) -> str:
        r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
        return "green" if g > r and g > b else "red" if r > g and r > b else "other"

    assert hue_family(levels[Level.OK]) != "green"


def test_a_broken_theme_is_an_input_error():
    with pytest.raises(InputError, match="theme"):
        parse_theme('name = "x"\n[colors]\nprimary = "#000000"\n', "x.toml")


def test_user_themes_override_and_the_choice_is_remembered(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    user_dir = config.user_themes_dir()
    user_dir.mkdir(parents=True)
    text = (REPO / "themes" / "dark.toml").read_text().replace('name = "dark"', 'name = "mine"')
    (user_dir / "mine.toml").write_text(text)
    assert "mine" in load_themes((user_dir,))
    config.remember_theme("mine")
    assert config.load_config()["theme"] == "mine"


@pytest.mark.parametrize("name", ["dark", "light", "high-contrast", "colorblind"])
def test_a_stale_chart_line_is_the_theme_s_muted_colour_and_reads(name):
    """A stale view's chart lines are drawn in the theme's muted colour (its `unknown` level, as the stale
    gauges' text): unlike the live line, and readable on the chart's background."""
    palette = load_themes()[name].palette
    assert palette.chart["stale"] == palette.levels[Level.UNKNOWN]
    assert palette.chart["stale"] != palette.chart["line"]
    assert contrast(palette.chart["stale"], palette.background) >= 4.5


def test_a_theme_may_choose_its_own_stale_chart_colour():
    text = (
        (PACKAGED_THEMES_DIR / "dark.toml").read_text().replace("[chart]\n", '[chart]\nstale = "#606060"\n')
    )
    assert parse_theme(text, "mine.toml").palette.chart["stale"] == "#606060"
