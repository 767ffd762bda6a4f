"""Every command says what it does in its --help, and every option and argument what it takes."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from console.cli import build_parser, main
from console.cli.groups import CommandParser


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name))


#: A value for a positional that comes before a subcommand (the group checks it).
EXAMPLES = {"URL": "http://127.0.0.1:8470"}


def groups(
    parser: argparse.ArgumentParser, argv: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], tuple[str, ...], argparse.ArgumentParser]]:
    """Every command made of subcommands, as (its words alone, its words with the positionals that come
    before its subcommand, e.g. `act URL`, its parser)."""
    leading = tuple(
        EXAMPLES.get(action.metavar or action.dest, action.metavar or action.dest)
        for action in parser._actions
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction)
    )
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            if argv:  # the root run alone is the embedded fleet, no group
                yield argv, (*argv, *leading), parser
            for name, sub in action.choices.items():
                yield from groups(sub, (*argv, *leading, name))


def test_a_group_without_its_subcommand_shows_its_help_and_exits_2(capsys) -> None:
    """`stormdeck plan`, `audit` and `act` (with or without a URL) and `act URL rollout` exited 2 with a usage
    error while `sim`, `bench`, `config`, `gateway` and `fleet` printed their help and exited 0. Then every
    group exited 0: a script calling `stormdeck sim` with its subcommand left out took it for done. A group
    without its subcommand is a usage error (argparse's 2), its help on stderr, listing the subcommands."""
    found = list(groups(build_parser()))
    assert {argv[0] for argv, _, _ in found} >= {"sim", "bench", "gateway", "fleet", "config", "act", "plan"}
    assert {argv[0] for argv, _, _ in found} >= {"audit"}
    assert ("act", EXAMPLES["URL"], "rollout") in {argv for argv, _, _ in found}
    for alone, with_positionals, parser in found:
        subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for argv in {alone, with_positionals}:
            assert main(list(argv)) == 2, argv
            out, err = capsys.readouterr()
            assert out == "", argv
            assert err.startswith(parser.format_usage()), argv
            assert all(name in err for name in subcommands.choices), argv


def test_a_group_asked_for_its_help_shows_it_on_stdout_and_exits_0(capsys) -> None:
    """`stormdeck sim --help` asked for it: no usage error."""
    with pytest.raises(SystemExit) as done:
        main(["sim", "--help"])
    assert done.value.code == 0
    assert "SUBCOMMAND" in capsys.readouterr().out


def usage_error(argv: list[str], capsys) -> str:
    """What `stormdeck ARGV` says on stderr, having refused its words with argparse's usage error (exit 2)."""
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    return capsys.readouterr().err


def test_act_without_its_url_names_the_url_not_the_help(capsys) -> None:
    # `stormdeck act drain`: argparse reads "drain" as the URL; help and exit 0 would hide the mistake.
    assert "URL: 'drain' is not allowed" in usage_error(["act", "drain"], capsys)


def test_act_with_a_node_but_without_its_url_names_the_url_not_the_node(capsys) -> None:
    # `stormdeck act drain gw-010 --rate 833`: argparse read "drain" as the URL and refused the node id as
    # the action ("invalid choice: 'gw-010'"), which named neither mistake.
    err = usage_error(["act", "drain", "gw-010", "--rate", "833", "--deadline", "600"], capsys)
    assert "argument URL: 'drain' is not allowed; expected a fleet API URL before the action" in err
    assert "gw-010" not in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        # `plan drain gw-010` said "the following arguments are required: NODE": the node was given.
        (["plan", "drain", "gw-010"], "expected a fleet API URL before NODE (stormdeck plan drain URL NODE"),
        (["plan", "drain", "gw-010", "--json"], "expected a fleet API URL before NODE"),
        # `inject restart_nodes` said "required: EVENT"; with parameters, the event was a bad URL.
        (["inject", "restart_nodes"], "expected a fleet API URL before the event, e.g. stormdeck inject"),
        (["inject", "restart_nodes", "nodes=gw-001"], "expected a fleet API URL before the event"),
        (["act", "undrain", "gw-010"], "expected a fleet API URL before the action"),
        (["act", "rollout", "halt"], "expected a fleet API URL before the action"),
        (["act", "gw-010", "drain"], "expected a fleet API URL before ACTION"),
    ],
)
def test_a_command_whose_url_is_forgotten_names_the_url(argv: list[str], expected: str, capsys) -> None:
    err = usage_error(argv, capsys)
    assert f"argument URL: {argv[2 if argv[0] == 'plan' else 1]!r} is not allowed; {expected}" in err, err
    assert "required" not in err and "invalid choice" not in err


