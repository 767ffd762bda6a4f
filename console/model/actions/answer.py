"""The server's answer to an action, read for the dialogs: its outcome, its verdict's checks as shown, what
would pass when a guard blocks, and the forecast with and without the action."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from console.client.actions import ActionAnswer, Reply
from console.model.actions.drain import drain_rate_hint
from console.model.actions.rollout import batch_size_hints, pacing_admission_hint, pacing_drain_rate_hint
from console.protocol import Check, Verdict, VerdictLevel


class Outcome(StrEnum):
    APPLIED = "applied"
    DRY_RUN = "dry_run"
    NEEDS_CONFIRMATION = "needs_confirmation"
    BLOCKED = "blocked"
    TYPED_MISMATCH = "typed_mismatch"
    REFUSED = "refused"  # bad input, a wrong role, a read-only backend, a transport failure


@dataclass(frozen=True)
class ActionReading:
    """What the console makes of the server's answer: the outcome, the message, the verdict."""

    outcome: Outcome
    status: int
    message: str
    verdict: Verdict | None = None
    field_name: str | None = None
    overridden: bool = False  # a blocked action an admin forced (ActionResult.overridden)
    audit_seq: int | None = None  # the server's audit record of the attempt
    # An admission change the fleet refused for nodes that do not answer their admin API (its problem's
    # `nodes_down`), and the nodes of the change that would take it (`nodes_answering`).
    nodes_down: tuple[str, ...] = ()
    nodes_answering: tuple[str, ...] = ()

    @property
    def forbidden(self) -> bool:
        return self.status in (401, 403)

    @property
    def refused_input(self) -> bool:
        """The server refused the values (422: out of its range, or the fleet refused them): the form's
        business, not a verdict's."""
        return self.outcome is Outcome.REFUSED and self.status == 422 and self.verdict is None

    @property
    def nodes_refused(self) -> bool:
        """The fleet refused the values for nodes that do not answer: the form's business too (its values
        kept, the refusal in it), whichever field it names."""
        return self.refused_input and bool(self.nodes_down)


_OUTCOMES = {
    Reply.APPLIED: Outcome.APPLIED,
    Reply.DRY_RUN: Outcome.DRY_RUN,
    Reply.NEEDS_CONFIRMATION: Outcome.NEEDS_CONFIRMATION,
    Reply.BLOCKED: Outcome.BLOCKED,
    Reply.BAD_INPUT: Outcome.REFUSED,
    Reply.DENIED: Outcome.REFUSED,
}


def read_answer(answer: ActionAnswer) -> ActionReading:
    """The fleet API's answer, classified once by the client (`console.client.actions`), read for the
    dialogs: the verdict parsed, its confirm_token attached, a typed name the server refused told apart."""
    body = answer.body
    raw_verdict = answer.verdict
    verdict = Verdict.model_validate(raw_verdict) if raw_verdict is not None else None
    if verdict is not None and verdict.confirm_token is None and body.get("confirm_token"):
        verdict = verdict.model_copy(update={"confirm_token": body["confirm_token"]})
    message = str(body.get("message") or body.get("detail") or body.get("title") or f"HTTP {answer.status}")
    outcome = _OUTCOMES[answer.reply]
    if answer.reply is Reply.BAD_INPUT and answer.problem_type == "typed-mismatch":
        outcome = Outcome.TYPED_MISMATCH
    seq = body.get("audit_seq")
    return ActionReading(
        outcome,
        answer.status,
        message,
        verdict,
        body.get("field"),
        overridden=bool(body.get("overridden")),
        audit_seq=seq if isinstance(seq, int) else None,
        nodes_down=_node_ids(body.get("nodes_down")),
        nodes_answering=_node_ids(body.get("nodes_answering")),
    )


def _node_ids(listed: object) -> tuple[str, ...]:
    return tuple(str(node_id) for node_id in listed) if isinstance(listed, list) else ()


#: What the fleet API's 409 tells its caller to do (console.server.desk): repeat the request with the token,
#: "; repeat the call with confirm.token (and type 'gw-010' back)" — an API caller's next step. The console's
#: dialog and the CLI each say it in their own terms, so they read the 409 without it.
_API_NEXT_STEP = re.compile(r"; repeat the call with confirm\.token \(and .*\)$")


