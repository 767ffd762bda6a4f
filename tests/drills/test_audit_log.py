"""`stormdeck drill … --audit-log FILE` in every mode `drill --help` lists: the console (the default),
`--headless` and the instructor's `--serve`. The file is the user's: it outlives the drill and holds the
drill's attempts as hash-chained audit records. A path that cannot be one exits 2 naming the option before
anything starts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from console.audit import verify_file
from console.cli import main
from console.stop_signals import OUTSIDE_STOP_SIGNALS
from tests.drills.test_serve import SHORT_DRILL
from tests.server.test_serve_cli import read_announcement

#: The scripted operator of the headless case: an admission, confirmed (two attempts: the 409 that asks,
#: then the answer), and a drain this fleet's guards block (a refused attempt is audited too).
SCRIPT = """
actor = "audit-script"

[[actions]]
at = "04:00:05"
action = "admission"
rate_per_s = 50
burst = 10
confirm = true

[[actions]]
at = "04:00:06"
action = "drain"
node = "gw-002"
rate_per_s = 500
deadline_s = 60
hint_ms = [1000, 5000]
"""


@pytest.fixture
def drill_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # servers' own files, children's too
    path = tmp_path / "short.toml"
    path.write_text(SHORT_DRILL, encoding="utf-8")
    return path


@pytest.fixture
def signal_handlers() -> Iterator[None]:
    """The console mode sets the process's SIGTERM/SIGHUP handlers; the test process gets its own back."""
    saved = {signum: signal.getsignal(signum) for signum in OUTSIDE_STOP_SIGNALS}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def shared_log_is_untouched(tmp_path: Path) -> bool:
    return not (tmp_path / "state" / "stormdeck" / "audit").exists()


