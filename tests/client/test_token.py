"""Tokens come from a file or the environment, never argv."""

from __future__ import annotations

import pytest

from console.cli import main
from console.client.token import TOKEN_ENV, load_token, token_from_text
from console.errors import InputError


def test_bare_token_and_server_token_file_format():
    assert token_from_text("abc123\n") == "abc123"
    assert token_from_text("# tokens\n\noperator s3cret alice\nviewer v0 bob\n") == "s3cret"
    assert token_from_text("\n# nothing\n") is None


def test_file_wins_over_environment(tmp_path):
    path = tmp_path / "token"
    path.write_text("admin tok-from-file\n")
    assert load_token(path, {TOKEN_ENV: "tok-from-env"}) == "tok-from-file"
    assert load_token(None, {TOKEN_ENV: " tok-from-env \n"}) == "tok-from-env"


def test_missing_token_names_both_ways_to_give_one(tmp_path):
    with pytest.raises(InputError, match="--token-file FILE or the environment variable STORMDECK_TOKEN"):
        load_token(None, {})
    with pytest.raises(InputError, match="readable file"):
        load_token(tmp_path / "absent", {})


def test_attach_without_a_token_exits_2_without_a_traceback(monkeypatch, capsys):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert main(["attach", "http://127.0.0.1:9"]) == 2
    assert "STORMDECK_TOKEN" in capsys.readouterr().err


def test_attach_rejects_an_unknown_theme(monkeypatch, capsys):
    monkeypatch.setenv(TOKEN_ENV, "t")
    assert main(["attach", "http://127.0.0.1:9", "--theme", "neon"]) == 2
    assert "dark" in capsys.readouterr().err


def test_attach_has_no_token_argument():
    with pytest.raises(SystemExit):
        main(["attach", "http://127.0.0.1:9", "--token", "visible-in-ps"])


def test_a_token_with_a_newline_is_malformed_not_an_unreachable_fleet(monkeypatch, capsys):
    monkeypatch.setenv(TOKEN_ENV, "abc\ndef")
    assert main(["plan", "drain", "http://127.0.0.1:9", "gw-001"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stormdeck: STORMDECK_TOKEN: ") and "no newlines" in err and "abc" not in err


def test_a_token_file_everyone_may_read_is_warned_of(tmp_path, capsys):
    path = tmp_path / "token"
    path.write_text("operator s3cret-token alice\n")
    path.chmod(0o644)
    assert load_token(path, {}) == "s3cret-token"
    err = capsys.readouterr().err
    assert "is readable by its group and everyone (mode 0644)" in err and f"chmod 600 {path}" in err
    assert "s3cret-token" not in err
    private = tmp_path / "private"
    private.write_text("s3cret-token\n")
    private.chmod(0o600)
    load_token(private, {})
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["act", "http://127.0.0.1:9", "undrain", "gw-000", "--token", "s3cret-on-argv"],
        ["inject", "http://127.0.0.1:9", "add_nodes", "count=1", "--token=s3cret-on-argv"],
        ["sim", "serve", "demo", "--token", "s3cret-on-argv"],
        ["controller", "--nodes", "n.toml", "--node-token", "s3cret-on-argv"],
        ["fleet", "up", "--tok", "s3cret-on-argv"],
    ],
)
def test_no_command_takes_a_prefix_of_a_token_option(argv, capsys):
    # argparse took `--token X` for `--token-file X` and echoed X: "--token-file: 's3cret…' is not allowed".
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "not an option (tokens are never given on the command line" in err
    assert "s3cret-on-argv" not in err
