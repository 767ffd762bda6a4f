"""The real `stormdeck sim serve` process and the embedded default's server, on loopback."""

from __future__ import annotations

import json
import queue
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect

from console.cli import main
from console.cli.embedded import FALLBACK_SCENARIO, EmbeddedServer, ServerStartError
from console.cli.kernel_load import COMPILING

#: A small fleet so each process starts in about a second.
SMALL = ["nodes.count=8", "clients.count=20000", "rollout.batch_size=2"]


def serve_command(*extra: str) -> list[str]:
    command = [sys.executable, "-m", "console", "sim", "serve", FALLBACK_SCENARIO, "--port", "0", *extra]
    for override in SMALL:
        command += ["--set", override]
    return command


def read_announcement(process: subprocess.Popen[str]) -> dict[str, str]:
    """The `key: value` lines the server prints once it is ready (the test waits on them, not a timer)."""
    fields: dict[str, str] = {}
    assert process.stdout is not None
    for line in process.stdout:
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
        if line.startswith("Ctrl-C"):
            return fields
    raise AssertionError(f"server exited before it was ready: {process.wait()}")


@pytest.fixture
def served() -> dict[str, str]:
    process = subprocess.Popen(serve_command(), stdout=subprocess.PIPE, text=True)
    try:
        fields = read_announcement(process)
        yield {**fields, "process": process}  # type: ignore[misc]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def test_sim_serve_guards_its_api_resumes_and_stops_cleanly(served) -> None:
    url = served["url"]
    token_path = Path(served["token"].split()[0])
    assert url.startswith("http://127.0.0.1:")
    assert stat.S_IMODE(token_path.stat().st_mode) == 0o600
    role, token, _ = token_path.read_text().split()
    assert role == "operator"
    headers = {"Authorization": f"Bearer {token}"}

    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        refused = await client.get("/v1/fleet")
        assert refused.status_code == 401
        assert refused.headers["content-type"] == "application/problem+json"
        fleet = (await client.get("/v1/fleet", headers=headers)).json()
    assert fleet["fleet"] == FALLBACK_SCENARIO and len(fleet["nodes"]) == 8

    stream = url.replace("http://", "ws://") + "/v1/stream"
    async with connect(stream, additional_headers=headers, max_queue=None) as ws:
        hello = json.loads(await ws.recv())
        newest = json.loads(await ws.recv())
        following = json.loads(await ws.recv())
        while following["type"] != "frame":
            following = json.loads(await ws.recv())
    assert hello["source"] == "simulator" and newest["seq"] == hello["seq"]
    assert following["seq"] == newest["seq"] + 1 and following["time_s"] == newest["time_s"] + 1

    resume = f"{stream}?since={newest['seq']}&epoch={hello['epoch']}"
    async with connect(resume, additional_headers=headers, max_queue=None) as ws:
        again = json.loads(await ws.recv())
        replayed = json.loads(await ws.recv())
        while replayed["type"] != "frame":
            replayed = json.loads(await ws.recv())
    assert again["recovered"] is True and replayed["seq"] == newest["seq"] + 1

    async with connect(f"{stream}?since=1&epoch=stale", additional_headers=headers, max_queue=None) as ws:
        assert json.loads(await ws.recv())["recovered"] is False

    process: subprocess.Popen[str] = served["process"]  # type: ignore[assignment]
    process.send_signal(signal.SIGTERM)
    assert process.wait(15) == 0
    assert not token_path.exists(), "the token the server made is removed when it stops"


def test_a_closed_terminal_stops_the_server_as_sigterm_does(served) -> None:
    """SIGHUP (tmux kill-session, a dropped ssh session) ended `sim serve` on the spot and left its token
    file behind; it now shuts down in order, as on Ctrl-C."""
    token_path = Path(served["token"].split()[0])
    assert token_path.exists()
    process: subprocess.Popen[str] = served["process"]  # type: ignore[assignment]
    process.send_signal(signal.SIGHUP)
    assert process.wait(15) == 0
    assert not token_path.exists(), "the token the server made is removed when it stops"