def test_headless_writes_the_scripts_attempts_to_the_given_log(
    tmp_path: Path, drill_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    actions = tmp_path / "actions.toml"
    actions.write_text(SCRIPT, encoding="utf-8")
    audit = tmp_path / "audit.jsonl"
    argv = ["drill", str(drill_file), "--headless", "--actions", str(actions), "--json"]
    assert main([*argv, "--audit-log", str(audit)]) == 0
    outcome = json.loads(capsys.readouterr().out)

    records = read_records(audit)
    fields = ("actor", "role", "action", "target", "status", "outcome")
    assert [tuple(r[f] for f in fields) for r in records] == [
        ("audit-script", "admin", "admission", "fleet", 409, "needs_confirmation"),
        ("audit-script", "admin", "admission", "fleet", 200, "applied"),
        ("audit-script", "admin", "drain", "gw-002", 422, "blocked"),
    ]
    assert records[1]["parameters"]["rate_per_s"] == 50 and records[1]["confirmed"] is True
    assert records[2]["parameters"]["rate_per_s"] == 500 and records[2]["verdict"]["level"] == "blocked"
    # The run's own action records are the attempts' last answers, as the log has them.
    assert [(a["action"], a["status"], a["outcome"]) for a in outcome["actions"]] == [
        ("admission", 200, "applied"),
        ("drain", 422, "blocked"),
    ]
    assert verify_file(audit).intact

    # A second run continues the same chain: the file is the user's, appended to, never replaced.
    assert main([*argv, "--audit-log", str(audit)]) == 0
    again = read_records(audit)
    assert len(again) == 2 * len(records) and [r["seq"] for r in again] == list(range(1, len(again) + 1))
    assert verify_file(audit).intact
    assert shared_log_is_untouched(tmp_path)


def test_the_console_modes_server_writes_the_trainees_attempts_to_the_given_log(
    tmp_path: Path,
    drill_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    signal_handlers: None,
) -> None:
    """`stormdeck drill NAME --audit-log FILE`: the drill's child server logs there, not to the run's
    private scratch log. The console is a stand-in trainee who starts the clock (the pause key's admin
    token) and sets admission (the console's operator token), through the real child server."""
    from console.cli import drill as drill_cli

    audit = tmp_path / "audit.jsonl"
    seen: dict[str, Any] = {}

    def trainee(
        url: str, token: str, progress: object, record: object, **kwargs: Any
    ) -> drill_cli.ConsoleEnd:
        clock = {"Authorization": f"Bearer {kwargs['clock_token']}"}
        started = httpx.post(f"{url}/v1/sim/clock", json={"paused": False}, headers=clock, timeout=10)
        operator = {"Authorization": f"Bearer {token}", "Idempotency-Key": "admission-1"}
        body = {"rate_per_s": 50, "burst": 10}
        admitted = httpx.put(f"{url}/v1/admission", json=body, headers=operator, timeout=10)
        seen.update(started=started.status_code, admitted=admitted.status_code)
        return drill_cli.ConsoleEnd(0)

    monkeypatch.setattr(drill_cli, "_run_drill_console", trainee)
    assert main(["drill", str(drill_file), "--audit-log", str(audit)]) == 0

    records = read_records(audit)  # still there: the run's private directory went, the user's file stays
    assert [(r["actor"], r["role"], r["action"], r["status"]) for r in records] == [
        ("drill-clock", "admin", "clock", seen["started"]),
        ("embedded-console", "operator", "admission", seen["admitted"]),
    ]
    assert records[0]["parameters"] == {"paused": False}
    assert records[1]["parameters"]["rate_per_s"] == 50 and records[1]["idempotency_key"] == "admission-1"
    assert verify_file(audit).intact
    assert shared_log_is_untouched(tmp_path)


def test_a_served_drill_writes_the_trainees_and_the_instructors_attempts_to_the_given_log(
    tmp_path: Path, drill_file: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    command = [sys.executable, "-m", "console", "drill", str(drill_file), "--serve", "--port", "0"]
    command += ["--paused", "--audit-log", str(audit)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        fields = read_announcement(process)
        assert fields["audit"] == str(audit)
        url = fields["url"]
        trainee_file, admin_file = Path(fields["token"].split()[0]), Path(fields["admin"].split()[0])
        trainee = {"Authorization": f"Bearer {trainee_file.read_text().split()[1]}"}
        instructor = {"Authorization": f"Bearer {admin_file.read_text().split()[1]}"}
        admitted = httpx.put(
            f"{url}/v1/admission", json={"rate_per_s": 50, "burst": 10}, headers=trainee, timeout=10
        )
        injection = {"event": "disconnect_fraction", "params": {"fraction": 0.2}}
        injected = httpx.post(f"{url}/v1/sim/inject", json=injection, headers=instructor, timeout=10)
        assert injected.status_code == 200
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    records = read_records(audit)
    assert [(r["actor"], r["role"], r["action"], r["status"]) for r in records] == [
        ("trainee", "operator", "admission", admitted.status_code),
        ("instructor", "admin", "inject", 200),
    ]
    assert records[1]["record"] == "injection" and records[1]["event"] == "disconnect_fraction"
    assert verify_file(audit).intact
    assert shared_log_is_untouched(tmp_path)


MODES = {
    "console": [],
    "headless": ["--headless"],
    "serve": ["--serve", "--port", "0"],
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("where", "said"),
    [
        ("missing/audit.jsonl", "/missing' is not allowed; expected an existing directory"),
        (".", "not a directory"),
    ],
)
def test_an_audit_log_that_cannot_be_written_exits_2_naming_it_before_anything_starts(
    tmp_path: Path,
    drill_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: str,
    where: str,
    said: str,
) -> None:
    from console.cli.embedded import EmbeddedServer
    from console.drills import headless
    from console.drills.served import DrillBackend

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("the drill started with an audit log it cannot write")

    monkeypatch.setattr(EmbeddedServer, "start", started)
    monkeypatch.setattr(headless, "run_headless", started)
    monkeypatch.setattr(DrillBackend, "from_drill", started)
    bad = tmp_path / where
    assert main(["drill", str(drill_file), *MODES[mode], "--audit-log", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stormdeck: --audit-log: ") and said in err
    assert not (tmp_path / "missing").exists(), "the directory is not made for it"


def test_help_lists_the_audit_log_among_the_options_every_mode_takes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["drill", "--help"])
    text = capsys.readouterr().out
    options = text.split("\noptions:\n", 1)[1]
    general, _, instructor = options.partition("instructor (--serve):")
    assert "--audit-log FILE" in general and "--audit-log" not in instructor
    entry = general.split("--audit-log FILE", 1)[1].split("\n  -", 1)[0].split("\n\n", 1)[0]
    words = " ".join(entry.split())
    # Where it goes without the option differs by mode: the help says so for each.
    assert "--serve" in words and "--headless" in words, words
