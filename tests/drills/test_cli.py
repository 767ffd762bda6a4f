"""`stormdeck drill`: the list, and bad drill or actions files exit 2 naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from console.cli import main

GOOD_DRILL = """
name = "tiny"
title = "A tiny drill"
seed_source = "outage seed (000)"
scenario = "demo"
clock_start = "04:00"
duration_s = 30
briefing = "b"

[[timeline]]
at = "04:00:10"
say = "a node restarts"
action = "restart_nodes"
nodes = 1

[[objectives]]
name = "floor"
kind = "connections_floor"
min_pct = 50
points = 10
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_no_drill_name_says_it_is_required_and_lists_the_drills(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drill"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stormdeck: NAME is required: one of ") and "thundering-herd" in err
    assert "None" not in err


def test_list_names_every_packaged_drill(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drill", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("thundering-herd", "regional-outage", "resync-cliff", "socketio-lockstep"):
        assert name in out


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('kind = "connections_floor"', 'kind = "connections_flor"', "objectives.0.kind"),
        ("min_pct = 50", "min_pct = 150", "objectives.0.min_pct"),
        ('at = "04:00:10"', 'at = "4 am"', "timeline.0.at"),
        # Past the drill's end: it read "timeline.at", not which entry.
        ('at = "04:00:10"', 'at = "04:01:00"', "timeline.0.at"),
        ('action = "restart_nodes"', 'action = "reboot"', "timeline.0.action"),
        ('scenario = "demo"', 'scenario = "nope"', "scenario"),
        ('briefing = "b"', 'briefing = "b"\nbriefin = "typo"', "briefin"),
        ('name = "floor"\n', "", "objectives.0.name"),
    ],
)
def test_a_bad_drill_file_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, field: str
) -> None:
    assert old in GOOD_DRILL
    path = write(tmp_path, "bad.toml", GOOD_DRILL.replace(old, new, 1))
    assert main(["drill", path, "--headless"]) == 2
    err = capsys.readouterr().err
    assert f"stormdeck: {field}:" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ('[[actions]]\nat_s = 5\naction = "halt"\n', "actions.0.action:"),
        ('[[actions]]\nat_s = 5\naction = "admission"\nrate = 5\n', "actions.0.rate:"),
        ('[[actions]]\naction = "rollout_halt"\n', "actions.0:"),
        # A missing key is named as required: they read "actions.0.action: None is not allowed" and
        # "deadline_s: '(missing)' is not allowed".
        ('[[actions]]\nat_s = 5\nnode = "gw-001"\n', "actions.0.action is required: one of drain, undrain"),
        (
            '[[actions]]\nat_s = 5\naction = "drain"\n',
            "actions.0.node is required: drain needs the node's id",
        ),
        (
            '[[actions]]\nat_s = 5\naction = "drain"\nnode = "gw-001"\nrate_per_s = 5\nhint_ms = [1, 2]\n',
            "actions.0.deadline_s is required: drain needs it: a number in [0, 604800]",
        ),
    ],
)
def test_a_bad_actions_file_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], script: str, said: str
) -> None:
    drill = write(tmp_path, "tiny.toml", GOOD_DRILL)
    actions = write(tmp_path, "actions.toml", script)
    assert main(["drill", drill, "--headless", "--actions", actions]) == 2
    assert f"stormdeck: {said}" in capsys.readouterr().err


DRAIN = (
    '[[actions]]\nat = "{at}"\naction = "drain"\nnode = "gw-002"\nrate_per_s = 500\ndeadline_s = 60\n'
    "hint_ms = [1000, 5000]\n{answer}\n"
)