def test_a_non_loopback_host_needs_a_token_file(capsys) -> None:
    assert main(serve_command("--host", "0.0.0.0")[3:]) == 2
    error = capsys.readouterr().err
    assert "--host" in error and "--token-file" in error and "Traceback" not in error


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        # bind() answers a port out of range with OverflowError, not OSError: it was a traceback.
        (["sim", "serve", "demo", "--port", "99999"], ["--port: '99999'", "[0, 65535]"]),
        (["sim", "serve", "demo", "--port", "-1"], ["--port: '-1'", "[0, 65535]"]),
        (["drill", "thundering-herd", "--serve", "--port", "70000"], ["--port: '70000'", "[0, 65535]"]),
        # numpy refuses a negative seed with a ValueError.
        (["sim", "serve", "demo", "--port", "0", "--seed", "-1"], ["--seed: '-1'", "an integer in [0, "]),
        # The option and its value as typed: it read "speed: 0.0 is not allowed", as if a field of some body.
        (["sim", "serve", "demo", "--port", "0", "--speed", "0"], ["--speed: '0'", "(0, 100]"]),
        (["drill", "thundering-herd", "--serve", "--port", "0", "--speed", "100.5"], ["--speed: '100.5'"]),
        (["replay", "missing.sdrec", "--speed", "0"], ["--speed: '0'", "(0, 600]"]),
    ],
)
def test_bad_serve_arguments_exit_2_before_serving(argv: list[str], words: list[str], capsys) -> None:
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error
    for word in words:
        assert word in error


def test_a_malformed_token_file_is_refused_by_line(tmp_path, capsys) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("viewer good-token\nsuperuser bad-token\n")
    assert main(serve_command("--token-file", str(tokens))[3:]) == 2
    error = capsys.readouterr().err
    assert f"{tokens} line 2" in error and "viewer, operator or admin" in error


def test_the_embedded_server_serves_and_leaves_nothing_behind_when_its_parent_goes_away() -> None:
    server = EmbeddedServer(FALLBACK_SCENARIO, SMALL).start()
    directory = server.token_path.parent
    process = server._process
    assert process is not None and process.stdin is not None
    try:
        response = httpx.get(f"{server.url}/v1/fleet", headers={"Authorization": f"Bearer {server.token}"})
        assert response.status_code == 200
        process.stdin.close()  # what the OS does when the parent dies without stopping it
        assert process.wait(15) == 0
    finally:
        server.stop()
    assert not directory.exists()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/v1/fleet")


class _SlowStart:
    """The server's stdout lines: nothing yet at the first look (a first run compiling), then the URL."""

    def __init__(self) -> None:
        self.looks = 0

    def get(self, timeout: float) -> str:
        self.looks += 1
        if self.looks == 1:
            import queue

            raise queue.Empty
        return "url: http://127.0.0.1:1\n"


def test_a_slow_first_start_says_why_the_console_is_not_up_yet(capsys) -> None:
    """User pass: a fresh `stormdeck` said "starting the simulator (demo) on 127.0.0.1…" and then nothing
    for 45 s while the kernel compiled; at 4 a.m. that reads as a hang."""
    server = EmbeddedServer(FALLBACK_SCENARIO)
    try:
        url = server._wait_for_url(_SlowStart(), timeout_s=60, still_starting_s=0.01)  # type: ignore[arg-type]
    finally:
        server.stop()
    assert url == "http://127.0.0.1:1"
    said = capsys.readouterr().err
    assert "still starting" in said and "compiles the simulator" in said and "cache" in said, said


def _url_after(seconds: float) -> queue.Queue[str | None]:
    """The server's stdout: its URL line after `seconds` (a start that outlasts the wait's timeout)."""
    lines: queue.Queue[str | None] = queue.Queue()
    timer = threading.Timer(seconds, lines.put, args=("url: http://127.0.0.1:1\n",))
    timer.daemon = True
    timer.start()
    return lines


def test_a_first_run_compiling_past_the_start_timeout_is_waited_for() -> None:
    """User pass: with other work on the machine (load 5) the first `stormdeck` compiled the simulator for
    over 120 s and then gave up — "did not start within 120 s" — though the compile was progress, not a hang.
    While the server's log says it compiles, the wait has the compile's own bound."""
    server = EmbeddedServer(FALLBACK_SCENARIO)
    try:
        server._log_path.write_text(COMPILING + "\n")
        url = server._wait_for_url(
            _url_after(0.5), timeout_s=0.1, still_starting_s=0.01, compile_timeout_s=30
        )
    finally:
        server.stop()
    assert url == "http://127.0.0.1:1"


def test_a_start_that_is_not_compiling_still_times_out() -> None:
    server = EmbeddedServer(FALLBACK_SCENARIO)
    try:
        with pytest.raises(ServerStartError, match=r"did not start within 0\.1 s"):
            server._wait_for_url(_url_after(30), timeout_s=0.1, still_starting_s=0.01, compile_timeout_s=30)
    finally:
        server.stop()


def test_a_compile_has_a_bound_of_its_own() -> None:
    server = EmbeddedServer(FALLBACK_SCENARIO)
    try:
        server._log_path.write_text(COMPILING + "\n")
        with pytest.raises(ServerStartError, match=r"still compiling the simulator after 0\.3 s"):
            server._wait_for_url(_url_after(30), timeout_s=0.1, still_starting_s=0.01, compile_timeout_s=0.3)
    finally:
        server.stop()


