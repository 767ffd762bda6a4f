"""Files a user names (scenarios, token files, nodes files, themes, configs) that are not UTF-8 text, or
not files at all: exit 2 with the option and the path, never a traceback (console.userfiles)."""

from __future__ import annotations

from pathlib import Path

import pytest

from console.cli import main
from tests.gateway.conftest import SERVE_ARGV

NOT_UTF8 = b'title = "\xff\xfe"\n'


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    path = tmp_path / "bad.toml"
    path.write_bytes(NOT_UTF8)
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    """An empty project directory and user config dir, so only the files a test writes are read."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    config = tmp_path / "xdg" / "stormdeck"
    (config / "themes").mkdir(parents=True)
    return config


def refused(argv: list[str], capsys, field: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"stormdeck: {field}: ") and "Traceback" not in err, err
    return err


def test_every_user_file_that_is_not_utf8_is_named(tmp_path, bad, home, capsys) -> None:
    nodes = tmp_path / "nodes.toml"
    nodes.write_text('[[nodes]]\nid = "a"\nadmin = "http://127.0.0.1:9101"\n')
    url = "http://127.0.0.1:9"
    cases = [
        (["sim", "run", str(bad)], "scenario"),
        (["plan", "drain", url, "gw-001", "--token-file", str(bad)], "--token-file"),
        (["sim", "serve", "steady", "--port", "0", "--token-file", str(bad)], "--token-file"),
        (
            [
                *SERVE_ARGV,
                "--token-file",
                str(bad),
            ],
            "--token-file",
        ),
        (["fleet", "up", "--port", "0", "--token-file", str(bad)], "--token-file"),
        (["controller", "--nodes", str(bad), "--node-token-file", str(bad)], "--nodes"),
        (["controller", "--nodes", str(nodes), "--node-token-file", str(bad)], "--node-token-file"),
        (["drill", "graceful-drain", "--headless", "--actions", str(bad)], "--actions"),
        (
            [
                "loadgen",
                "ws://127.0.0.1:9/channel/x",
                "--clients",
                "1",
                "--policy",
                "fixed",
                "--nodes-file",
                str(bad),
            ],
            "--nodes-file",
        ),
    ]
    for argv, field in cases:
        err = refused(argv, capsys, field)
        assert str(bad) in err and "a UTF-8 text file" in err, argv


def test_config_files_themes_and_console_toml_that_are_not_utf8(tmp_path, home, capsys) -> None:
    project_config = tmp_path / "stormdeck.toml"
    project_config.write_bytes(NOT_UTF8)
    # A config file nobody named on the command line: "config file", then its path as the value.
    err = refused(["config", "check"], capsys, "config file")
    assert f"'{project_config}' is not allowed" in err and "a UTF-8 text file" in err
    project_config.unlink()
    (home / "stormdeck.toml").write_bytes(NOT_UTF8)
    err = refused(["config", "check"], capsys, "config file")
    assert f"'{home / 'stormdeck.toml'}' is not allowed" in err
    (home / "stormdeck.toml").unlink()

    token = tmp_path / "token"
    token.write_text("secret\n")
    token.chmod(0o600)  # one others may read is warned of first; the theme's error is what is tested
    (home / "themes" / "mine.toml").write_bytes(NOT_UTF8)
    refused(["replay", str(tmp_path / "none.rec")], capsys, "theme")
    refused(["attach", "http://127.0.0.1:9", "--token-file", str(token)], capsys, "theme")
    (home / "themes" / "mine.toml").unlink()
    (home / "console.toml").write_bytes(NOT_UTF8)
    refused(["attach", "http://127.0.0.1:9", "--token-file", str(token)], capsys, "config")


def test_a_directory_named_stormdeck_toml_is_refused_not_ignored(tmp_path, home, capsys) -> None:
    (tmp_path / "stormdeck.toml").mkdir()
    err = refused(["config", "check"], capsys, "config file")
    assert (
        f"'{tmp_path / 'stormdeck.toml'}' is not allowed" in err
        and "a readable file (it is a directory)" in err
    )


def test_a_token_file_that_is_a_directory(tmp_path, capsys) -> None:
    err = refused(
        ["plan", "drain", "http://127.0.0.1:9", "gw-001", "--token-file", str(tmp_path)],
        capsys,
        "--token-file",
    )
    assert "it is a directory" in err


def test_replay_refuses_an_unknown_theme_as_attach_does(tmp_path, home, capsys) -> None:
    err = refused(["replay", "--theme", "nope", str(tmp_path / "none.rec")], capsys, "--theme")
    assert "'nope'" in err and "dark" in err


def test_an_empty_node_token_file_is_named_as_such(tmp_path, capsys) -> None:
    nodes, empty = tmp_path / "nodes.toml", tmp_path / "empty"
    nodes.write_text('[[nodes]]\nid = "a"\nadmin = "http://127.0.0.1:9101"\n')
    empty.write_text("\n")
    refused(
        ["controller", "--nodes", str(nodes), "--node-token-file", str(empty)], capsys, "--node-token-file"
    )
