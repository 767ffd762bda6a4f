"""A fake fleet API write side, as issue #4 specifies it (the `actions` branch serves the real one).

Verdicts come from the real guards (`judge_drain`, `judge_add_capacity`, `judge_rollout_start`,
`judge_rollout_halt`, `judge_rollout_resume`) over fleets built for them, so
the dialogs show what a server says (every check, every projection, the suggested rate). A drain's level
follows its rate, each level one request away: ≤ 120 closes/s ok, up to ~229 confirm (the hint window is
too narrow for the rate), ≤ 300 typed (the busiest survivor's CPU passes the pause line), above that
blocked (the pacing budget; from ~334 the abort line too).
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import httpx

from console.client.actions import ActionClient
from console.errors import InputError
from console.guards import (
    FleetCapacity,
    Thresholds,
    judge_drain,
    judge_rollout_halt,
    judge_rollout_resume,
    judge_rollout_start,
)
from console.guards.config import given_thresholds
from console.guards.verdict import verdict
from console.protocol import (
    DrainRequest,
    FleetSnapshot,
    RolloutRequest,
    RolloutState,
    RolloutStatus,
    ThresholdsRecord,
    Verdict,
    VerdictLevel,
)

SAFE_RATE = 120.0
#: Nodes in the scenes' fleet (console.ui.scenes).
FLEET_NODES = 48
HINT_MS = (1000, 16000)
#: The thresholds this fleet judges with, serves (GET /v1/thresholds) and gives the console as its own: a
#: hint window of 125 ms per close/s (the hint_window_ms check), so 120 closes/s needs 15 s — the 16 s hint the
#: planner offers, and the longest this fleet gives (GROWABLE): the console's re-derived window passes up to
#: it, not beyond.
THRESHOLDS = Thresholds(hint_spread_per_s_max=8.0)


def drain_fleet() -> FleetSnapshot:
    """The scenes' 48 nodes as this fleet judges a drain: each at 61.5 % CPU, admitting 52.5
    of its 60 handshakes/s (the survivors' spare admission: 47 × 60 − 48 × 52.5 = 300/s, the pacing
    budget), 20,000 connections of 50,000 (59 % headroom once one leaves). At 1.5 CPU points a handshake/s
    (GROWABLE), a close per second adds 0.048 points to the busiest survivor (`reconnect_skew` 1.5 over 47):
    the line 5 points under the pause line at ~125 closes/s, the pause line at ~229, the abort line at ~334.
    A node it does not hold is bad input, as on the server."""
    from tests.fleet_builders import node, snapshot

    members = [
        node(f"gw-{i:04d}", cpu_pct=61.5, connections=20_000, accepts_per_s=52.5) for i in range(FLEET_NODES)
    ]
    return snapshot(members, connections=20_000 * FLEET_NODES, accepts_per_s=52.5 * FLEET_NODES)


def drain_verdict(node_id: str, rate: float, hint_ms: tuple[int, int], deadline_s: float = 600.0) -> Verdict:
    """The real drain guard's verdict (raises `InputError`, answered as the server answers bad input)."""
    request = DrainRequest(rate_per_s=rate, deadline_s=deadline_s, hint_ms=hint_ms)
    return judge_drain(drain_fleet(), GROWABLE, node_id, request, THRESHOLDS)


def rollout_fleet(state: str) -> FleetSnapshot:
    """`drain_fleet` with its rollout in `state`: the fake keeps no rollout of its own, so each request is
    judged in the state the console let it be sent from (a start idle, a halt running, a resume paused)."""
    return drain_fleet().model_copy(update={"rollout": RolloutStatus(state=RolloutState(state))})


#: The rollout state each request is judged in, unless the fake is told its rollout is idle.
ROLLOUT_STATE_FOR = {"rollout": "idle", "halt": "running", "resume": "paused"}


def rollout_verdict(kind: str, body: dict[str, Any], state: str) -> Verdict:
    """The real rollout guard's verdict for a start, halt or resume (raises `InputError`, answered as the
    server answers bad input: a batch larger than the fleet, nothing to halt)."""
    fleet = rollout_fleet(state)
    if kind == "halt":
        return judge_rollout_halt(fleet)
    if kind == "resume":
        return judge_rollout_resume(fleet, THRESHOLDS)
    request = RolloutRequest(**{k: v for k, v in body.items() if k not in ("dry_run", "confirm")})
    return judge_rollout_start(fleet, GROWABLE, request, THRESHOLDS)