def test_every_option_and_argument_has_a_help_text() -> None:
    missing = [
        (" ".join(path), action.option_strings[0] if action.option_strings else action.dest)
        for path, parser in commands(build_parser())
        for action in parser._actions
        if action.help is None and not isinstance(action, argparse._SubParsersAction)
    ]
    assert missing == []


def _no_default(default: object) -> bool:
    # By identity: `0 in (None, False)` is true, so a default of 0 (`gateway serve --publish-rate-per-s`)
    # passed for no default and its --help never had to name it.
    return default is None or default is False or default is argparse.SUPPRESS or default == []


def _options_with_a_default() -> Iterator[tuple[str, argparse.Action]]:
    for path, parser in commands(build_parser()):
        for action in parser._actions:
            if action.option_strings and not _no_default(action.default):
                yield f"{' '.join(path)} {action.option_strings[-1]}", action


def test_every_option_with_a_default_says_it() -> None:
    """Found in a docs review: `bench console --history-s` (3600), `act … rollout start --pause-cpu` (75),
    `fleet up --port` (8471) and others took a default their --help did not name."""
    missing = [name for name, action in _options_with_a_default() if "default" not in (action.help or "")]
    assert missing == []


@pytest.mark.parametrize("command", ["record", "replay", "report", "inject", "attach", "drill"])
def test_the_recording_commands_say_what_an_option_left_out_does(command: str) -> None:
    """User pass over record/replay/report/inject: `record --max-size` and `--max-age-s` (no retention),
    `--token-file` (STORMDECK_TOKEN) and `replay --theme` (the remembered one, else dark) defaulted to None
    and said nothing of what leaving them out does; `--token-file TOKEN_FILE` read as a second name. A README
    pass found the same in `attach` (--token-file, --theme, --record) and `drill` (--actions, --record, …)."""
    parser = dict(commands(build_parser()))[(command,)]
    unsaid = [
        action.option_strings[-1]
        for action in parser._actions
        if action.option_strings and action.nargs != 0 and not action.required
        if "default" not in (action.help or "") or (action.metavar or action.dest.upper()).endswith("_FILE")
    ]
    assert unsaid == []
    if command == "record":
        from console.record.writer import MIN_MAX_BYTES

        (max_size,) = [a for a in parser._actions if "--max-size" in a.option_strings]
        assert f"at least {MIN_MAX_BYTES // 1024}K" in max_size.help  # the smallest the writer takes


def test_a_value_is_shown_as_one_word_in_capitals() -> None:
    """A README pass: `--token-file TOKEN_FILE`, `--audit-log AUDIT_LOG`, `--publish-rate-per-s
    PUBLISH_RATE_PER_S` (argparse's default, the option's name again, read as a second option) in `sim
    serve`, `fleet up`, `gateway serve`, ...; and `attach url`, `record url`, `report file`, `replay file`,
    `drill name` where `act`, `plan` and `inject` say URL."""
    shown = [
        (" ".join(path), action.option_strings[-1] if action.option_strings else action.dest, metavar)
        for path, parser in commands(build_parser())
        for action in parser._actions
        if action.nargs != 0 and action.choices is None
        if not isinstance(action, argparse._SubParsersAction)
        for metavar in [action.metavar or (action.dest.upper() if action.option_strings else action.dest)]
        if isinstance(metavar, str)
        for word in [metavar.split(".")[0]]  # FILE.jsonl: the suffix says what the file holds
        if "_" in word or word != word.upper()
    ]
    assert shown == []


