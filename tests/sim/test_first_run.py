"""A first run after install compiles the simulator: the commands say so, and time the run without it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from console.cli import kernel_load, main
from console.sim.engine import Simulation

#: How long the stand-in compile takes, once its notice is out: far longer than the tiny run it precedes.
COMPILE_S = 2.0
TINY = ["--set", "nodes.count=8", "--set", "clients.count=2000", "--until", "3"]


@pytest.fixture
def slow_compile(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """`load_kernel` as on a cold cache: it lasts until the notice is out, then COMPILE_S more. Returns
    what stderr said meanwhile."""
    said: list[str] = []
    loading = Simulation.load_kernel
    monkeypatch.setattr(kernel_load, "COMPILE_NOTICE_S", 0.0)

    def compiling(simulation: Simulation) -> None:
        deadline = time.monotonic() + 30.0
        while kernel_load.COMPILING not in "".join(said) and time.monotonic() < deadline:
            said.append(capsys.readouterr().err)
            time.sleep(0.01)  # polled: the notice comes from its timer thread
        done = time.perf_counter() + COMPILE_S
        while time.perf_counter() < done:  # the compile's own length, not a wait for anything
            time.sleep(0.05)
        loading(simulation)

    monkeypatch.setattr(Simulation, "load_kernel", compiling)
    return said


def test_sim_run_says_it_compiles_and_times_the_run_without_the_compile(
    slow_compile: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sim", "run", "demo", *TINY, "--json"]) == 0
    assert kernel_load.COMPILING in "".join(slow_compile)
    summary = json.loads(capsys.readouterr().out)
    assert summary["simulated_s"] == 3.0 and summary["wall_s"] < COMPILE_S, summary


def test_a_headless_drill_starts_its_clock_after_the_compile(
    slow_compile: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.drills.test_cli import GOOD_DRILL, write

    drill = write(tmp_path, "tiny.toml", GOOD_DRILL.replace("duration_s = 30", "duration_s = 12"))
    assert main(["drill", drill, "--headless", "--json", "--set", "clients.count=2000"]) == 0
    assert kernel_load.COMPILING in "".join(slow_compile)
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["wall_s"] < COMPILE_S, outcome


def test_a_load_from_the_cache_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "run", "demo", *TINY, "--json"]) == 0
    assert kernel_load.COMPILING not in capsys.readouterr().err
