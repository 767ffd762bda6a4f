"""The commands: `stormdeck loadgen` against a node process, and input errors as exit status 2."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from console.cli import build_parser, main
from console.cli.checks import typed_float, typed_int
from console.errors import StormdeckError
from console.gateway.processes import child_env, first_line, free_port
from tests.gateway.conftest import CHEAP_WORK_FACTOR, SERVE_ARGV

pytestmark = pytest.mark.timeout(60)


def test_loadgen_reports_json_from_two_workers(node_processes) -> None:
    node = node_processes("n1", "--work-factor", str(CHEAP_WORK_FACTOR), "--publish-rate-per-s", "10")
    command = [
        sys.executable,
        "-m",
        "console",
        "loadgen",
        node.url,
        "--clients",
        "60",
        "--policy",
        "full_jitter",
    ]
    command += [
        "--duration",
        "2",
        "--ramp-s",
        "0.5",
        "--workers",
        "2",
        "--work-factor",
        str(CHEAP_WORK_FACTOR),
    ]
    done = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=45, env=child_env())
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["connects"] == 60 and report["attempts"] == 60 and report["rejects_503"] == 0
    assert report["messages"] > 60 and report["gaps"] == 0 and report["duplicates"] == 0
    assert len(report["attempts_per_bin"]) == 20 and sum(report["attempts_per_bin"]) == 60
    assert 0 < report["connect_p50_ms"] <= report["connect_p99_ms"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["loadgen", "ws://192.0.2.1:9000/", "--clients", "5", "--policy", "fixed"], "loopback"),
        # Named as the option typed, not the policy module's own "policy:".
        (
            ["loadgen", "ws://127.0.0.1:9/", "--clients", "5", "--policy", "nope"],
            "--policy: 'nope' is not allowed; expected one of decorrelated,",
        ),
        (
            ["fleet", "up", "--port", "0", "--policy", "nope"],
            "--policy: 'nope' is not allowed; expected one of",
        ),
        (["loadgen", "ws://127.0.0.1:9/", "--clients", "0", "--policy", "fixed"], "--clients"),
        (
            [
                "loadgen",
                "ws://127.0.0.1:9/",
                "--clients",
                "5",
                "--policy",
                "fixed",
                "--duration",
                "0",
                "--workers",
                "2",
            ],
            "--workers",
        ),
        (
            ["loadgen", "ws://127.0.0.1:9/", "--clients", "5", "--policy", "fixed", "--duration", "86401"],
            "--duration: '86401' is not allowed; expected seconds in [0, 86400] (24 h; 0: until stopped)",
        ),
        (
            [
                "loadgen",
                "ws://127.0.0.1:9/",
                "--clients",
                "5",
                "--policy",
                "fixed",
                "--nodes-file",
                "/nonexistent",
            ],
            "--nodes-file",
        ),
        (["fleet", "up", "--duration", "-1"], "--duration"),
        (
            ["fleet", "up", "--duration", "86401"],
            "--duration: '86401' is not allowed; expected seconds in [0, 86400] (24 h; 0: as long as the fleet)",
        ),
        (
            [
                *SERVE_ARGV,
                "--history",
                "http://x",
            ],
            # Both forms it takes (a Unix socket's was accepted and not named).
            "--history: 'http://x' is not allowed; expected a Redis URL: redis://HOST:PORT or unix://SOCKET-PATH",
        ),
        (
            ["gateway", "publish", "--history", "http://x"],
            "--history: 'http://x' is not allowed; expected a Redis URL: redis://HOST:PORT or unix://SOCKET-PATH",
        ),
        (
            [*SERVE_ARGV, "--rate-per-s", "-1"],
            # In the operator's unit, as `act admission --rate` says it (it said "a number").
            "--rate-per-s: '-1' is not allowed; expected new connections a second in (0, 1000000000]",
        ),
        # The admission a node starts with has the ranges the admin API's PUT takes (console.protocol.limits):
        # these were accepted, a Retry-After of up to 31 years among them.
        ([*SERVE_ARGV, "--rate-per-s", "1e12"], "--rate-per-s: '1e12' is not allowed"),
        (
            [*SERVE_ARGV, "--burst", "2000000000"],
            # A whole number, said so (it read "a number in (0, 1000000000]", as if 0.5 would do).
            "--burst: '2000000000' is not allowed; expected connections admitted at once, a whole number in "
            "[1, 1000000000]",
        ),
        (
            [*SERVE_ARGV, "--max-connections", "0"],
            "--max-connections: '0' is not allowed; expected connections this node holds at most, a whole number "
            "in [1, 1000000000]",
        ),
        (
            [*SERVE_ARGV, "--retry-after-s", "1", "1e9"],
            "--retry-after-s: ['1', '1e9'] is not allowed; expected [min, max] with 0 ≤ min ≤ max ≤ 3600",
        ),
        ([*SERVE_ARGV, "--retry-after-s", "30", "1"], "--retry-after-s: ['30', '1'] is not allowed"),
        (["bench", "gateway", "--idle-clients", "50000"], "--idle-clients"),
        # Checked before any node starts (bind() raised OverflowError once the nodes were up).
        (["fleet", "up", "--port", "99999"], "--port: '99999' is not allowed; expected a port in [0, 65535]"),
        # nan passes every `<=` check: it reached the node (a ValueError traceback) or ran as is.
        (["fleet", "up", "--publish-rate-per-s", "nan"], "--publish-rate-per-s: 'nan' is not allowed"),
        (
            [*SERVE_ARGV, "--rate-per-s", "nan"],
            "--rate-per-s: 'nan' is not allowed; expected new connections a second in (0, 1000000000]",
        ),
        (
            [*SERVE_ARGV, "--lifetime-s", "nan"],
            "--lifetime-s: 'nan' is not allowed; expected seconds in (0, 86400]",
        ),
    ],
)
def test_input_errors_exit_2(argv: list[str], message: str, capsys) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def _controller_argv(tmp_path, nodes_toml: str) -> list[str]:
    """`stormdeck controller` over a nodes file holding `nodes_toml` (one node "a"), with a token file."""
    nodes = tmp_path / "nodes.toml"
    nodes.write_text(nodes_toml + '[[nodes]]\nid = "a"\nadmin = "http://127.0.0.1:9"\n')
    (tmp_path / "node.token").write_text("t\n")
    return ["controller", "--nodes", str(nodes), "--node-token-file", str(tmp_path / "node.token")]


def test_the_controller_refuses_a_port_out_of_range(tmp_path, capsys) -> None:
    assert main([*_controller_argv(tmp_path, ""), "--port", "99999"]) == 2
    assert "--port: '99999' is not allowed; expected a port in [0, 65535]" in capsys.readouterr().err


def test_a_bad_capacity_table_exits_2(tmp_path, capsys) -> None:
    assert main([*_controller_argv(tmp_path, "[capacity]\nhandshakes = 5\n"), "--port", "0"]) == 2
    assert "capacity.handshakes" in capsys.readouterr().err


def test_loadgen_fails_when_no_client_connected(capsys) -> None:
    """Against a port nobody listens on: the report still prints, and the exit status says nothing was
    measured (it exited 0)."""
    url = f"ws://127.0.0.1:{free_port()}/"
    assert main(["loadgen", url, "--clients", "3", "--policy", "fixed", "--duration", "1", "--json"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["connects"] == 0 and "no client connected" in err and url in err


def test_loadgen_says_when_the_nodes_refuse_its_tokens(node_processes, capsys) -> None:
    """Another work factor than the node's: every client got 401, and the message asked whether a node
    was listening (README's loadgen line against `fleet up`, whose nodes use 1000, did exactly this)."""
    node = node_processes("wf", "--work-factor", str(CHEAP_WORK_FACTOR))
    argv = ["loadgen", node.url, "--clients", "3", "--policy", "fixed", "--duration", "1", "--json"]
    assert main([*argv, "--work-factor", str(CHEAP_WORK_FACTOR + 1)]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["unauthorized"] == 3 and "refused 3 clients' tokens (401)" in err
    assert f"--work-factor {CHEAP_WORK_FACTOR + 1} the nodes'" in err and "listening" not in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        # A negative or nan ramp ran as no ramp at all, and a ramp past the run never connected some
        # clients: all three reported figures for a load nobody asked for, exit 0 or 1, no word why.
        (["--ramp-s", "-1"], "--ramp-s: '-1' is not allowed; expected seconds in [0, 1]"),
        (["--ramp-s", "nan"], "--ramp-s: 'nan' is not allowed"),
        (
            ["--ramp-s", "30", "--duration", "10"],
            "--ramp-s: '30' is not allowed; expected seconds in [0, 10]",
        ),
        # `--workers 0` read as "not given" and ran the default; -1 was refused as "1 to 64".
        (["--workers", "0"], "--workers: '0' is not allowed; expected 1 to 64"),
    ],
)
def test_loadgen_refuses_a_ramp_or_workers_out_of_range(extra: list[str], message: str, capsys) -> None:
    url = f"ws://127.0.0.1:{free_port()}/"
    argv = ["loadgen", url, "--clients", "3", "--policy", "fixed", "--duration", "1", *extra]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_short_load_ramps_within_its_run_when_no_ramp_is_given(capsys) -> None:
    """The default ramp (1 s) is cut to a shorter --duration rather than refused: the user never set it."""
    url = f"ws://127.0.0.1:{free_port()}/"
    assert main(["loadgen", url, "--clients", "3", "--policy", "fixed", "--duration", "0.5", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["attempts"] == 3


def test_fleet_up_ramps_its_load_within_the_load_s_duration() -> None:
    from console.cli.fleet import load_ramp_s

    assert load_ramp_s(18_000, 0) == 36.0  # until stopped: ~500 connects a second
    assert load_ramp_s(18_000, 10) == 10.0  # a 10 s load: loadgen refuses a 36 s ramp
    assert load_ramp_s(100, 30) == 1.0


def test_a_load_until_stopped_runs_in_one_worker_unless_asked() -> None:
    """`--clients 3000 --duration 0` refused '--workers: 2' — an option the user never set."""
    from console.cli.loadgen import default_workers

    assert default_workers(3000, 0) == 1
    assert default_workers(1000, 30) == 1
    assert default_workers(3000, 30) == (os.cpu_count() or 1)


def _serve_on(tmp_path, *ports: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "node.token").write_text("t\n")
    command = [sys.executable, "-m", "console", "gateway", "serve", "--node-id", "x", *ports]
    command += ["--token-file", str(tmp_path / "node.token")]
    return subprocess.run(command, capture_output=True, text=True, timeout=30, env=child_env())


def test_a_node_on_taken_ports_exits_2_naming_the_option(tmp_path) -> None:
    """The same port for both servers spun for ever, silently, deaf to SIGTERM (CI hung 90 s on a
    start-up port clash): now the clash is an input error naming the option."""
    from console.server.runner import bind_socket

    with bind_socket("127.0.0.1", 0) as taken:
        port = str(taken.getsockname()[1])
        done = _serve_on(tmp_path, "--port", "0", "--admin-port", port)
        assert done.returncode == 2 and f"--admin-port: '{port}' is not allowed" in done.stderr
        assert "in use" in done.stderr and "Traceback" not in done.stderr
    free = str(free_port())
    done = _serve_on(tmp_path, "--port", free, "--admin-port", free)
    assert done.returncode == 2 and f"--port: '{free}' is not allowed" in done.stderr
    assert "in use" in done.stderr and "Traceback" not in done.stderr


def test_a_child_that_says_nothing_fails_its_start_within_the_timeout() -> None:
    """`NodeProcess.start` read the child's first line with no deadline: a silent child hung the test."""
    from console.gateway.processes import NodeProcess

    node = NodeProcess("mute", ["--ping-interval-s", "nan"])  # exits 2 at once: "" is the first line
    with pytest.raises(StormdeckError, match="did not start"):
        node.start()
    mute = subprocess.Popen(["sleep", "30"], stdout=subprocess.PIPE, text=True)
    try:
        assert first_line(mute, 0.2) == ""
    finally:
        mute.kill()
        mute.wait()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--publish-rate-per-s", "-1"],
            "--publish-rate-per-s: '-1' is not allowed; expected messages a second in [0, 10000]",
        ),
        (["--publish-rate-per-s", "1e9"], "--publish-rate-per-s: '1e9' is not allowed"),
        (["--ping-interval-s", "0"], "--ping-interval-s: '0' is not allowed; expected seconds in (0, 3600]"),
        (["--capacity", "0"], "--capacity: '0' is not allowed"),
        (["--seed", "-1"], "--seed: '-1' is not allowed"),
        (["--lifetime-dither-s", "-1"], "--lifetime-dither-s: '-1' is not allowed"),
        (["--lifetime-s", "-1"], "--lifetime-s: '-1' is not allowed; expected seconds in (0, 86400]"),
        # Accepted before, though no deployment has them: a lifetime of 1e300 s, 10^14 connections a node,
        # a grace or a heartbeat of 31 years, a seed past 64 bits.
        (["--lifetime-s", "1e300"], "--lifetime-s: '1e300' is not allowed; expected seconds in (0, 86400]"),
        (
            ["--capacity", str(10**14)],
            "--capacity: '100000000000000' is not allowed; expected connections in [1, 10000000]",
        ),
        (
            ["--close-grace-s", "1e9"],
            "--close-grace-s: '1e9' is not allowed; expected seconds in [0, 600]",
        ),
        (
            ["--ping-interval-s", "1e9"],
            "--ping-interval-s: '1e9' is not allowed; expected seconds in (0, 3600]",
        ),
        (
            ["--seed", str(2**64)],
            f"--seed: '{2**64}' is not allowed; expected an integer in [0, {2**63 - 1}]",
        ),
        (["--node-id", ""], "--node-id: '' is not allowed"),
        (["--channel", ""], "--channel: '' is not allowed"),
        (
            ["--work-factor", "0"],
            "--work-factor: '0' is not allowed; expected PBKDF2 iterations in [1, 1000000]",
        ),
    ],
)
def test_gateway_serve_refuses_what_it_accepted(extra: list[str], message: str, capsys) -> None:
    assert main([*SERVE_ARGV, *extra]) == 2
    assert message in capsys.readouterr().err


