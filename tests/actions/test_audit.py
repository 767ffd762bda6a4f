"""The audit log on its own: the chain, its verification, the torn tail, one writer per file, the CLI."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from console.audit import GENESIS_HASH, AuditLog, verify_file
from console.audit.log import AuditLogBusy, open_audit_log
from console.cli import main


def filled(path: Path, count: int = 5) -> AuditLog:
    log = AuditLog(path, clock=lambda: 1.5)
    for index in range(count):
        log.append({"actor": "op", "action": "drain", "target": f"gw-{index:03d}", "outcome": "applied"})
    return log


def test_records_are_numbered_and_chained(tmp_path: Path) -> None:
    log = filled(tmp_path / "a.jsonl")
    records = log.tail(10)
    assert [r["seq"] for r in records] == [1, 2, 3, 4, 5]
    assert records[0]["prev"] == GENESIS_HASH
    assert all(b["prev"] == a["hash"] for a, b in itertools.pairwise(records))
    report = verify_file(log.path)
    assert report.intact and report.records == 5 and report.last_hash == log.last_hash


def test_a_reopened_log_continues_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    filled(path, 3).close()
    log = AuditLog(path)
    assert log.seq == 3
    log.append({"outcome": "applied"})
    assert verify_file(path).intact and verify_file(path).records == 4


@pytest.mark.parametrize(
    ("tamper", "line", "reason"),
    [
        (
            lambda lines: lines.__setitem__(2, lines[2].replace(b"gw-002", b"gw-777")),
            3,
            "hash does not match",
        ),
        (lambda lines: lines.pop(1), 2, "seq is 3"),
        (lambda lines: lines.__setitem__(3, b"not json\n"), 4, "not JSON"),
        (lambda lines: lines.__setitem__(4, lines[4][:-1]), 5, "torn"),
    ],
)
def test_verify_names_the_first_broken_line(tmp_path: Path, tamper, line: int, reason: str) -> None:
    path = tmp_path / "a.jsonl"
    filled(path).close()
    lines = path.read_bytes().splitlines(keepends=True)
    tamper(lines)
    path.write_bytes(b"".join(lines))
    report = verify_file(path)
    assert report.broken_line == line and reason in report.reason


def test_a_rehashed_record_still_breaks_the_next_link(tmp_path: Path) -> None:
    from console.audit import record_hash

    path = tmp_path / "a.jsonl"
    filled(path).close()
    lines = path.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[1])
    record["target"] = "gw-999"
    record["hash"] = record_hash(record)  # a forger who recomputes this record's hash...
    lines[1] = (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode()
    path.write_bytes(b"".join(lines))
    report = verify_file(path)
    assert report.broken_line == 3 and "prev" in report.reason  # ...is caught by the record after it


def test_a_torn_tail_is_cut_on_open(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    filled(path, 2).close()
    with path.open("ab") as handle:
        handle.write(b'{"seq":3,"half')
    log = AuditLog(path)
    assert log.seq == 2
    log.append({"outcome": "applied"})
    assert verify_file(path).intact and verify_file(path).records == 3


def test_one_writer_per_file(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    first = AuditLog(path)
    with pytest.raises(AuditLogBusy):
        AuditLog(path)
    first.close()
    AuditLog(path).close()


def test_the_default_log_falls_back_beside_itself_when_busy(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    first = open_audit_log(None, "my fleet")
    second = open_audit_log(None, "my fleet")
    assert first.path.name == "my_fleet.jsonl" and str(tmp_path) in str(first.path)
    assert second.path != first.path and second.path.parent == first.path.parent
    first.close()
    second.close()


def test_audit_verify_cli(tmp_path: Path, capsys) -> None:
    path = tmp_path / "a.jsonl"
    filled(path).close()
    assert main(["audit", "verify", str(path)]) == 0
    assert "intact, 5 records" in capsys.readouterr().out
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b"applied", b"blocked")
    path.write_bytes(b"".join(lines))
    assert main(["audit", "verify", str(path)]) == 1
    assert "line 4:" in capsys.readouterr().err
    assert main(["audit", "verify", str(tmp_path / "missing.jsonl")]) == 2


def test_audit_verify_cli_counts_one_record_in_the_singular(tmp_path: Path, capsys) -> None:
    path = tmp_path / "a.jsonl"
    filled(path, count=1).close()
    assert main(["audit", "verify", str(path)]) == 0
    assert "intact, 1 record, last hash" in capsys.readouterr().out
    filled(path, count=1).close()
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b"applied", b"blocked")
    path.write_bytes(b"".join(lines))
    assert main(["audit", "verify", str(path)]) == 1
    assert "line 2:" in (err := capsys.readouterr().err) and "(1 record verified before it)" in err
