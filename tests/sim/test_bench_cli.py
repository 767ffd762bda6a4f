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


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # The child refused it with a traceback while the parent waited for its timeout.
        (
            ["bench", "server", "--scenario", "nope"],
            "stormdeck: --scenario: 'nope' is not allowed; expected one of",
        ),
        # The whole argparse Namespace was printed as the value.
        (
            ["bench", "console", "--nodes", "0"],
            "stormdeck: --nodes: '0' is not allowed; expected a whole number ≥ 1",
        ),
        (["bench", "console", "--rate", "nan"], "stormdeck: --rate: 'nan' is not allowed"),  # ran, exit 0
        # These ran: 10 million nodes until killed, a billion frames a second, storms that never came.
        (
            ["bench", "console", "--nodes", "10000000"],
            "stormdeck: --nodes: '10000000' is not allowed; expected 1 to",
        ),
        (["bench", "console", "--rate", "1e9"], "stormdeck: --rate: '1e9' is not allowed"),
        (
            ["bench", "server", "--storm-at", "20.5"],
            "stormdeck: --storm-at: '20.5' is not allowed; expected a whole",
        ),
        (["bench", "server", "--storm-at", "-3"], "stormdeck: --storm-at: '-3' is not allowed"),
        (
            ["bench", "server", "--seconds", "10", "--storm-at", "14"],
            "stormdeck: --storm-at: '14' is not allowed",
        ),
        (
            ["bench", "server", "--scenario", "demo", "--storm-at", "5"],
            "stormdeck: --storm-at cannot go with --scenario (",
        ),
    ],
)
def test_bench_servers_and_consoles_inputs_are_named(
    argv: list[str], message: str, monkeypatch, capsys
) -> None:
    import console.server.bench as server_bench
    import console.ui.bench as ui_bench

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("the bench started before its input was checked")

    monkeypatch.setattr(server_bench, "run_fanout", started)
    monkeypatch.setattr(ui_bench, "run_console_bench", started)
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(message)