#: `run_embedded` with the server and the console replaced (the script's console function goes between).
_EMBEDDED_FAKE_SERVER = """
import os, signal, sys, threading
import console.cli.embedded as embedded

class Server:
    url, token_path = "http://127.0.0.1:1", None
    def __enter__(self): return self
    def __exit__(self, *exc): print("server stopped", flush=True)
"""
_RUN_EMBEDDED = """
embedded.EmbeddedServer = lambda scenario, **options: Server()
embedded.attach_console = console
embedded.default_scenario = lambda: "demo"
sys.exit(embedded.run_embedded())
"""
#: The console leaves a thread that never ends (Textual's input thread, spinning on a hung-up terminal once
#: SIGHUP cut the app off mid-run), then the terminal closes.
_CUT_OFF_CONSOLE = (
    _EMBEDDED_FAKE_SERVER
    + """
def console(url, token_path):
    threading.Thread(target=threading.Event().wait).start()  # not a daemon: the interpreter waits for it
    print("console up", flush=True)
    os.kill(os.getpid(), signal.SIGHUP)
    threading.Event().wait()

"""
    + _RUN_EMBEDDED
)


def test_a_closed_terminal_ends_the_embedded_console_even_when_the_app_leaves_a_thread_behind() -> None:
    """User pass: `tmux kill-session` over `stormdeck` just as the admission form opened left the console
    process (parent 1) at 65 % CPU for good: SIGHUP's SystemExit cut the Textual app off before it stopped
    its input thread (not a daemon), which then spun on the dead terminal while the interpreter's exit
    waited for it. The server was stopped and the token removed; the process never ended."""
    process = subprocess.run(
        [sys.executable, "-c", _CUT_OFF_CONSOLE], capture_output=True, text=True, timeout=15
    )
    assert process.returncode == 128 + signal.SIGHUP, (process.returncode, process.stderr)
    assert process.stdout.splitlines() == ["console up", "server stopped"], process.stdout


#: As `_CUT_OFF_CONSOLE`, but stopped as `timeout` and systemd stop a process: SIGTERM, then at once SIGCONT,
#: whose handler is Textual's (it resumes the screen: `asyncio.get_running_loop()`, outside any loop once the
#: stop has cut the app off).
_STOPPED_THEN_CONTINUED_CONSOLE = (
    _EMBEDDED_FAKE_SERVER
    + """
def resume_screen(signum, frame):
    raise RuntimeError("no running event loop")

def console(url, token_path):
    signal.signal(signal.SIGCONT, resume_screen)
    print("console up", flush=True)
    both = {signal.SIGTERM, signal.SIGCONT}
    signal.pthread_sigmask(signal.SIG_BLOCK, both)
    os.kill(os.getpid(), signal.SIGTERM)
    os.kill(os.getpid(), signal.SIGCONT)
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, both)
        threading.Event().wait()
    finally:
        sum(range(1000))  # the app's cleanup: the pending SIGCONT's handler runs here

"""
    + _RUN_EMBEDDED
)


def test_a_stop_followed_by_sigcont_ends_the_console_as_a_stop_not_a_traceback() -> None:
    """User pass: `timeout 20 stormdeck drill thundering-herd` (and a systemd stop) sends SIGTERM then
    SIGCONT; Textual's SIGCONT handler ran while the stop unwound the app and raised 'RuntimeError: no
    running event loop' over it: a traceback on the terminal and exit 1, not 143."""
    process = subprocess.run(
        [sys.executable, "-c", _STOPPED_THEN_CONTINUED_CONSOLE], capture_output=True, text=True, timeout=15
    )
    assert process.returncode == 128 + signal.SIGTERM, (process.returncode, process.stderr)
    assert "Traceback" not in process.stderr, process.stderr
    assert process.stdout.splitlines() == ["console up", "server stopped"], process.stdout


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ("missing/audit.jsonl", "/missing' is not allowed; expected an existing directory"),
        (".", "not a directory"),
    ],
)
def test_sim_serve_refuses_an_audit_log_it_cannot_write_before_building_the_fleet(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys, where: str, said: str
) -> None:
    """`sim serve demo --audit-log /nonexistent/a.jsonl` made /nonexistent and served: a typo in the
    directory made one (`drill --serve` refuses it, as `sim run --frames` does)."""
    from console.server.simulator import SimulatorBackend

    def built(*args: object, **kwargs: object) -> None:
        raise AssertionError("the fleet was built with an audit log it cannot write")

    monkeypatch.setattr(SimulatorBackend, "from_scenario", built)
    assert main(["sim", "serve", "demo", "--port", "0", "--audit-log", str(tmp_path / where)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stormdeck: --audit-log: ") and said in err, err
    assert not (tmp_path / "missing").exists(), "the directory is not made for it"