def test_loadgen_refuses_a_negative_seed(capsys) -> None:
    """Accepted before: random.Random(-1) draws as Random(1) does, so two "different" runs were one."""
    argv = ["loadgen", "ws://127.0.0.1:9/channel/x", "--clients", "1", "--policy", "fixed"]
    assert main([*argv, "--seed", "-1"]) == 2
    assert f"--seed: '-1' is not allowed; expected an integer in [0, {2**63 - 1}]" in capsys.readouterr().err


@pytest.mark.parametrize("work_factor", ["0", "-3"])
def test_loadgen_refuses_a_work_factor_below_1(work_factor: str, capsys) -> None:
    argv = ["loadgen", "ws://127.0.0.1:9/channel/x", "--clients", "1", "--policy", "fixed"]
    assert main([*argv, "--work-factor", work_factor]) == 2
    assert f"--work-factor: {work_factor!r} is not allowed" in capsys.readouterr().err


def test_fleet_up_checks_every_input_before_starting_any_child(tmp_path, monkeypatch, capsys) -> None:
    from console.gateway import processes

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("a child was started before the input was checked")

    monkeypatch.setattr(processes.NodeProcess, "start", started)
    monkeypatch.setattr(processes.RedisProcess, "start", started)
    monkeypatch.setattr(subprocess, "Popen", started)
    bad_tokens = tmp_path / "tokens"
    bad_tokens.write_text("nobody x\n")
    for extra, message in (
        (["--work-factor", "0"], "--work-factor: '0' is not allowed"),
        (["--audit-log", str(tmp_path)], "--audit-log: "),
        (["--token-file", str(bad_tokens)], "a role"),
    ):
        assert main(["fleet", "up", "--port", "0", *extra]) == 2, extra
        assert message in capsys.readouterr().err
    from console.server.runner import bind_socket

    with bind_socket("127.0.0.1", 0) as taken:  # the controller's port, taken: refused before any child
        port = taken.getsockname()[1]
        assert main(["fleet", "up", "--port", str(port)]) == 2
        assert f"--port: '{port}' is not allowed; expected a free port" in capsys.readouterr().err


