"""Gateway nodes and redis-server as child processes on loopback — for `fleet up`, the bench and tests.

Every child is started by us, known by its pid, and stopped by that pid (never by name) — or, when we
end without stopping it (SIGKILL, a hard crash), stops itself: a node when its stdin, our end of a pipe,
closes (`--stop-with-parent`); a Redis asked to (`stop_with_parent`) by the parent-death signal.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from console.errors import StormdeckError

_READY = re.compile(r"clients (ws://\S+)\s+admin (http://\S+)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class NodeProcess:
    """`stormdeck gateway serve` in a child process."""

    node_id: str
    args: list[str] = field(default_factory=list)
    token: str = "controller-token"
    port: int = 0
    admin_port: int = 0
    history: str | None = None
    process: subprocess.Popen[str] | None = None
    url: str = ""
    admin_url: str = ""
    #: Where its stderr goes (`fleet up` names it when the node dies); None: an unnamed temporary file.
    log_path: Path | None = None

    def start(self, timeout_s: float = 15.0) -> NodeProcess:
        """Start the child and wait for its URLs. Unpinned ports (0) are chosen by the child as it binds,
        so no other process can take them between our choice and its `bind`; a restart keeps them."""
        token_file = tempfile.NamedTemporaryFile("w", suffix=".token", delete=False)  # noqa: SIM115
        token_file.write(self.token + "\n")
        token_file.close()
        command = [sys.executable, "-m", "console", "gateway", "serve", "--node-id", self.node_id]
        command += [
            "--port",
            str(self.port),
            "--admin-port",
            str(self.admin_port),
            "--token-file",
            token_file.name,
        ]
        command += ["--history", self.history] if self.history else []
        # Our end of its stdin closes however we end (a SIGKILL too): the node then stops itself.
        command += ["--stop-with-parent"]
        # A file, so a chatty child never blocks.
        if self.log_path is not None:
            self._stderr = open(self.log_path, "w+")  # noqa: SIM115
        else:
            self._stderr = tempfile.TemporaryFile("w+")  # noqa: SIM115
        self.process = subprocess.Popen(
            command + self.args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=child_env(),
        )
        try:
            line = first_line(self.process, timeout_s)  # the node prints its URLs once it listens
        finally:
            os.unlink(token_file.name)
        match = _READY.search(line)
        if match is None:
            self.kill()
            self._stderr.seek(0)
            err = self._stderr.read()
            said = repr(line) if line else f"nothing within {timeout_s:g} s"
            raise StormdeckError(f"gateway node {self.node_id} did not start: {said} {err[-800:]}")
        self.url, self.admin_url = match.groups()
        self.port, self.admin_port = urlsplit(self.url).port or 0, urlsplit(self.admin_url).port or 0
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def admin(self, timeout_s: float = 5.0) -> httpx.Client:
        return httpx.Client(
            base_url=self.admin_url, headers={"Authorization": f"Bearer {self.token}"}, timeout=timeout_s
        )

    def status(self) -> dict:
        with self.admin() as client:
            return client.get("/v1/node").json()

    def cpu_s(self) -> float:
        with self.admin() as client:
            for line in client.get("/metrics").text.splitlines():
                if line.startswith("process_cpu_seconds_total"):
                    return float(line.split()[-1])
        raise StormdeckError("node /metrics has no process_cpu_seconds_total")

    def rss_kb(self) -> int:
        with open(f"/proc/{self.pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def kill(self) -> None:
        """`kill -9`: the abrupt death the storm test is about."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)

    def stop(self, timeout_s: float = 8.0) -> None:
        """SIGTERM (planned shutdown: reconnect hints and 1012s), then SIGKILL if it lingers."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()


def first_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    """The child's first line of stdout, or "" if it exits or says nothing within `timeout_s`."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout_s)
    return process.stdout.readline() if ready else ""  # the node prints its whole line at once


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")  # the same tree as the parent
    return env


@dataclass
class RedisProcess:
    """A throwaway redis-server on an ephemeral loopback port, no persistence."""

    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    #: Where its log goes (`fleet up` names it when Redis dies); None: nowhere.
    log_path: Path | None = None
    #: SIGTERM it when we end, however we end (`fleet up`): it is started from the main thread, whose
    #: exit is the process's (see `_stop_with_parent`).
    stop_with_parent: bool = False

    def start(self, timeout_s: float = 10.0) -> RedisProcess:
        binary = shutil.which("redis-server")
        if binary is None:
            raise StormdeckError("redis-server is not installed (apt-get install -y redis-server)")
        self.port = self.port or free_port()
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no"]
        preexec = _stop_with_parent() if self.stop_with_parent else None
        with open(self.log_path or os.devnull, "wb") as log:  # the child holds its own copy
            # A group of its own: a terminal's Ctrl-C reaches the nodes, not the history they publish into
            # while they stop — whoever started Redis stops it (`fleet up`: last), or its parent's end does.
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, preexec_fn=preexec, process_group=0
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), 0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise StormdeckError(f"redis-server did not answer on port {self.port}")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(5)


def _stop_with_parent() -> Callable[[], None]:
    """What a child runs before it execs redis-server so that it gets SIGTERM when we end, however we end.

    Redis is not ours: it cannot watch a pipe as our children do (`--stop-with-parent`), and a wrapper
    would give it a pid that is not Redis's (a `kill -9` of the pid `fleet up` prints — the drill that
    says Redis died — would leave the real one running). So: PR_SET_PDEATHSIG, which outlives exec. It
    fires when the thread that started the child exits, so only the main thread may start it — its exit
    is the process's; a node started from a worker thread could not be started this way. Linux only;
    elsewhere nothing is asked."""
    if threading.current_thread() is not threading.main_thread():
        raise StormdeckError("a Redis that stops with its parent is started from the main thread only")
    if not sys.platform.startswith("linux"):
        return lambda: None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the child only calls it
    parent = os.getpid()

    def ask() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # we ended before it was asked: nobody would send it
            os._exit(1)

    return ask


#: prctl(2)'s option number (linux/prctl.h).
_PR_SET_PDEATHSIG = 1
