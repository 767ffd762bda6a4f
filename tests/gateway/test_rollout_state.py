"""A rollout survives a restart of the controller: kept beside the audit log, taken up halted, never resumed
by itself; a state file it cannot read is named, not a traceback."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from console.gateway.controller import Controller
from console.gateway.nodes_file import NodeEntry
from console.gateway.processes import NodeProcess, child_env
from console.gateway.rollout_state import RolloutRecord, RolloutStateFile, restart_note
from console.protocol import DrainRequest, RolloutMode, RolloutState
from tests.gateway.conftest import CHEAP_WORK_FACTOR, TOKEN, node_config, operator_api, wait_for

pytestmark = pytest.mark.timeout(90)

OPERATOR = "op-token"


def _record(**changes: object) -> RolloutRecord:
    fields: dict = dict(
        fleet="loopback",
        saved_unix_s=1000.0,
        state=RolloutState.RUNNING,
        mode=RolloutMode.DRAIN,
        batch_size=2,
        interval_s=30.0,
        pause_cpu_pct=75.0,
        batch_drain=DrainRequest(rate_per_s=100, deadline_s=600, hint_ms=(1000, 30_000)),
        batches=[["gw-1", "gw-2"], ["gw-3", "gw-4"], ["gw-5", "gw-6"]],
        batch=2,
        batches_done=1,
        started_at_unix_s=900.0,
        draining=["gw-3", "gw-4"],
    )
    fields.update(changes)
    return RolloutRecord(**fields)


def test_the_restart_note_says_what_the_controller_knew() -> None:
    assert restart_note(_record()) == (
        "controller restarted during batch 2 of 3: gw-3, gw-4 were draining — resume goes on from there"
    )
    note = restart_note(_record(draining=["gw-4"], restarted=["gw-3"]))
    assert "gw-4 was draining; gw-3 was restarted" in note
    assert "after batch 2 of 3, before the next" in restart_note(_record(batches_done=2, draining=[]))
    paused = restart_note(
        _record(state=RolloutState.PAUSED, draining=[], pause_reason="gw-1 CPU 80 % > 75 %")
    )
    assert "while the rollout was paused before batch 3 of 3 (gw-1 CPU 80 % > 75 %)" in paused


def test_the_state_file_is_replaced_whole_and_read_back(tmp_path) -> None:
    state = RolloutStateFile.beside(tmp_path / "loopback.jsonl")
    assert state.path == tmp_path / "loopback.rollout.json" and state.load() is None
    state.save(_record())
    state.save(_record(draining=["gw-4"], restarting=["gw-3"]))
    assert state.load() == _record(draining=["gw-4"], restarting=["gw-3"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loopback.rollout.json"]  # no temporary left
    assert state.path.stat().st_mode & 0o077 == 0  # the operator's: rollouts name the fleet's nodes


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b'{"version": 1, "fleet": "loop', "is not JSON"),  # half a file: what a non-atomic write leaves
        (b'{"version": 7, "fleet": "loopback"}', "has version 7; this controller reads version 1"),
        (b'{"version": 1, "fleet": "loopback"}', "is damaged: saved_unix_s: Field required"),
        (b"[1, 2]", "is not a JSON object"),
        # Where it stands must lie inside its plan: a batch past it stopped the controller with an IndexError
        # traceback; batches done past it would resume as "completed" with no node restarted.
        pytest.param(
            _record(batch=1, batches_done=0).model_dump_json().replace('"batch":1', '"batch":5').encode(),
            "is damaged: batch: Value error, 5 is past the plan of 3 batches: an integer in [0, 3]",
            id="batch-past-the-plan",
        ),
        pytest.param(
            _record().model_dump_json().replace('"batches_done":1', '"batches_done":7').encode(),
            "is damaged: batches_done: Value error, 7 does not fit batch 2: 1 or 2",
            id="batches-done-past-the-batch",
        ),
    ],
)
def test_a_state_file_it_cannot_read_is_named(tmp_path, content: bytes, said: str) -> None:
    state = RolloutStateFile(tmp_path / "loopback.rollout.json")
    state.path.write_bytes(content)
    with pytest.raises(Exception) as raised:
        state.load()
    assert str(state.path) in str(raised.value) and said in str(raised.value), str(raised.value)
    assert "move the file aside" in str(raised.value)


@pytest.fixture
def controllers(tmp_path: Path) -> Iterator[Callable[..., tuple[subprocess.Popen[str], str]]]:
    """Start `stormdeck controller` processes (each its own process group, so the restart commands it
    started are stopped with it, even after a `kill -9` of the controller); all stopped by group id."""
    started: list[subprocess.Popen[str]] = []

    def start(nodes: list[NodeProcess], restart: str) -> tuple[subprocess.Popen[str], str]:
        nodes_file = tmp_path / "nodes.toml"
        nodes_file.write_text(
            "".join(
                f'[[nodes]]\nid = "{n.node_id}"\nadmin = "{n.admin_url}"\nrestart = "{restart}"\n'
                for n in nodes
            )
            + "[capacity]\nhandshakes_per_s = 2000\n"  # as test_drain.py: no CI-load-dependent verdicts
        )
        (tmp_path / "node.token").write_text(TOKEN + "\n")
        (tmp_path / "api.tokens").write_text(f"operator {OPERATOR} ops\n")
        command = [sys.executable, "-m", "console", "controller", "--nodes", str(nodes_file), "--port", "0"]
        command += ["--node-token-file", str(tmp_path / "node.token")]
        command += [
            "--token-file",
            str(tmp_path / "api.tokens"),
            "--audit-log",
            str(tmp_path / "audit.jsonl"),
        ]
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
            start_new_session=True,
        )
        started.append(process)
        assert process.stdout is not None
        said: list[str] = []
        for line in process.stdout:
            said.append(line)
            if line.startswith("Ctrl-C"):
                break
        assert said and said[-1].startswith("Ctrl-C"), (said, process.stderr.read() if process.stderr else "")
        return process, "".join(said)

    yield start
    for process in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


def _url(said: str) -> str:
    return next(line.split()[1] for line in said.splitlines() if line.startswith("url:"))


def _fleet(api: httpx.Client) -> dict:
    return api.get("/v1/fleet").json()


def _until(
    probe: Callable[[], object], holds: Callable[[object], bool], timeout_s: float, what: str
) -> object:
    deadline = time.monotonic() + timeout_s
    while not holds(seen := probe()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}: {seen!r}")
        time.sleep(0.1)
    return seen


def _act(api: httpx.Client, path: str, body: dict) -> httpx.Response:
    """POST a guarded action; when the guards ask for a confirmation (409), answer it."""
    response = api.post(path, json=body)
    if response.status_code == 409:
        problem = response.json()
        confirm = {"token": problem["confirm_token"]}
        if problem["verdict"]["level"] == "typed":
            confirm["typed"] = problem["verdict"].get("typed_expected")
        response = api.post(path, json={**body, "confirm": confirm})
    return response


def test_a_rollout_survives_a_controller_killed_mid_batch_halted(
    node_processes, controllers, tmp_path
) -> None:
    """`kill -9` of the controller while batch 1's node restarts: the next controller showed no rollout at
    all (`idle`), node a left drained. Now it comes back halted, saying where it was, and the operator
    resumes it with the guarded action."""
    cheap = ("--work-factor", str(CHEAP_WORK_FACTOR))
    nodes = [node_processes(n, *cheap) for n in ("a", "b")]
    # A restart that takes its time, so the controller dies while it runs (the test stops it by group).
    first, said = controllers(nodes, "sleep 60")
    with httpx.Client(
        base_url=_url(said), headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=10
    ) as api:
        _until(lambda: [n["state"] for n in _fleet(api)["nodes"]], lambda s: s == ["ready"] * 2, 10, "ready")
        started = _act(api, "/v1/rollout", {"batch_size": 1, "interval_s": 1, "mode": "drain"})
        assert started.status_code == 202, started.text
        state_file = tmp_path / "audit.rollout.json"
        _until(
            lambda: state_file.exists() and json.loads(state_file.read_text())["restarting"],
            bool,
            15,
            "a's restart",
        )
    os.kill(first.pid, signal.SIGKILL)
    first.wait(10)

    second, said = controllers(nodes, "sleep 60")
    assert f"rollout state: {state_file}" in said
    assert "rollout: halted: controller restarted during batch 1 of 2: a was being restarted" in said
    with httpx.Client(
        base_url=_url(said), headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=10
    ) as api:
        fleet = _until(lambda: _fleet(api), lambda f: f["nodes"][0]["state"] != "down", 10, "a's frames")
        rollout = fleet["rollout"]
        assert (rollout["state"], rollout["batch"], rollout["batches"]) == ("halted", 1, 2), rollout
        assert rollout["pause_reason"].startswith("controller restarted during batch 1 of 2"), rollout
        assert fleet["nodes"][0]["state"] == "drained"  # the node kept its drain; nobody undrained it
        assert json.loads(state_file.read_text())["state"] == "running"  # as the first one left it
        resumed = _act(api, "/v1/rollout/resume", {})
        assert resumed.status_code == 200, resumed.text
        _until(lambda: _fleet(api)["rollout"]["state"], lambda s: s == "running", 5, "the rollout running")
        _until(
            lambda: json.loads(state_file.read_text())["restarting"], lambda r: r == ["a"], 10, "a restarting"
        )
        halted = _act(api, "/v1/rollout/halt", {})
        assert halted.status_code == 200, halted.text
        _until(lambda: json.loads(state_file.read_text())["state"], lambda s: s == "halted", 10, "halt saved")
    second.send_signal(signal.SIGTERM)
    second.wait(10)


def test_the_fleet_clock_goes_on_across_a_controller_restart(node_processes, controllers, tmp_path) -> None:
    """Only the controller restarted, not the fleet: its clock (frames' and events' `time_s`) started again
    at 0, so the console's alarms cleared and re-raised what was active and listed past alarms under two
    clocks. Its origin is kept beside the audit log, and the next controller's clock goes on from it."""
    node = node_processes("a", "--work-factor", str(CHEAP_WORK_FACTOR))
    first, said = controllers([node], "true")
    with httpx.Client(
        base_url=_url(said), headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=10
    ) as api:
        reached = _until(lambda: _fleet(api)["time_s"], lambda t: t >= 2.0, 15, "2 s of fleet time")
    first.send_signal(signal.SIGTERM)
    first.wait(10)

    second, said = controllers([node], "true")
    with httpx.Client(
        base_url=_url(said), headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=10
    ) as api:
        assert _fleet(api)["time_s"] >= reached  # not 0 again
    second.send_signal(signal.SIGTERM)
    second.wait(10)
    assert f"fleet clock: {tmp_path / 'audit.clock.json'}" in said


