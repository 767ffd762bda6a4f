"""`stormdeck act` and `stormdeck plan drain` against a live server: exit codes, the two-phase dance."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from console.cli import main
from console.cli.act import render_answer, render_plan
from console.client.actions import ActionAnswer
from console.guards import Thresholds, judge_rollout_start, plan_drain
from console.guards.drain import DrainPlan
from console.model.actions.answer import format_value
from console.model.actions.drain import PLAN_LIMITS
from console.protocol import AdmissionSettings, NodeState, RolloutRequest
from console.sim import kernel as k
from tests.actions.conftest import TOKENS, Acting, start_acting
from tests.guards.fleets import CAPACITY, fleet, last_in_rotation, out_of_rotation


@pytest.fixture
def operator(monkeypatch) -> None:
    monkeypatch.setenv("STORMDECK_TOKEN", TOKENS["operator"])


def act(acting: Acting, *words: str) -> int:
    return main(["act", acting.url, *words])


def test_exit_codes_follow_the_verdict(acting: Acting, operator, capsys) -> None:
    # A hint window under hint_window_min_ms asks for confirmation. (A 0 s deadline did: it force-closes a
    # node of 8 at once, over connections_drop's line — typed now, force_close_drop_pct.)
    drain = ["drain", "gw-001", "--rate", "10", "--deadline", "600"]
    assert act(acting, *drain, "--hint", "1000:1500") == 3  # confirm, not given
    out = capsys.readouterr().out
    assert "hint_window_ms" in out and "FAIL (confirm)" in out and "FAIL (typed)" not in out
    assert out.splitlines()[-1] == "needs confirmation: run again with --yes", out
    assert "forecast (60 s ahead, tick 10 ms" in out
    assert acting.simulation.state_of(1) is NodeState.READY
    assert act(acting, *drain, "--hint", "1000:1500", "--yes") == 0  # the CLI confirms with the token itself
    assert acting.simulation.state_of(1) in (NodeState.DRAINING, NodeState.DRAINED)  # (out of rotation)
    capsys.readouterr()
    assert act(acting, "drain", "gw-002", "--rate", "1e6", "--deadline", "600", "--hint", "1000:30000") == 4
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("what would pass: ")]
    assert (
        len(said) == 1
        and "drain_pacing_per_s ≤ " in said[0]
        and " closes/s per node (largest safe rate" in said[0]
    )
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


def test_auth_and_transport_errors_exit_1(acting: Acting, monkeypatch, capsys) -> None:
    monkeypatch.setenv("STORMDECK_TOKEN", TOKENS["viewer"])
    assert act(acting, "undrain", "gw-001") == 1
    monkeypatch.setenv("STORMDECK_TOKEN", "nobody")
    assert act(acting, "undrain", "gw-001") == 1
    monkeypatch.setenv("STORMDECK_TOKEN", TOKENS["operator"])
    assert main(["act", "http://127.0.0.1:9", "undrain", "gw-001"]) == 1
    # As attach and record say a fleet never reached: what to check (it gave only httpx's words).
    assert "cannot reach the fleet API at http://127.0.0.1:9: " in (err := capsys.readouterr().err), err
    assert err.rstrip().endswith("— is the server running?"), err
    monkeypatch.delenv("STORMDECK_TOKEN")
    assert act(acting, "undrain", "gw-001") == 2  # no token at all: bad input, named
    # It read "token: '(none)' is not allowed".
    assert "stormdeck: token is required: --token-file FILE or" in capsys.readouterr().err


def test_plan_drain_prints_a_command_that_passes(acting: Acting, operator, capsys) -> None:
    assert main(["plan", "drain", acting.url, "gw-004", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert main(["plan", "drain", acting.url, "gw-004"]) == 0
    said = capsys.readouterr().out.splitlines()
    # The planner's limit in the operator's words, as the drain form says it (was "limited by survivor_cpu").
    limit = PLAN_LIMITS[plan["limited_by"]]
    assert said[0].startswith("drain plan for gw-004 (largest safe rate") and said[0].endswith(
        f", limited by {limit}):"
    ), said[0]
    # How many clients the drain moves, with its unit, as the drain's verdict says it (it was not printed).
    node = next(n for n in acting.simulation.live_snapshot().nodes if n.id == "gw-004")
    assert plan["connections"] == node.connections > 0
    assert f"  moves     {plan['connections']:,} connections to the other nodes" in said, said
    command = said[-1].split("act: ", 1)[1].split()
    assert command[:3] == ["stormdeck", "act", acting.url]
    assert f"{plan['rate_per_s']:g}" in command
    assert main(command[1:]) == 0  # the plan passes its own guards: applied at once


@pytest.fixture
def small_fleet(tmp_path: Path) -> Iterator[Acting]:
    """40 clients over 8 nodes: a node's 5 connections drain in a few milliseconds (with an offline line a
    node's eighth does not cross: at the default 5 % the planner paces them over seconds, `offline_at_once`)."""
    running = start_acting(tmp_path, clients={"count": 40}, thresholds=Thresholds(connections_drop_pct=50))
    yield running
    running.server.stop()
    running.audit.close()


