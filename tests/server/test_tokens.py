"""Token files: the format, its errors (with line numbers), and the token made when there is none."""

from __future__ import annotations

import stat

import pytest

from console.errors import InputError
from console.server.tokens import (
    MIN_TOKEN_CHARS,
    Role,
    load_token_file,
    make_local_operator_token,
    parse_tokens,
)


def test_each_line_gives_a_role_and_a_name() -> None:
    registry = parse_tokens(
        "# fleet tokens\nviewer aaa-token alice\n\noperator bbb-token\nadmin ccc-token root\n"
    )
    assert len(registry) == 3
    alice = registry.lookup("aaa-token")
    assert alice is not None and alice.role is Role.VIEWER and alice.name == "alice"
    unnamed = registry.lookup("bbb-token")
    assert unnamed is not None and unnamed.role is Role.OPERATOR and unnamed.name == "operator@line4"
    assert registry.lookup("aaa-token ") is None
    assert registry.lookup("nope") is None


def test_roles_are_ordered() -> None:
    assert Role.VIEWER < Role.OPERATOR < Role.ADMIN


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("viewer good-token\nroot bad-token\n", 2, "viewer, operator or admin"),
        ("viewer\n", 1, "ROLE TOKEN [NAME]"),
        ("viewer t1 name extra\n", 1, "ROLE TOKEN [NAME]"),
        ("viewer t1\n# c\noperator t1\n", 3, "each token once"),
    ],
)
def test_a_malformed_line_is_named_by_its_number(text: str, line: int, fragment: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_tokens(text, source="tokens.txt")
    assert caught.value.field == f"tokens.txt line {line}"
    assert fragment in caught.value.allowed


def test_a_file_without_tokens_is_refused() -> None:
    with pytest.raises(InputError, match="at least one line"):
        parse_tokens("# only a comment\n\n")


def test_a_missing_file_names_the_option(tmp_path) -> None:
    with pytest.raises(InputError) as caught:
        load_token_file(tmp_path / "absent")
    assert caught.value.field == "--token-file"


def test_the_local_token_is_an_operator_token_in_a_0600_file(tmp_path) -> None:
    registry, path = make_local_operator_token(tmp_path / "tokens")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    role, token, name = path.read_text().split()
    assert role == "operator" and name == "local-operator"
    principal = registry.lookup(token)
    assert principal is not None and principal.role is Role.OPERATOR
    # The file is in the token-file format, so `--token-file` and `attach` read it back.
    assert load_token_file(path).lookup(token) == principal
    second_registry, second_path = make_local_operator_token(tmp_path / "tokens")
    assert second_path != path and second_registry.lookup(token) is None


def test_the_attach_line_says_whose_token_it_uses_and_warns_of_an_admins() -> None:
    from console.server.tokens import attach_note

    instructor_first = parse_tokens("admin adm-1 instructor\noperator op-1 trainee\n")
    note = attach_note(instructor_first)
    assert "admin 'instructor'" in note and "give each trainee a file" in note
    trainee_first = attach_note(parse_tokens("operator op-1 trainee\nadmin adm-1 instructor\n"))
    assert "operator 'trainee'" in trainee_first and "give each trainee" not in trainee_first


@pytest.mark.parametrize(
    ("mode", "who"), [(0o644, "its group and everyone"), (0o640, "its group"), (0o604, "everyone")]
)
def test_a_token_file_others_may_read_is_warned_of(tmp_path, capsys, mode: int, who: str) -> None:
    # Anyone who can read a bearer token acts with its role: the server says so, once, and how to fix it.
    path = tmp_path / "fleet.tokens"
    path.write_text("operator secret-token-0123 olly\n")
    path.chmod(mode)
    registry = load_token_file(path)
    load_token_file(path)
    assert registry.lookup("secret-token-0123") is not None
    err = capsys.readouterr().err
    assert err.count("warning") == 1
    assert f"--token-file {path} is readable by {who} (mode {mode:04o})" in err
    assert f"chmod 600 {path}" in err
    assert "secret-token-0123" not in err


def test_a_0600_token_file_is_read_without_a_word(tmp_path, capsys) -> None:
    path = tmp_path / "fleet.tokens"
    path.write_text("operator secret-token-0123 olly\n")
    path.chmod(0o600)
    load_token_file(path)
    assert capsys.readouterr().err == ""


def test_a_short_token_is_used_but_warned_of_by_file_and_line(tmp_path, capsys) -> None:
    path = tmp_path / "fleet.tokens"
    path.write_text("# instructor first\nadmin short ina\noperator long-enough-token-0123 olly\n")
    path.chmod(0o600)
    registry = load_token_file(path)
    load_token_file(path)  # as a serving command does: checked, then used
    assert registry.lookup("short") is not None, "used: only warned of"
    err = capsys.readouterr().err
    assert err.count("warning") == 1
    assert f"{path} line 2" in err and "5 characters" in err and f"at least {MIN_TOKEN_CHARS}" in err
    assert "short " not in err.replace("short token", ""), "the token itself is not shown"