def test_the_controller_refuses_a_directory_as_audit_log(tmp_path, capsys) -> None:
    assert main([*_controller_argv(tmp_path, ""), "--port", "0", "--audit-log", str(tmp_path)]) == 2
    assert "--audit-log: " in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        [*SERVE_ARGV, "--history", "redis://127.0.0.1:1/0"],
        ["gateway", "publish", "--history", "redis://127.0.0.1:1/0"],
    ],
    ids=["serve", "publish"],
)
def test_a_history_redis_that_does_not_answer_is_named_not_a_traceback(argv, capsys) -> None:
    """Found in review: both ended in redis's ConnectionError traceback. A transport error: exit 1, as
    `act`'s unreachable fleet (README), naming --history and its URL. Port 1: nothing listens there."""
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "--history: cannot reach Redis at redis://127.0.0.1:1/0: ConnectionError" in err
    assert "Traceback" not in err


def test_act_against_a_nodes_admin_port_says_it_is_no_fleet_api(node_processes, monkeypatch, capsys) -> None:
    """Found in review: `stormdeck act` at a gateway node's admin port printed `404 bad_input: Not Found` and
    exited 2, as if the input were wrong. The node answers plain JSON errors; the fleet API problem+json."""
    from tests.gateway.conftest import TOKEN

    node = node_processes("adm", "--work-factor", str(CHEAP_WORK_FACTOR))
    monkeypatch.setenv("STORMDECK_TOKEN", TOKEN)
    for argv in (
        ["act", node.admin_url, "undrain", "gw-001"],
        ["act", node.admin_url, "admission", "--rate", "100"],  # reads GET /v1/fleet first
        ["plan", "drain", node.admin_url, "gw-001"],
    ):
        assert main(argv) == 1, argv
        out, err = capsys.readouterr()
        assert f"{node.admin_url} is not a stormdeck fleet API (HTTP 404 application/json)" in err, argv
        assert "bad_input" not in out + err


