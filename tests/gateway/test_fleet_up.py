"""`stormdeck fleet up`: nodes, publisher, controller and load on loopback; SIGTERM stops them all."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from console.gateway.processes import child_env
from tests.gateway.conftest import needs_redis

pytestmark = [pytest.mark.timeout(60), needs_redis]


def test_fleet_up_serves_the_fleet_and_stops_everything(tmp_path) -> None:
    (tmp_path / "api.tokens").write_text("operator op-token tester\n")
    command = [
        sys.executable,
        "-m",
        "console",
        "fleet",
        "up",
        "--nodes",
        "2",
        "--port",
        "0",
        "--clients",
        "60",
    ]
    command += ["--token-file", str(tmp_path / "api.tokens"), "--work-factor", "200"]
    command += ["--audit-log", str(tmp_path / "audit.jsonl")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=child_env())
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Ctrl-C"):
                break
        url = next(line.split()[1] for line in lines if line.startswith("url:"))
        pids = [int(line.split("pid")[1].split()[0]) for line in lines if " pid " in line]
        assert len(pids) == 5, lines  # two nodes, redis, the publisher, the load generator
        headers = {"Authorization": "Bearer op-token"}
        deadline = time.monotonic() + 30
        while True:
            fleet = httpx.get(f"{url}/v1/fleet", headers=headers).json()
            if fleet["totals"]["connections"] == 60 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert [n["id"] for n in fleet["nodes"]] == ["node-1", "node-2"]
        assert fleet["totals"]["connections"] == 60
        assert any(line.startswith("audit:") and "audit.jsonl" in line for line in lines)
        # fleet up serves the guarded action routes too: a dry run is judged and audited, nothing applied.
        dry = {"rate_per_s": 10, "deadline_s": 60, "hint_ms": [0, 1000], "dry_run": True}
        judged = httpx.post(f"{url}/v1/nodes/node-1/drain", json=dry, headers=headers)
        assert judged.status_code == 200 and judged.json()["applied"] is False, judged.text
        records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
        assert [(r["action"], r["target"], r["outcome"]) for r in records] == [("drain", "node-1", "dry_run")]
        with httpx.Client(
            base_url=next(line.split("admin ")[1].strip() for line in lines if "admin " in line)
        ) as a:
            assert "stormdeck_gateway_connections" in a.get("/metrics").text
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    assert process.stdout is not None
    assert "stopped: 2 gateway nodes, the load, the publisher, redis" in process.stdout.read()
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}"), f"pid {pid} outlived fleet up"


def _children(pid: int) -> set[int]:
    """Direct children of `pid`, from /proc (every thread's list: a node started from a worker thread)."""
    found: set[int] = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                found.update(int(child) for child in handle.read().split())
        except FileNotFoundError:  # a thread that ended since the listing (CI saw one): it has no children
            continue
    return found


def _confirmed(url: str, path: str, body: dict, headers: dict, name: str) -> httpx.Response:
    """POST an action; answer the guards' confirmation (409) with its token, and the name when typed."""
    asked = httpx.post(f"{url}{path}", json=body, headers=headers)
    if asked.status_code != 409:
        return asked
    problem = asked.json()
    confirm = {"token": problem["confirm_token"]}
    if problem["verdict"]["level"] == "typed":
        confirm["typed"] = problem["verdict"].get("typed_expected") or name
    return httpx.post(f"{url}{path}", json={**body, "confirm": confirm}, headers=headers)


def _fleet_until(url: str, headers: dict, done, timeout_s: float) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        fleet = httpx.get(f"{url}/v1/fleet", headers=headers).json()
        if done(fleet) or time.monotonic() > deadline:
            return fleet
        time.sleep(0.2)


@pytest.mark.timeout(90)
def test_fleet_up_adds_capacity_the_load_reaches_and_stops_it_too(tmp_path) -> None:
    """Two nodes and 60 clients, then `add_capacity`: fleet up starts node-3 as it started the others and
    lists it for the load generator; node-1's drained clients then spread over node-2 *and* node-3."""
    (tmp_path / "api.tokens").write_text("operator op-token tester\n")
    command = [sys.executable, "-m", "console", "fleet", "up", "--nodes", "2", "--port", "0"]
    command += ["--clients", "60", "--token-file", str(tmp_path / "api.tokens"), "--work-factor", "200"]
    command += ["--audit-log", str(tmp_path / "audit.jsonl")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=child_env())
    children: set[int] = set()
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Ctrl-C"):
                break
        assert any(line.startswith("load:") and "until the fleet stops" in line for line in lines), lines
        url = next(line.split()[1] for line in lines if line.startswith("url:"))
        headers = {"Authorization": "Bearer op-token"}
        fleet = _fleet_until(url, headers, lambda f: f["totals"]["connections"] == 60, 30)
        assert fleet["totals"]["connections"] == 60
        added = _confirmed(url, "/v1/capacity", {"count": 1}, headers, "loopback")
        assert added.status_code == 202, added.text
        fleet = _fleet_until(
            url, headers, lambda f: len(f["nodes"]) == 3 and f["nodes"][2]["state"] == "ready", 30
        )
        assert {n["id"]: n["state"] for n in fleet["nodes"]} == {
            "node-1": "ready",
            "node-2": "ready",
            "node-3": "ready",
        }
        children = _children(process.pid)
        assert len(children) >= 4  # three nodes, the load (and a publisher only with Redis)
        on_node_1 = fleet["nodes"][0]["connections"]
        # Slowly (5 closes/s, ~6 s for node-1's ~30): the load reads its nodes file once a second, so at
        # most the first few closes happen before it knows node-3.
        drain = {"rate_per_s": 5, "deadline_s": 30, "hint_ms": [0, 500]}
        drained = _confirmed(url, "/v1/nodes/node-1/drain", drain, headers, "node-1")
        assert drained.status_code in (200, 202), drained.text

        def settled(f: dict) -> bool:
            return f["nodes"][0]["connections"] == 0 and f["totals"]["connections"] == 60

        fleet = _fleet_until(url, headers, settled, 30)
        assert settled(fleet), fleet["nodes"]
        moved_to_new = fleet["nodes"][2]["connections"]
        # Each client moves to another node at random: node-3 gets about half of node-1's (Binomial(n, ½)).
        assert 0.15 * on_node_1 <= moved_to_new <= 0.85 * on_node_1, (on_node_1, fleet["nodes"])
        records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
        assert ("add_capacity", "applied") in [(r["action"], r["outcome"]) for r in records]
        # The "more load" line runs as printed (a bare loadgen has another work factor: every client 401).
        more = next(line for line in lines if line.startswith("more load: ")).removeprefix("more load: ")
        argv = shlex.split(
            more.replace("--clients 1000", "--clients 20").replace("--duration 30", "--duration 2")
        )
        assert argv[0] == "stormdeck" and "--nodes-file" in argv
        load = subprocess.run(
            [sys.executable, "-m", "console", *argv[1:], "--json"], capture_output=True, text=True, timeout=30
        )
        report = json.loads(load.stdout)
        # node-1 is drained: the clients that try it first are turned away (503) and come back later.
        assert load.returncode == 0 and report["unauthorized"] == 0 and report["connects"] >= 10, report
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    for pid in children:
        assert not os.path.exists(f"/proc/{pid}"), f"pid {pid} outlived fleet up"


def _serving_children(pid: int) -> set[int]:
    """`pid`'s children that are gateway nodes (redis and the publisher are its children too)."""
    found = set()
    for child in _children(pid):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as handle:
                if b"serve" in handle.read().split(b"\0"):
                    found.add(child)
        except FileNotFoundError:
            continue
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_sigterm_while_the_nodes_start_stops_what_was_started(tmp_path, signum: int) -> None:
    """SIGTERM before the controller serves (a supervisor giving up on a slow start) used to end fleet up
    at once: redis, the publisher and the first node outlived it. Now it stops them as Ctrl-C does — and
    so does a closed terminal (SIGHUP), which left them all running."""
    command = [sys.executable, "-m", "console", "fleet", "up", "--nodes", "3", "--port", "0"]
    command += ["--audit-log", str(tmp_path / "audit.jsonl")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=child_env())
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        # A node child runs and fleet up waits for its URLs (in select; not inside Popen, whose own
        # interruption between fork and return no `finally` can reach).
        while not (_serving_children(process.pid) and _in_select(process.pid)):
            assert time.monotonic() < deadline, "no gateway node was started within 30 s"
            time.sleep(0.005)  # polling for that moment, not waiting in its stead
        seen = _children(process.pid)
        process.send_signal(signum)
        assert process.wait(30) == 130
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        survivors = [pid for pid in seen if os.path.exists(f"/proc/{pid}") and _alive(pid)]
        for pid in survivors:  # ours: the test's fleet; stop it before failing
            os.kill(pid, signal.SIGKILL)
    assert process.stdout is not None
    assert "stopped:" in process.stdout.read()
    assert not survivors, f"pids {survivors} outlived fleet up"


def _alive(pid: int) -> bool:
    """Not a zombie: an orphan reaped by init late still shows in /proc for a moment."""
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0] != "Z"


