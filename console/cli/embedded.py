"""`stormdeck` with no arguments: a simulated fleet on loopback, and the console attached to it.

The server runs in a child process (`stormdeck sim serve … --port 0`), so the simulator's work never
competes with the console for the GIL. It gets a fresh random operator token in a private 0700
directory, and it stops when the console quits — or, should this process die without stopping it, when
its stdin (our end of a pipe) closes. Nothing is left behind.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from console.cli.kernel_load import COMPILING
from console.errors import StormdeckError
from console.server.tokens import Role, new_token, write_token_file
from console.stop_signals import OUTSIDE_STOP_SIGNALS

#: The lead's demo-scale scenario: calm, then a storm within about 20 s.
DEFAULT_SCENARIO = "demo"
#: Used while `demo` is not packaged: the full-scale outage (its rollout starts at 30 s).
FALLBACK_SCENARIO = "thundering-herd"
#: A fresh install compiles the simulator's kernels on first use (tens of seconds on a slow machine).
START_TIMEOUT_S = 120.0
#: ... unless the server says it compiles: progress, not a hang. With other work on a 2-core machine (load 5)
#: a first compile outlasted 120 s and the console gave up.
COMPILE_TIMEOUT_S = 600.0
COMPILE_LOOK_S = 1.0
#: Without a URL by then the console says why it is not up yet: the compile took 45 s on a busy 2-core
#: machine, with nothing on the terminal but "starting the simulator …" — it read as a hang.
STILL_STARTING_S = 5.0
STILL_STARTING = (
    "stormdeck: still starting — a first run compiles the simulator (tens of seconds); "
    "later runs load it from cache"
)
STOP_TIMEOUT_S = 10.0


class ServerStartError(StormdeckError):
    """The embedded server did not come up; the message holds the tail of its log."""


def default_scenario() -> str:
    from console.sim.scenario_loader import list_scenarios

    names = {name for name, _ in list_scenarios()}
    return DEFAULT_SCENARIO if DEFAULT_SCENARIO in names else FALLBACK_SCENARIO


class EmbeddedServer:
    """`sim serve SCENARIO` in a child process on 127.0.0.1 with an ephemeral port; a context manager.

    `serve` names another serving command with the same options (`["drill", NAME, "--serve"]`: the
    interactive drill serves its drill this way); by default it is `["sim", "serve", scenario]`.
    `clock_token`: the token file also holds an admin token, `clock_token`, for a server whose clock is
    an admin's (a served drill's): the single-player drill pauses its own drill with it, while the console
    acts with the operator token. `own_audit_log`: the server logs to a new file in the private directory,
    removed with it, not to the user's shared log for the fleet — an interactive drill is one exercise, and
    its audit screen (L) showed earlier runs' halts and drains. `audit_log`: the server logs to this file
    instead (the user's `drill --audit-log FILE`, checked by the caller), which outlives the server."""

    def __init__(
        self,
        scenario: str,
        overrides: list[str] | None = None,
        speed: float = 1.0,
        serve: list[str] | None = None,
        clock_token: bool = False,
        own_audit_log: bool = False,
        audit_log: Path | None = None,
        seed: int | None = None,
    ) -> None:
        self.scenario = scenario
        self.serve = list(serve) if serve is not None else ["sim", "serve", scenario]
        self.overrides = list(overrides or [])
        self.speed = speed
        self.seed = seed
        self.url = ""
        self._directory = Path(tempfile.mkdtemp(prefix="stormdeck-"))  # 0700
        self.token = new_token()
        self.clock_token = new_token() if clock_token else None
        self.token_path = self._directory / "operator.token"
        self._log_path = self._directory / "server.log"
        self.audit_log_path: Path | None = None
        if audit_log is not None:
            self.audit_log_path = audit_log.absolute()  # whole, so the child's messages name it plainly
        elif own_audit_log:
            self.audit_log_path = self._directory / "audit.jsonl"
        self._process: subprocess.Popen[str] | None = None

    def start(self, timeout_s: float = START_TIMEOUT_S) -> EmbeddedServer:
        clock = [(Role.ADMIN, self.clock_token, "drill-clock")] if self.clock_token is not None else []
        write_token_file(self.token_path, Role.OPERATOR, self.token, "embedded-console", clock)
        command = [sys.executable, "-m", "console", *self.serve, "--port", "0"]
        command += ["--speed", str(self.speed), "--token-file", str(self.token_path), "--stop-with-parent"]
        for override in self.overrides:
            command += ["--set", override]
        if self.seed is not None:
            command += ["--seed", str(self.seed)]
        if self.audit_log_path is not None:
            command += ["--audit-log", str(self.audit_log_path)]
        with self._log_path.open("w") as log:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                start_new_session=True,  # the terminal's Ctrl-C is the console's to handle, not the server's
            )
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_read_lines, args=(self._process, lines), daemon=True).start()
        try:
            self.url = self._wait_for_url(lines, timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_for_url(
        self,
        lines: queue.Queue[str | None],
        timeout_s: float,
        still_starting_s: float = STILL_STARTING_S,
        compile_timeout_s: float = COMPILE_TIMEOUT_S,
    ) -> str:
        started = time.monotonic()
        said = False
        while True:
            limit_s = compile_timeout_s if self._compiling() else timeout_s
            left = started + limit_s - time.monotonic()
            # Looks at the log again each second: a compile's notice can come after the wait began.
            wait_s = min(left, COMPILE_LOOK_S) if said else min(left, still_starting_s)
            try:
                line = lines.get(timeout=max(0.0, wait_s))
            except queue.Empty:
                if time.monotonic() < started + limit_s:
                    if not said:  # the first wait was still_starting_s long
                        print(STILL_STARTING, file=sys.stderr, flush=True)
                        said = True
                    continue
                if self._compiling():
                    raise ServerStartError(
                        f"the simulator server was still compiling the simulator after {limit_s:g} s"
                    ) from None
                raise ServerStartError(f"the simulator server did not start within {limit_s:g} s") from None
            if line is None:
                log_tail = self._log_path.read_text(errors="replace").strip().splitlines()[-5:]
                raise ServerStartError("the simulator server stopped: " + " / ".join(log_tail))
            if line.startswith("url:"):
                return line.split(maxsplit=1)[1].strip()

    def _compiling(self) -> bool:
        """The server said on its stderr (our log) that it compiles the simulator: a first run's work."""
        try:
            return COMPILING in self._log_path.read_text(errors="replace")
        except FileNotFoundError:
            return False

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def wait(self) -> int:
        """Block until the server exits by itself (e.g. it failed); returns its exit status."""
        assert self._process is not None
        return self._process.wait()

    def stop(self) -> None:
        """Stop the server (closing its stdin asks it to stop cleanly), then remove the token file."""
        process = self._process
        if process is not None and process.poll() is None:
            with contextlib.suppress(OSError):
                process.stdin.close()  # type: ignore[union-attr]
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.terminate()
                try:
                    process.wait(STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        shutil.rmtree(self._directory, ignore_errors=True)

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


def _read_lines(process: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
    # Keeps reading after the url line, so the server never blocks on a full stdout pipe.
    assert process.stdout is not None
    for line in process.stdout:
        lines.put(line)
    lines.put(None)


def attach_console(url: str, token_path: Path) -> int:
    """The one call site of the console: `stormdeck attach URL --token-file FILE`, in this process."""
    from console.cli import build_parser, main

    if "attach" not in _commands(build_parser()):
        print(f"The console is not installed yet (no `stormdeck attach`). The simulator is serving {url}")
        print(f"with the operator token in {token_path}. Ctrl-C stops it.", flush=True)
        return -1
    return main(["attach", url, "--token-file", str(token_path)])


def _commands(parser: object) -> set[str]:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


class OutsideStop(SystemExit):
    """A `kill` or a closed terminal, raised in the main thread wherever it was running."""


def _exit_on_signal(signum: int, frame: object) -> None:
    # `timeout` and systemd send SIGCONT right after SIGTERM. Textual's handler for it resumes the screen
    # (asyncio.get_running_loop()), which, run while this stop unwinds the app, raised RuntimeError over
    # it: a traceback and exit 1. Once stopping, a SIGCONT has nothing left to resume.
    with contextlib.suppress(ValueError):  # (ValueError: not the main thread, where no handler is set)
        signal.signal(signal.SIGCONT, _ignore)
    raise OutsideStop(128 + signum)


def _ignore(signum: int, frame: object) -> None:
    """A handler that does nothing: SIG_IGN would leave a signal already pending reported as a race."""


@contextlib.contextmanager
def ending_at_once_after_an_outside_stop() -> Iterator[None]:
    """Once an outside stop has unwound the `with` blocks inside (the server stopped, its token removed),
    end the process at once. The stop cuts the console's app off wherever it was: when that was before it
    stopped its input thread (not a daemon), the thread spun on the hung-up terminal at 65 % CPU and the
    interpreter's exit waited for it for good (`tmux kill-session` just as a form opened)."""
    try:
        yield
    except OutsideStop as stop:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(stop.code if isinstance(stop.code, int) else 1)


def run_embedded(
    scenario: str | None = None,
    overrides: list[str] | None = None,
    seed: int | None = None,
    speed: float = 1.0,
) -> int:
    """The console on a simulated fleet in a child process: bare `stormdeck` (the demo), or `stormdeck
    console SCENARIO` (checked by the caller: a bad name or override is refused before a server starts)."""
    scenario = scenario or default_scenario()
    print(f"stormdeck: starting the simulator ({scenario}) on 127.0.0.1…", file=sys.stderr, flush=True)
    # A closed terminal (SIGHUP) or a `kill` (SIGTERM) unwinds through `with`, which stops the server and
    # removes the token; by default either would end us on the spot and leave the token directory behind.
    for signum in OUTSIDE_STOP_SIGNALS:
        signal.signal(signum, _exit_on_signal)
    # Its own audit log, as drill mode's: each run is a fleet of its own, and `L` listed earlier runs' actions.
    simulator = EmbeddedServer(
        scenario, overrides=overrides or [], seed=seed, speed=speed, own_audit_log=True
    )
    with ending_at_once_after_an_outside_stop(), simulator as server:
        status = attach_console(server.url, server.token_path)
        if status == -1:  # no console to attach: serve until Ctrl-C
            try:
                return server.wait()
            except KeyboardInterrupt:
                return 0
        return status
