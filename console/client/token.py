"""Where the console's token comes from: a file or the environment — never argv, where `ps` shows it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from console.errors import InputError, MissingInput
from console.userfiles import read_user_text, warn_if_others_may_read

TOKEN_ENV = "STORMDECK_TOKEN"
_ROLES = ("viewer", "operator", "admin")


def token_from_text(text: str) -> str | None:
    """A bare token, or the server's token-file format (`ROLE TOKEN [NAME]` a line): the first token."""
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) >= 2 and words[0] in _ROLES:
            return words[1]
        return words[0]
    return None


def load_token(token_file: Path | None, environ: Mapping[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    if token_file is not None:
        text = read_user_text("--token-file", token_file)
        token = token_from_text(text)
        if token is None:
            raise InputError(
                "--token-file", str(token_file), "a file holding a token or `ROLE TOKEN [NAME]` lines"
            )
        token = check_token("--token-file", token)
        warn_if_others_may_read("--token-file", token_file)
        return token
    token = environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise MissingInput("token", f"--token-file FILE or the environment variable {TOKEN_ENV}")
    return check_token(TOKEN_ENV, token)


def check_token(field: str, token: str) -> str:
    """A token goes into an HTTP header: a newline or a non-ASCII character there is refused by the HTTP
    library as a protocol error, which would read as an unreachable fleet. The token itself is not shown."""
    if not all("!" <= char <= "~" for char in token):
        raise InputError(
            field, "(the token, not shown)", "a token of printable ASCII: no spaces, no newlines"
        )
    return token