def _growable() -> FleetCapacity:
    from tests.guards.fleets import CAPACITY

    # Its hints reach 16 s: the planner's window for 120 closes/s at most (THRESHOLDS), the safe rate — the
    # rate the drain guard suggests, its CPU margin line being higher (`drain_fleet`). A node completes 60
    # handshakes/s at 1.5 CPU points each (90 % at its ceiling): reconnects, not connections, burn CPU.
    return dataclasses.replace(
        CAPACITY,
        handshakes_per_s=60.0,
        cpu_pct_per_handshake_per_s=1.5,
        max_nodes=112,
        provisioning_s=240.0,
        hint_max_ms=HINT_MS[1],
    )


GROWABLE = _growable()


def capacity_verdict(count: int) -> Verdict:
    """The real add-capacity guard over the thundering-herd drill's 48 nodes mid-storm (hot, 30 % headroom),
    with room for 64 more, each ready after 240 s (outage seed: 4 minutes)."""
    from console.guards import judge_add_capacity
    from console.protocol import CapacityRequest
    from tests.guards.fleets import fleet

    return judge_add_capacity(
        fleet(48, cpu_pct=82.0, connections=35_000), GROWABLE, CapacityRequest(count=count)
    )


def forecast(rate: float) -> dict[str, Any]:
    """60 s with and without the drain: deterministic curves, the drain's reconnects as a bump."""
    seconds = range(60)
    base = [955_000 - 10 * s for s in seconds]
    acted = [c - int(rate * min(s, 30) * 0.2) for s, c in zip(seconds, base, strict=True)]
    cpu = [45 + 2 * math.sin(s / 6) for s in seconds]
    cpu_acted = [c + rate / 20 * (1 - math.exp(-s / 10)) for s, c in zip(seconds, cpu, strict=True)]
    attempts = [530.0 + 5 * math.sin(s / 4) for s in seconds]
    attempts_acted = [a + rate * 0.8 * (1 - math.exp(-s / 8)) for s, a in zip(seconds, attempts, strict=True)]

    def run(conns: list[int], cpus: list[float], tries: list[float]) -> dict[str, Any]:
        return {
            "connections_min": min(conns),
            "connections_end": conns[-1],
            "cpu_max_pct": max(cpus),
            "attempts_per_s_peak": max(tries),
            "connections": conns,
            "cpu_max_pct_series": cpus,
            "attempts_per_s": tries,
        }

    return {
        "horizon_s": 60,
        "tick_ms": 10.0,
        "model": "simulator fork",
        "compute_ms": 210.0,
        "without_action": run(base, cpu, attempts),
        "with_action": run(acted, cpu_acted, attempts_acted),
    }


