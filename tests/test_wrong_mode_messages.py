"""An option given in a mode that would not read it is refused with one plain sentence: the option, what
it needs (or cannot go with), and why in parentheses — said once.

Review: `drill thundering-herd --actions x` said "--actions: 'x' is not allowed; expected --headless with
it: --actions needs --headless" — the field-error shape around a sentence that already said it all, the
option named twice. A property over every mix of drill modes and options, and the other wrong-mode
refusals (`bench server --storm-at` with `--scenario`), each through the command's own handler.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console.cli import build_parser, main
from console.errors import FlagError, InputError

#: Words of each option, as a user types them (files in a scratch directory: `--record` checks its own).
_SCRATCH = Path(tempfile.mkdtemp(prefix="stormdeck-modes-"))
DRILL_OPTIONS = {
    "--actions": ["--actions", str(_SCRATCH / "actions.toml")],
    "--json": ["--json"],
    "--record": ["--record", str(_SCRATCH / "run.sdrec")],
    "--paused": ["--paused"],
    "--host": ["--host", "0.0.0.0"],
    "--port": ["--port", "8470"],
    "--token-file": ["--token-file", str(_SCRATCH / "tokens")],
    "--seed": ["--seed", "3"],
    "--speed": ["--speed", "2"],
    "--set": ["--set", "nodes.count=20"],
    "--audit-log": ["--audit-log", str(_SCRATCH / "audit.jsonl")],
}
#: What every run reads, in each mode.
OF_A_RUN = {"--seed", "--speed", "--set", "--audit-log"}
#: What each drill mode would not read — written here from docs/drills.md, not from the code under test.
SERVING = {"--paused", "--host", "--port", "--token-file"}
UNREAD = {
    (): {"--actions", "--json", *SERVING},  # the console
    ("--headless",): SERVING,
    ("--serve",): {"--actions", "--json", "--record"},
    # Listing (or showing one drill) runs nothing: only --json is read. `drill --list --serve` listed.
    ("--list",): {"--actions", "--record", *SERVING, *OF_A_RUN},
}
#: Modes that never go together (each with its own refusal).
CLASHING = {("--serve", "--headless"), ("--list", "--headless"), ("--list", "--serve")}


def said_once(message: str, option: str) -> list[str]:
    """What is wrong with a wrong-mode message about `option` (empty: it reads as one plain sentence)."""
    named = re.compile(rf"(?<![\w-]){re.escape(option)}(?![\w-])")
    outside = message
    while True:  # the sentence without its parentheses (the why), nested ones too
        shorter = re.sub(r"\([^()]*\)", "", outside)
        if shorter == outside:
            break
        outside = shorter
    faults = []
    if not message.startswith(f"{option} "):
        faults.append("does not begin with the option")
    if "is not allowed" in message or "expected" in message:
        faults.append("the field-error shape (a value is not what is wrong)")
    if len(named.findall(outside)) != 1:
        faults.append("names the option more than once outside the why")
    if not re.search(r"--[a-z]", named.sub("", outside)) and "the console" not in outside:
        faults.append("names no mode to use instead")
    return faults


class Ran(Exception):
    """The drill would have started: the mode reads every option given."""


def _run(*args: object, **kwargs: object) -> int:
    raise Ran


class Listed(Exception):
    """The drills were listed (or one shown)."""


def _listed(*args: object, **kwargs: object) -> None:
    raise Listed


@settings(max_examples=150, deadline=None, database=None)
@given(
    mode=st.sampled_from([(), ("--headless",), ("--serve",), ("--list",), *sorted(CLASHING)]),
    options=st.sets(st.sampled_from(sorted(DRILL_OPTIONS))),
    by_word=st.booleans(),
)
def test_every_drill_option_in_a_mode_that_would_not_read_it_is_refused_once_plainly(
    mode: tuple[str, ...], options: set[str], by_word: bool
) -> None:
    """`by_word`: `drill list NAME …` for `drill NAME --list …`."""
    from console.cli import drill

    given = [word for o in sorted(options) for word in DRILL_OPTIONS[o]]
    if by_word and "--list" in mode:
        argv = ["drill", "list", "regional-outage", *(m for m in mode if m != "--list"), *given]
    else:
        argv = ["drill", "regional-outage", *mode, *given]
    args = build_parser().parse_args(argv)
    with pytest.MonkeyPatch.context() as patch:
        for started in ("_serve", "_interactive", "_headless"):
            patch.setattr(drill, started, _run)
        patch.setattr(drill, "_show", _listed)
        patch.setattr(drill, "_list", _listed)
        try:
            drill.run_drill(args)
        except Ran:
            assert mode in UNREAD and not options & UNREAD[mode], f"{argv}: ran, ignoring an option"
            return
        except Listed:
            assert mode == ("--list",) and not options & UNREAD[mode], f"{argv}: listed, ignoring an option"
            return
        except InputError as error:
            assert isinstance(error, FlagError), f"{argv}: {error} (a value error, not the mode's)"
            assert error.field in options | set(mode), f"{argv}: {error}"
            assert said_once(str(error), error.field) == [], f"{argv}: {error}"
            return
    raise AssertionError(f"{argv}: neither ran nor refused")


def test_the_review_case_reads_as_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drill", "thundering-herd", "--actions", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stormdeck: --actions needs --headless (a drill run without the console"), err
    assert err.count("--actions") == 1, err


def test_a_storm_of_its_own_with_a_scenario_is_refused_once_plainly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`bench server --storm-at 20 --scenario NAME` read "--storm-at: 20.0 is not allowed; expected no
    storm of its own with --scenario (its timeline has one)"."""
    assert main(["bench", "server", "--scenario", "demo", "--storm-at", "20"]) == 2
    err = capsys.readouterr().err.removeprefix("stormdeck: ").strip()
    assert said_once(err, "--storm-at") == [], err


@pytest.mark.parametrize(
    ("message", "faults"),
    [
        ("--actions: 'x' is not allowed; expected --headless with it: --actions needs --headless", 3),
        ("--port is for --serve (--port 8470 is the served drill's)", 0),
        ("--port is for --serve: --port is the served drill's", 1),
        ("--json needs nothing", 1),
    ],
)
def test_said_once_tells_a_doubled_message_from_a_plain_one(message: str, faults: int) -> None:
    option = message.split()[0].rstrip(":")
    assert len(said_once(message, option)) == faults, said_once(message, option)