def test_a_default_named_in_the_help_is_the_default() -> None:
    import re

    wrong = []
    for name, action in _options_with_a_default():
        said = re.search(r"default:? (-?[0-9][0-9,]*(?:\.[0-9]+)?)(?=[ ;,)]|$)", action.help or "")
        number = said and float(said.group(1).rstrip(",.").replace(",", ""))
        if said and isinstance(action.default, int | float) and number != float(action.default):
            wrong.append((name, said.group(1), action.default))
    assert wrong == []


def test_every_number_a_command_takes_names_its_range() -> None:
    """Found in review: `gateway serve --lifetime-s 1e300` and `--capacity 100000000000000` were accepted;
    each numeric option of the real fleet's commands now has a range, and its --help names it (a port's
    range is TCP's). A README pass found the rest saying none while refusing values outside one: `--seed`
    (sim run, sim serve, drill), `sim serve --port` and `drill --port`, `bench sim --repeats`, `bench console
    --history-s`, `bench server --speed`, `record --frames`."""
    a_range = re.compile(r"[\[(][\d.]+, [\d.]+\]|\b\d[\d,]* to \S+|at most|at least|above 0|≤|≥")
    unnamed = [
        (" ".join(path), action.option_strings[-1])
        for path, parser in commands(build_parser())
        for action in parser._actions
        if action.option_strings and action.type in (int, float)
        if not a_range.search(action.help or "")
    ]
    assert unnamed == []


#: Options of `act` and `plan` that take words, not a quantity: no unit or range to name.
WORDS = {"--token-file", "--typed", "--override-reason", "--nodes"}
#: A quantity's unit, as the helps write it.
A_UNIT = re.compile(r"\b(ms|seconds?|per second|nodes?|connections?)\b|%")
#: A range: an interval, "N to M", or a bound with ≤ (a window's MIN:MAX).
A_RANGE = re.compile(r"[\[(]\d[\d.]*, \d[\d.,]*[\])]|\b\d[\d,]* to \S+|≤ \d")


def _act_and_plan_options() -> Iterator[tuple[str, argparse.Action]]:
    for path, parser in commands(build_parser()):
        if path[:1] in (("act",), ("plan",)):
            for action in parser._actions:
                if action.option_strings and action.nargs != 0:
                    yield f"{' '.join(path)} {action.option_strings[-1]}", action


def test_every_act_and_plan_option_says_its_unit_range_and_default() -> None:
    """A --help pass: `act add-capacity --count` said only "nodes to add", `act admission --burst` had no
    range, a required option did not say so, and an option taking words (a token file, a typed name) did not
    say what goes without it."""
    found = dict(_act_and_plan_options())
    assert {"act drain --rate", "act admission --retry-after", "act add-capacity --count"} <= set(found)
    missing = []
    for name, action in found.items():
        text = " ".join((action.help or "").split())
        if "default" not in text and "required" not in text:
            missing.append((name, "default"))
        if action.required and "required" not in text:
            missing.append((name, "required"))
        if name.split()[-1] in WORDS or action.choices:
            continue
        if not A_UNIT.search(text):
            missing.append((name, "unit"))
        if not A_RANGE.search(text):
            missing.append((name, "range"))
    assert missing == []