class FakeFleetApi:
    """Records what the console sends; answers as the fleet API v1 would."""

    def __init__(
        self,
        role: str = "operator",
        offers_plan: bool = True,
        rollout_idle: bool = False,
        verdict_moves: bool = False,
        offers_thresholds: bool = True,
        thresholds: Thresholds = THRESHOLDS,
        down: tuple[str, ...] = (),
    ) -> None:
        self.role = role
        # Nodes that do not answer their admin API: an admission change covering one is refused whole, in
        # the controller's words (console.gateway.acting.NodesNotAnswering), dry run or not.
        self.down = down
        # GET /v1/thresholds: what a server serves since it says its lines; False: an older one (404).
        self.offers_thresholds = offers_thresholds
        self.thresholds = thresholds
        # The fleet moves between the verdict and its confirmation: the first token sent back is refused
        # as the server refuses it (console.server.desk: 409 confirm-refused, a fresh token attached).
        self.verdict_moves = verdict_moves
        self.plan_rate = SAFE_RATE  # what the drain planner offers (0: no rate is safe)
        self.plan_limited_by = "drain_pacing"  # what set it (`DrainPlan.limited_by`)
        self.plan_cpu_margin_pct = 0.0
        self.offers_plan = offers_plan
        self.capacity = GROWABLE  # GET /v1/capacity's record
        self.rollout_idle = rollout_idle
        self.sent: list[tuple[str, str, dict[str, Any]]] = []
        self.audit: list[dict[str, Any]] = []
        self.applied: list[tuple[str, dict[str, Any]]] = []
        self._tokens: dict[str, int] = {}

    def client(self) -> ActionClient:
        return ActionClient("http://fleet.test", "token", transport=httpx.MockTransport(self.handle))

    def handle(self, request: httpx.Request) -> httpx.Response:
        path, method = request.url.path, request.method
        if method == "GET" and path.endswith("/drain-plan"):
            if not self.offers_plan:
                return _problem(404, "Not Found", "no drain planner here")
            node_id = path.split("/")[3]
            return httpx.Response(
                200,
                json={
                    "nodes": [node_id],
                    "rate_per_s": self.plan_rate,
                    "duration_s": 170.0,
                    "deadline_s": 600.0,
                    "hint_ms": list(HINT_MS),
                    "force_closed": 0,
                    "limited_by": self.plan_limited_by,
                    "cpu_margin_pct": self.plan_cpu_margin_pct,
                },
            )
        if method == "GET" and path == "/v1/capacity":
            if not self.offers_plan:  # as a read-only backend answers: no capacity record
                return _problem(409, "Conflict", "served read-only: no capacity record to show")
            return httpx.Response(200, json=dataclasses.asdict(self.capacity))
        if method == "GET" and path == "/v1/thresholds":
            if not self.offers_thresholds:
                return _problem(404, "Not Found", "no route GET /v1/thresholds on this server")
            record = ThresholdsRecord(thresholds=given_thresholds(self.thresholds).report())
            return httpx.Response(200, json=record.model_dump(mode="json"))
        if method == "GET" and path == "/v1/audit":
            return httpx.Response(200, json={"records": self.audit, "total": len(self.audit)})
        body = json.loads(request.content or b"{}")
        self.sent.append((method, path, body))
        status, answer = self._act(path, body)
        self.audit.append(
            {
                "time_unix_s": 1_800_000_000.0 + len(self.audit),
                "actor": "ops",
                "action": path.rsplit("/", 1)[-1],
                "target": path.split("/")[3] if path.startswith("/v1/nodes/") else None,
                "status": status,
                "outcome": answer.get("outcome", "applied"),
                "verdict": {"level": answer["verdict"]["level"]} if "verdict" in answer else None,
                "detail": answer.get("detail") or answer.get("message"),
            }
        )
        media = "application/problem+json" if status >= 400 else "application/json"
        return httpx.Response(status, content=json.dumps(answer), headers={"content-type": media})

    def _act(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.role == "viewer":
            return 403, _problem_body(403, "Forbidden", "this token has role viewer; actions need operator")
        kind = "drain" if path.endswith("/drain") else path.rsplit("/", 1)[-1]
        node_id = path.split("/")[3] if path.startswith("/v1/nodes/") else None
        if kind in ROLLOUT_STATE_FOR:
            state = "idle" if self.rollout_idle else ROLLOUT_STATE_FOR[kind]
            try:  # a batch larger than the nodes in rotation, nothing to halt: bounds only the server knows
                judged = rollout_verdict(kind, body, state)
            except InputError as error:  # as the server: bad input, no verdict
                answer = _problem_body(422, "Bad input", str(error))
                answer.update(type="urn:stormdeck:problem:bad-input", field=error.field)
                return 422, answer
        elif kind == "drain":
            rate = float(body["rate_per_s"])
            try:
                judged = drain_verdict(
                    node_id or "", rate, tuple(body["hint_ms"]), float(body.get("deadline_s", 600.0))
                )
            except InputError as error:  # as the server: bad input, no verdict
                answer = _problem_body(422, "Bad input", str(error))
                answer.update(type="urn:stormdeck:problem:bad-input", field=error.field)
                return 422, answer
            judged = judged.model_copy(update={"forecast": forecast(rate)})
        elif path == "/v1/capacity":
            kind = "add_capacity"
            judged = capacity_verdict(int(body["count"]))
        else:  # undrain, admission: not judged here yet
            refused = self._down_refusal(body) if kind == "admission" else None
            if refused is not None:
                return 422, refused
            judged = verdict(kind, [], {})
        if body.get("dry_run"):
            return 200, _result(kind, node_id, judged, applied=False, dry_run=True)
        if judged.level is VerdictLevel.BLOCKED:  # named as the server names it (console.server.desk)
            failed = [c.name for c in judged.checks if not c.ok and c.level is VerdictLevel.BLOCKED]
            answer = _problem_body(
                422, "Blocked by a guard", f"{kind} is blocked: failed {', '.join(failed)}"
            )
            answer.update(type="urn:stormdeck:problem:blocked", field=failed[0])
            answer["verdict"] = judged.model_dump(mode="json")
            return 422, answer
        if judged.level in (VerdictLevel.CONFIRM, VerdictLevel.TYPED):
            confirm = body.get("confirm")
            if confirm is not None and self.verdict_moves and confirm.get("token") in self._tokens:
                self.verdict_moves = False
                del self._tokens[confirm["token"]]
                token = f"tok-{len(self._tokens) + 2}"
                self._tokens[token] = 1
                detail = (
                    f"confirm.token: the verdict changed since it was issued (was {judged.level.value}, "
                    f"now {judged.level.value}; newly failing: headroom_after_pct); confirm the new "
                    "verdict. Nothing applied; a fresh confirm_token for the request as sent is attached"
                )
                answer = _problem_body(409, "Confirmation refused", detail)
                answer.update(type="urn:stormdeck:problem:confirm-refused", field="confirm.token")
                answer["verdict"] = judged.model_copy(update={"confirm_token": token}).model_dump(mode="json")
                answer["confirm_token"] = token
                return 409, answer
            if confirm is None or confirm.get("token") not in self._tokens:
                token = f"tok-{len(self._tokens) + 1}"
                self._tokens[token] = 1
                answer = _problem_body(409, "Confirmation required", f"{kind} needs {judged.level.value}")
                answer.update(type="urn:stormdeck:problem:confirmation-required", field="confirm")
                answer["verdict"] = judged.model_copy(update={"confirm_token": token}).model_dump(mode="json")
                answer["confirm_token"] = token
                return 409, answer
            if judged.level is VerdictLevel.TYPED and confirm.get("typed") != judged.typed_expected:
                answer = _problem_body(422, "Confirmation does not match", "confirm.typed does not match")
                answer.update(type="urn:stormdeck:problem:typed-mismatch", field="confirm.typed")
                answer["verdict"] = judged.model_dump(mode="json")
                return 422, answer
            del self._tokens[confirm["token"]]
        self.applied.append((kind, body))
        return 202, _result(kind, node_id, judged, applied=True, dry_run=False)

    def _down_refusal(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The controller's refusal of an admission change covering nodes that do not answer."""
        from console.gateway.acting import NodesNotAnswering

        named = body.get("nodes")
        targets = named if named is not None else [f"gw-{i:04d}" for i in range(FLEET_NODES)]
        silent = {node_id: "down" for node_id in targets if node_id in self.down}
        if not silent:
            return None
        answering = [node_id for node_id in targets if node_id not in silent]
        error = NodesNotAnswering(silent, answering, fleet_wide=named is None)
        answer = _problem_body(422, "Refused by the fleet", f"{error}; nothing applied")
        answer.update(type="urn:stormdeck:problem:refused-by-fleet", field=error.field)
        return answer | error.problem_members()


def _result(kind: str, node_id: str | None, judged: Verdict, *, applied: bool, dry_run: bool) -> dict:
    message = f"dry run: {judged.level.value}; nothing applied" if dry_run else f"{kind} {node_id}: applied"
    return {
        "action": kind,
        "node": node_id,
        "applied": applied,
        "dry_run": dry_run,
        "verdict": judged.model_dump(mode="json"),
        "message": message,
    }


def _problem_body(status: int, title: str, detail: str) -> dict[str, Any]:
    return {"type": "about:blank", "title": title, "status": status, "detail": detail}


def _problem(status: int, title: str, detail: str) -> httpx.Response:
    return httpx.Response(status, json=_problem_body(status, title, detail))
