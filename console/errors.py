"""Errors a user can cause. Each names the field, the value given and what is allowed."""

from __future__ import annotations

#: Characters of a given text an error repeats: an --override-reason 2,000 characters long came back whole.
#: Past any path a user types (a config file's under a deep temporary folder ran to 90): a cut path no
#: longer named the file.
QUOTED_CHARS = 200


def quoted(value: object) -> str:
    """`value` as an error repeats it (its repr); a long text cut to its start and its length, a long list
    to its first items and its length, which says what was too long without echoing it all. A number that
    remembers its text (an option read with console.cli.checks' `typed_float`/`typed_int`) is repeated as
    typed — '-1.50', not the -1.5 Python made of it — alone or in a list (`--retry-after-s MIN MAX`), by
    every check that refuses it, wherever it raises."""
    value = _as_typed(value)
    if isinstance(value, list):
        value = [_as_typed(item) for item in value]
    if isinstance(value, str) and len(value) > QUOTED_CHARS:
        return f"{value[:QUOTED_CHARS]!r}… ({len(value):,} characters)"
    if isinstance(value, list) and len(repr(value)) > QUOTED_CHARS:
        # The items that fit whole, then how many: a request naming 3,000 unknown nodes got all 3,000 back.
        shown: list[str] = []
        for item in value:
            if len(", ".join([*shown, repr(item)])) > QUOTED_CHARS:
                break
            shown.append(repr(item))
        return f"[{', '.join([*shown, '…'])}] ({len(value):,} items)"
    return repr(value)


def _as_typed(value: object) -> object:
    """A number's text as typed, where it kept one (duck-typed: this module imports nothing of the CLI)."""
    typed = getattr(value, "typed", None)
    return typed if isinstance(value, int | float) and isinstance(typed, str) else value


class StormdeckError(Exception):
    """Base of every error stormdeck reports to a user instead of a traceback."""

    exit_code = 1


class InputError(StormdeckError):
    """Bad input: an unknown name, an unknown path, a value out of range. Exit status 2."""

    exit_code = 2

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(self._message())

    def _message(self) -> str:
        return f"{self.field}: {quoted(self.value)} is not allowed; expected {self.allowed}"

    def problem_members(self) -> dict[str, object]:
        """What a problem+json answer of this refusal carries besides its detail and field, for a client to
        act on (the nodes that would take an admission change); none for most."""
        return {}


class MissingInput(InputError):
    """A required value that was not given at all: "NAME is required: …", not "None is not allowed"."""

    def __init__(self, field: str, allowed: str) -> None:
        super().__init__(field, None, allowed)

    def _message(self) -> str:
        return f"{self.field} is required: {self.allowed}"


class FlagError(InputError):
    """An option given in a mode that would not read it (`--json` without `--headless`, `--port` without
    `--serve`), said as one sentence: the option, what it needs, why in parentheses — "--actions needs
    --headless (…)". Its value is not what is wrong: as an `InputError` a flag read "--json: True is not
    allowed", a value no one typed, and an option "--actions: 'x' is not allowed; expected --headless with
    it: --actions needs --headless", saying it twice. `needs` follows the option's name and never repeats
    it outside its parentheses (tests/test_wrong_mode_messages.py)."""

    def __init__(self, option: str, needs: str) -> None:
        super().__init__(option, True, needs)

    def _message(self) -> str:
        return f"{self.field} {self.allowed}"