def test_admission_goes_on_across_a_controller_restart(node_processes, controllers, tmp_path) -> None:
    """The fleet's admission and the per-node overrides were kept in memory only: a restarted controller
    showed the nodes' start-up settings as the fleet's and gave a node's new process nothing again. Kept
    beside the audit log, they are taken up and said at start."""
    cheap = ("--work-factor", str(CHEAP_WORK_FACTOR))
    nodes = [node_processes(n, *cheap) for n in ("a", "b")]
    first, said = controllers(nodes, "true")
    state_file = tmp_path / "audit.admission.json"
    assert f"admission state: {state_file} (nothing set yet)" in said
    with httpx.Client(
        base_url=_url(said), headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=10
    ) as api:
        _until(lambda: [n["state"] for n in _fleet(api)["nodes"]], lambda s: s == ["ready"] * 2, 10, "ready")
        for body in ({"rate_per_s": 400, "burst": 40}, {"rate_per_s": 100, "burst": 10, "nodes": ["b"]}):
            answer = api.put("/v1/admission", json=body)
            if answer.status_code == 409:
                confirm = {"token": answer.json()["confirm_token"]}
                answer = api.put("/v1/admission", json={**body, "confirm": confirm})
            assert answer.status_code == 200, answer.text
    first.send_signal(signal.SIGTERM)
    first.wait(10)

    second, said = controllers(nodes, "true")
    assert f"admission state: {state_file} (restored: fleet admission rate 400/s per node" in said, said
    with httpx.Client(
        base_url=_url(said), headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=10
    ) as api:
        fleet = _fleet(api)
        assert fleet["admission"]["rate_per_s"] == 400, fleet["admission"]
        assert [(o["rate_per_s"], o["nodes"]) for o in fleet["admission_overrides"]] == [(100, ["b"])]
    second.send_signal(signal.SIGTERM)
    second.wait(10)