def _exited(process: subprocess.Popen, timeout_s: float) -> int:
    """The child's exit status, polled for with a deadline."""
    deadline = time.monotonic() + timeout_s
    while process.poll() is None:
        assert time.monotonic() < deadline, f"pid {process.pid} still runs after {timeout_s} s"
        time.sleep(0.02)
    return process.returncode


@pytest.mark.parametrize("how", ["SIGTERM", "parent gone"])
def test_a_node_that_stops_with_its_parent_stops_cleanly_either_way(node_processes, how: str) -> None:
    """A node watching its parent through stdin (`fleet up`'s, `NodeProcess`'s): closing our end of the
    pipe stops it, as a parent that is SIGKILLed does. Its watch read sys.stdin in a daemon thread, whose
    lock the interpreter's exit then waited a second for and aborted on: SIGTERM ended it by SIGABRT."""
    node = node_processes("watching", "--work-factor", str(CHEAP_WORK_FACTOR))
    assert node.process is not None and node.process.stdin is not None
    if how == "SIGTERM":
        node.process.send_signal(signal.SIGTERM)
    else:
        node.process.stdin.close()
    assert _exited(node.process, 15) == 0
    node._stderr.seek(0)
    assert "Fatal Python error" not in node._stderr.read()


def _subparser(parser: argparse.ArgumentParser, *names: str) -> argparse.ArgumentParser:
    for name in names:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return parser


