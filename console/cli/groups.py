"""A command made of subcommands (`stormdeck sim`, `stormdeck act URL rollout`, ...).

Run without a subcommand, a group prints its own help (which lists its subcommands) to stderr and exits 2,
argparse's usage error: a script that left the subcommand out (`stormdeck sim`) exited 0 and took it for
done. `--help` is how to ask what a group offers (stdout, 0). `add_subcommands` makes every group, so they
agree. (`stormdeck` alone is no group run bare: it starts the console on a simulated fleet.)
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

#: argparse's exit status for a usage error, which a group run without its subcommand is.
USAGE_EXIT = 2


def fill_items(lead: str, items: Sequence[str], width: int) -> str:
    """ "  lead: a, b, c" in lines of at most `width` (an item longer stays whole), broken between items,
    continued four spaces in."""
    lines = [f"  {lead}:"]
    for k, item in enumerate(items):
        word = item + ("," if k < len(items) - 1 else "")
        if len(lines[-1]) + 1 + len(word) > width and lines[-1].strip():
            lines.append("   ")
        lines[-1] += " " + word
    return "\n".join(lines) + "\n"


class CommandParser(argparse.ArgumentParser):
    """The parser of every `stormdeck` command and subcommand.

    A group given no words at all shows its help (on stderr, exit 2, as any group without its subcommand)
    even when a positional comes before its subcommand (`stormdeck act` alone, where argparse would first
    ask for `act`'s URL). `examples`: whole command lines, shown last in --help one a line (argparse would
    run an epilog's lines together).
    `sections`: (title, rows) shown before the examples, each row (its lead, its items) a paragraph of its
    own, broken between items only (a served API's routes by area: "POST" is never left at a line's end,
    its path on the next)."""

    def __init__(
        self,
        *args: Any,
        examples: Sequence[str] = (),
        sections: Sequence[tuple[str, Sequence[tuple[str, Sequence[str]]]]] = (),
        **kwargs: Any,
    ) -> None:
        # No prefix passes for an option, in any command (`_refuse_abbreviations` says so by name).
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
        self.examples = tuple(examples)
        self.register("action", "parsers", _DescribedSubcommands)
        self.sections = tuple(sections)

    def format_help(self) -> str:
        text = super().format_help()
        width = max(self._get_formatter()._width, 40)  # argparse's own: the terminal's, less its margin
        for title, rows in self.sections:
            text += f"\n{title}:\n" + "".join(fill_items(lead, items, width) for lead, items in rows)
        if self.examples:
            text += "\nexamples:\n" + "".join(f"  {line}\n" for line in self.examples)
        return text

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._words = list(sys.argv[1:] if args is None else args)
        self._refuse_abbreviations(args)
        self._help_of_named_subcommand(self._words)
        if args is not None and not args and self._subparsers is not None:
            namespace = namespace if namespace is not None else argparse.Namespace()
            for dest, value in self._defaults.items():  # the group's help handler, from add_subcommands
                setattr(namespace, dest, value)
            return namespace, []
        namespace, extras = super().parse_known_args(args, namespace)
        early = self._flags_before_subcommand(extras)
        if early is not None:
            self.error(early)
        return namespace, extras

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """argparse's, but a word no option takes is refused by the command it followed: `sim list --json
        extra` answered with the top level's usage ("stormdeck [-h] [--version] COMMAND ..."), as though
        the command itself were wrong."""
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            self._command_before(extras[0]).error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace

    def _command_before(self, word: str) -> argparse.ArgumentParser:
        """The innermost command named before `word` in the words given (this one when none is)."""
        words = getattr(self, "_words", [])
        at = words.index(word) if word in words else len(words)
        named = self._named_subcommands(words[:at])
        return named[-1] if named else self

    def error(self, message: str) -> NoReturn:
        number = self._number_expected(message)
        if number is not None:
            # One line, as a number out of its range is refused once read ("stormdeck: --rate: '0' is not
            # allowed; expected …"): a word there printed the whole usage before it (review).
            self.exit(USAGE_EXIT, f"stormdeck: {number}\n")
        super().error(self._option_before_subcommand(message) or message)

    def _number_expected(self, message: str) -> str | None:
        """`drill NAME --speed abc`: argparse said "argument --speed: invalid float value: 'abc'", and not
        what the option takes. Its range is said after the value refused (`number_allowed`)."""
        match = re.fullmatch(r"argument (\S+): invalid (?:typed_)?(int|float) value: ('.*')", message)
        if match is None:
            return None
        name, kind, value = match.groups()
        action = next((a for a in self._actions if "/".join(a.option_strings) == name), None)
        allowed = self.number_allowed(action) if action is not None else ""
        if not allowed:
            return None
        whole = "a whole number" if kind == "int" else "a number"
        return f"{action.option_strings[-1]}: {value} is not {whole}; expected {allowed}"

    def number_allowed(self, action: argparse.Action) -> str:
        """What a number option takes, as its refusal says it: its help, with its range ("" without one).
        A command whose out-of-range refusal says it otherwise says it so here too (`act`'s)."""
        return self._expanded_help(action) if action.help else ""

    def _expanded_help(self, action: argparse.Action) -> str:
        return self._get_formatter()._expand_help(action)  # (its %(default)s filled in, as --help shows it)

    def _flags_before_subcommand(self, extras: Sequence[str]) -> str | None:
        """`act URL --dry-run drain …`: the flag belongs to the subcommand, the command before it does not
        know it, and argparse said only "unrecognized arguments: --dry-run" (an option taking a value is
        `_option_before_subcommand`). When every word left over is an option that a subcommand named after
        it takes, say which came too early and the command that takes them; else argparse's words stand."""
        if self._subparsers is None or not extras:
            return None
        early: set[str] = set()
        taker: argparse.ArgumentParser = self
        seen: list[str] = []  # the leftover options met so far, before the subcommand that takes them
        parser: argparse.ArgumentParser = self
        for word in getattr(self, "_words", []):
            if word == "--":
                break
            chosen = _subcommands(parser).get(word)
            if chosen is not None:
                taken = {
                    option for option in seen if option.partition("=")[0] in chosen._option_string_actions
                }
                if taken:
                    early |= taken
                    taker = chosen
                parser = chosen
            elif word in extras and word.startswith("-") and parser is self:
                seen.append(word)
        if early != set(extras):
            return None
        metavar = self._subcommand_metavar()
        verb = "comes" if len(extras) == 1 else "come"
        return (
            f"argument {metavar}: {', '.join(extras)} {verb} after {metavar}, not before it: "
            f"{taker.prog} … {' '.join(extras)}"
        )

    def _subcommand_metavar(self) -> str:
        """This command's subcommand metavar (COMMAND, ACTION), as argparse names it in its errors."""
        subcommands = next(a for a in self._actions if isinstance(a, argparse._SubParsersAction))
        return str(subcommands.metavar or subcommands.dest)

    def _option_before_subcommand(self, message: str) -> str | None:
        """`act URL --token-file FILE drain …`: the option belongs to the subcommand, so this parser does
        not know it, and argparse took its value for the subcommand — "invalid choice: 'FILE'", naming the
        file, not the mistake. Say which option came too early and the command that takes it; an option
        no command named after it takes (`stormdeck --url URL attach`) is named as no option of it."""
        match = re.fullmatch(r"argument (\S+): invalid choice: '(.*?)' \(choose from .*\)", message)
        words = getattr(self, "_words", [])
        if match is None or match.group(2) not in words:
            return None
        metavar, value = match.groups()
        at = words.index(value)
        option = words[at - 1] if at > 0 else ""
        if not option.startswith("-") or option in self._option_string_actions:
            return None
        named = self._named_subcommands(words[at + 1 :])  # (argparse named the subcommand by its metavar)
        taker = next((parser for parser in reversed(named) if option in parser._option_string_actions), None)
        if taker is None:
            command = named[-1].prog if named else self.prog
            see = f"; see {command} --help" if named else ""
            return f"argument {metavar}: {option} is not an option of {command} (it took {value!r} for {metavar}){see}"
        return (
            f"argument {metavar}: {option} comes after {metavar}, not before it (it took {value!r} for "
            f"{metavar}): {taker.prog} … {option} {value}"
        )

    def _help_of_named_subcommand(self, words: Sequence[str]) -> None:
        """`stormdeck act drain --help`: the help of the subcommand named before --help, even when a
        positional that comes before it is left out. argparse read `drain` as act's URL and refused it
        ("argument URL: 'drain' is not allowed…", exit 2): an action's help needed a dummy URL first."""
        asked = next((at for at, word in enumerate(words) if word in ("-h", "--help", "--")), None)
        if asked is None or words[asked] == "--":
            return
        named = self._named_subcommands(words[:asked])
        if named:
            named[-1].print_help()
            named[-1].exit(0)

    def _named_subcommands(self, words: Sequence[str]) -> list[argparse.ArgumentParser]:
        """The subcommands `words` name, one level down each (`sim run demo`: sim's, then run's parser)."""
        named: list[argparse.ArgumentParser] = []
        parser: argparse.ArgumentParser = self
        for word in words:
            if word == "--":
                break
            chosen = _subcommands(parser).get(word)
            if chosen is not None:
                named.append(chosen)
                parser = chosen
        return named

    def _refuse_abbreviations(self, args: Sequence[str] | None) -> None:
        """A prefix of an option is not that option: argparse took `--unt 5` for `--until 5`, so a script
        that abbreviated broke, or meant another option, once a new one began the same way — and `attach`
        and `record` refused what every other command took. Refused here, before anything is read, naming
        the option given and the whole ones it begins, in the usage of the command that takes them; never
        its value, which argparse would echo ("unrecognized arguments: --token SECRET"). A prefix of token
        options only (`--token X` for `--token-file X`) is told where a token goes instead: a token typed on
        the command line, where `ps` shows it, was read as a file name and echoed back in the error. The
        subcommands named count too: `stormdeck --token X attach URL` echoed X in "invalid choice: 'X'"."""
        words = sys.argv[1:] if args is None else list(args)
        parsers = (self, *self._named_subcommands(words))
        known = [name for parser in parsers for name in parser._option_string_actions]  # in their order
        for word in words:
            if word == "--":
                return
            option = word.partition("=")[0]
            if not option.startswith("--") or option in known:
                continue
            meant = list(dict.fromkeys(name for name in known if name.startswith(option)))
            if not meant:
                continue  # argparse's "unrecognized arguments" names it
            owner = next(parser for parser in reversed(parsers) if meant[0] in parser._option_string_actions)
            if all("token" in name for name in meant):
                owner.error(
                    f"{option}: not an option (tokens are never given on the command line, where ps shows "
                    f"them); use {meant[0]} FILE"
                )
            owner.error(f"{option} is not an option (options are not abbreviated): {' or '.join(meant)}")


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """A command's subcommands by name (none: {})."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


class _DescribedSubcommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Subcommands whose --help opens with the line their parent lists them by, unless they say more:
    `stormdeck plan --help` went from the usage line straight to "positional arguments"."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        summary = kwargs.get("help")
        if kwargs.get("description") is None and summary:
            kwargs["description"] = f"{summary[0].upper()}{summary[1:]}."
        return super().add_parser(name, **kwargs)


def add_subcommands(parser: argparse.ArgumentParser, **kwargs: Any) -> argparse._SubParsersAction:
    """`parser.add_subparsers(**kwargs)`, with `parser`'s help as the handler when no subcommand is given
    (a subcommand's own `set_defaults(handler=...)` replaces it when one is)."""

    def print_group_help(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return USAGE_EXIT

    parser.set_defaults(handler=print_group_help)
    kwargs.setdefault("parser_class", CommandParser)
    return parser.add_subparsers(**kwargs)