@pytest.mark.parametrize(
    ("key", "said"),
    [
        ("name", "name is required: a drill file states name, title"),
        ("briefing", "briefing is required: a drill file states name, title"),
        ("objectives", "objectives is required: a drill file states name, title"),
        ("min_pct", "objectives.0.min_pct is required: connections_floor needs min_pct"),
    ],
)
def test_a_missing_drill_key_is_named_as_required(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, said: str
) -> None:
    """It read "name: '(missing)' is not allowed; expected a value: this key is required"."""
    kept = [line for line in GOOD_DRILL.splitlines() if not line.startswith(f"{key} =")]
    text = "\n".join(kept) if key != "objectives" else GOOD_DRILL.split("[[objectives]]")[0]
    assert main(["drill", write(tmp_path, "bad.toml", text), "--headless"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"stormdeck: {said}"), err


@pytest.mark.parametrize(
    ("overrides", "said"),
    [
        # Reported as `--set: '=3' is not allowed`: the drill's overrides went through the --set parser.
        ('{ "" = 3 }', 'overrides."": 3 is not allowed; expected a dotted scenario key'),
        ('{ " " = 3 }', 'overrides." ": 3 is not allowed; expected a dotted scenario key'),
        ('{ "nodes.cont" = 3 }', "overrides.nodes.cont: 3 is not allowed; expected a known path"),
        # Read as `--set nodes.count=4=3`: the key ended at its '=', and 3 became part of the value.
        ('{ "nodes.count=4" = 3 }', 'overrides."nodes.count=4": 3 is not allowed; expected a known path'),
        # A TOML date went through json.dumps: a TypeError traceback, exit 1.
        ('{ "nodes.count" = 1979-05-27 }', "nodes.count: datetime.date(1979, 5, 27) is not allowed"),
    ],
)
def test_a_bad_override_key_is_named_where_the_drill_file_holds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], overrides: str, said: str
) -> None:
    text = GOOD_DRILL.replace('clock_start = "04:00"', f'overrides = {overrides}\nclock_start = "04:00"')
    assert main(["drill", write(tmp_path, "bad.toml", text), "--headless"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"stormdeck: {said}"), err
    assert "--set" not in err


def test_a_drill_may_override_a_table_key_by_key() -> None:
    """`[overrides.nodes]` became the text `nodes={"count": 9}`, which TOML does not read as a table."""
    import tomllib

    from console.drills.headless import drill_scenario
    from console.drills.schema import build_drill

    text = GOOD_DRILL.replace("[[timeline]]", "[overrides.nodes]\ncount = 9\n\n[[timeline]]", 1)
    assert drill_scenario(build_drill(tomllib.loads(text))).nodes.count == 9


def test_a_tiny_drill_runs_through_the_guarded_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server's guards judge the script's drain: `confirm = true` does not answer a typed verdict (409,
    nothing applied); typing the node's id does. The run's recording gives a report with its objectives."""
    import json

    drill = write(tmp_path, "tiny.toml", GOOD_DRILL)
    script = DRAIN.format(at="04:00:05", answer="confirm = true") + DRAIN.format(
        at="04:00:06", answer='typed = "gw-002"'
    )
    actions = write(tmp_path, "actions.toml", script)
    recording = tmp_path / "run.rec"
    argv = ["drill", drill, "--headless", "--actions", actions, "--json", "--record", str(recording)]
    assert main(argv) == 0
    outcome = json.loads(capsys.readouterr().out)
    answers = [(a["time_s"], a["outcome"], a["status"], a["verdict"]) for a in outcome["actions"]]
    assert answers == [(5.0, "needs_confirmation", 409, "typed"), (6.0, "applied", 202, "typed")]
    assert outcome["score"] == 10.0 and outcome["objectives"][0]["met"]
    assert main(["report", str(recording), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "## Objectives" in report and "| floor | yes |" in report and "drain" in report


def test_interactive_mode_checks_its_overrides_before_starting_a_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["drill", "thundering-herd", "--set", "nodes.count=banana"]) == 2
    assert "nodes.count" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ('action = "restart_nodes"\nnodes = 99', "timeline.0.nodes"),  # demo has 48 nodes
        ('action = "restart_nodes"\nnodes = -1', "timeline.0.nodes"),
        ('action = "disconnect_fraction"', "timeline.0.fraction"),
        ('action = "add_nodes"\ncount = "3"', "timeline.0.count"),
        ('action = "set_admission"\nrate_per_s = -1', "timeline.0.rate_per_s"),
        ('action = "kill_nodes"\nnodes = 1\nextra = 1', "timeline.0.extra"),
    ],
)
def test_a_bad_timeline_entry_exits_2_before_the_drill_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: str, field: str
) -> None:
    drill = write(tmp_path, "tiny.toml", GOOD_DRILL.replace('action = "restart_nodes"\nnodes = 1', entry))
    record = tmp_path / "run.jsonl"
    assert main(["drill", drill, "--headless", "--record", str(record)]) == 2
    assert f"stormdeck: {field}" in capsys.readouterr().err
    assert not record.exists()


@pytest.mark.parametrize(
    ("script", "field", "allowed_has"),
    [
        (
            '[[actions]]\nat_s = 5\naction = "admission"\nrate_per_s = -500',
            "actions.0.rate_per_s",
            "(0, 1e+09]",
        ),
        (DRAIN.format(at="04:00:05", answer="").replace("gw-002", "gw-099"), "actions.0.node", "gw-047"),
        (
            DRAIN.format(at="04:00:05", answer="").replace("[1000, 5000]", "[5000, 1000]"),
            "actions.0.hint_ms",
            "min ≤ max",
        ),
        ('[[actions]]\nat_s = 5\naction = "add_capacity"\ncount = 1.5', "actions.0.count", "[1, 10000]"),
    ],
)
def test_a_bad_action_value_exits_2_naming_the_field_and_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], script: str, field: str, allowed_has: str
) -> None:
    drill = write(tmp_path, "tiny.toml", GOOD_DRILL)
    actions = write(tmp_path, "actions.toml", script)
    assert main(["drill", drill, "--headless", "--actions", actions]) == 2
    err = capsys.readouterr().err
    assert f"stormdeck: {field}:" in err and allowed_has in err


@pytest.mark.parametrize(
    ("when", "field", "value"),
    [("at_s = 2000", "actions.0.at_s", "2000"), ('at = "04:00:31"', "actions.0.at", "'04:00:31'")],
)
def test_an_action_after_the_drills_end_exits_2_naming_the_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], when: str, field: str, value: str
) -> None:
    """Found in review: an action past the end was silently dropped (exit 0, "actions": [])."""
    drill = write(tmp_path, "tiny.toml", GOOD_DRILL)  # 30 s
    actions = write(tmp_path, "actions.toml", f'[[actions]]\n{when}\naction = "rollout_halt"\n')
    record = tmp_path / "run.sdrec"
    assert main(["drill", drill, "--headless", "--actions", actions, "--record", str(record)]) == 2
    err = capsys.readouterr().err
    assert f"stormdeck: {field}: {value} is not allowed; expected " in err
    assert "[0, 30] (04:00:00–04:00:30 on the drill's clock)" in err
    assert not record.exists()  # nothing started


def test_an_action_at_the_drills_last_instant_is_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    drill = write(tmp_path, "tiny.toml", GOOD_DRILL)
    actions = write(tmp_path, "actions.toml", '[[actions]]\nat_s = 29.5\naction = "rollout_halt"\n')
    assert main(["drill", drill, "--headless", "--actions", actions, "--json"]) == 0
    (sent,) = json.loads(capsys.readouterr().out)["actions"]
    assert sent["action"] == "rollout_halt" and sent["time_s"] == 30.0


def test_a_drain_may_name_a_node_the_script_added_before_it(tmp_path: Path) -> None:
    from console.drills.schema import load_drill
    from console.drills.script import load_script

    drill = load_drill(write(tmp_path, "tiny.toml", GOOD_DRILL))
    added = '[[actions]]\nat_s = 1\naction = "add_capacity"\ncount = 2\n'
    script = added + DRAIN.format(at="04:00:20", answer="").replace("gw-002", "gw-049")
    assert len(load_script(Path(write(tmp_path, "a.toml", script)), drill).actions) == 2


def test_a_misspelt_where_key_is_refused_when_the_drill_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objective = (
        '\n[[objectives]]\nname = "drained"\nkind = "action_used"\naction = "rollout_start"\npoints = 5\n'
    )
    for where, field in (('{ mood = "drain" }', "where.mood"), ('{ mode = "drian" }', "where.mode")):
        drill = write(tmp_path, "tiny.toml", GOOD_DRILL + objective + f"where = {where}\n")
        assert main(["drill", drill, "--headless"]) == 2
        assert f"stormdeck: objectives.1.{field}:" in capsys.readouterr().err


def test_interactive_mode_refuses_a_speed_its_server_would_refuse_before_starting_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `drill NAME --speed 1e9` passed the CLI's "above 0", started the child server, and only its refusal
    # ("in (0, 100]") said what the range was.
    assert main(["drill", "thundering-herd", "--speed", "1e9"]) == 2
    err = capsys.readouterr().err
    assert "--speed: '1e9' is not allowed" in err and "(0, 100]" in err
    assert "serving the drill" not in err


def test_ctrl_c_on_a_headless_drill_says_where_it_stopped_and_where_the_recording_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in review: Ctrl-C exited 130 with no word of what was interrupted or of the recording."""
    from console.drills import headless

    real = headless.run_headless
    stop_after = 12

    def interrupted(*args, on_frame, **kwargs):  # type: ignore[no-untyped-def]
        def frame_then_ctrl_c(frame) -> None:  # type: ignore[no-untyped-def]
            on_frame(frame)
            if frame.time_s >= stop_after:
                raise KeyboardInterrupt

        return real(*args, on_frame=frame_then_ctrl_c, **kwargs)

    monkeypatch.setattr(headless, "run_headless", interrupted)
    drill = write(tmp_path, "tiny.toml", GOOD_DRILL)
    record = tmp_path / "run.sdrec"
    assert main(["drill", drill, "--headless", "--record", str(record)]) == 130
    err = capsys.readouterr().err
    assert "stormdeck: drill tiny interrupted at 04:00:12 (fleet second 12): not scored" in err
    assert f"the recording {record} holds the run up to there" in err
    from console.record.reader import RecordingReader

    with RecordingReader(record) as recording:
        assert recording.span_s == (1.0, 12.0) and recording.drill_outcome() is None


@pytest.mark.parametrize("leaves", ["mid-drill", "after the end", "on the briefing"])
def test_leaving_the_drill_console_tells_the_terminal_the_score_or_that_it_was_abandoned(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], leaves: str
) -> None:
    """The end screen's score went with the screen, and a drill quit mid-way ended without a word.

    Exit 0 only with a score on stdout; a drill left before its end is not scored and exits 130, as a
    headless drill stopped with Ctrl-C does (a script-minded caller once read an abandoned run's 0 as a
    finished one)."""
    from console.cli import drill as drill_cli
    from console.cli import screen
    from console.drills.live import DrillProgress
    from console.drills.schema import load_drill

    def trainee_leaves(app) -> int:  # type: ignore[no-untyped-def]
        if leaves != "on the briefing":
            app.started = True
        if leaves == "after the end":
            app.progress.finish()
            app.end_shown = True
        return 0

    monkeypatch.setattr(screen, "run_app", trainee_leaves)
    drill = load_drill("thundering-herd")
    progress = DrillProgress(drill, end_s=1500)
    ended = drill_cli._run_drill_console("http://127.0.0.1:9", "token", progress, None, seed=7)
    assert ended.status == (0 if leaves == "after the end" else 130) and not ended.retry
    out, err = capsys.readouterr()
    if leaves == "mid-drill":
        assert "stormdeck: drill thundering-herd abandoned at" in err and "not scored (" in err
        assert "so far)" in err and out == ""
    elif leaves == "after the end":
        assert f"{drill.title}  (thundering-herd, seed 7)" in out and "  score " in out and err == ""
    else:
        assert out == "" and err == "stormdeck: drill thundering-herd left before it began: not scored\n"