@pytest.mark.parametrize(
    ("argv", "example"),
    [
        (["act", EXAMPLES["URL"], "drain"], "stormdeck act http://127.0.0.1:8470 drain gw-017 --rate 50"),
        (["act", EXAMPLES["URL"], "undrain"], "stormdeck act http://127.0.0.1:8470 undrain gw-017"),
        (["act", EXAMPLES["URL"], "rollout", "start"], "rollout start --batch-size 2 --interval 120"),
        (["act", EXAMPLES["URL"], "admission"], "admission --rate 100 --retry-after 5:60"),
        (["act", EXAMPLES["URL"], "add-capacity"], "add-capacity --count 4 --dry-run"),
        (["plan", "drain"], "stormdeck plan drain http://127.0.0.1:8470 gw-017"),
    ],
)
def test_act_and_plan_show_examples(argv: list[str], example: str, capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "\nexamples:\n" in out and example in out, out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["plan", "drain"], ["drain-plan", "Nothing is changed", "URL ", "NODE ", "STORMDECK_TOKEN"]),
        (["audit", "verify"], ["hash", "Exit 0 when intact", "the audit log (JSONL)"]),
        (
            ["gateway", "serve"],
            ["reference gateway node", "(default 1800)", "(default 180)", "(default 4)", "the channel"],
        ),
        (["loadgen"], ["how many clients", "seed of the clients"]),
        (["fleet", "up"], ["messages a second published"]),
        # Found in review: the help named FLEET.jsonl only, and the server wrote FLEET-PID.jsonl.
        (["sim", "serve"], ["stormdeck/audit/FLEET.jsonl, or FLEET-PID.jsonl when another server"]),
        # The drill console's (served) clock refuses above 100×; the help named no range.
        (["drill"], ["fleet seconds per wall second in (0, 100]"]),
    ],
)
def test_help_describes_the_command_and_its_defaults(argv: list[str], words: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines where it likes
    for word in words:
        assert word in text, word


def test_a_reader_that_goes_away_is_a_quiet_exit(tmp_path) -> None:
    """`stormdeck config check | head -1`: the pipe closes under the writer — a BrokenPipeError traceback
    before; now exit 141 (128 + SIGPIPE) and nothing on stderr."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "console", "config", "check"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141 and done.stderr == ""


def test_ctrl_c_while_the_commands_load_is_a_quiet_130(monkeypatch) -> None:
    """Ctrl-C a second after `fleet up` started printed a KeyboardInterrupt traceback from the imports."""
    import console.cli as cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["fleet", "up"]) == 130


def test_every_bench_says_what_it_measures_in_its_description() -> None:
    """`bench console --help` and `bench gateway --help` had no description line; the other benches had."""
    benches = dict(commands(build_parser()))
    found = [path for path in benches if len(path) == 2 and path[0] == "bench"]
    assert {("bench", "console"), ("bench", "gateway")} <= set(found)
    for path in found:
        assert benches[path].description, path


def test_the_readme_says_a_dry_run_of_act_exits_0() -> None:
    from pathlib import Path

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    assert "Exit codes: 0 applied (or dry run shown)" in " ".join(readme.split())


def _leaf_commands() -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    for path, parser in commands(build_parser()):
        if path and not any(isinstance(action, argparse._SubParsersAction) for action in parser._actions):
            yield path, parser


def test_every_command_shows_an_example_that_parses() -> None:
    """A README pass: `act … drain` and `plan drain` ended their --help with examples, the other commands
    (sim run, sim serve, attach, drill, record, fleet up, inject, …) with none (21 of 29). Each example runs the command
    it is shown under and is a command line its parser takes as it stands (placeholders in capitals are
    values argparse takes; a `#` comment is not part of it)."""
    import shlex

    from console.cli.groups import CommandParser

    missing, wrong = [], []
    for path, parser in _leaf_commands():
        examples = parser.examples if isinstance(parser, CommandParser) else ()
        own = [line for line in examples if set(path) <= set(shlex.split(line, comments=True))]
        if not own:
            missing.append(" ".join(path))
        for line in examples:
            words = shlex.split(line, comments=True)
            assert words[0] == "stormdeck", line
            try:
                build_parser().parse_args(words[1:])
            except SystemExit:
                wrong.append(line)
    assert missing == [] and wrong == []


def test_replay_help_names_every_key_the_readme_gives_it() -> None:
    """A README pass: `replay --help` listed space , . g x 1–4 [ ] { } but not `( )` (previous/next event:
    an injection, a drill's story line or hint) nor `L` (the recording's audit log)."""
    text = " ".join(dict(commands(build_parser()))[("replay",)].format_help().split())
    for keys in ("space", ", and .", "[ ]", "{ }", "( )", " L "):
        assert keys in text, keys


URL = "http://127.0.0.1:8470"
DRAIN = ["drain", "gw-017", "--rate", "5", "--deadline", "600", "--hint", "1000:30000"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        # README pass: `act URL --token-file FILE drain …` said "invalid choice: 'FILE'", naming the file.
        (
            ["act", "http://127.0.0.1:8470", "--token-file", "tok", "drain", "gw-017", "--rate", "5"],
            "argument ACTION: --token-file comes after ACTION, not before it (it took 'tok' for ACTION): "
            "stormdeck act URL drain … --token-file tok",
        ),
        (
            ["sim", "--seed", "3", "run", "demo"],
            "argument SUBCOMMAND: --seed comes after SUBCOMMAND, not before it (it took '3' for SUBCOMMAND): "
            "stormdeck sim run … --seed 3",
        ),
        # `act URL --dry-run drain …` said argparse's bare "unrecognized arguments: --dry-run".
        (
            ["act", URL, "--dry-run", *DRAIN],
            "argument ACTION: --dry-run comes after ACTION, not before it: stormdeck act URL drain … --dry-run",
        ),
        (
            ["act", URL, "--yes", "--dry-run", *DRAIN],
            "argument ACTION: --yes, --dry-run come after ACTION, not before it: "
            "stormdeck act URL drain … --yes --dry-run",
        ),
    ],
)
def test_an_option_or_flag_before_its_subcommand_is_named(argv: list[str], expected: str, capsys) -> None:
    err = usage_error(argv, capsys)
    assert expected in err, err
    assert "unrecognized arguments" not in err and "invalid choice" not in err, err
    assert err.startswith(f"usage: stormdeck {argv[0]} [-h]"), err  # the command it was given to


def test_a_flag_no_subcommand_knows_is_still_unrecognized(capsys) -> None:
    assert "unrecognized arguments: --dry-rn" in usage_error(["act", URL, "--dry-rn", *DRAIN], capsys)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        # `stormdeck --json sim list` said argparse's bare "unrecognized arguments: --json".
        (
            ["--json", "sim", "list"],
            "argument COMMAND: --json comes after COMMAND, not before it: stormdeck sim list … --json",
        ),
        (
            ["--json", "act", URL, "rollout", "halt"],
            "argument COMMAND: --json comes after COMMAND, not before it: stormdeck act URL rollout halt … --json",
        ),
        # `stormdeck --set x=1 sim run …` said "invalid choice: 'x=1'", naming the value as a command.
        (
            ["--set", "x=1", "sim", "run", "thundering-herd"],
            "argument COMMAND: --set comes after COMMAND, not before it (it took 'x=1' for COMMAND): "
            "stormdeck sim run … --set x=1",
        ),
        (
            ["--set=x=1", "sim", "run", "demo"],
            "--set=x=1 comes after COMMAND, not before it: stormdeck sim run …",
        ),
        (
            ["--token-file", "tok", "attach", URL],
            "argument COMMAND: --token-file comes after COMMAND, not before it (it took 'tok' for COMMAND): "
            "stormdeck attach … --token-file tok",
        ),
        (
            ["--seed", "3", "drill", "--headless"],
            "argument COMMAND: --seed comes after COMMAND, not before it (it took '3' for COMMAND): "
            "stormdeck drill … --seed 3",
        ),
        # An option no command takes (attach's URL is a positional) is not sent after the command.
        (
            ["--url", URL, "attach"],
            f"argument COMMAND: --url is not an option of stormdeck attach (it took {URL!r} for COMMAND); "
            "see stormdeck attach --help",
        ),
        (
            ["--url", URL],
            f"argument COMMAND: --url is not an option of stormdeck (it took {URL!r} for COMMAND)",
        ),
    ],
)
def test_an_option_before_the_command_is_named(argv: list[str], expected: str, capsys) -> None:
    err = usage_error(argv, capsys)
    assert expected in err, err
    assert "unrecognized arguments" not in err and "invalid choice" not in err, err
    assert "Traceback" not in err
    assert err.startswith("usage: stormdeck [-h]"), err  # the top level's usage, where the mistake is


def test_a_flag_no_command_knows_is_still_unrecognized(capsys) -> None:
    assert "unrecognized arguments: --jsn" in usage_error(["--jsn", "sim", "list"], capsys)


def test_no_words_at_all_is_still_the_embedded_fleet(monkeypatch) -> None:
    """The top level parses like every group now; with no words it is still no group's help."""
    import console.cli.embedded

    monkeypatch.setattr(console.cli.embedded, "run_embedded", lambda: 7)
    assert main([]) == 7


@pytest.mark.parametrize(
    "argv",
    [
        ["--token", "SECRET", "attach", URL],
        ["act", URL, "--token", "SECRET", *DRAIN],
        ["--tok", "SECRET", "act", URL, *DRAIN],
    ],
)
def test_a_token_before_the_command_is_refused_unseen(argv: list[str], capsys) -> None:
    """`--token X` before the command echoed X back: "invalid choice: 'X'" (or "it took 'X' for ACTION")."""
    err = usage_error(argv, capsys)
    assert "SECRET" not in err, err
    assert (
        "not an option (tokens are never given on the command line" in err and "use --token-file FILE" in err
    )


def test_no_command_takes_an_abbreviated_option() -> None:
    """argparse takes a prefix of an option for the option unless told not to; only `attach` and `record`
    were. Every parser of the tree is a `CommandParser`, which never does."""
    parsers = dict(commands(build_parser()))
    assert ("sim", "run") in parsers and ("act", "drain") in parsers and ("attach",) in parsers
    assert [path for path, parser in parsers.items() if not isinstance(parser, CommandParser)] == []
    assert [path for path, parser in parsers.items() if parser.allow_abbrev] == []


@pytest.mark.parametrize(
    ("argv", "given", "meant"),
    [
        (["--vers"], "--vers", "--version"),
        (["sim", "run", "demo", "--unt", "5"], "--unt", "--until"),
        (["sim", "run", "demo", "--unt=5"], "--unt", "--until"),
        (["sim", "run", "demo", "--se", "3"], "--se", "--set or --seed"),
        (
            ["act", URL, "drain", "gw-017", "--rat", "5", "--deadline", "600", "--hint", "1:2"],
            "--rat",
            "--rate",
        ),
        # A required option given abbreviated: argparse's words are about the one missing, not the one given.
        (
            ["controller", "--nod", "nodes.toml", "--node-token-file", "tok"],
            "--nod",
            "--nodes or --node-token-file",
        ),
    ],
)
def test_an_abbreviated_option_is_refused_naming_it_and_the_whole_one(
    argv: list[str], given: str, meant: str, capsys
) -> None:
    """`stormdeck --vers` printed the version and `sim run demo --unt 5` ran until 5 s: a prefix passed for
    the option, so a script that abbreviated broke, or meant another option, once a new option began the
    same way — and `attach` and `record` refused what every other command took. No command takes one now:
    exit 2, naming the option given and the one it abbreviates."""
    err = usage_error(argv, capsys)
    assert f"{given} is not an option (options are not abbreviated): {meant}" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["record"],
        ["inject", EXAMPLES["URL"]],
        ["attach"],
        ["plan", "drain"],
        *(
            ["act", EXAMPLES["URL"], *action]
            for action in (
                ["drain"],
                ["undrain"],
                ["rollout"],
                ["rollout", "start"],
                ["rollout", "halt"],
                ["admission"],
                ["add-capacity"],
            )
        ),
    ],
)
def test_every_command_on_a_fleet_api_gives_its_exit_codes(argv: list[str], capsys) -> None:
    """Review: `record URL --token-file BAD` exited 2 and `act … undrain` 1, and `record --help` said no
    exit code at all (nor `act URL drain --help`, `inject --help`, `attach --help`). One rule, README's:
    2 bad input, 1 transport or auth (a token the fleet refuses)."""
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert re.search(r"Exit 0 [^.]*2 bad input", text), text
    if argv[0] != "attach":  # (the console shows a refused token in its header, and keeps running)
        assert "1 transport or auth" in text, text


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["act", "drain"], "usage: stormdeck act URL drain"),
        (["act", "undrain"], "usage: stormdeck act URL undrain"),
        (["act", "rollout"], "usage: stormdeck act URL rollout"),
        (["act", "rollout", "start"], "usage: stormdeck act URL rollout start"),
        (["act", "admission"], "usage: stormdeck act URL admission"),
        (["act", "add-capacity"], "usage: stormdeck act URL add-capacity"),
    ],
)
def test_an_actions_help_needs_no_url(argv: list[str], usage: str, capsys) -> None:
    """Review: `stormdeck act drain --help` was an error ("argument URL: 'drain' is not allowed…", exit 2):
    an action's help was only reachable with a dummy URL (`act http://x drain --help`)."""
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(usage), out
    with pytest.raises(SystemExit):
        main(["act", EXAMPLES["URL"], *argv[1:], "--help"])
    assert capsys.readouterr().out == out  # the same help as with a URL


