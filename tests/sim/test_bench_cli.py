"""`stormdeck bench sim` prints each figure against issue #2's target (the figures themselves are measured
by the benchmark, not here: this checks the verdicts it prints)."""

from __future__ import annotations

import pytest

import console.bench.sim as bench
import console.cli.bench as bench_cli
from console.cli import main


def test_bench_sim_says_which_targets_are_met(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    figures = {
        "thundering_herd_wall_s": 0.59,
        "thundering_herd_rss_mb": 192.1,
        "scaling_100m_over_1m": 10.65,
        "vs_simpy_speedup": 112.5,
    }
    monkeypatch.setattr(bench, "bench_sim", lambda **_: figures)
    monkeypatch.setattr(bench_cli, "simpy_installed", lambda: True)
    assert main(["bench", "sim", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "thundering_herd_wall_s: 0.59 s, target <= 20 s — met" in out
    assert "scaling_100m_over_1m: 10.65×, target <= 1.3× — NOT met" in out
    assert "vs_simpy_speedup: 112.5×, target >= 100× — met" in out


def test_bench_sim_refuses_a_bad_repeat_count(capsys) -> None:
    assert main(["bench", "sim", "--repeats", "0"]) == 2
    assert "--repeats" in capsys.readouterr().err


def test_bench_sim_without_simpy_says_so_before_it_starts(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """SimPy is in the bench extra: without it the baseline's child failed with a traceback after the
    minutes of full-scale runs."""
    ran: list[dict] = []
    monkeypatch.setattr(bench, "bench_sim", lambda **kw: ran.append(kw) or {"thundering_herd_wall_s": 1.0})
    monkeypatch.setattr(bench_cli, "simpy_installed", lambda: False)
    assert main(["bench", "sim"]) == 1
    assert "pip install '.[bench]'" in capsys.readouterr().err and ran == []
    assert main(["bench", "sim", "--no-simpy"]) == 0
    assert ran == [{"include_simpy": False, "include_scaling": True, "repeats": 2}]