def test_list_json_is_a_json_list_of_the_drills(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from console.drills.schema import list_drills, load_drill

    assert main(["drill", "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [item["name"] for item in listed] == [name for name, _ in list_drills()]
    for item in listed:
        drill = load_drill(item["name"])
        assert (item["title"], item["scenario"], item["seed_source"]) == (
            drill.title,
            drill.scenario,
            drill.seed_source,
        )


def test_actions_without_headless_is_refused_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It used to start the interactive console and ignore the script (from a pipe it hung)."""
    script = write(tmp_path, "actions.toml", "")
    assert main(["drill", "thundering-herd", "--actions", script]) == 2
    err = capsys.readouterr().err
    assert "--actions needs --headless" in err


@pytest.mark.parametrize(
    ("mode", "given", "said"),
    [
        # A served drill wrote no recording and printed no outcome: the instructor found no file after.
        (["--serve"], ["--record", "RUN"], "stormdeck record URL --out FILE"),
        (["--serve"], ["--json"], "--json needs --headless or --list"),
        ([], ["--json"], "--json needs --headless or --list"),
        # The serving options without --serve: the console took a free port, with its own tokens.
        ([], ["--port", "8470"], "--port is for --serve"),
        (["--headless"], ["--host", "0.0.0.0"], "--host is for --serve"),
        ([], ["--token-file", "TOKENS"], "--token-file is for --serve"),
        (["--headless"], ["--paused"], "--paused is for --serve"),
    ],
)
def test_an_option_the_mode_would_ignore_is_refused_naming_it_before_anything_starts(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: list[str],
    given: list[str],
    said: str,
) -> None:
    from console.cli.embedded import EmbeddedServer
    from console.drills import headless
    from console.drills.served import DrillBackend

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the drill started and ignored {given[0]}")

    monkeypatch.setattr(EmbeddedServer, "start", started)
    monkeypatch.setattr(headless, "run_headless", started)
    monkeypatch.setattr(DrillBackend, "from_drill", started)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"admin {'a' * 32} instructor\n", encoding="utf-8")
    paths = {"RUN": str(tmp_path / "run.rec"), "TOKENS": str(tokens)}
    argv = ["drill", "regional-outage", *mode, *(paths.get(word, word) for word in given)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    # An option is named with what it needs ("--json needs …", "--port is for --serve (…)"), not its value.
    assert err.startswith(f"stormdeck: {given[0]}") and said in err and "True" not in err
    assert not (tmp_path / "run.rec").exists()


@pytest.mark.parametrize(("events", "said"), [(1, "1 timeline event)"), (2, "2 timeline events)")])
def test_a_served_drills_announcement_counts_its_timeline_in_words(
    tmp_path: Path, events: int, said: str
) -> None:
    """regional-outage served read "(02:00:00 to 02:07:00, 1 timeline events)"."""
    from console.cli.drill import served_drill_line
    from console.drills.schema import load_drill

    extra = '[[timeline]]\nat = "04:00:20"\nsay = "another"\naction = "restart_nodes"\nnodes = 1\n'
    path = tmp_path / "tiny.toml"
    path.write_text(GOOD_DRILL + (extra if events == 2 else ""))
    drill = load_drill(str(path))
    assert len(drill.timeline) == events
    line = served_drill_line(drill, 30.0)
    assert line.endswith(said) and "(04:00:00 to 04:00:30, " in line


def test_a_drill_that_charges_no_time_penalty_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """User pass: a drill without `[scoring]` (as resync-cliff's penalty_per_min = 0) printed "penalty −0
    (0.78 min below 95 % of connections)" — minutes below counted, and nothing said about why they cost nothing."""
    assert main(["drill", write(tmp_path, "tiny.toml", GOOD_DRILL), "--headless"]) == 0
    said = [line.strip() for line in capsys.readouterr().out.splitlines() if "penalty" in line]
    assert len(said) == 1 and said[0].startswith("no time penalty in this drill ("), said
    assert said[0].endswith(" s below 95 % of connections)"), said  # a span as `duration` writes it


def test_the_headless_summary_says_when_on_the_drills_clock(capsys: pytest.CaptureFixture[str]) -> None:
    """thundering-herd idle printed "abort criterion at 161 s (gw-024 above 80 % for 30 s); never halted",
    "connections fell to 92.0 % at 571 s" and "penalty −14.9 (7.43 min below …)": a trainee who had
    watched the drill's clock read 04:02:41 could match none of it. Moments on the drill's clock (04:00:00
    + fleet seconds), spans as the console writes them (`duration`)."""
    import re

    assert main(["drill", "thundering-herd", "--headless"]) == 0
    out = capsys.readouterr().out
    assert "abort criterion 04:02:41 (gw-024): not halted by 04:04:11" in out, out  # 161 s, + 90 s
    assert "fell to 92.0 % (04:09:31)" in out, out  # 571 s
    assert "longest dip 33 s from 04:08:01 (allowed 3 min 00 s)" in out, out  # 481 s
    assert re.search(r"penalty −[\d.]+ \(7 min \d\d s below 97 % of connections\)", out), out
    assert not re.search(r"\b(?:at|from|by|of) \d+ s\b|\d\.\d+ min", out), out


def test_the_headless_summary_lists_each_action_once_spaced(capsys: pytest.CaptureFixture[str]) -> None:
    """Review: "04:03:20  rollout_halt  → applied" — a fleet action's missing target left two spaces."""
    from pathlib import Path

    script = Path(__file__).parents[2] / "docs" / "drills" / "examples" / "thundering-herd-seeds-fix.toml"
    assert main(["drill", "thundering-herd", "--headless", "--actions", str(script)]) == 0
    out = capsys.readouterr().out
    assert "  04:03:20  rollout_halt → applied\n" in out, out
    assert "  →" not in out, out
    floor = [line.strip() for line in out.splitlines() if "floor 93 %" in line]
    assert floor == ["lowest 95.3 % (04:02:01); floor 93 %"], out  # the lowest said once


def test_a_set_that_shrinks_the_fleet_under_the_drills_timeline_says_where_to_change_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Docs pass: `--set nodes.count=10` under regional-outage's 20-node restart named timeline.0.nodes,
    which no --set reaches (the drill's timeline replaces the scenario's events): say where it is changed."""
    assert main(["drill", "regional-outage", "--headless", "--set", "nodes.count=10"]) == 2
    err = capsys.readouterr().err
    assert "timeline.0.nodes: 20 is not allowed; expected a count in [1, 10]" in err, err
    assert "the drill's timeline is its file's, not --set's" in err and "The drill file" in err, err


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_drill_list_as_a_word_lists_the_drills_as_the_option_does(
    capsys: pytest.CaptureFixture[str], json_flag: list[str]
) -> None:
    """Review: `stormdeck drill list` was refused as a drill named 'list' (`sim list` is a word)."""
    assert main(["drill", "--list", *json_flag]) == 0
    by_option = capsys.readouterr()
    assert main(["drill", "list", *json_flag]) == 0
    by_word = capsys.readouterr()
    assert by_word.err == "" and "thundering-herd" in by_word.out
    assert by_word.out == by_option.out


def test_no_drill_may_be_named_list_the_word_that_lists_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`drill list` lists: a drill of that name could never be run by it."""
    from console.drills.schema import list_drills

    assert "list" not in [name for name, _ in list_drills()]
    path = write(tmp_path, "listing.toml", GOOD_DRILL.replace('name = "tiny"', 'name = "list"'))
    assert main(["drill", path, "--headless"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stormdeck: name: 'list' is not allowed; expected ") and "drill list" in err


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--json"], "--json needs --headless or --list ("),
        (["--serve", "--json"], "--json needs --headless or --list ("),
        (["--paused"], "--paused is for --serve (the console serves its drill to itself"),
        (["--headless", "--paused"], "--paused is for --serve (--headless serves nothing)"),
        (["--serve", "--headless"], "--serve cannot go with --headless: give one ("),
    ],
)
def test_a_flag_where_it_cannot_apply_is_named_with_what_it_needs_not_as_a_value_true(
    capsys: pytest.CaptureFixture[str], given: list[str], said: str
) -> None:
    """Review: "--json: True is not allowed; expected --headless with it" named a value no one typed."""
    assert main(["drill", "regional-outage", *given]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"stormdeck: {said}"), err
    assert "True" not in err and "is not allowed" not in err, err


def test_no_error_names_a_flag_by_the_value_true() -> None:
    """An InputError of an on/off option given a literal True or False printed "--x: True is not
    allowed"; a flag's error is a FlagError, which names the flag and what it needs."""
    import ast

    console = Path(__file__).resolve().parents[2] / "console"
    found = []
    for path in console.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "InputError"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, bool)
            ):
                found.append(f"{path.relative_to(console.parent)}:{node.lineno}")
    assert found == []


def test_a_headless_drills_text_ends_with_what_to_do_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: the summary ended on the score — nothing of the run's report, its replay, or trying the drill
    at the console. Not recorded, it says how to record the next run, under a name that writes over nothing."""
    monkeypatch.chdir(tmp_path)
    drill = write(tmp_path, "tiny.toml", GOOD_DRILL)
    assert main(["drill", drill, "--headless", "--seed", "3", "--record", "run.sdrec"]) == 0
    out = capsys.readouterr().out
    assert "  see the report       stormdeck report run.sdrec\n" in out, out
    assert "  replay it            stormdeck replay run.sdrec\n" in out, out
    assert f"  try it yourself      stormdeck drill {drill} --seed 3 --record run-2.sdrec\n" in out, out
    (tmp_path / "tiny.sdrec").write_bytes(b"")  # a file by the name the next run would take
    assert main(["drill", drill, "--headless"]) == 0
    out = capsys.readouterr().out
    assert f"stormdeck drill {drill} --headless --record tiny-2.sdrec" in out, out
    assert "not recorded" in out and "stormdeck report" not in out.split("not recorded")[0], out


def test_r_on_the_drill_consoles_end_screen_runs_the_drill_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end screen's `r` leaves the console and starts the drill again (its own server, its own score):
    the terminal keeps the first try's outcome, and the second try is recorded beside the first."""
    import signal

    from console.cli import embedded, screen

    served: list[list[str]] = []

    class FakeServer:
        url, token, clock_token = "http://127.0.0.1:9", "token", "clock"

        def __init__(self, scenario: str, **kwargs) -> None:  # type: ignore[no-untyped-def]
            served.append(kwargs["serve"])

        def __enter__(self) -> FakeServer:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    apps: list = []

    def trainee_plays(app) -> int:  # type: ignore[no-untyped-def]
        apps.append(app)
        app.started = True
        app.progress.finish()
        app.end_shown = True
        app.retry_asked = len(apps) == 1  # `r` on the first end screen, `q` on the second
        return 0

    monkeypatch.setattr(embedded, "EmbeddedServer", FakeServer)
    monkeypatch.setattr(screen, "run_app", trainee_plays)
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # the test's process keeps its handlers
    monkeypatch.chdir(tmp_path)
    assert main(["drill", "regional-outage", "--record", "ro.sdrec"]) == 0
    out, err = capsys.readouterr()
    assert len(served) == 2 and len(apps) == 2 and all(app.offers_retry for app in apps)
    assert out.count("  score ") == 2, out
    assert "stormdeck drill regional-outage --record ro-2.sdrec" in out, out
    assert "stormdeck: trying the drill again, recorded to ro-2.sdrec" in err, err
    assert apps[1].next_steps[0].command == "stormdeck report ro-2.sdrec"


@pytest.mark.parametrize("words", [["--list", "thundering-herd"], ["list", "thundering-herd"]])
def test_list_with_a_name_shows_that_drills_briefing_and_objectives(
    capsys: pytest.CaptureFixture[str], words: list[str]
) -> None:
    """Review: `drill --list thundering-herd` ignored the name and listed every drill (`drill list NAME`
    was refused as "unrecognized arguments"). It shows that drill as its briefing does, in plain text."""
    from console.drills.objectives import penalty_rule
    from console.drills.schema import load_drill

    drill = load_drill("thundering-herd")
    assert main(["drill", *words]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith(f"{drill.title}  (thundering-herd)\n"), out
    assert f"rehearses: {drill.seed_source}" in out and " ".join(drill.briefing.split()[:8]) in out
    assert f"objectives ({drill.max_points:g} points)" in out and penalty_rule(drill.scoring) in out
    for objective in drill.objectives:
        assert objective.name in out
    assert "[b]" not in out and "[/]" not in out and "regional-outage" not in out, out
    assert "stormdeck drill thundering-herd" in out  # how to run it, where the console says Enter


def test_list_json_with_a_name_is_that_drills_object(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from console.drills.schema import load_drill

    drill = load_drill("thundering-herd")
    assert main(["drill", "--list", "thundering-herd", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["name"], shown["title"], shown["briefing"]) == (drill.name, drill.title, drill.briefing)
    assert shown["objectives"] == [{"name": o.name, "points": o.points} for o in drill.objectives]


def test_list_with_an_unknown_name_is_refused_naming_the_drills(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drill", "--list", "nope"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("stormdeck: drill: 'nope' is not allowed; expected one of ")
        and "thundering-herd" in err
    )


def test_a_second_name_is_refused_unless_it_follows_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drill", "thundering-herd", "regional-outage"]) == 2
    err = capsys.readouterr().err
    assert "regional-outage" in err and "drill list NAME" in err, err


def test_the_help_says_list_name_shows_one_drill(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["drill", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "`stormdeck drill list NAME` (or --list NAME) shows one" in text, text
    assert "stormdeck drill list thundering-herd" in text


def test_an_actions_file_that_is_not_there_says_where_the_examples_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """User pass: --help's example `--actions docs/drills/examples/thundering-herd-seeds-fix.toml`, run
    outside stormdeck's source folder, said only "expected a readable file (No such file or directory)"."""
    missing = tmp_path / "docs" / "drills" / "examples" / "thundering-herd-seeds-fix.toml"
    assert main(["drill", "thundering-herd", "--headless", "--actions", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"stormdeck: --actions: '{missing}' is not allowed; expected "), err
    assert "No such file or directory" in err and "docs/drills/examples/ in stormdeck's source" in err, err
    with pytest.raises(SystemExit):
        main(["drill", "--help"])
    (example,) = [line for line in capsys.readouterr().out.splitlines() if "--actions docs/" in line]
    assert "stormdeck's source" in example, example


QUIET_OBJECTIVES = """
[[objectives]]
name = "halted in time"
kind = "halt_within"
cpu_pct = 99
for_s = 30
within_s = 90
points = 20

[[objectives]]
name = "back within 30 s"
kind = "recovery"
pct = 5
within_s = 30
points = 30
"""


def test_an_objective_never_needed_reads_not_needed_on_the_terminal_and_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review: the panel read '· not needed' for a halt whose abort criterion never came, while the headless
    summary printed '[met   ]' and the report's met column 'yes'; a recovery with no dip at all read met
    only because nothing happened. Both say 'not needed', and keep their points."""
    drill = write(tmp_path, "tiny.toml", GOOD_DRILL + QUIET_OBJECTIVES)
    recording = tmp_path / "run.rec"
    assert main(["drill", drill, "--headless", "--record", str(recording)]) == 0
    out = capsys.readouterr().out
    assert "  [not needed]    20/20   halted in time\n" in out, out
    assert "  [not needed]    30/30   back within 30 s\n" in out, out
    assert "  [met       ]    10/10   floor\n" in out, out
    assert "not needed: connections never dipped below 5 %" in out, out
    assert "score 60 / 60" in out, out
    assert main(["report", str(recording), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "| floor | yes | 10 / 10 |" in report, report
    assert "| halted in time | not needed | 20 / 20 | not needed: the abort criterion was never" in report
    assert "| back within 30 s | not needed | 30 / 30 | not needed: connections never dipped" in report


def test_an_objective_never_needed_says_so_in_the_json_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review: `--headless --json` said `"met": true` and nothing more for the objectives the terminal
    marks 'not needed' — a script grading runs from the JSON counted them as done. Each objective carries
    the end screen's word (`standing`); `met` stays as the scorer's (the points were earned)."""
    import json

    drill = write(tmp_path, "tiny.toml", GOOD_DRILL + QUIET_OBJECTIVES)
    assert main(["drill", drill, "--headless", "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)
    standings = {item["name"]: (item["standing"], item["met"]) for item in outcome["objectives"]}
    assert standings == {
        "floor": ("met", True),
        "halted in time": ("not needed", True),
        "back within 30 s": ("not needed", True),
    }


def test_a_headless_runs_overrides_are_in_its_recording_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review: a run with `--set` recorded "scenario X (seed N)" only — another fleet than the one run."""
    from console.record.reader import RecordingReader

    drill = write(tmp_path, "tiny.toml", GOOD_DRILL)
    recording = tmp_path / "run.rec"
    argv = ["drill", drill, "--headless", "--seed", "3", "--set", "clients.policy=full_jitter"]
    assert main([*argv, "--record", str(recording)]) == 0
    with RecordingReader(recording) as recorded:
        assert (recorded.header.seed, recorded.header.overrides) == (3, ["clients.policy=full_jitter"])
    assert main(["report", str(recording), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "(seed 3) --set clients.policy=full_jitter |" in report, report[:1500]