def test_without_help_a_forgotten_url_is_still_named(capsys) -> None:
    assert "URL: 'drain' is not allowed" in usage_error(["act", "drain", "gw-001", "--rate", "1"], capsys)


def numeric_options() -> Iterator[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    for path, parser in commands(build_parser()):
        for action in parser._actions:
            if action.option_strings and action.type in (int, float):
                yield " ".join(path), parser, action


@pytest.mark.parametrize(
    ("command", "parser", "action"),
    list(numeric_options()),
    ids=[f"{command} {action.option_strings[-1]}" for command, _, action in numeric_options()],
)
def test_a_number_option_given_a_word_is_refused_with_its_range(
    command: str, parser: argparse.ArgumentParser, action: argparse.Action, capsys: pytest.CaptureFixture[str]
) -> None:
    """`drill thundering-herd --speed abc` said only "argument --speed: invalid float value: 'abc'": the
    option, what it takes and its range, as its --help says them."""
    option = action.option_strings[-1]
    with pytest.raises(SystemExit) as exited:
        parser.parse_args([option, *["abc"] * (action.nargs if isinstance(action.nargs, int) else 1)])
    assert exited.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    whole = "a whole number" if action.type is int else "a number"
    assert f"{option}: 'abc' is not {whole}; expected " in said, said
    assert "invalid" not in said and re.search(r"\d", said.partition("expected")[2]), said


def test_every_command_and_group_says_what_it_does() -> None:
    """`stormdeck plan --help`, `audit --help`, `sim --help`, `fleet --help` went from the usage line straight
    to "positional arguments": the one-line help shown in the parent's list was not repeated."""
    missing = [" ".join(path) for path, parser in commands(build_parser()) if path and not parser.description]
    assert missing == []


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["sim", "list", "--json", "extra"], "usage: stormdeck sim list [-h]"),
        (["sim", "run", "demo", "extra"], "usage: stormdeck sim run [-h]"),
        (["drill", "thundering-herd", "--headless", "--jsn"], "usage: stormdeck drill [-h]"),
        (["act", URL, "--dry-rn", *DRAIN], "usage: stormdeck act [-h]"),  # before its ACTION: act's
    ],
)
def test_a_word_no_option_takes_is_refused_in_the_usage_of_the_command_it_followed(
    argv: list[str], usage: str, capsys
) -> None:
    """User pass: `sim list --json extra` answered with `usage: stormdeck [-h] [--version] COMMAND ...`, the
    top level's usage, as though the command itself were wrong."""
    err = usage_error(argv, capsys)
    assert err.startswith(usage), err
    assert f"{usage.removeprefix('usage: ').split(' [')[0]}: error: unrecognized arguments: " in err, err