# "[0, 65535]", "(0, 3600]", "1 to 16", "at most 600", "0 ≤ MIN ≤ MAX ≤ 3600"
_RANGE = re.compile(r"[\[(][\d.]+, [\d.,]+[\])]|\d to |at most|≤")


@pytest.mark.parametrize(
    "command", [("gateway", "serve"), ("gateway", "publish"), ("controller",), ("fleet", "up"), ("loadgen",)]
)
def test_every_number_option_names_its_range_in_help(command: tuple[str, ...]) -> None:
    # docs/gateway.md: "Every number these commands take has a range, named in its --help" — the ports'
    # said only "0: any free port", though 70000 exits 2 naming [0, 65535].
    parser = _subparser(build_parser(), *command)
    numbers = [a for a in parser._actions if a.type in (typed_int, typed_float)]
    assert numbers
    unnamed = [a.option_strings[0] for a in numbers if not _RANGE.search(a.help or "")]
    assert unnamed == []


def test_help_says_what_a_nodes_file_holds_and_what_publish_does() -> None:
    # `controller --help` named only id, admin and client: not `restart` (without which a rollout is
    # refused) nor the `[capacity]` table (docs/gateway.md); `gateway publish --help` had no description.
    nodes = next(
        a for a in _subparser(build_parser(), "controller")._actions if "--nodes" in a.option_strings
    )
    assert all(word in (nodes.help or "") for word in ("[[nodes]]", "admin", "restart", "[capacity]"))
    assert "Redis" in (_subparser(build_parser(), "gateway", "publish").description or "")