def confirmation_asked(server_said: str) -> str:
    """A 409 confirmation-required's words as an operator reads them: what needs confirming and why,
    without the API caller's instruction, and "needs confirm confirmation" said once."""
    said = _API_NEXT_STEP.sub("", server_said)
    return said.replace("needs confirm confirmation", "needs confirmation")


def confirmation_refused(server_said: str) -> str:
    """Why the server refused a confirmation token just sent (console.server.desk: "confirm.token: the
    verdict changed since it was issued (was typed, now typed; newly failing: …); confirm the new verdict.
    Nothing applied; a fresh confirm_token … is attached"): the reason alone, without the instructions
    meant for an API caller. Worded otherwise, the server's message is returned whole."""
    reason = server_said.removeprefix("confirm.token: ").split(". Nothing applied", 1)[0]
    return reason.removesuffix("; confirm the new verdict")


#: A verdict's notes of what the applied action does next: said with "applied" as well as in the dialog, since
#: an ok verdict opens none — the resume's "batch 2 starts in 47 s" (`next_batch`) went unseen, the toast a
#: plain "applied" (reviewer).
SAID_WHEN_APPLIED = frozenset({"next_batch"})


def said_when_applied(verdict: Verdict | None) -> str:
    """What the verdict says the applied action does next ("batch 2 starts in 47 s (…)"); "" for nothing."""
    if verdict is None:
        return ""
    return "; ".join(check.why for check in verdict.checks if check.name in SAID_WHEN_APPLIED)


def check_mark(check: Check) -> str:
    """pass; FAIL for a check that raises the verdict's level; note for one that only warns (its level is
    ok): 'FAIL' under an 'OK' verdict read as a contradiction."""
    if check.ok:
        return "pass"
    return "note" if check.level in (None, VerdictLevel.OK) else "FAIL"


def what_would_pass(verdict: Verdict) -> list[str]:
    """For a blocked or typed verdict: the limits of the failing checks that set its level, and the drain
    rate or the rollout batch to type when one is known (a batch in place of the limits it passes), and the
    admission rate or the drain rate a rollout's batch drain needs."""
    hints = []
    replaced, batch_hint = batch_size_hints(verdict)
    for check in verdict.checks:
        if check.ok or check.level is not verdict.level or check.name in replaced:
            continue
        hints.append(f"{check.name} {limit_text(check)} (now {_fmt(check.value)})")
    if batch_hint:
        hints.append(batch_hint)
    admission_hint = pacing_admission_hint(verdict.projections)
    if admission_hint:
        hints.append(admission_hint)
    slower_hint = pacing_drain_rate_hint(verdict.projections)
    if slower_hint:
        hints.append(slower_hint)
    raising = [c.name for c in verdict.checks if not c.ok and c.level not in (None, VerdictLevel.OK)]
    rate_hint = drain_rate_hint(verdict.projections, raising)
    if rate_hint:
        hints.append(rate_hint)
    return hints


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return "—" if value is None else str(value)


def format_value(value: object) -> str:
    return _fmt(value)


def limit_text(check: Check) -> str:
    """A check's limit as shown: a number with its bound (≤, ≥), a limit in words as it is ("not in the
    batch under way" read "≤ not in the batch under way"), none as —."""
    if check.limit is None or isinstance(check.limit, str):
        return _fmt(check.limit)
    return f"{'≤' if check.bound == 'max' else '≥'} {_fmt(check.limit)}"


def typed_matches(verdict: Verdict, typed: str, fallback: str | None) -> bool:
    expected = verdict.typed_expected or fallback
    return expected is not None and typed.strip() == expected


def forecast_series(forecast: Mapping[str, Any] | None) -> list[tuple[str, list[float], list[float]]]:
    """(label, without the action, with it) for each forecast series the server sent (console.sim.forecast)."""
    if not forecast:
        return []
    without, acted = forecast.get("without_action") or {}, forecast.get("with_action") or {}
    rows = []
    for key, label in (
        ("connections", "connections"),
        ("cpu_max_pct_series", "max CPU %"),
        ("attempts_per_s", "attempts/s"),
    ):
        a, b = without.get(key), acted.get(key)
        if isinstance(a, list) and isinstance(b, list) and a and b:
            rows.append((label, [float(x) for x in a], [float(x) for x in b]))
    return rows
