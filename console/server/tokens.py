"""Bearer tokens for the fleet API: the token file, roles, and the token made when there is no file.

A token file holds one token a line, `ROLE TOKEN [NAME]`; blank lines and lines starting with `#` are
skipped. The same format serves `sim serve`, the controller (#6) and `stormdeck attach --token-file`
(which takes the first line's token). Tokens are compared by their SHA-256 digest, so a lookup does not
leak how many leading characters matched.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

import platformdirs

from console.errors import InputError


class Role(IntEnum):
    """Ordered: each role may do everything the ones below it may (DESIGN.md, "Auth")."""

    VIEWER = 1  # reads and the stream
    OPERATOR = 2  # actions
    ADMIN = 3  # overrides of blocked actions

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Role:
        try:
            return cls[text.upper()]
        except KeyError:
            raise InputError("role", text, "one of viewer, operator, admin") from None


@dataclass(frozen=True)
class Principal:
    """Who a request acts as: the role decides what it may do; the name goes into the audit log (#4)."""

    role: Role
    name: str


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class TokenRegistry:
    """The tokens a server accepts."""

    def __init__(self, entries: dict[str, Principal]) -> None:
        if not entries:
            raise InputError("token file", "(no tokens)", "at least one line `ROLE TOKEN [NAME]`")
        self._by_digest = {_digest(token): principal for token, principal in entries.items()}
        #: Whose token the file's first line is: the one `stormdeck attach --token-file` takes.
        self.first: Principal = next(iter(entries.values()))

    def lookup(self, token: str) -> Principal | None:
        return self._by_digest.get(_digest(token))

    def __len__(self) -> int:
        return len(self._by_digest)


def attach_note(registry: TokenRegistry) -> str:
    """What an attach line with a given token file attaches as, and a warning when that is an admin: a
    served drill's file often starts with the instructor's line, and trainees handed the printed line
    would act as admin (an override is an admin's)."""
    first = registry.first
    note = f"  (as its first line: {first.role.label} {first.name!r})"
    if first.role is Role.ADMIN:
        note += "\n        an admin's token: give each trainee a file with their own operator or viewer line"
    return note


#: Shorter tokens are used but warned of: a guessable bearer token acts with its role (`new_token` makes 43).
MIN_TOKEN_CHARS = 16
_WARNED: set[str] = set()


def parse_tokens(
    text: str, source: str = "token file", warn: Callable[[str], None] | None = None
) -> TokenRegistry:
    """Parse a token file's text; a malformed line is an `InputError` naming the file and line number.
    `warn` is told of each token shorter than `MIN_TOKEN_CHARS` (the file and line, never the token)."""
    entries: dict[str, Principal] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{source} line {number}"
        fields = line.split()
        if len(fields) < 2 or len(fields) > 3:
            raise InputError(where, line, "`ROLE TOKEN [NAME]`: a role, a token and an optional name")
        role_text, token = fields[0], fields[1]
        try:
            role = Role.parse(role_text)
        except InputError:
            raise InputError(where, role_text, "a role: viewer, operator or admin") from None
        if token in entries:
            raise InputError(where, "(a token already given on an earlier line)", "each token once")
        name = fields[2] if len(fields) == 3 else f"{role.label}@line{number}"
        entries[token] = Principal(role=role, name=name)
        if warn is not None and len(token) < MIN_TOKEN_CHARS:
            warn(
                f"{where}: the {role.label} token of {name!r} is {len(token)} characters; anyone who guesses "
                f"a short token acts as {role.label}: use at least {MIN_TOKEN_CHARS} (e.g. `python3 -c "
                "'import secrets; print(secrets.token_urlsafe(32))'`)"
            )
    if not entries:
        raise InputError(source, "(no tokens)", "at least one line `ROLE TOKEN [NAME]`")
    return TokenRegistry(entries)


def load_token_file(path: Path) -> TokenRegistry:
    """A serving command's `--token-file` (`ROLE TOKEN [NAME]` lines), read as any user file is: a file
    that is missing, a directory or not UTF-8 is named, not a traceback; one others may read is warned of."""
    import sys

    from console.userfiles import read_user_text, warn_if_others_may_read

    def warn(message: str) -> None:
        if message not in _WARNED:  # a serving command reads its file twice: checked first, then used
            _WARNED.add(message)
            print(f"stormdeck: warning: --token-file {message}", file=sys.stderr)

    registry = parse_tokens(read_user_text("--token-file", path), source=str(path), warn=warn)
    warn_if_others_may_read("--token-file", path)
    return registry


def new_token() -> str:
    """A random bearer token: 32 bytes from the OS's CSPRNG, URL-safe."""
    return secrets.token_urlsafe(32)


def write_token_file(
    path: Path, role: Role, token: str, name: str, more: Sequence[tuple[Role, str, str]] = ()
) -> None:
    """Write a token file readable by its owner only (0600), refusing to overwrite one: the line `role
    token name` first (the one `attach --token-file` takes), then `more` (role, token, name) lines."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        for line_role, line_token, line_name in ((role, token, name), *more):
            handle.write(f"{line_role.label} {line_token} {line_name}\n")


def default_token_dir() -> Path:
    """Where a server without --token-file writes the token it made: the XDG state dir."""
    return Path(platformdirs.user_state_dir("stormdeck")) / "tokens"


def make_local_token(role: Role, name: str, directory: Path | None = None) -> tuple[str, Path]:
    """Make a random token of `role` for a loopback-only server and write it to a fresh 0600 file."""
    token = new_token()
    path = (directory or default_token_dir()) / f"serve-{os.getpid()}-{secrets.token_hex(4)}.token"
    write_token_file(path, role, token, name)
    return token, path


def make_local_operator_token(directory: Path | None = None) -> tuple[TokenRegistry, Path]:
    """Make a random operator token for a loopback-only server and write it to a fresh 0600 file."""
    token, path = make_local_token(Role.OPERATOR, "local-operator", directory)
    return TokenRegistry({token: Principal(Role.OPERATOR, "local-operator")}), path
