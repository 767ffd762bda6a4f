"""`stormdeck act` and `stormdeck plan drain` against a live server: exit codes, the two-phase dance."""

from __future__ import annotations

import json

import pytest

from console.cli import main
from console.protocol import NodeState
from tests.actions.conftest import TOKENS, Acting


@pytest.fixture
def operator(monkeypatch) -> None:
    monkeypatch.setenv("STORMDECK_TOKEN", TOKENS["operator"])


def act(acting: Acting, *words: str) -> int:
    return main(["act", acting.url, *words])


def test_exit_codes_follow_the_verdict(acting: Acting, operator, capsys) -> None:
    drain = ["drain", "gw-001", "--rate", "10", "--hint", "1000:30000"]
    assert act(acting, *drain, "--deadline", "0") == 3  # confirm, not given
    out = capsys.readouterr().out
    assert "force_closed_at_safe_rate" in out and "FAIL→confirm" in out and "repeat with --yes" in out
    assert "forecast (60 s ahead, tick 10 ms" in out
    assert acting.simulation.state_of(1) is NodeState.READY
    assert act(acting, *drain, "--deadline", "0", "--yes") == 0  # the CLI confirms with the token itself
    assert acting.simulation.state_of(1) is NodeState.DRAINING
    assert act(acting, "drain", "gw-002", "--rate", "1e6", "--deadline", "600", "--hint", "1000:30000") == 4
    assert act(acting, "drain", "gw-002", "--rate", "-1", "--deadline", "600", "--hint", "1000:30000") == 2
    assert act(acting, "drain", "gw-002", "--rate", "1", "--deadline", "600", "--hint", "1000-30000") == 2
    capsys.readouterr()
    assert (
        act(acting, "rollout", "start", "--batch-size", "2", "--interval", "30", "--mode", "abrupt", "--yes")
        == 3
    )  # typed needs the name, --yes is not enough
    assert "--typed calm-test" in capsys.readouterr().out
    assert (
        act(
            acting,
            "rollout",
            "start",
            "--batch-size",
            "2",
            "--interval",
            "30",
            "--mode",
            "abrupt",
            "--typed",
            "calm-test",
            "--json",
        )
        == 0
    )
    answer = json.loads(capsys.readouterr().out)
    assert answer["status"] == 202 and answer["applied"]
    assert act(acting, "rollout", "halt") == 0
    assert act(acting, "admission", "--retry-after", "5:30", "--dry-run") == 0


def test_auth_and_transport_errors_exit_1(acting: Acting, monkeypatch) -> None:
    monkeypatch.setenv("STORMDECK_TOKEN", TOKENS["viewer"])
    assert act(acting, "undrain", "gw-001") == 1
    monkeypatch.setenv("STORMDECK_TOKEN", "nobody")
    assert act(acting, "undrain", "gw-001") == 1
    monkeypatch.setenv("STORMDECK_TOKEN", TOKENS["operator"])
    assert main(["act", "http://127.0.0.1:9", "undrain", "gw-001"]) == 1
    monkeypatch.delenv("STORMDECK_TOKEN")
    assert act(acting, "undrain", "gw-001") == 2  # no token at all: bad input, named


def test_plan_drain_prints_a_command_that_passes(acting: Acting, operator, capsys) -> None:
    assert main(["plan", "drain", acting.url, "gw-004", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert main(["plan", "drain", acting.url, "gw-004"]) == 0
    command = capsys.readouterr().out.splitlines()[-1].split("act: ", 1)[1].split()
    assert command[:3] == ["stormdeck", "act", acting.url]
    assert f"{plan['rate_per_s']:g}" in command
    assert main(command[1:]) == 0  # the plan passes its own guards: applied at once


def test_the_clients_routes_are_the_servers(acting: Acting) -> None:
    from console.client.actions import ROUTES
    from console.server.actions import ActionKind

    assert set(ROUTES) == {kind.value for kind in ActionKind}
    paths = acting.server.app.openapi()["paths"]
    for method, path in ROUTES.values():
        assert method.lower() in paths[path.replace("{node}", "{node_id}")], (method, path)


def test_add_capacity_follows_the_two_phases_and_names_count_on_bad_input(
    acting: Acting, operator, capsys
) -> None:
    sim = acting.simulation
    assert act(acting, "add-capacity", "--count", "2") == 0  # 2 of 8: ok, applied at once
    out = capsys.readouterr().out
    assert out.startswith("202 applied") and "ready_in_s=240" in out and "headroom_when_ready_pct" in out
    assert sim.n_nodes == 10
    assert act(acting, "add-capacity", "--count", "6") == 3  # 6 of 10: over the 50 % line
    assert "added_share_pct" in capsys.readouterr().out and sim.n_nodes == 10
    assert act(acting, "add-capacity", "--count", "6", "--yes") == 0 and sim.n_nodes == 16
    capsys.readouterr()
    room = sim.capacity_nodes - sim.n_nodes
    assert act(acting, "add-capacity", "--count", str(room + 1)) == 2
    out = capsys.readouterr().out
    assert f"count: {room + 1} is not allowed" in out and f"[1, {room}]" in out
    assert act(acting, "add-capacity", "--count", "0") == 2
    assert "count" in capsys.readouterr().out
    assert sim.n_nodes == 16  # nothing applied by a refusal


def test_add_capacity_help_says_what_it_does(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["act", "http://127.0.0.1:9", "add-capacity", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "--count N" in text and "provisioned" in text and "add_capacity_max_nodes" in text
