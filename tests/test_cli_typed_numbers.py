"""Every number option of every command is read with `typed_float`/`typed_int`: a value refused is repeated
as the user typed it ('-1.50', not the -1.5 Python made of it), and nan, inf or a number too large for a
float (1e400) is refused naming the option and its range — exit 2, never a traceback."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from console.cli import build_parser, main

SERVE = ["gateway", "serve", "--port", "0", "--admin-port", "0", "--node-id", "a"]
LOAD = ["loadgen", "ws://127.0.0.1:9/channel/x", "--clients", "1", "--policy", "fixed"]
#: {tmp}: the test's own directory (a nodes file and a token file for `controller`, a file to record to).
CONTROLLER = ["controller", "--nodes", "{tmp}/nodes.toml", "--node-token-file", "{tmp}/node.token"]
RECORD = ["record", "http://127.0.0.1:9", "--out", "{tmp}/out.sdrec"]
HEADLESS_DRILL = ["drill", "thundering-herd", "--headless"]

#: (the words before it: a command valid but for the option, the option, whether it takes whole numbers)
NUMBER_OPTIONS = [
    *[(SERVE, option, True) for option in ("--port", "--admin-port", "--burst", "--max-connections")],
    *[(SERVE, option, True) for option in ("--work-factor", "--capacity", "--seed")],
    *[
        (SERVE, option, False)
        for option in (
            "--publish-rate-per-s",
            "--rate-per-s",
            "--lifetime-s",
            "--lifetime-dither-s",
            "--close-grace-s",
            "--ping-interval-s",
        )
    ],
    (["gateway", "publish", "--history", "redis://127.0.0.1:1/0"], "--rate-per-s", False),
    *[(["fleet", "up"], option, True) for option in ("--nodes", "--port", "--clients", "--work-factor")],
    *[(["fleet", "up"], option, False) for option in ("--publish-rate-per-s", "--duration")],
    (CONTROLLER, "--port", True),
    *[(LOAD, option, True) for option in ("--clients", "--workers", "--seed", "--work-factor")],
    *[(LOAD, option, False) for option in ("--duration", "--ramp-s")],
    (RECORD, "--frames", True),
    *[(RECORD, option, False) for option in ("--max-age-s", "--wait-s")],
    (["replay", "{tmp}/none.sdrec"], "--speed", False),
    *[(["sim", "serve", "demo"], option, True) for option in ("--port", "--coalesce-events", "--seed")],
    (["sim", "serve", "demo"], "--speed", False),
    (["sim", "run", "demo"], "--seed", True),
    (["console", "no-such-scenario"], "--seed", True),
    (["console", "no-such-scenario"], "--speed", False),
    (["bench", "sim"], "--repeats", True),
    *[(["bench", "server"], option, True) for option in ("--clients", "--nodes", "--coalesce-events")],
    *[(["bench", "server"], option, False) for option in ("--seconds", "--storm-at", "--speed")],
    *[(["bench", "gateway"], option, True) for option in ("--idle-clients", "--cost-attempts")],
    *[(["bench", "console"], option, True) for option in ("--nodes", "--frames", "--history-s")],
    (["bench", "console"], "--rate", False),
    *[(["bench", "actions"], option, True) for option in ("--samples", "--until")],
    (HEADLESS_DRILL, "--seed", True),
    (HEADLESS_DRILL, "--speed", False),
    (["drill", "thundering-herd"], "--speed", False),
    (["drill", "thundering-herd", "--serve"], "--port", True),
]
IDS = [f"{' '.join(words[:2])} {option}" for words, option, _ in NUMBER_OPTIONS]

#: Out of every option's range, spelt as Python would not print the number it makes of it.
TYPED_WHOLE = "-01"
TYPED_NUMBER = "-1.50"
#: Numbers a float holds but no option allows: nan passes every `<=` test, 1e400 is read as inf.
NOT_FINITE = ["nan", "inf", "-inf", "1e400"]
#: How a range is said: "[0, 65535]", "(0, 3600]", "1 to 16", "above 0", "at least 5", "≥ 0", "0 ≤ MIN".
RANGE = re.compile(r"[\[(]-?[\d.]+, [\d.,]+[\])]|\d to [\d,]+|above \d|at least \d|≥ \d|\d ≤")


@pytest.fixture
def tmp(tmp_path: Path) -> str:
    (tmp_path / "nodes.toml").write_text('[[nodes]]\nid = "a"\nadmin = "http://127.0.0.1:9"\n')
    (tmp_path / "node.token").write_text("t\n")
    return str(tmp_path)


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What `stormdeck ARGV` says on stderr, having refused it with exit 2 (by its check or by argparse)."""
    try:
        status = main(argv)
    except SystemExit as done:  # refused while the command line is read (not a whole number)
        status = done.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(("words", "option", "whole"), NUMBER_OPTIONS, ids=IDS)
def test_a_number_refused_is_repeated_as_typed(words, option, whole, tmp, capsys) -> None:
    """`fleet up --publish-rate-per-s -1.50` said "-1.5 is not allowed", the number argparse made of it."""
    typed = TYPED_WHOLE if whole else TYPED_NUMBER
    argv = [word.format(tmp=tmp) for word in words]
    err = refused([*argv, f"{option}={typed}"], capsys)
    assert f"{option}: {typed!r} is not allowed; expected " in err, err
    assert RANGE.search(err.partition("expected ")[2]), err


@pytest.mark.parametrize(("words", "option", "whole"), NUMBER_OPTIONS, ids=IDS)
@pytest.mark.parametrize("typed", NOT_FINITE)
def test_no_finite_number_is_refused_naming_the_option_and_its_range(
    words, option, whole, typed, tmp, capsys
) -> None:
    """`gateway serve --rate-per-s nan` said "expected a finite number", not the range it takes; `record
    --max-age-s inf` was taken (and asked for a token)."""
    argv = [word.format(tmp=tmp) for word in words]
    err = refused([*argv, f"{option}={typed}"], capsys)
    assert f"{option}: {typed!r} is not " in err, err
    assert RANGE.search(err.partition("expected ")[2]), err


@pytest.mark.parametrize(
    ("window", "said"),
    [
        (["-1.50", "30"], "['-1.50', '30']"),
        (["nan", "30"], "['nan', '30']"),
        (["1", "1e400"], "['1', '1e400']"),
    ],
)
def test_a_window_of_two_numbers_is_repeated_as_typed(window: list[str], said: str, capsys) -> None:
    err = refused([*SERVE, "--retry-after-s", *window], capsys)
    assert f"--retry-after-s: {said} is not allowed; expected [min, max] with 0 ≤ min ≤ max ≤ 3600" in err, (
        err
    )


def number_options(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from number_options(sub, (*path, name))
        elif action.type in (int, float):
            yield (
                " ".join((*path, action.option_strings[0] if action.option_strings else action.dest)),
                action,
            )


def test_no_number_option_is_read_with_a_plain_int_or_float() -> None:
    """A new option read with `type=float` would say the number Python made of its value again."""
    assert [name for name, _ in number_options(build_parser())] == []


def test_every_number_option_is_in_the_table_above() -> None:
    from console.cli.checks import typed_float, typed_int

    def typed(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[str]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from typed(sub, (*path, name))
            elif action.type in (typed_float, typed_int) and path[0] != "act" and action.nargs is None:
                yield f"{path[0]} {action.option_strings[0]}"

    listed = {f"{words[0]} {option}" for words, option, _ in NUMBER_OPTIONS}
    assert set(typed(build_parser())) - listed == set()