async def test_a_restored_rollout_resumed_before_its_nodes_report_restarts_no_node_twice(
    start_node, tmp_path
) -> None:
    """Read from the code: a restored rollout knows a node already restarted by its stream epoch, which a
    new controller learns from the node's first frame. Resumed before that, the node's epoch read as
    unknown, and its restart command ran a second time. The resume is refused, naming the node, until
    every node of the batch under way has reported; then the rollout goes on without restarting it."""
    node = await start_node(node_config("a"))
    restarts = tmp_path / "restarts"
    entry = NodeEntry("a", node.admin_url, restart=f"echo {{node}} >> {restarts}")
    # The controller before this one ran a's restart command and died before it saw the outcome: a is a
    # new process since (the epoch it had then is not the one it has now).
    state = RolloutStateFile(tmp_path / "audit.rollout.json")
    state.save(
        _record(
            mode=RolloutMode.ABRUPT,
            batch_size=1,
            batches=[["a"]],
            batch=1,
            batches_done=0,
            draining=[],
            restarting=["a"],
            epochs_before={"a": "the-process-before"},
        )
    )
    controller = Controller([entry], TOKEN, rollout_state=state)
    try:
        async with operator_api(controller, tmp_path / "audit.jsonl") as api:
            early = await api.post("/v1/rollout/resume", json={})  # before any frame of a arrived
            await controller.start()
            await wait_for(lambda: controller.links["a"].epoch is not None, 10, "a's first frame")
            if early.status_code != 200:  # refused: the operator retries once a is in the fleet
                resumed = await api.post("/v1/rollout/resume", json={})
                assert resumed.status_code == 200, resumed.text
            await wait_for(
                lambda: controller.rollout_status().state is RolloutState.COMPLETED, 15, "the rollout done"
            )
    finally:
        await controller.close()
    assert not restarts.exists(), f"a restarted again: {restarts.read_text()!r}"
    assert early.status_code == 422, early.text
    detail = early.json()["detail"]
    assert "not yet heard from a" in detail and "retry" in detail, detail
    assert controller.rollout_status().batches == 1