def _plan(acting: Acting, node: str, capsys) -> tuple[dict, dict[str, str]]:
    """The server's plan (--json) and the text's lines by their first word (`rate`, `duration`, …)."""
    assert main(["plan", "drain", acting.url, node, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert main(["plan", "drain", acting.url, node]) == 0
    said = capsys.readouterr().out.splitlines()[1:]
    return plan, {line.split()[0]: line.split(None, 1)[1] for line in said}


def test_plan_drain_says_a_drain_under_a_second_is_under_a_second(
    small_fleet: Acting, operator, capsys
) -> None:
    """A node of 5 connections at thousands of closes a second: `duration  0 s` read as no time at all (or
    none known); it is a few milliseconds."""
    plan, said = _plan(small_fleet, "gw-004", capsys)
    assert 0 < plan["duration_s"] < 1, plan
    assert said["duration"] == f"under 1 s ({format_value(plan['duration_s'] * 1000)} ms)", said


@pytest.mark.parametrize(
    ("duration_s", "said"),
    [
        (None, "never (no safe rate now)"),
        (0.0, "0 s (no connections to close)"),
        (0.0004, "under 1 s (0.4 ms)"),
        (0.952, "under 1 s (952 ms)"),
        (2.75, "2.75 s"),
        (3725.0, "3,725 s"),
    ],
)
def test_a_plans_duration_is_never_a_rounded_zero(duration_s: float | None, said: str) -> None:
    plan = {
        "nodes": ["gw-004"],
        "rate_per_s": 100.0 if duration_s is not None else 0.0,
        "duration_s": duration_s,
        "deadline_s": 600.0,
        "hint_ms": [1000, 30000],
        "force_closed": 0,
        "limited_by": "survivor_cpu",
    }
    assert f"  duration  {said}" in render_plan(plan, "http://127.0.0.1:8470").splitlines()


def test_plan_drain_says_the_cpu_margin_it_planned_with() -> None:
    """The plan's first line says what set the rate, as the drain form does: on a real fleet a rate on the
    pause line was typed at 75.1 % seconds later, so the planner keeps a margin under it, and says so."""
    plan = {
        "nodes": ["node-2"],
        "rate_per_s": 405.0,
        "duration_s": 2.35,
        "deadline_s": 600.0,
        "hint_ms": [1000, 5050],
        "force_closed": 0,
        "limited_by": "survivor_cpu",
        "cpu_margin_pct": 5.0,
    }
    first = render_plan(plan, "http://127.0.0.1:8470").splitlines()[0]
    assert first == (
        "drain plan for node-2 (largest safe rate less a 5-point CPU margin, limited by the busiest "
        "survivor's CPU):"
    ), first


def _as_served(plan: DrainPlan) -> dict:
    """A planner's plan as `GET /v1/nodes/{id}/drain-plan` answers it (no duration when no rate is safe)."""
    served = dataclasses.asdict(plan)
    served["nodes"] = list(served.pop("node_ids"))
    served["duration_s"] = None if math.isinf(plan.duration_s) else plan.duration_s
    return served


@pytest.mark.parametrize(
    ("snapshot", "short", "not_short"),
    [
        # Hot survivors with admission to spare: it said "no spare admission or CPU" of them too.
        (fleet(cpu_pct=79.0), "the busiest survivor's CPU", "admission"),
        (
            fleet(admission=AdmissionSettings(rate_per_s=20.0, max_connections=None, retry_after_s=(1, 30))),
            "the survivors' spare admission",
            "CPU",
        ),
    ],
)
def test_plan_drain_with_no_safe_rate_names_what_left_no_room(snapshot, short: str, not_short: str) -> None:
    plan = plan_drain(snapshot, CAPACITY, "gw-003")
    assert plan.rate_per_s == 0
    said = render_plan(_as_served(plan), "http://127.0.0.1:8470").splitlines()
    last = said[-1]
    assert last.startswith("  no safe rate now (") and short in last and not_short not in last, last
    assert not any("act:" in line for line in said), said
    # Its first line named a "largest safe rate" there is not: the last line says why there is none.
    assert said[0] == "drain plan for gw-003:", said[0]


def test_plan_drain_of_the_last_node_in_rotation_says_none_would_take_its_clients() -> None:
    """It said "limited by the busiest survivor's CPU — … add capacity" of a node with no survivor: now the
    guard's own reason (`nodes_in_rotation_after`) and what to do, and no command to type."""
    plan = plan_drain(last_in_rotation(), CAPACITY, "gw-001")
    said = render_plan(_as_served(plan), "http://127.0.0.1:8470").splitlines()
    assert said[-1] == (
        "  no safe rate now (no node would be left in rotation to take its clients) — any drain is blocked; "
        "undrain another node, or restart one that is down, first"
    ), said[-1]
    assert not any("survivor" in line or "act:" in line for line in said), said


def test_plan_drain_held_back_by_the_fleets_hint_reach_says_capacity_would_not_help() -> None:
    """Hints reaching 1,500 ms leave a 500 ms window from the first second, under hint_window_min_ms (1,000):
    no rate spreads the closes, and "any drain is blocked; add capacity" was said of it — capacity does not
    widen a hint, and the drain is not blocked (its narrow window asks for confirmation)."""
    short = dataclasses.replace(CAPACITY, hint_max_ms=1_500)
    plan = plan_drain(fleet(), short, "gw-003")
    assert (plan.rate_per_s, plan.limited_by) == (0, "hint_reach")
    said = render_plan(_as_served(plan), "http://127.0.0.1:8470").splitlines()
    assert said[-1] == (
        "  no safe rate now (the fleet's longest reconnect hint, 1,500 ms, leaves no window from 1,000 ms as "
        "wide as hint_window_min_ms) — adding capacity would not widen it: a fleet whose hints reach further "
        "would, or a smaller hint_window_min_ms in [thresholds]"
    ), said[-1]


def test_act_shows_a_rollout_blocked_on_the_rotation() -> None:
    """A start with no node in rotation is a block on `nodes_in_rotation` (it was bad input naming
    batch_size, "expected 1 … 0"): `act`'s table writes it as any check, its limit "≥ 1"."""
    verdict = judge_rollout_start(out_of_rotation(), CAPACITY, RolloutRequest(batch_size=1, interval_s=30))
    body = {
        "type": "urn:stormdeck:problem:blocked",
        "detail": "blocked",
        "verdict": verdict.model_dump(mode="json"),
    }
    text = render_answer(ActionAnswer(422, body, "application/problem+json"))
    row = next(line for line in text.splitlines() if line.strip().startswith("nodes_in_rotation "))
    assert row.split()[:6] == ["nodes_in_rotation", "0", "≥", "1", "FAIL", "(blocked)"], row


def test_act_shows_a_first_batch_of_every_node_in_rotation_blocked_on_the_one_reason() -> None:
    """A start whose first batch takes every node in rotation printed survivor_cpu_vs_pause_pct "—" FAIL and
    drain_pacing_per_s "≤ 0" FAIL beside batch_connections, and "what would pass" asked for a pacing of 0.
    Now one row fails, nodes_in_rotation_after, and what would pass names it alone."""
    verdict = judge_rollout_start(fleet(3), CAPACITY, RolloutRequest(batch_size=3, interval_s=30))
    body = {
        "type": "urn:stormdeck:problem:blocked",
        "detail": "blocked",
        "verdict": verdict.model_dump(mode="json"),
    }
    lines = render_answer(ActionAnswer(422, body, "application/problem+json")).splitlines()
    failing = [line.split()[0] for line in lines if " FAIL " in line]
    assert failing == ["nodes_in_rotation_after"], lines
    row = next(line for line in lines if line.strip().startswith("nodes_in_rotation_after "))
    assert row.split()[:6] == ["nodes_in_rotation_after", "0", "≥", "1", "FAIL", "(blocked)"], row
    assert "what would pass: nodes_in_rotation_after ≥ 1 (now 0)" in lines


def verdict_answer(verdict, status: int, kind: str) -> ActionAnswer:
    body = {
        "type": f"urn:stormdeck:problem:{kind}",
        "detail": kind,
        "verdict": verdict.model_dump(mode="json"),
    }
    if kind == "confirmation-required":
        body["confirm_token"] = "tok"
    return ActionAnswer(status, body, "application/problem+json")


def test_act_says_what_would_pass_of_a_typed_or_blocked_verdict() -> None:
    """The console's dialog says what would pass; `act` printed the table and left the operator to work it
    out. It prints the same hint (`what_would_pass`): the blocking checks' limits and the drain rate to type."""
    from console.guards import judge_drain, plan_drain
    from console.protocol import DrainRequest
    from tests.guards.fleets import LOOPBACK, loopback_fleet
    from tests.guards.test_drain import CPU_SETS_IT  # the CPU margin sets the rate, not the offline line

    def drain(rate: float):
        request = DrainRequest(rate_per_s=rate, deadline_s=600, hint_ms=(1000, 30_000))
        return judge_drain(loopback_fleet(9.8), LOOPBACK, "node-2", request, CPU_SETS_IT)

    rate = plan_drain(loopback_fleet(9.8), LOOPBACK, "node-2", CPU_SETS_IT).rate_per_s
    hint = f"a drain at ≤ {rate:g} closes/s per node (largest safe rate less a 5-point CPU margin) passes these checks"
    blocked = render_answer(verdict_answer(drain(2000), 422, "blocked")).splitlines()
    said = [line for line in blocked if line.startswith("what would pass: ")]
    assert len(said) == 1 and said[0].endswith(hint) and "survivor_cpu_vs_abort_pct ≤ 80 (now " in said[0], (
        said
    )
    # Typed (over the pause line, under the abort line): the typed checks' limits, the rate; then how to confirm.
    typed = drain(450)
    assert typed.level.value == "typed"
    lines = render_answer(verdict_answer(typed, 409, "confirmation-required")).splitlines()
    assert (
        lines[-2]
        == f"what would pass: survivor_cpu_vs_pause_pct ≤ 75 (now {format_value(typed.projections['survivor_cpu_max_pct'])}); {hint}"
    )
    assert lines[-1].startswith("needs typed confirmation")
    # An ok verdict asks nothing: no hint.
    ok = render_answer(ActionAnswer(200, {"dry_run": True, "verdict": drain(1).model_dump(mode="json")}))
    assert "what would pass" not in ok


def test_plan_drain_writes_its_figures_as_the_console_does(tmp_path: Path, operator, capsys) -> None:
    """The rate, duration, deadline and force-closed count with the console's `format_value`, as the
    connections moved already were: "moves 12,500 connections" beside "force-closed then: 7950" and "rate
    4550" (a one-second drain window over 12,500 connections a node)."""
    # (A reconnect line far off: at the alarm's 10× the burst the one-second window leaves would cross it,
    # and the planner would lengthen its deadline to empty the node — nothing then left to force-close. So
    # would 7,950 force-closed of 100,000 at connections_drop's 5 %: that line far off too.)
    lines = Thresholds(drain_window_s=1, reconnect_rate_multiple=10_000, connections_drop_pct=50)
    acting = start_acting(tmp_path, thresholds=lines, clients={"count": 100_000})
    try:
        plan, said = _plan(acting, "gw-004", capsys)
    finally:
        acting.server.stop()
        acting.audit.close()
    assert plan["force_closed"] >= 1000 and plan["rate_per_s"] >= 1000 and plan["duration_s"] >= 1, plan
    assert said["rate"] == f"{format_value(plan['rate_per_s'])} closes/s per node", said
    assert said["duration"] == f"{format_value(plan['duration_s'])} s", said
    deadline = format_value(plan["deadline_s"])
    assert said["deadline"] == f"{deadline} s  (force-closed then: {format_value(plan['force_closed'])})", (
        said
    )
    # The command stays as it is typed: no separators in its numbers.
    assert f"--rate {plan['rate_per_s']:g} --deadline {plan['deadline_s']:g}" in said["act:"], said


def test_the_clients_routes_are_the_servers(acting: Acting) -> None:
    from console.client.actions import ROUTES
    from console.protocol import ActionKind

    assert set(ROUTES) == {kind.value for kind in ActionKind}
    paths = acting.server.app.openapi()["paths"]
    for method, path in ROUTES.values():
        assert method.lower() in paths[path.replace("{node}", "{node_id}")], (method, path)


def test_add_capacity_follows_the_two_phases_and_names_count_on_bad_input(
    acting: Acting, operator, capsys
) -> None:
    sim = acting.simulation
    # The calm fleet is at its headroom budget: the console's pre-fill is one node, and more is a big
    # change sent only with --yes (test_more_nodes_than_the_prefill_are_not_added_without_yes).
    assert act(acting, "add-capacity", "--count", "2", "--yes") == 0  # 2 of 8: ok, applied at once
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("202 add_capacity fleet (count=2): applied") and first.count("applied") == 1, (
        first
    )
    assert "ready_in_s=240" in out and "headroom_when_ready_pct" in out
    assert sim.n_nodes == 10
    assert act(acting, "add-capacity", "--count", "6", "--dry-run") == 0  # 6 of 10: over the 50 % line
    assert "added_share_pct" in capsys.readouterr().out and sim.n_nodes == 10
    assert act(acting, "add-capacity", "--count", "6", "--yes") == 0 and sim.n_nodes == 16
    capsys.readouterr()
    room = sim.capacity_nodes - sim.n_nodes
    assert act(acting, "add-capacity", "--count", str(room + 1), "--yes") == 2
    out = capsys.readouterr().out
    # The server's refusal names the field; the option that set it is named with it.
    assert f"--count (count): {room + 1} is not allowed" in out and f"[1, {room}]" in out
    # Without --yes too: bad input (2) named at once, not "not sent: a big change" (3) first — an operator
    # who then adds --yes only learns the count was never possible.
    assert act(acting, "add-capacity", "--count", str(room + 1)) == 2
    assert f"[1, {room}]" in capsys.readouterr().out
    # Below 1 in the fleet's range too, as the console's form says it (check_count) — it answered the
    # request model's words and bound: "Input should be greater than or equal to 1 (got 0); allowed:
    # [1, 10000]". With --yes and --dry-run as well: nothing makes a count below 1 possible.
    for count, words in (("0", []), ("0", ["--yes"]), ("-3", ["--dry-run"])):
        assert act(acting, "add-capacity", f"--count={count}", *words) == 2
        said = capsys.readouterr()
        expected = (  # as typed: '0', not the number made of it
            f"--count: {count!r} is not allowed; expected an integer in [1, {room}] (room left in the fleet"
        )
        assert expected in said.err, said
        assert "greater than or equal" not in said.out + said.err
    assert sim.n_nodes == 16  # nothing applied by a refusal


def test_add_capacity_help_says_what_it_does(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["act", "http://127.0.0.1:9", "add-capacity", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "--count N" in text and "provisioned" in text and "add_capacity_max_nodes" in text


@pytest.mark.parametrize(
    ("words", "shown"),
    [
        (["drain", "gw-001", "--rate", "nan", "--deadline", "600", "--hint", "1000:15000"], "--rate: 'nan'"),
        (["drain", "gw-001", "--rate", "inf", "--deadline", "600", "--hint", "1000:15000"], "--rate: 'inf'"),
        (
            ["drain", "gw-001", "--rate", "10", "--deadline", "inf", "--hint", "1000:15000"],
            "--deadline: 'inf'",
        ),
        (["rollout", "start", "--batch-size", "2", "--interval", "nan"], "--interval: 'nan'"),
        (
            ["rollout", "start", "--batch-size", "2", "--interval", "30", "--pause-cpu", "inf"],
            "--pause-cpu: 'inf'",
        ),
        (["admission", "--rate", "nan"], "--rate: 'nan'"),
        (["admission", "--retry-after", "1:inf"], "--retry-after: '1:inf'"),
    ],
)
def test_nan_and_inf_exit_2_naming_the_option(words: list[str], shown: str, operator, capsys) -> None:
    """They parse as floats but are no JSON: sending them was a ValueError traceback, exit 1."""
    assert main(["act", "http://127.0.0.1:9", *words, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert f"stormdeck: {shown} is not allowed; expected" in err and "finite" in err


@pytest.mark.parametrize(
    ("words", "shown"),
    [
        (["admission", "--rate", "-5"], "--rate: '-5'"),
        (["admission", "--rate", "0"], "--rate: '0'"),
        (["admission", "--burst", "0"], "--burst: '0'"),
        (["admission", "--max-connections", "-1"], "--max-connections: '-1'"),
        (["admission", "--rate", "2e9"], "--rate: '2e9'"),
    ],
)
def test_an_admission_limit_out_of_range_exits_2_naming_its_range(
    words: list[str], shown: str, operator, capsys
) -> None:
    """`act URL admission --rate -5` was shown as a big change ("unlimited → -5 (a limit where there was
    none …)"), exit 3 and "add --yes to send it": bad input, not a change to confirm."""
    assert main(["act", "http://127.0.0.1:9", *words]) == 2
    err = capsys.readouterr().err
    assert f"stormdeck: {shown} is not allowed; expected" in err and "(0, 1000000000]" in err
    assert "unlimited" in err


def test_a_window_starting_with_a_minus_says_to_join_it_with_equals(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(
            [
                "act",
                "http://127.0.0.1:9",
                "drain",
                "gw-001",
                "--rate",
                "1",
                "--deadline",
                "1",
                "--hint",
                "-5:10",
            ]
        )
    assert done.value.code == 2
    assert "--hint=-5:10" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["act", "not-a-url", "undrain", "gw-001"],
        ["plan", "drain", "not-a-url", "gw-001"],
        ["inject", "not-a-url", "restart_nodes", "nodes=1"],
        ["record", "ftp://127.0.0.1:9", "--out", "unused.rec"],
        ["attach", "127.0.0.1"],
        ["attach", "127.0.0.1:8470"],
    ],
)
def test_every_command_taking_a_fleet_url_refuses_a_bad_one(
    argv: list[str], operator, monkeypatch, tmp_path, capsys
) -> None:
    """`attach not-a-url` started the console, which retried forever; `record` kept retrying too."""
    monkeypatch.chdir(tmp_path)  # where `record` would have made its file

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("started on a bad URL")

    monkeypatch.setattr("console.ui.app.ConsoleApp.run", started)
    monkeypatch.setattr("console.record.daemon.record_stream", started)
    given = argv[1 if argv[0] != "plan" else 2]
    if argv[0] in ("act", "plan", "inject"):  # a URL another positional follows is checked while parsing
        with pytest.raises(SystemExit) as exit:
            main(argv)
        assert exit.value.code == 2
        err = capsys.readouterr().err
        assert f"argument URL: {given!r} is not allowed" in err
    else:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"stormdeck: URL: {given!r} is not allowed" in err
    assert "http:// or https://" in err
    if argv == ["attach", "127.0.0.1:8470"]:
        assert "(http://127.0.0.1:8470?)" in err  # a host and port: the scheme is what is missing


def test_plan_exits_as_act_does(acting: Acting, operator, capsys) -> None:
    """2 for bad input (the server's 422), 1 for transport: plan exited 1 for both."""
    assert main(["plan", "drain", acting.url, "gw-999"]) == 2
    assert "answered 422: node: 'gw-999' is not allowed" in capsys.readouterr().err
    for argv in (
        ["plan", "drain", "http://127.0.0.1:9", "gw-001"],
        ["act", "http://127.0.0.1:9", "undrain", "gw-001"],
        ["inject", "http://127.0.0.1:9", "restart_nodes", "nodes=1"],
    ):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "cannot reach the fleet API at http://127.0.0.1:9: ConnectError" in err, argv
        assert "answered 0" not in err


@pytest.fixture
def plain_web_server() -> Iterator[str]:
    """Another web server on the port: Python's own, answering HTML (404 to GET, 501 to POST)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["inject", "{url}", "restart_nodes", "nodes=1"], 501),
        (["act", "{url}", "undrain", "gw-001"], 501),
        (["plan", "drain", "{url}", "gw-001"], 404),
    ],
)
def test_a_web_server_that_is_no_fleet_api_is_named_as_such(
    plain_web_server: str, argv: list[str], status: int, operator, capsys
) -> None:
    """It printed "501 bad_input: <!DOCTYPE HTML>…" and exited 2, as if the input were wrong."""
    assert main([word.format(url=plain_web_server) for word in argv]) == 1
    err = capsys.readouterr().err
    assert f"{plain_web_server} is not a stormdeck fleet API (HTTP {status} text/html)" in err
    assert "DOCTYPE" not in err


def test_node_ids_are_checked_and_escaped(acting: Acting, operator, capsys) -> None:
    for words in (["drain", "", "--rate", "5", "--deadline", "60", "--hint", "1000:2000"], ["undrain", ""]):
        assert act(acting, *words) == 2
        assert "stormdeck: NODE: '' is not allowed; expected a node id" in capsys.readouterr().err
    # `#x` is sent escaped, so the server names the node it does not know (it read gw-001's detail before)
    assert main(["plan", "drain", acting.url, "gw-001#x"]) == 2
    err = capsys.readouterr().err
    assert "'gw-001#x' is not allowed" in err and "Traceback" not in err


def test_admission_options_left_out_keep_the_fleets_settings(acting: Acting, operator, capsys) -> None:
    """Found in review: `--rate 100` after `--rate 200 --burst 50 --retry-after 2:20` sent null for the
    burst and the default 1:30 window, silently replacing both. Left out now means kept as the fleet has it."""
    assert act(acting, "admission", "--rate", "200", "--burst", "50", "--retry-after", "2:20", "--yes") == 0
    capsys.readouterr()
    assert act(acting, "admission", "--rate", "100", "--nodes", "gw-001") == 0
    # (gw-001 had no setting of its own: it runs the fleet's)
    assert "kept as gw-001 has them: burst 50, max_connections unlimited, retry_after_s 2:20" in (
        capsys.readouterr().err
    )
    # The per-node change is gw-001's only (it read as the fleet's; found in review): the fleet keeps 200/s.
    settings = acting.simulation.admission
    assert (settings.rate_per_s, settings.burst, tuple(settings.retry_after_s)) == (200, 50, (2, 20))
    sim = acting.simulation
    assert sim.node_f[k.NF_RATE, sim.index_of("gw-001")] == pytest.approx(100 * sim.tick_ms / 1000)
    assert sim.node_f[k.NF_BURST, sim.index_of("gw-001")] == 50
    # Fleet-wide, a setting left out keeps what every node runs — and gw-001 runs 100/s of its own beside the
    # others' 200/s: no one rate keeps both, so it must be given (it sent the fleet's 200/s, "kept as the
    # fleet has them", and lifted gw-001's own; found on a real fleet).
    assert act(acting, "admission", "--burst", "unlimited", "--yes") == 2
    assert (
        "--rate is required: the fleet's nodes run different values of it (100 on gw-001, 200 on 7 nodes): "
        "give one for them all" in capsys.readouterr().err
    )
    assert act(acting, "admission", "--rate", "200", "--burst", "unlimited", "--json", "--yes") == 0  # lifted
    sent = json.loads(capsys.readouterr().out)["verdict"]
    assert sent["level"] == "ok"
    assert acting.simulation.admission.burst is None
    assert act(acting, "admission", "--burst", "many") == 2
    assert "--burst: 'many'" in capsys.readouterr().err


def test_admission_options_left_out_keep_the_named_nodes_own_settings(
    acting: Acting, operator, capsys
) -> None:
    """Found in review: with `--nodes`, the options left out were filled from the fleet's settings —
    `--nodes gw-001 --max-connections 40000` put gw-001's own 100/s back to the fleet's 200/s. They keep the
    named nodes' own now; nodes that differ in one are refused naming its option."""
    sim = acting.simulation
    assert act(acting, "admission", "--rate", "200", "--burst", "50", "--retry-after", "2:20", "--yes") == 0
    assert act(acting, "admission", "--rate", "100", "--burst", "20", "--nodes", "gw-001", "--yes") == 0
    capsys.readouterr()
    assert act(acting, "admission", "--max-connections", "40000", "--nodes", "gw-001", "--yes") == 0
    assert "kept as gw-001 has them: rate_per_s 100, burst 20, retry_after_s 2:20" in capsys.readouterr().err
    assert sim.node_f[k.NF_RATE, sim.index_of("gw-001")] == pytest.approx(100 * sim.tick_ms / 1000)
    assert sim.node_f[k.NF_CEILING, sim.index_of("gw-001")] == 40_000
    assert act(acting, "admission", "--max-connections", "40000", "--nodes", "gw-001,gw-002", "--yes") == 2
    err = capsys.readouterr().err
    assert (
        "--rate is required: the nodes named run different values of it (100 on gw-001, 200 on gw-002)" in err
    )
    # A big change is judged against what the named node runs, not the fleet's 200/s.
    assert act(acting, "admission", "--rate", "1000", "--nodes", "gw-001") == 3
    assert "rate (new conns/s per node): 100 → 1,000" in capsys.readouterr().out


class _JsonApi(SimpleHTTPRequestHandler):
    """Another JSON API (a FastAPI app's default errors): 404 {"detail": "Not Found"}, application/json."""

    def _not_found(self) -> None:
        body = b'{"detail":"Not Found"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = _not_found

    def log_message(self, *args: object) -> None:
        return None


def test_a_json_api_that_is_no_fleet_api_is_named_as_such(operator, capsys) -> None:
    """Found in review: its 404 read as the fleet's bad input (`404 bad_input: Not Found`, exit 2). Every
    error of the fleet API is problem+json; a plain JSON error is something else answering (exit 1)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _JsonApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for argv in (["act", url, "undrain", "gw-001"], ["act", url, "rollout", "halt", "--json"]):
            assert main(argv) == 1, argv
            out, err = capsys.readouterr()
            assert f"{url} is not a stormdeck fleet API (HTTP 404 application/json)" in err and not out
    finally:
        server.shutdown()
        server.server_close()


def test_the_fleet_apis_own_problem_is_still_bad_input(acting: Acting, operator, capsys) -> None:
    # An unknown node's drain plan: the fleet API's 422 problem+json, the caller's input (exit 2).
    assert main(["plan", "drain", acting.url, "gw-999"]) == 2
    assert "not a stormdeck fleet API" not in capsys.readouterr().err


def test_a_big_admission_change_is_not_sent_without_yes(acting: Acting, operator, capsys) -> None:
    """`act URL admission --rate 5` went from unlimited to 5/s per node at once, exit 0: the console asks
    before such a change (console.model.big_changes), and now the CLI does too."""
    assert acting.simulation.admission.rate_per_s is None
    assert act(acting, "admission", "--rate", "5") == 3
    out = capsys.readouterr().out
    assert "unlimited → 5" in out and "--yes" in out and "not sent" in out
    assert acting.simulation.admission.rate_per_s is None, "nothing sent"
    assert act(acting, "admission", "--rate", "5", "--dry-run") == 0  # judging only: nothing to protect
    capsys.readouterr()
    assert acting.simulation.admission.rate_per_s is None
    assert act(acting, "admission", "--rate", "5", "--yes") == 0
    assert acting.simulation.admission.rate_per_s == 5
    capsys.readouterr()
    assert act(acting, "admission", "--rate", "8") == 0  # within double: not a big change
    capsys.readouterr()
    assert act(acting, "admission", "--rate", "1", "--json") == 3  # below half of 8
    answer = json.loads(capsys.readouterr().out)
    assert answer["sent"] is False
    assert [(c["before"], c["after"]) for c in answer["big_changes"]] == [("8", "1")]
    assert acting.simulation.admission.rate_per_s == 8


def test_more_nodes_than_the_prefill_are_not_added_without_yes(acting: Acting, operator, capsys) -> None:
    """The console asks before adding more nodes than its pre-fill (the nodes that bring headroom to the
    budget, at least one); `act add-capacity` sent them at once."""
    sim = acting.simulation
    assert act(acting, "add-capacity", "--count", "3") == 3
    out = capsys.readouterr().out
    assert "not sent" in out and "1 → 3" in out and "--yes" in out and sim.n_nodes == 8
    assert act(acting, "add-capacity", "--count", "1") == 0 and sim.n_nodes == 9  # the pre-fill itself
    capsys.readouterr()
    assert act(acting, "add-capacity", "--count", "3", "--yes") == 0 and sim.n_nodes == 12


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (
            ["drain", "gw-001", "--rate", "0", "--deadline", "600", "--hint", "1000:15000"],
            "--rate: '0' is not allowed; expected a number in (0, 1000000000] (closes per second)",
        ),
        (
            ["drain", "gw-001", "--rate", "5", "--deadline", "600", "--hint", "5:2"],
            "--hint: '5:2' is not allowed; expected MIN:MAX with 0 ≤ MIN ≤ MAX ≤ 3600000",
        ),
        (
            ["drain", "gw-001", "--rate", "5", "--deadline", "-1", "--hint", "1000:15000"],
            "--deadline: '-1' is not allowed; expected a number in [0, 604800]",
        ),
        (["add-capacity", "--count", "0"], "--count: '0' is not allowed; expected a whole number in [1, "),
        (
            ["rollout", "start", "--batch-size", "0", "--interval", "30"],
            "--batch-size: '0' is not allowed; expected a whole number in [1, 10000]",
        ),
        (
            ["rollout", "start", "--batch-size", "2", "--interval", "30", "--pause-cpu", "101"],
            "--pause-cpu: '101' is not allowed; expected a number in (0, 100]",
        ),
        (
            ["rollout", "start", "--batch-size", "2", "--interval", "30", "--drain-rate", "0"],
            "--drain-rate: '0' is not allowed; expected a number in (0, 1000000000]",
        ),
        (
            ["admission", "--retry-after", "60:5"],
            "--retry-after: '60:5' is not allowed; expected MIN:MAX with 0",
        ),
        (  # cut where it is repeated, and said in characters ("a number in " had said nothing)
            ["undrain", "gw-001", "--override-reason", "x" * 1001],
            f"--override-reason: {'x' * 200!r}… (1,001 characters) is not allowed; expected a text of at "
            "most 1,000 characters",
        ),
    ],
)
def test_act_checks_its_options_ranges_before_sending(words: list[str], said: str, operator, capsys) -> None:
    """Review: `act URL drain n --rate 0`, `--hint 5:2`, `add-capacity --count 0`, `rollout start
    --batch-size 0` or `--pause-cpu 101` against a fleet not running said "cannot reach the fleet API"
    (exit 1); against a live one the API's field ("rate_per_s: Input should be greater than 0"). Checked
    before anything is sent, by the request models' own bounds, naming the option: exit 2."""
    unused = "http://127.0.0.1:9"  # never contacted: the check comes first
    assert main(["act", unused, *words]) == 2
    err = capsys.readouterr().err
    assert said in err and "cannot reach" not in err, err
    assert "rate_per_s" not in err and "hint_ms" not in err and "batch_size" not in err, err


def test_a_field_the_server_refuses_is_named_with_its_option() -> None:
    answer = ActionAnswer(
        422,
        {
            "type": "about:blank",
            "detail": "rate_per_s: Input should be greater than 0 (got 0.0); hint_ms: [5, 2] is not allowed",
            "field": "rate_per_s",
        },
    )
    said = render_answer(answer, {"rate_per_s": "--rate", "hint_ms": "--hint"})
    assert said.startswith("422 bad_input: --rate (rate_per_s): Input should be greater than 0"), said
    assert "; --hint (hint_ms): [5, 2] is not allowed" in said
    assert render_answer(answer).startswith("422 bad_input: rate_per_s: ")  # no options: as it came


def test_add_capacity_asks_about_more_nodes_than_the_servers_budget_needs_not_the_consoles(
    tmp_path: Path, operator, capsys
) -> None:
    """`act add-capacity` judged "more than the pre-fill" with the CLI's own thresholds: a server whose
    headroom budget is 97 % needs more nodes than one at the default 35 %, and its operator was asked
    --yes for the count the server's own budget calls for. The server's lines (GET /v1/thresholds)."""
    from console.guards import Thresholds

    from .conftest import start_acting

    running = start_acting(tmp_path, thresholds=Thresholds(headroom_min_pct=97.0))
    try:
        assert act(running, "add-capacity", "--count", "3") == 0, capsys.readouterr().out
        assert "not sent" not in capsys.readouterr().out and running.simulation.n_nodes == 11
    finally:
        running.server.stop()
        running.audit.close()


def test_the_first_line_says_the_reply_once(acting: Acting, operator, capsys) -> None:
    """`act … --dry-run` began "200 dry_run: dry run: blocked; nothing applied", and an applied drain
    "202 applied: drain gw-… (…): applied"."""
    assert (
        act(acting, "drain", "gw-002", "--rate", "5", "--deadline", "600", "--hint", "1000:2000", "--dry-run")
        == 0
    )
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("200 dry run: ") and "dry_run" not in first, first


@pytest.mark.parametrize("extra", [[], ["--yes"], ["--dry-run"], ["--burst", "5", "--max-connections", "9"]])
def test_admission_on_an_unknown_node_is_refused_naming_it(
    acting: Acting, operator, capsys, extra: list[str]
) -> None:
    """Found in review: `--nodes zz` said "kept as zz has them" (the fleet's settings, read for a node that
    is not there) and exit 3 for a big change. Bad input, exit 2, before anything is sent: `--nodes`, the
    id and the fleet's ids — the guard's own words, which the server answers the console's form with."""
    records = len(acting.audit.tail(100))
    assert act(acting, "admission", "--rate", "100", "--retry-after", "1:30", "--nodes", "zz", *extra) == 2
    out, err = capsys.readouterr()
    assert "kept as" not in err and "not sent" not in out, (out, err)
    assert (
        "stormdeck: --nodes: 'zz' is not allowed; expected a node of fleet 'calm-test': gw-000 … gw-007 "
        "(8 nodes)" in err
    ), err
    assert len(acting.audit.tail(100)) == records, "nothing sent, nothing audited"
    assert acting.simulation.admission.rate_per_s is None
    assert act(acting, "admission", "--rate", "100", "--nodes", "gw-001,gw-01", *extra) == 2
    assert "--nodes: 'gw-01' is not allowed;" in (err := capsys.readouterr().err)
    assert err.rstrip().endswith("nearest to 'gw-01': gw-001"), err


def test_admission_that_changes_nothing_is_said_and_not_sent(acting: Acting, operator, capsys) -> None:
    """Found in review: settings equal to the fleet's were sent, applied and audited as a change. As the
    console's form says it: nothing to apply, exit 0, nothing sent and no audit record; a dry run still
    judges them as they stand."""
    assert act(acting, "admission", "--rate", "200", "--burst", "50", "--retry-after", "2:20", "--yes") == 0
    capsys.readouterr()
    records = len(acting.audit.tail(100))
    for words in (
        ["--rate", "200"],
        ["--rate", "200.0", "--burst", "50", "--retry-after", "2:20", "--yes"],
        [],  # every option left out: the fleet's settings as they are
    ):
        assert act(acting, "admission", *words) == 0, words
        out = capsys.readouterr().out
        assert out.startswith("nothing to apply: these are the fleet's current settings"), out
        assert "nothing sent" in out
    assert len(acting.audit.tail(100)) == records, "nothing sent, nothing audited"
    assert act(acting, "admission", "--rate", "200", "--json") == 0
    assert json.loads(capsys.readouterr().out) == {
        "sent": False,
        "unchanged": True,
        "message": "nothing to apply: these are the fleet's current settings",
    }
    assert act(acting, "admission", "--rate", "200", "--dry-run") == 0  # judged, as Ctrl+D in the form
    assert capsys.readouterr().out.startswith("200 dry run")
    # A node's own settings set to what it runs already: the same answer, in its words.
    assert act(acting, "admission", "--rate", "200", "--nodes", "gw-003") == 0
    assert capsys.readouterr().out.startswith("nothing to apply: gw-003 already runs these settings")


#: Every number option of `act`: the words before it (a command valid but for it), and the option.
NUMBER_OPTIONS = [
    (["drain", "gw-001", "--deadline", "600", "--hint", "1000:15000"], "--rate"),
    (["drain", "gw-001", "--rate", "5", "--hint", "1000:15000"], "--deadline"),
    (["rollout", "start", "--interval", "30"], "--batch-size"),
    (["rollout", "start", "--batch-size", "2"], "--interval"),
    (["rollout", "start", "--batch-size", "2", "--interval", "30"], "--pause-cpu"),
    (["rollout", "start", "--batch-size", "2", "--interval", "30"], "--drain-rate"),
    (["admission"], "--rate"),
    (["admission"], "--burst"),
    (["admission"], "--max-connections"),
    (["add-capacity"], "--count"),
]
#: Out of every option's range however it is spelt (and not a number at all, for a whole-number option).
OUT_OF_RANGE = ["-1", "-0.5", "-1e0", "1e12", "2_000_000_000", "nan", "inf", "-inf"]
#: Zero, spelt as operators spell it: out of range everywhere but a drain's deadline.
ZEROS = ["0", "00", "0.0", "-0", "0e0"]


@pytest.mark.parametrize(("words", "option"), NUMBER_OPTIONS)
@pytest.mark.parametrize("typed", OUT_OF_RANGE + ZEROS)
def test_a_number_option_refused_is_repeated_as_typed(
    words: list[str], option: str, typed: str, operator, capsys
) -> None:
    """Found in review: `--rate 0` came back as `--rate: 0.0 is not allowed` — the number argparse made of
    it, not what was typed. Exit 2, the option and the text as typed, before anything is sent."""
    if option == "--deadline" and typed in ZEROS:
        pytest.skip("a deadline of 0 s is in range: force-close at once")
    try:
        status = main(["act", "http://127.0.0.1:9", *words, f"{option}={typed}"])
    except SystemExit as done:  # refused while the command line is read (not a whole number)
        status = done.code
    assert status == 2
    err = capsys.readouterr().err
    assert f"{option}: {typed!r} is not" in err, err


def completed_rollout() -> object:
    """The calm fleet after its own rollout of 2 batches of 4 (abrupt, restarted in 2 s) completed."""
    from tests.actions.conftest import calm_simulation

    simulation = calm_simulation(
        nodes={"count": 8, "capacity_connections": 50_000, "handshakes_per_s": 1500, "restart_s": 2},
        rollout={"enabled": True, "start_at_s": 0, "batch_size": 4, "interval_s": 5, "mode": "abrupt"},
    )
    while simulation.rollout.state.value != "completed":
        simulation.step()
    return simulation


def test_a_halt_or_resume_with_nothing_to_act_on_says_what_the_rollout_did(
    tmp_path: Path, operator, capsys
) -> None:
    """Review: a halt of a completed rollout read "rollout: 'completed' is not allowed; expected a running or
    paused rollout: nothing to halt" — the server's state name, not what happened or what to do. Still bad
    input (422, exit 2: docs/actions.md, "a resume with nothing paused"), in the operator's words."""
    simulation = completed_rollout()
    done = simulation.rollout.status()
    assert (done.batch, done.batches, done.completed_at_s) == (2, 2, 7.0)
    running = start_acting(tmp_path, simulation=simulation)
    start = "start a new one with `stormdeck act URL rollout start`"
    try:
        assert act(running, "rollout", "halt") == 2
        assert capsys.readouterr().out.strip() == (
            "422 bad_input: rollout halt: nothing to halt — the rollout completed at 0:00:07 (batch 2 of 2); "
            + start
        )
        assert act(running, "rollout", "resume") == 2
        assert capsys.readouterr().out.strip() == (
            "422 bad_input: rollout resume: nothing to resume — the rollout completed at 0:00:07 "
            f"(batch 2 of 2); {start}"
        )
        assert running.simulation.rollout.state.value == "completed"
    finally:
        running.server.stop()
        running.audit.close()


def test_a_halt_or_resume_of_no_rollout_says_none_has_started(acting: Acting, operator, capsys) -> None:
    for verb in ("halt", "resume"):
        assert act(acting, "rollout", verb) == 2
        assert capsys.readouterr().out.strip() == (
            f"422 bad_input: rollout {verb}: nothing to {verb} — no rollout has started on this fleet; "
            "start one with `stormdeck act URL rollout start`"
        )


def test_a_rollout_start_sends_the_drain_rate_asked_for(acting: Acting, operator, capsys) -> None:
    """`--drain-rate` is the request's drain_rate_per_s, judged by the guard as asked; without it the
    field is not sent at all (an older server refuses any field it does not know, even null)."""
    words = ["rollout", "start", "--batch-size", "1", "--interval", "30", "--dry-run"]
    act(acting, *words, "--drain-rate", "12.50")
    assert "drain_rate_per_s 12.5/s per node" in capsys.readouterr().out
    act(acting, *words)
    assert "drain_rate_per_s" not in capsys.readouterr().out
    assert acting.simulation.rollout.drain_rate_per_s is None  # dry runs: nothing applied


ROLLOUT_START = ["rollout", "start", "--batch-size", "1", "--interval", "600", "--mode", "abrupt"]


def test_a_halt_of_a_halted_rollout_or_a_resume_of_a_running_one_has_nothing_to_do(
    acting: Acting, operator, capsys
) -> None:
    """Review: `act URL rollout halt` of a rollout already halted read `422 … nothing to halt` and exited 2,
    "bad input". What was asked holds already: nothing to apply, exit 0 (docs/actions.md's exit codes), in
    one line. The server's 422 stands (the API's refusal, audited); the CLI reads the rollout's state."""
    assert act(acting, *ROLLOUT_START, "--typed", "calm-test") == 0
    assert act(acting, "rollout", "resume") == 0  # running: nothing to resume
    said = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(r"rollout already running, at (before )?batch \d of 8: nothing to do", said), said
    assert act(acting, "rollout", "halt") == 0
    capsys.readouterr()
    for _ in range(2):  # halted: nothing to halt, dry run or not
        assert act(acting, "rollout", "halt") == 0
        assert re.fullmatch(
            r"rollout already halted, at (before )?batch \d of 8: nothing to do",
            capsys.readouterr().out.strip(),
        )
    assert act(acting, "rollout", "halt", "--json") == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["nothing_to_do"] is True and answer["status"] == 422, answer
    assert answer["message"].startswith("rollout already halted, at "), answer
    assert act(acting, "rollout", "halt", "--dry-run") == 0
    assert acting.simulation.rollout.state.value == "halted"


def test_a_verdict_that_asks_says_what_to_type_in_the_clis_words(acting: Acting, operator, capsys) -> None:
    """Review: a 409 printed the API's instruction, "repeat the call with confirm.token (and type
    'calm-test' back)" — a CLI user has no token to repeat. It says the options that answer it."""
    assert act(acting, *ROLLOUT_START) == 3  # abrupt: typed, the fleet's name
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("409 rollout_start fleet (") and "needs typed confirmation: " in lines[0], (
        lines
    )
    assert "confirm.token" not in "\n".join(lines) and "repeat the call" not in lines[0], lines
    assert lines[-1] == "needs typed confirmation: run again with --typed calm-test", lines
    assert act(acting, *ROLLOUT_START, "--yes") == 3  # --yes does not answer a typed verdict
    assert (
        capsys.readouterr().out.splitlines()[-1]
        == "needs typed confirmation: run again with --typed calm-test"
    )
    assert acting.simulation.rollout.state.value == "idle"


def test_a_refused_confirmation_says_why_without_the_apis_token() -> None:
    """The second call's 409 (the verdict moved since the token was issued) read "… a fresh confirm_token
    for the request as sent is attached": the reason, and the option to run again with."""
    verdict = judge_rollout_start(
        fleet(8), CAPACITY, RolloutRequest(batch_size=1, interval_s=30, mode="abrupt")
    )
    answer = verdict_answer(verdict, 409, "confirm-refused")
    answer.body["confirm_token"] = "tok"
    answer.body["detail"] = (
        "confirm.token: the verdict changed since it was issued (was confirm, now typed); confirm the new "
        "verdict. Nothing applied; a fresh confirm_token for the request as sent is attached"
    )
    lines = render_answer(answer).splitlines()
    assert lines[0] == (
        "409 the server refused the confirmation — the verdict changed since it was issued (was confirm, now "
        "typed); nothing applied"
    ), lines[0]
    assert "confirm_token" not in "\n".join(lines)
    assert lines[-1].startswith("needs typed confirmation: run again with --typed "), lines[-1]


def said_on_stderr(argv: list[str], capsys) -> str:
    """What `stormdeck ARGV` says on stderr, refused with exit 2 (by argparse or by the CLI's checks)."""
    try:
        status = main(argv)
    except SystemExit as done:
        status = done.code
    err = capsys.readouterr().err
    assert status == 2, err
    return err


DRAIN_WITHOUT = {
    "--rate": ["drain", "gw-001", "--deadline", "600", "--hint", "1000:30000"],
    "--deadline": ["drain", "gw-001", "--rate", "10", "--hint", "1000:30000"],
}
START = ["rollout", "start", "--batch-size", "1", "--interval", "30"]


@pytest.mark.parametrize(
    ("words", "option", "whole"),
    [
        (DRAIN_WITHOUT["--rate"], "--rate", False),
        (DRAIN_WITHOUT["--deadline"], "--deadline", False),
        (["rollout", "start", "--interval", "30"], "--batch-size", True),
        (["rollout", "start", "--batch-size", "1"], "--interval", False),
        (START, "--pause-cpu", False),
        (START, "--drain-rate", False),
        (["add-capacity"], "--count", True),
    ],
)
def test_a_word_for_a_number_is_refused_as_a_number_out_of_range_is(
    words: list[str], option: str, whole: bool, operator, capsys
) -> None:
    """Review: `--rate abc` printed the whole usage and "--rate: 'abc' is not a number; expected closes per
    second per node, in (0, 1000000000]; required" (its --help), where `--rate -1` printed one line, the
    request model's range. A word says the same line, "is not a number" for "is not allowed"."""
    url = "http://127.0.0.1:9"  # nothing answers: both are refused before anything is sent
    out_of_range = said_on_stderr(["act", url, *words, f"{option}=-1"], capsys)
    word = said_on_stderr(["act", url, *words, f"{option}=abc"], capsys)
    kind = "a whole number" if whole else "a number"
    assert out_of_range.startswith(f"stormdeck: {option}: '-1' is not allowed; expected "), out_of_range
    assert word == out_of_range.replace("'-1' is not allowed", f"'abc' is not {kind}"), word
