"""`python -m console.ui.screenshots [DIR]`: its command line, not the screenshots (the snapshots test those)."""

from __future__ import annotations

from pathlib import Path

import pytest

from console.ui import screenshots


@pytest.mark.parametrize("argv", [["--help"], ["-h"]])
def test_help_prints_the_usage_and_shoots_nothing(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A README pass: `python -m console.ui.screenshots --help` took --help for the directory, made a
    directory named `--help` and wrote the nine screenshots into it."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit:
        screenshots.main(argv)
    assert exit.value.code == 0
    assert "usage:" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_option_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit:
        screenshots.main(["--out"])
    assert exit.value.code == 2
    assert "--out" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