def _run_refused(command: list[str], timeout_s: float = 20.0) -> subprocess.CompletedProcess[str]:
    """Run a command expected to refuse at once; one that serves instead is stopped with everything it
    started (its process group) when the time is up, and the test fails."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"still running after {timeout_s} s instead of refusing: {command}") from None
    return subprocess.CompletedProcess(command, process.returncode, out, err)


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("audit.rollout.json", "rollout state file"),
        ("audit.clock.json", "fleet clock file"),
        ("audit.admission.json", "admission state file"),
    ],
)
def test_a_damaged_state_file_stops_the_controller_naming_it(
    node_processes, tmp_path, name: str, field: str
) -> None:
    cheap = ("--work-factor", str(CHEAP_WORK_FACTOR))
    node = node_processes("a", *cheap)
    (tmp_path / "nodes.toml").write_text(f'[[nodes]]\nid = "a"\nadmin = "{node.admin_url}"\n')
    (tmp_path / "node.token").write_text(TOKEN + "\n")
    state_file = tmp_path / name
    state_file.write_text('{"version": 1, "state": "runn')
    command = [sys.executable, "-m", "console", "controller", "--nodes", str(tmp_path / "nodes.toml")]
    command += ["--port", "0", "--node-token-file", str(tmp_path / "node.token")]
    command += ["--audit-log", str(tmp_path / "audit.jsonl")]
    done = _run_refused(command)
    assert done.returncode == 2, done
    assert f"{field} {state_file}: is not JSON" in done.stderr and "Traceback" not in done.stderr
    assert "move the file aside" in done.stderr
    assert "url:" not in done.stdout  # nothing served
    # "nothing was changed": the clock's origin was written first, so the fleet's clock, once it started,
    # counted from the refused start (and the operator found a file the message said was not made).
    assert sorted(p.name for p in tmp_path.glob("audit.*.json")) == [name]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (
            _record().model_dump_json().encode(),
            "another controller's unfinished rollout (running at batch 2 of 3 over nodes gw-1, gw-2, gw-3, "
            "gw-4, gw-5 and 1 more) is left in {path}, untouched",
        ),
        (b'{"version": 1, "state": "runn', "another controller's {path} is left untouched: is not JSON"),
    ],
    ids=["unfinished", "damaged"],
)
def test_fleet_up_serves_beside_another_controllers_rollout_and_leaves_its_file_alone(
    tmp_path, content: bytes, said: str
) -> None:
    """`fleet up` refused to start (exit 2) over an unfinished rollout in the state file beside its audit
    log — another controller's, sharing the fleet name `loopback`'s default audit log. Its nodes are its
    own, new, with no restart command: it keeps no rollout state, so it starts, says in one line that the
    file is left as it is, and leaves it byte for byte for the controller whose rollout it is."""
    path = RolloutStateFile.beside(tmp_path / "audit.jsonl").path
    path.write_bytes(content)
    (tmp_path / "api.tokens").write_text(f"operator {OPERATOR} ops\n")
    (tmp_path / "api.tokens").chmod(0o600)
    command = [sys.executable, "-m", "console", "fleet", "up", "--nodes", "1", "--port", "0"]
    command += ["--work-factor", str(CHEAP_WORK_FACTOR), "--audit-log", str(tmp_path / "audit.jsonl")]
    command += ["--token-file", str(tmp_path / "api.tokens")]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, env=child_env(), start_new_session=True
    )
    try:
        assert process.stdout is not None
        lines: list[str] = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Ctrl-C"):
                break
        assert lines and lines[-1].startswith("Ctrl-C"), lines  # it serves
        about = [line for line in lines if str(path) in line]
        assert len(about) == 1 and said.format(path=path) in about[0], lines
        # One line of it: no `rollout: halted: …` as a controller taking the rollout up says.
        assert sum(line.startswith("rollout") for line in lines) == 1, lines
        fleet = httpx.get(
            f"{_url(''.join(lines))}/v1/fleet", headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=10
        )
        assert fleet.json()["rollout"]["state"] == "idle", fleet.text  # not the other controller's, halted
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(40) == 0
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.glob("audit.*.json")) == [path.name]  # no file of its own