def _help(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_sim_and_drill_help_say_what_the_outputs_hold_and_where_they_go(capsys) -> None:
    """User pass over `sim run`, `sim serve` and `drill` --help: --frames did not say it replaces FILE or
    where its records are described; --json not where its keys are; --set not where the keys are; drill's
    --record not what reads it or that an existing recording is continued (attach's says so)."""
    run = _help(["sim", "run"], capsys)
    assert "replaced if it exists" in run and "records: docs/scenarios.md" in run, run
    assert "keys: docs/scenarios.md" in run, run
    assert "the keys: docs/scenarios.md" in run, run  # --set
    serve = _help(["sim", "serve"], capsys)
    assert "(see `stormdeck sim list`)" in serve and "the keys: docs/scenarios.md" in serve, serve
    drill = _help(["drill"], capsys)
    assert "an existing recording is continued" in drill and "stormdeck replay" in drill, drill


def test_a_seed_that_is_no_number_reads_as_a_sentence(capsys) -> None:
    """It read "--seed: 'abc' is not a whole number; expected random seed, 0 to 2**63 - 1"."""
    for argv in (["sim", "run", "demo"], ["drill", "thundering-herd"]):
        err = usage_error([*argv, "--seed", "abc"], capsys)
        assert (
            "--seed: 'abc' is not a whole number; expected a random seed, a whole number from 0 to 2**63 - 1"
            in err
        )
