"""`stormdeck console [SCENARIO] [--set K=V]... [--seed N] [--speed X]`: the console on the embedded
simulator running any scenario. Review: bare `stormdeck` runs the demo only, `stormdeck graceful-drain` was
"invalid choice", and the way to another scenario was two commands (`sim serve` and `attach`) and a token
file. Bad input is refused before a server starts, naming the field."""

from __future__ import annotations

import pytest

from console.cli import main


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """The embedded servers `console` would start, as asked (none starts), and a console that quits."""
    from console.cli import embedded

    made: list[dict[str, object]] = []

    class Server:
        url, token_path = "http://127.0.0.1:1", None

        def __init__(self, scenario: str, **options: object) -> None:
            made.append({"scenario": scenario, **options})

        def __enter__(self) -> Server:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(embedded, "EmbeddedServer", Server)
    monkeypatch.setattr(embedded, "attach_console", lambda url, token_path: 0)
    return made


def test_console_runs_the_named_scenario_with_its_overrides_seed_and_speed(
    servers: list[dict[str, object]], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["console", "graceful-drain", "--set", "nodes.count=8", "--seed", "7", "--speed", "10"]
    assert main(argv) == 0
    assert servers == [
        {
            "scenario": "graceful-drain",
            "overrides": ["nodes.count=8"],
            "seed": 7,
            "speed": 10.0,
            "own_audit_log": True,
        }
    ]
    assert "starting the simulator (graceful-drain)" in capsys.readouterr().err


def test_console_without_a_scenario_is_the_bare_commands_demo(servers: list[dict[str, object]]) -> None:
    assert main(["console"]) == 0
    assert servers == [
        {"scenario": "demo", "overrides": [], "seed": None, "speed": 1.0, "own_audit_log": True}
    ]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["console", "no-such-scenario"], "no-such-scenario"),
        (["console", "demo", "--set", "nodes.count=banana"], "nodes.count"),
        (["console", "demo", "--seed", "-1"], "--seed"),
        (["console", "demo", "--speed", "0"], "--speed"),
    ],
)
def test_bad_input_is_refused_before_any_server_starts(
    servers: list[dict[str, object]], capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err, err
    assert servers == []