def _in_select(pid: int) -> bool:
    with open(f"/proc/{pid}/wchan") as handle:
        return handle.read().startswith(("poll_schedule_timeout", "do_select"))


class _Lines:
    """A child's stream read line by line in a thread, so the test polls what it said with a deadline."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line)

    def until(self, condition, timeout_s: float, what: str) -> str:
        deadline = time.monotonic() + timeout_s
        while not condition(text := "".join(self.lines)):
            assert time.monotonic() < deadline, f"timed out after {timeout_s} s waiting for {what}: {text!r}"
            time.sleep(0.05)
        return text

    def rest(self, timeout_s: float = 10) -> str:
        self._thread.join(timeout_s)
        return "".join(self.lines)


def _fleet_up(tmp_path, *extra: str, **popen: object) -> tuple[subprocess.Popen[str], _Lines, _Lines]:
    (tmp_path / "api.tokens").write_text("operator op-token tester\n")
    (tmp_path / "api.tokens").chmod(0o600)
    command = [sys.executable, "-m", "console", "fleet", "up", "--port", "0", "--work-factor", "200"]
    command += ["--token-file", str(tmp_path / "api.tokens"), "--audit-log", str(tmp_path / "audit.jsonl")]
    process = subprocess.Popen(
        command + list(extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        **popen,  # type: ignore[call-overload]
    )
    assert process.stdout is not None and process.stderr is not None
    return process, _Lines(process.stdout), _Lines(process.stderr)


def _serving(out: _Lines) -> tuple[str, list[int]]:
    """What fleet up said once it serves (up to "Ctrl-C stops it."), and every child pid it named."""
    said = out.until(lambda t: "Ctrl-C" in t, 40, "fleet up to serve")
    return said, [int(line.split(" pid ")[1].split()[0]) for line in said.splitlines() if " pid " in line]


def _pid_of(text: str, prefix: str) -> int:
    line = next(line for line in text.splitlines() if line.startswith(prefix))
    return int(line.split(" pid ")[1].split()[0])


def _stop_all(process: subprocess.Popen[str], pids: list[int]) -> list[int]:
    """Stop a fleet up the test left running, and its children (ours, by pid); the survivors found."""
    if process.poll() is None:
        process.kill()
        process.wait(10)
    survivors = [pid for pid in pids if os.path.exists(f"/proc/{pid}") and _alive(pid)]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    return survivors


def test_a_node_that_dies_is_reported_at_once_stays_down_and_the_fleet_runs_on(tmp_path) -> None:
    """A node killed mid-drill: fleet up's terminal said nothing and the fleet ran on half dead, unnoticed
    unless a console was attached. Now it names the node, its signal and its log, and what follows."""
    process, out, err = _fleet_up(tmp_path, "--nodes", "2")
    pids: list[int] = []
    try:
        said, pids = _serving(out)
        url = next(line.split()[1] for line in said.splitlines() if line.startswith("url:"))
        node_2 = _pid_of(said, "node:   node-2")
        os.kill(node_2, signal.SIGKILL)
        report = err.until(lambda t: "node-2" in t, 10, "the report of node-2's death")
        assert f"node-2 (pid {node_2}) was killed by SIGKILL" in report, report
        log = Path(report.split("log: ")[1].split()[0])
        assert log.name == "node-2.log" and log.exists(), report
        assert "stays down" in report and "1 of 2 node processes still run" in report, report
        headers = {"Authorization": "Bearer op-token"}
        fleet = _fleet_until(url, headers, lambda f: f["nodes"][1]["state"] == "down", 15)
        assert [n["state"] for n in fleet["nodes"]] == ["ready", "down"]
        assert process.poll() is None, "fleet up stopped over one node"
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        stopped = out.rest()
        # Only what it stopped: node-2 was killed, and said so, long before (it said "2 gateway nodes").
        assert "stopped: 1 gateway node, the publisher, redis (node-2 was already down)" in stopped, stopped
        assert f"logs kept: {log.parent}" in stopped, stopped
        shutil.rmtree(log.parent)  # kept for an operator; the test read what it needed
        assert "node-2" not in err.rest().replace(report, ""), "node-2 reported twice"
    finally:
        survivors = _stop_all(process, pids)
    assert not survivors, f"pids {survivors} outlived fleet up"


def test_redis_that_dies_stops_the_fleet_in_order_and_fleet_up_fails(tmp_path) -> None:
    """Every node's history and the publisher's stream are in fleet up's Redis, which nothing brings back:
    the fleet is not usable without it. fleet up says so, stops every child and exits 1."""
    process, out, err = _fleet_up(tmp_path, "--nodes", "2")
    pids: list[int] = []
    try:
        said, pids = _serving(out)
        assert len(pids) == 4, said  # two nodes, redis, the publisher
        redis = _pid_of(said, "redis:")
        os.kill(redis, signal.SIGKILL)
        assert process.wait(40) == 1
        report = err.rest()
        assert f"redis (pid {redis}) was killed by SIGKILL" in report, report
        assert "stopping the fleet" in report, report
        stopped = out.rest()
        assert "stopped: 2 gateway nodes, the publisher (redis was already down)" in stopped, stopped
        kept = Path(stopped.split("logs kept: ")[1].split()[0])
        assert (kept / "redis.log").exists() and kept.name.startswith("stormdeck-fleet-logs-")
        shutil.rmtree(kept)
    finally:
        survivors = _stop_all(process, pids)
    assert not survivors, f"pids {survivors} outlived fleet up"


def test_ctrl_c_at_the_terminal_stops_every_child_without_a_false_report(tmp_path) -> None:
    """Ctrl-C reaches the whole foreground process group: the children stop of their own SIGINT while
    fleet up stops them — planned, not a failure to report."""
    process, out, err = _fleet_up(tmp_path, "--nodes", "2", start_new_session=True)
    pids: list[int] = []
    try:
        said, pids = _serving(out)
        # Redis is not in the terminal's group: stopped last, after the nodes (it held their history; stopped
        # by the Ctrl-C itself, the nodes' logs ended in "live feed lost: Redis … Error 111").
        assert os.getpgid(_pid_of(said, "redis:")) != process.pid
        os.killpg(process.pid, signal.SIGINT)  # its own session: the terminal's foreground group, as Ctrl-C
        assert process.wait(40) == 0
        # The nodes that stopped of the Ctrl-C itself are stopped ones, not "already down".
        assert "stopped: 2 gateway nodes, the publisher, redis\n" in out.rest(), out.rest()
        report = err.rest()
        assert "killed by" not in report and "exited" not in report, report
    finally:
        survivors = _stop_all(process, pids)
    assert not survivors, f"pids {survivors} outlived fleet up"


#: Between two presses of the same key by hand (not a wait for anything: the presses' own timing).
KEY_PRESS_S = 0.1


def test_ctrl_c_pressed_three_times_stops_without_a_traceback(tmp_path) -> None:
    """Ctrl-C hammered at the terminal: the second forces the API server's exit, which skipped the app's
    own shutdown, and uvicorn printed "ERROR: Traceback … CancelledError" from the cancelled lifespan."""
    process, out, err = _fleet_up(tmp_path, "--nodes", "1", "--clients", "20", start_new_session=True)
    pids: list[int] = []
    try:
        _, pids = _serving(out)
        for _ in range(3):  # as fast as a hand presses a key: the presses come during the shutdown
            os.killpg(process.pid, signal.SIGINT)
            time.sleep(KEY_PRESS_S)
        # A press that comes once everything is stopped is ignored: it ended fleet up by the signal while
        # the interpreter exited (its handlers reset), the status a shell shows as 130.
        assert process.wait(40) == 0
        assert "stopped:" in out.rest()
        report = err.rest()
        assert "Traceback" not in report and "CancelledError" not in report, report
    finally:
        survivors = _stop_all(process, pids)
    assert not survivors, f"pids {survivors} outlived fleet up"


def test_ctrl_c_again_after_stopped_is_ignored(tmp_path) -> None:
    """Every child stopped and "stopped:" said, Ctrl-C pressed again: it landed in the interpreter's exit,
    which had put the default handler back, and fleet up died of SIGINT (status -2, 130 in a shell)."""
    process, out, err = _fleet_up(tmp_path, "--nodes", "1")
    pids: list[int] = []
    try:
        _, pids = _serving(out)
        process.send_signal(signal.SIGINT)
        out.until(lambda t: "stopped:" in t, 40, "fleet up to stop")
        presses = 0
        while process.poll() is None:  # pressed again and again until it has exited: one lands in its exit
            process.send_signal(signal.SIGINT)
            presses += 1
            time.sleep(AGAIN_S)
        assert process.wait(10) == 0, f"after {presses} presses"
        report = err.rest()
        assert "Traceback" not in report and "stopping" not in report, report
    finally:
        survivors = _stop_all(process, pids)
    assert not survivors, f"pids {survivors} outlived fleet up"


#: Between two presses after "stopped:": often enough to land within the interpreter's exit.
AGAIN_S = 0.002


def _ports_of(text: str) -> list[int]:
    """Every loopback port fleet up said it serves on: the fleet API, each node's two, Redis's."""
    found = re.findall(r"(?:http|ws|redis)://127\.0\.0\.1:(\d+)", text)
    return sorted({int(port) for port in found})


def _listening(port: int) -> bool:
    """Something listens on 127.0.0.1:`port` (an operator's next `fleet up --port` would find it taken)."""
    with socket.socket() as sock:
        sock.setsockopt(
            socket.SOL_SOCKET, socket.SO_REUSEADDR, 1
        )  # a closed node's TIME_WAITs are not in use
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen()
        except OSError:
            return True
    return False


def _gone(pid: int) -> bool:
    return not os.path.exists(f"/proc/{pid}") or not _alive(pid)


def test_fleet_up_killed_outright_leaves_no_child_and_no_port_behind(tmp_path) -> None:
    """SIGKILL (or a hard crash) runs no `finally`: the nodes kept their ports, Redis kept running, the load
    kept connecting — an operator found stray processes and `fleet up` refused its port. Now each child
    watches fleet up (its end of a pipe; Redis the parent-death signal) and stops when it is gone — node-3
    too, added by `add-capacity` from a worker thread (why the parent-death signal would not do for nodes)."""
    process, out, _err = _fleet_up(tmp_path, "--nodes", "2", "--clients", "20")
    pids: list[int] = []
    try:
        said, pids = _serving(out)
        assert len(pids) == 5, said  # two nodes, redis, the publisher, the load
        ports = _ports_of(said)
        assert len(ports) == 6, said  # the fleet API, two nodes' client and admin ports, Redis
        url = next(line.split()[1] for line in said.splitlines() if line.startswith("url:"))
        headers = {"Authorization": "Bearer op-token"}
        added = _confirmed(url, "/v1/capacity", {"count": 1}, headers, "loopback")
        assert added.status_code == 202, added.text
        fleet = _fleet_until(
            url, headers, lambda f: len(f["nodes"]) == 3 and f["nodes"][2]["state"] == "ready", 30
        )
        assert fleet["nodes"][2]["state"] == "ready", fleet["nodes"]
        node_3 = _children(process.pid) - set(pids)
        assert len(node_3) == 1, (node_3, pids)
        pids += node_3
        # The load's nodes file lists node-3's client URL (fleet up, killed, leaves its directory: removed below).
        nodes_file = Path(said.split("--nodes-file ")[1].split()[0])
        ports = sorted({*ports, *_ports_of(nodes_file.read_text())})
        assert len(ports) == 7, (ports, said)
        process.kill()
        process.wait(10)
        deadline = time.monotonic() + 20
        while not all(_gone(pid) for pid in pids):
            left = [pid for pid in pids if not _gone(pid)]
            assert time.monotonic() < deadline, f"pids {left} outlived fleet up's SIGKILL by 20 s: {said}"
            time.sleep(0.05)  # polling for their exit, not waiting in its stead
        assert [port for port in ports if _listening(port)] == []
        shutil.rmtree(said.split("logs:   ")[1].split()[0])  # fleet up had no `finally` to remove them
        shutil.rmtree(nodes_file.parent)
    finally:
        survivors = _stop_all(process, pids)
    assert not survivors, f"pids {survivors} outlived fleet up"


def _pending(pid: int, signum: int) -> bool:
    """`signum` waits in `pid`'s shared pending set (sent to a stopped process, not yet taken)."""
    with open(f"/proc/{pid}/status") as handle:
        mask = next(int(line.split()[1], 16) for line in handle if line.startswith("ShdPnd:"))
    return bool(mask & (1 << (signum - 1)))


def _stuck_in_shutdown(tmp_path) -> tuple[subprocess.Popen[str], _Lines, _Lines, list[int], int]:
    """fleet up SIGTERMed while node-1 is stopped (SIGSTOP): it waits on node-1's grace, with node-2 and
    Redis still to stop — the moment a second signal came and cut the stops short."""
    process, out, err = _fleet_up(tmp_path, "--nodes", "2")
    said, pids = _serving(out)
    node_1 = _pid_of(said, "node:   node-1")
    os.kill(node_1, signal.SIGSTOP)
    process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 20
    while not _pending(node_1, signal.SIGTERM):  # fleet up has asked node-1 to stop and waits on it
        assert time.monotonic() < deadline, "fleet up did not SIGTERM node-1 within 20 s"
        time.sleep(0.02)
    return process, out, err, pids, node_1


def test_a_second_signal_while_stopping_says_what_is_left_and_the_stops_go_on(tmp_path) -> None:
    """A second Ctrl-C (or SIGTERM) while the children were stopped one by one raised KeyboardInterrupt
    in the middle: node-2 and Redis were left running. Now it says how many are left and goes on."""
    process, out, err, pids, node_1 = _stuck_in_shutdown(tmp_path)
    try:
        process.send_signal(signal.SIGINT)
        said = err.until(lambda t: "left" in t, 10, "fleet up to say what is left")
        assert "stopping… (3 left" in said, said  # node-1 (waited on), node-2, redis
        os.kill(node_1, signal.SIGCONT)  # node-1 takes its SIGTERM now: the stops go on after it
        assert process.wait(30) == 0
        assert "stopped: 2 gateway nodes, the publisher, redis" in out.rest()
        assert "Traceback" not in err.rest(), err.rest()
    finally:
        survivors = _stop_all(process, pids)
    assert not survivors, f"pids {survivors} outlived fleet up"


def test_a_third_signal_while_stopping_kills_what_is_left(tmp_path) -> None:
    """An operator who will not wait for node-1's grace presses again: the children left are killed."""
    process, out, err, pids, _node_1 = _stuck_in_shutdown(tmp_path)
    try:
        process.send_signal(signal.SIGINT)
        err.until(lambda t: "left" in t, 10, "fleet up to say what is left")
        process.send_signal(signal.SIGINT)
        said = err.until(lambda t: "killing" in t, 10, "fleet up to kill the rest")
        assert "killing the 3 left" in said, said
        assert process.wait(30) == 0
        assert "stopped: 2 gateway nodes, the publisher, redis" in out.rest()
        assert "Traceback" not in err.rest(), err.rest()
        assert all(_gone(pid) for pid in pids)  # fleet up waited for each killed child
    finally:
        survivors = _stop_all(process, pids)
    assert not survivors, f"pids {survivors} outlived fleet up"


def test_the_last_node_down_names_the_add_capacity_command_for_this_fleet(tmp_path) -> None:
    """The hint read `stormdeck act URL add-capacity …`: the operator had to find the URL and the token."""
    process, out, err = _fleet_up(tmp_path, "--nodes", "1")
    pids: list[int] = []
    try:
        said, pids = _serving(out)
        url = next(line.split()[1] for line in said.splitlines() if line.startswith("url:"))
        os.kill(_pid_of(said, "node:   node-1"), signal.SIGKILL)
        report = err.until(lambda t: "add-capacity" in t, 10, "the report of node-1's death")
        command = f"stormdeck act {url} add-capacity --count N --token-file {tmp_path / 'api.tokens'}"
        assert command in report, report
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        shutil.rmtree(Path(out.rest().split("logs kept: ")[1].split()[0]))
    finally:
        survivors = _stop_all(process, pids)
    assert not survivors, f"pids {survivors} outlived fleet up"


def test_ctrl_c_with_the_output_piped_to_a_reader_that_died_still_removes_the_logs(tmp_path) -> None:
    """`fleet up | tee fleet.log`, then Ctrl-C: the terminal's SIGINT ends tee too, and fleet up's
    "stopped: …" line met a closed pipe. The BrokenPipeError skipped the removal of its logs directory,
    which stayed in /tmp though no child had died."""
    (tmp_path / "api.tokens").write_text("operator op-token tester\n")
    (tmp_path / "api.tokens").chmod(0o600)
    command = [sys.executable, "-m", "console", "fleet", "up", "--port", "0", "--work-factor", "200"]
    command += ["--token-file", str(tmp_path / "api.tokens"), "--audit-log", str(tmp_path / "audit.jsonl")]
    process = subprocess.Popen(
        [*command, "--nodes", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=child_env(),
        start_new_session=True,
    )
    assert process.stdout is not None
    said = ""
    pids: list[int] = []
    logs: Path | None = None
    try:
        for line in process.stdout:  # up to "Ctrl-C stops it.": fleet up serves
            said += line
            if line.startswith("Ctrl-C"):
                break
        pids = [int(line.split(" pid ")[1].split()[0]) for line in said.splitlines() if " pid " in line]
        logs = Path(said.split("logs:   ")[1].split()[0])
        assert logs.is_dir(), said
        process.stdout.close()  # the reader (tee) is gone
        os.killpg(process.pid, signal.SIGINT)
        process.wait(40)
        assert not logs.exists(), f"{logs} left behind: {sorted(p.name for p in logs.iterdir())}"
    finally:
        survivors = _stop_all(process, pids)
        if logs is not None:
            shutil.rmtree(logs, ignore_errors=True)
    assert not survivors, f"pids {survivors} outlived fleet up"


def test_a_signal_after_the_controller_served_and_before_the_stops_stops_in_order(
    tmp_path, monkeypatch, capfd
) -> None:
    """The controller's handlers answer a press while it serves, and are put back to fleet up's when it
    returns; a press between that and the shutdown's own handlers raised KeyboardInterrupt there — inside
    the `finally` it cut the children's stops short; just before it, fleet up ended 130 after a clean stop. Here
    the press lands in that gap on purpose: a controller that served, put its handlers back, and was
    signalled as it returned."""
    from console.cli import controller, main
    from console.stop_signals import answering_stop_signals

    def served_then_signalled(*args: object, **kwargs: object) -> int:
        announce_more = args[6]
        with answering_stop_signals(lambda: None):
            announce_more("http://127.0.0.1:9/", tmp_path / "api.tokens")  # what it calls once serving
        os.kill(os.getpid(), signal.SIGINT)  # its handlers are gone: fleet up's answer it
        return 0

    monkeypatch.setattr(controller, "serve_controller", served_then_signalled)
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        status = main(
            ["fleet", "up", "--nodes", "1", "--port", "0", "--audit-log", str(tmp_path / "audit.jsonl")]
        )
        ignored_after = signal.getsignal(signal.SIGINT)
    finally:  # fleet up's last word (ignore every stop signal) is the test process's: not left behind
        for signum, handler in before.items():
            signal.signal(signum, handler)
    said = capfd.readouterr()  # fd 2: the handler writes there, a signal may come mid-print
    node_pid = _pid_of(said.out, "node:")
    assert status == 0, said
    assert "stopped: 1 gateway node" in said.out
    assert "fleet up: stopping…" in said.err
    assert _gone(node_pid), f"node pid {node_pid} outlived fleet up"
    assert ignored_after is signal.SIG_IGN  # the shutdown's last word: ignored from now on