@pytest.mark.parametrize("command", [("loadgen",), ("fleet", "up")])
def test_a_load_of_an_hour_or_a_day_is_allowed_and_the_help_says_how_long(command: tuple[str, ...]) -> None:
    """A soak of an hour is a load generator's normal use; --duration stopped at 600 s, a bound kept only for
    what a timed run keeps (now bounded as a load until stopped is, past KEEP_EVERY_SAMPLE_UP_TO_S)."""
    from console.gateway.loadgen import MAX_DURATION_S, LoadSpec, check_load

    assert MAX_DURATION_S == 24 * 3600
    duration = next(
        a for a in _subparser(build_parser(), *command)._actions if "--duration" in a.option_strings
    )
    assert "at most 86400 (24 h)" in (duration.help or "")
    for seconds in (3600.0, MAX_DURATION_S):
        check_load(LoadSpec(["ws://127.0.0.1:9/"], clients=5, policy="fixed", duration_s=seconds), workers=1)


def test_gateway_serve_help_says_each_admission_limits_unit() -> None:
    """`--rate-per-s` said "token bucket refill" (of what, a second?), `--burst` and `--max-connections`
    "in (0, 1000000000]" for whole numbers."""
    helps = {
        a.option_strings[0]: a.help or ""
        for a in _subparser(build_parser(), "gateway", "serve")._actions
        if a.option_strings
    }
    assert "new connections a second" in helps["--rate-per-s"]
    assert "connections admitted at once, a whole number in [1, 1000000000]" in helps["--burst"]
    assert "a whole number in [1, 1000000000]" in helps["--max-connections"]


@pytest.mark.parametrize("host", ["0.0.0.0", "localhost"])
def test_a_host_off_loopback_is_refused_naming_what_is_allowed(host: str, capsys) -> None:
    """It said "'localhost' is not a loopback address" (it is one, but a name) and named no allowed value."""
    assert main([*SERVE_ARGV, "--host", host]) == 2
    err = capsys.readouterr().err
    assert f"--host: {host!r} is not allowed; expected a loopback IP address: 127.0.0.0/8 or ::1" in err, err


def test_a_node_that_cannot_start_prints_no_controller_token(tmp_path) -> None:
    """Without --token-file the node printed the controller token it made, then exited 2 on a taken port:
    a secret for a node that never ran."""
    from console.server.runner import bind_socket

    with bind_socket("127.0.0.1", 0) as taken:
        port = str(taken.getsockname()[1])
        command = [sys.executable, "-m", "console", *SERVE_ARGV[:2], "--node-id", "x"]
        command += ["--port", port, "--admin-port", "0"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, env=child_env())
    assert done.returncode == 2 and f"--port: '{port}' is not allowed" in done.stderr, done.stderr
    assert "controller token" not in done.stderr + done.stdout
