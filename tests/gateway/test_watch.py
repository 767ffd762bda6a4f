"""What a `fleet up` child's exit means for the fleet (`console.gateway.watch.judge`, pure)."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

import pytest

from console.gateway.watch import Child, Role, exit_status, judge, last_lines


class _Exited:
    """Enough of a Popen for `judge`: its pid."""

    def __init__(self, pid: int) -> None:
        self.pid = pid


def _child(name: str, role: Role, log: Path | None = Path("/tmp/logs/x.log")) -> Child:
    return Child(name, role, _Exited(4242), log)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("returncode", "said"),
    [
        (0, "exited with status 0"),
        (1, "exited with status 1"),
        (-signal.SIGKILL, "was killed by SIGKILL"),
        (-signal.SIGSEGV, "was killed by SIGSEGV"),
        (-200, "was killed by signal 200"),
    ],
)
def test_exit_status_names_the_status_or_the_signal(returncode: int, said: str) -> None:
    assert exit_status(returncode) == said


def test_a_dead_node_stays_down_and_the_fleet_runs_on() -> None:
    verdict = judge(_child("node-3", Role.NODE), -signal.SIGKILL, 2, 3, ["Traceback …", "MemoryError"])
    assert not verdict.planned and not verdict.fatal
    first, *rest = verdict.report.splitlines()
    assert first == "fleet up: node-3 (pid 4242) was killed by SIGKILL — log: /tmp/logs/x.log"
    assert rest[:2] == ["  | Traceback …", "  | MemoryError"]  # its last words, then what follows
    assert (
        "node-3 stays down" in rest[2]
        and "2 of 3 node processes still run" in rest[2]
        and "runs on" in rest[2]
    )


def test_the_last_node_down_says_how_to_get_one_back() -> None:
    """The command to run, as it runs: it said `stormdeck act URL add-capacity`, a literal URL."""
    command = "stormdeck act http://127.0.0.1:40123 add-capacity --count 1 --token-file /run/api.tokens"
    verdict = judge(_child("node-1", Role.NODE), 1, 0, 1, [], add_capacity=command)
    assert not verdict.fatal
    assert "no node process of 1 runs now" in verdict.report and command in verdict.report
    assert "act URL" not in verdict.report
    assert "reconnect to the other nodes" not in verdict.report


def test_redis_gone_makes_the_fleet_unusable() -> None:
    verdict = judge(_child("redis", Role.REDIS), -signal.SIGTERM, 3, 3, [])
    assert verdict.fatal and not verdict.planned
    assert verdict.report.startswith("fleet up: redis (pid 4242) was killed by SIGTERM")
    assert "stopping the fleet" in verdict.report


def test_the_publisher_gone_stops_the_messages_not_the_fleet() -> None:
    verdict = judge(_child("publisher", Role.PUBLISHER), 1, 3, 3, [])
    assert not verdict.fatal and not verdict.planned
    assert "no new messages" in verdict.report


@pytest.mark.parametrize(("returncode", "planned"), [(0, True), (1, False), (-signal.SIGKILL, False)])
def test_a_load_that_finished_is_planned_one_that_failed_is_not(returncode: int, planned: bool) -> None:
    verdict = judge(_child("load", Role.LOAD), returncode, 3, 3, [])
    assert verdict.planned is planned and not verdict.fatal
    assert ("the load finished" in verdict.report) is planned


def test_a_child_without_a_log_says_so() -> None:
    assert "log: none" in judge(_child("redis", Role.REDIS, None), 1, 1, 1, []).report


def test_last_lines_are_the_logs_last_non_blank_lines(tmp_path: Path) -> None:
    log = tmp_path / "node-1.log"
    log.write_text("".join(f"line {k}\n" for k in range(2000)) + "\n\n")
    assert last_lines(log, 3) == ["line 1997", "line 1998", "line 1999"]
    assert last_lines(tmp_path / "missing.log") == [] and last_lines(None) == []


def test_fleet_up_help_says_what_happens_when_a_child_dies() -> None:
    from console.cli import build_parser

    parser = build_parser()
    fleet = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["fleet"]
    up = next(a for a in fleet._actions if isinstance(a, argparse._SubParsersAction)).choices["up"]
    text = " ".join(up.format_help().split())
    assert "A child that exits is reported at once" in text
    assert (
        "a node stays down" in text and "fleet up exits 1" in text and "--duration is not a failure" in text
    )
