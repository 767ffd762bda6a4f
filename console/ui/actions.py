"""The console's side of a guarded action, from the key press to the outcome (issue #4, section 4).

    key → disabled? (say why) → form (pre-filled) → dry run? (verdict, back to the form)
        → send → 409: verdict dialog, confirm or type the name → send again with the token
               → 422 blocked: verdict dialog with what would pass → outcome: notification + audit panel

The server is the authority: the console never judges, it shows the server's verdict and asks what the
level demands. The screens only return what the operator chose; this class sends it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from console.client.actions import ActionClient
from console.client.admin import AdminClient, ApiError
from console.errors import StormdeckError
from console.guards import FleetCapacity, Thresholds
from console.model.actions.admission import NODES_SAID, admission_prefill, unchanged_admission
from console.model.actions.answer import (
    ActionReading,
    Outcome,
    confirmation_refused,
    read_answer,
    said_when_applied,
)
from console.model.actions.capacity import add_capacity_prefill
from console.model.actions.drain import (
    DrainHintRule,
    drain_prefill_from_plan,
    fallback_drain_prefill,
    local_drain_prefill,
)
from console.model.actions.form import ActionCall, Prefill
from console.model.actions.refusals import (
    REFUSED_403,
    actions_disabled_reason,
    cannot_add_capacity,
    pointless,
)
from console.model.actions.rollout import rollout_prefill
from console.model.actions.thresholds import FormThresholds, own_thresholds, servers_thresholds
from console.model.big_changes import answering_offer, big_changes, changed_since_filled, refilled
from console.protocol import ActionKind, AdmissionInForce, CapacityRecord
from console.record.records import ActionRecord, Confirmation, without_tokens
from console.ui.screens.action_form import ActionForm
from console.ui.screens.audit import REFRESH_S, AuditScreen
from console.ui.screens.change_check import ChangeCheck
from console.ui.screens.verdict_dialog import VerdictDialog

if TYPE_CHECKING:
    from console.ui.app import ConsoleApp

AUDIT_LIMIT = 200


@dataclass(frozen=True)
class SessionOutcome:
    """What became of one attempt in this session (the audit panel falls back to these)."""

    time_unix_s: float
    call: ActionCall
    answer: ActionReading

    def as_record(self, actor: str) -> dict[str, object]:
        verdict = self.answer.verdict
        return {
            "time_unix_s": self.time_unix_s,
            "actor": actor,
            "action": self.call.kind.value,
            "target": self.call.node_id,
            "verdict": {"level": verdict.level.value} if verdict else None,
            "outcome": self.answer.outcome.value,
            "status": self.answer.status,
            "detail": self.answer.message,
        }


#: How a recording names what became of an attempt (console.record.records.ActionRecord.outcome).
_RECORDED_OUTCOMES = {
    Outcome.APPLIED: "applied",
    Outcome.DRY_RUN: "dry_run",
    Outcome.NEEDS_CONFIRMATION: "needs_confirmation",
    Outcome.BLOCKED: "blocked",
    Outcome.TYPED_MISMATCH: "failed",
    Outcome.REFUSED: "failed",
}

#: Where `attach --record` takes the console's action attempts and confirmations (docs/recording.md).
ActionRecorder = Callable[[ActionRecord | Confirmation], None]


def recorded_action(call: ActionCall, reading: ActionReading, time_s: float, actor: str) -> ActionRecord:
    """One attempt as a recording holds it; confirmation tokens are never recorded."""
    record = ActionRecord(
        time_s=time_s,
        actor=actor,
        action=call.kind.value,
        target=call.node_id,
        request=dict(call.body),
        verdict=reading.verdict,
        outcome=_RECORDED_OUTCOMES[reading.outcome],  # type: ignore[arg-type]
        status=reading.status or None,
        detail=reading.message,
        audit_seq=reading.audit_seq,
    )
    return without_tokens(record)


_CAPACITY_FIELDS = {f.name for f in fields(FleetCapacity)}
#: The forms whose starting values are computed with thresholds (admission's are the fleet's settings).
_JUDGED_FORMS = frozenset({ActionKind.DRAIN, ActionKind.ROLLOUT_START, ActionKind.ADD_CAPACITY})


def asked_again(server_said: str) -> str:
    """Why a confirmation dialog is back, from the server's refusal of the token just sent: its reason
    (`confirmation_refused`), without the instructions meant for an API caller."""
    reason = confirmation_refused(server_said)
    return (
        f"▲ asked again, nothing applied: the server refused the confirmation — {reason}. "
        "Read the new verdict below before confirming it."
    )


def _offer_ask(offered: ActionCall, dry_run: bool) -> str:
    """The question under the answering nodes offered (`answering_offer`)."""
    nodes = list(offered.body.get("nodes") or [])
    whom = (
        f"the {len(nodes):,} answering nodes"
        if len(nodes) > NODES_SAID
        else f"{', '.join(nodes)} (answering)"
    )
    act = "dry-run it on" if dry_run else "apply it to"
    return f"Enter or y: {act} {whom} — the server still judges it · Esc or n: back to the form"


class ConsoleActions:
    def __init__(
        self,
        app: ConsoleApp,
        admin: AdminClient | None,
        read_only: bool,
        capacity: FleetCapacity | None,
        thresholds: Thresholds,
        recorder: ActionRecorder | None = None,
    ) -> None:
        self.app = app
        # Reads need an AdminClient; acting needs the client with the write side (console.client.actions).
        self.admin = admin if isinstance(admin, ActionClient) else None
        self.read_only = read_only
        self.capacity = capacity
        self.thresholds = thresholds  # this console's own: the forms use the server's where it says them
        self.refused: str | None = None  # the server's 403, once seen: a viewer token
        self.outcomes: list[SessionOutcome] = []
        self.recorder = recorder

    @property
    def disabled_reason(self) -> str | None:
        app = self.app
        return actions_disabled_reason(
            self.read_only, self.admin is not None, self.refused, app.model.role, app.drill_over()
        )

    # --- the flow ---------------------------------------------------------------------------------------

    async def run(self, kind: ActionKind, node_id: str | None) -> None:
        app = self.app
        reason = self.disabled_reason
        if reason is not None:
            app.notify(f"{kind.title}: {reason}", title="actions disabled", severity="warning")
            return
        if kind.needs_node and not node_id:
            app.notify(f"{kind.title}: put the cursor on a node first", severity="warning")
            return
        frame = app.model.frame
        rollout = frame.rollout if frame else None
        known_answer = pointless(kind, app.model.nodes.get(node_id or ""), rollout, app.clock_face.text)
        if kind is ActionKind.ADD_CAPACITY and frame is not None:
            known_answer = cannot_add_capacity(frame.max_nodes, list(app.model.nodes.values()))
        if known_answer is not None:
            app.notify(known_answer)
            return
        lines = await self.form_thresholds() if kind in _JUDGED_FORMS else None
        prefill = await self.prefill(kind, node_id, lines)
        suggested = prefill  # (`prefill` becomes what was typed, once the form has been sent)
        refusal: ActionReading | None = None
        focus_id: str | None = None
        hint_rule = (
            await self._drain_hint_rule(lines) if lines is not None and kind is ActionKind.DRAIN else None
        )
        hint_set: tuple[str, str] | None = None  # the hint window the console put in the form last
        hint_said = ""  # and why, where it re-derived it for the rate
        while True:
            target = node_id if kind.needs_node else None
            form = ActionForm(kind, target, prefill, refusal, focus_id, hint_rule, hint_set, hint_said)
            submission = await app.push_screen_wait(form)
            hint_set, hint_said = form.hint_set, form.hint_said
            if submission is None:
                return
            # A dry run comes back to what was typed, focused where the operator was: on the first field
            # instead, the next keys edited a field other than the one being tuned.
            prefill = replace(prefill, values=form.values())  # (its checks kept: they read the fleet now)
            focus_id = form.left_from
            call = submission.call
            if not submission.dry_run:
                frame = app.model.frame
                changes = big_changes(call, AdmissionInForce.of(frame) if frame else None, suggested)
                now = await self.prefill(kind, node_id) if kind is ActionKind.ADMISSION else suggested
                moved = changed_since_filled(kind, prefill.values, suggested, now)
                changes = moved + [c for c in changes if c.label not in {m.label for m in moved}]
                if changes and not await app.push_screen_wait(ChangeCheck(call.describe(), changes)):
                    refusal = None  # back to the form, what was typed kept, nothing sent
                    if moved:  # ... but the fleet's new values where nothing was typed over the old
                        prefill, suggested = refilled(prefill.values, suggested, now), now
                    continue
            answer = await self.send(call.with_controls(dry_run=True) if submission.dry_run else call)
            frame = app.model.frame  # (what the answering nodes run now: the offer's changes are against it)
            offer = answering_offer(call, answer, AdmissionInForce.of(frame) if frame else None, suggested)
            if offer is not None and await app.push_screen_wait(
                ChangeCheck(
                    call.describe(),
                    offer[1],
                    headline=f"▲ {call.describe()}: the fleet refused it — {answer.message}",
                    ask=_offer_ask(offer[0], submission.dry_run),
                )
            ):
                self._remember(call, answer)  # (the refused attempt: audited by the server too)
                call = offer[0]
                answer = await self.send(call.with_controls(dry_run=True) if submission.dry_run else call)
            # Back to the form, what was typed kept, the server's words in it: a refusal naming a field of
            # it, or the fleet's for nodes that do not answer (their offer declined) — it closed, and only
            # "admission: refused" was said.
            named = answer.field_name in form.field_names() or answer.nodes_refused
            refusal = answer if answer.refused_input and named else None
            if refusal is not None:  # back to the form, what was typed kept, the server's words in it
                self._remember(call, answer)
                app.run_worker(self.refresh_audit(), group="audit", exclusive=True, exit_on_error=False)
                continue
            if not submission.dry_run and answer.outcome is Outcome.BLOCKED and answer.verdict is not None:
                # Back to the form as it was sent: the dialog says what would pass, and typing it is the
                # operator's next move (Esc left them on the fleet, and `d` again re-planned over it).
                self.finish(call, answer, announce=False)  # its toast waits for the dialog (see settle)
                await app.push_screen_wait(
                    VerdictDialog(
                        call.describe(),
                        answer.verdict,
                        app.palette,
                        message=answer.message,
                        back_to_form=True,
                    )
                )
                self.announce(call, answer)
                continue
            if not submission.dry_run:
                break
            if answer.outcome is not Outcome.DRY_RUN or answer.verdict is None:
                self.finish(call, answer)
                return
            await app.push_screen_wait(
                VerdictDialog(
                    call.describe(),
                    answer.verdict,
                    app.palette,
                    dry_run=True,
                    message=answer.message,
                    back_to_form=True,
                )
            )
        await self.settle(call, answer)

    async def settle(self, call: ActionCall, answer: ActionReading) -> None:
        """Ask as the level demands until the server applies, blocks or refuses, or the operator cancels."""
        app = self.app
        token: str | None = None
        typed_error = ""
        confirmed_once = False  # a 409 after a confirmation was sent is the server asking again
        while answer.outcome in (Outcome.NEEDS_CONFIRMATION, Outcome.TYPED_MISMATCH) and answer.verdict:
            verdict = answer.verdict
            if answer.outcome is Outcome.TYPED_MISMATCH:
                typed_error = f"✖ the server refused the name: {answer.message}"
                verdict = verdict.model_copy(update={"confirm_token": token})
            token = verdict.confirm_token
            message = answer.message
            # The server's first 409 tells an API caller to repeat the call with confirm.token: the dialog
            # asks for the confirmation itself, and its checks say why. A 409 after a confirmation was sent
            # refused it (the verdict moved): an identical dialog with new numbers and no word read as the
            # console ignoring the operator, so that one says why it asks again.
            if answer.outcome is Outcome.NEEDS_CONFIRMATION:
                message = asked_again(answer.message) if confirmed_once else ""
            self._record(recorded_action(call, answer, self._fleet_time_s(), self._actor()))
            confirmed = await app.push_screen_wait(
                VerdictDialog(
                    call.describe(),
                    verdict,
                    app.palette,
                    message=message,
                    typed_fallback=call.node_id or app.model.fleet,
                    typed_error=typed_error,
                )
            )
            self._record(
                Confirmation(
                    time_s=self._fleet_time_s(),
                    actor=self._actor(),
                    action=call.kind.value,
                    target=call.node_id,
                    answer="cancelled" if confirmed is None else "confirmed",
                    typed=confirmed.typed if confirmed is not None else None,
                )
            )
            if confirmed is None:
                app.notify(f"{call.describe()}: cancelled, nothing applied")
                self._remember(call, ActionReading(Outcome.REFUSED, 0, "cancelled by the operator", verdict))
                await self.refresh_audit()
                return
            answer = await self.send(call.with_controls(token=token, typed=confirmed.typed))
            confirmed_once = True
        if answer.outcome is Outcome.BLOCKED and answer.verdict is not None:
            # Its notification waits for the dialog: a toast said what the dialog's heading says, over the
            # end of its "What would pass" line — the line the operator needs.
            self.finish(call, answer, announce=False)
            await app.push_screen_wait(
                VerdictDialog(call.describe(), answer.verdict, app.palette, message=answer.message)
            )
            self.announce(call, answer)
            return
        self.finish(call, answer)

    def finish(self, call: ActionCall, answer: ActionReading, announce: bool = True) -> None:
        """The outcome: a notification, the session's list, the audit panel; a 403 disables actions."""
        app = self.app
        if answer.forbidden:
            self.refused = REFUSED_403
        if announce:
            self.announce(call, answer)
        self._remember(call, answer)
        app.refresh_views()
        app.run_worker(self.refresh_audit(), group="audit", exclusive=True, exit_on_error=False)

    def announce(self, call: ActionCall, answer: ActionReading) -> None:
        """The outcome as a notification."""
        app = self.app
        if answer.outcome is Outcome.APPLIED:
            under_way = (
                " — under way: the node table and the frames follow it" if answer.status == 202 else ""
            )
            override = " (admin override)" if answer.overridden else ""
            then = said_when_applied(answer.verdict)
            then = f" — {then}" if then else ""
            # What comes next before the 202's "under way" — the words a resume's operator acts on.
            app.notify(f"applied{override}{then}{under_way}", title=call.describe())
        else:
            severity = "error" if answer.outcome in (Outcome.BLOCKED, Outcome.REFUSED) else "warning"
            app.notify(answer.message, title=f"{call.describe()}: {answer.outcome.value}", severity=severity)

    def _remember(self, call: ActionCall, answer: ActionReading) -> None:
        self.outcomes.append(SessionOutcome(self.app.clock(), call, answer))
        if answer.status:  # a cancel is recorded as the confirmation's answer
            self._record(recorded_action(call, answer, self._fleet_time_s(), self._actor()))

    def _actor(self) -> str:
        """Who acts, as the server names this console's token (the hello says it): the audit log, the
        stream's `action` events and a CLI with the same token name it so; a recording did "console"
        (still read: a recording's `actor` is any text). "console" where an older server does not say."""
        return self.app.model.actor or "console"

    def _record(self, record: ActionRecord | Confirmation) -> None:
        if self.recorder is not None:
            self.recorder(record)

    def _fleet_time_s(self) -> float:
        frame = self.app.model.frame
        return frame.time_s if frame is not None else 0.0

    async def send(self, call: ActionCall) -> ActionReading:
        assert self.admin is not None
        try:
            answer = await self.admin.send(call.method, call.path, call.body)
        except ApiError as error:
            return ActionReading(Outcome.REFUSED, error.status, str(error))
        return read_answer(answer)

    # --- pre-filling -------------------------------------------------------------------------------------

    async def prefill(
        self, kind: ActionKind, node_id: str | None, lines: FormThresholds | None = None
    ) -> Prefill:
        """A form's starting values, computed with `lines` (else asked of the server now) where they need
        thresholds: the server's guards judge what is sent, so the server's lines, not this console's."""
        frame = self.app.model.frame
        if kind in _JUDGED_FORMS and lines is None:
            lines = await self.form_thresholds()
        match kind:
            case ActionKind.DRAIN:
                assert lines is not None
                return await self._drain_prefill(node_id or "", lines)
            case ActionKind.ROLLOUT_START:
                assert lines is not None
                capacity = await self._capacity()
                return lines.noted(rollout_prefill(frame, self.app.model.fleet, capacity, lines.thresholds))
            case ActionKind.ADMISSION:
                in_force = AdmissionInForce.of(frame) if frame else None  # (each node's own, too)
                return replace(admission_prefill(in_force), unchanged=self._unchanged)
            case ActionKind.ADD_CAPACITY:
                assert lines is not None
                capacity = await self._capacity()
                return lines.noted(
                    add_capacity_prefill(frame, self.app.model.fleet, capacity, lines.thresholds)
                )
        return Prefill({}, "")

    def _unchanged(self, body: Mapping[str, Any]) -> str | None:
        """Why an admission change would change nothing, against the newest frame (not the one the form
        was filled from: a colleague's change since then makes the form's values a change back)."""
        frame = self.app.model.frame
        return unchanged_admission(body, AdmissionInForce.of(frame) if frame is not None else None)

    async def form_thresholds(self) -> FormThresholds:
        """The thresholds the server's guards judge with (GET /v1/thresholds); this console's own where the
        server does not say them (an older server or controller: 404), with why."""
        assert self.admin is not None
        try:
            record = await self.admin.thresholds()
        except ApiError as error:
            return own_thresholds(self.thresholds, error.status, str(error))
        except ValidationError:
            return own_thresholds(self.thresholds, 0, "its GET /v1/thresholds did not read as thresholds")
        return servers_thresholds(record, self.thresholds)

    async def _drain_prefill(self, node_id: str, lines: FormThresholds) -> Prefill:
        """The server's planner; else the console's over the newest frame; else the drain window's rate."""
        assert self.admin is not None
        try:
            return drain_prefill_from_plan(await self.admin.drain_plan(node_id), "the server's drain planner")
        except ApiError:
            pass
        frame = self.app.model.frame
        capacity = await self._capacity()
        if frame is not None and capacity is not None:
            try:
                return lines.noted(
                    local_drain_prefill(frame, self.app.model.fleet, node_id, capacity, lines.thresholds)
                )
            except StormdeckError:  # the planner refuses (the node is not ready): the plain rate still helps
                pass
        node = self.app.model.nodes.get(node_id)
        return lines.noted(fallback_drain_prefill(node.connections if node else 0, lines.thresholds))

    async def _drain_hint_rule(self, lines: FormThresholds) -> DrainHintRule:
        """The planner's hint window for the rate the operator types, cut at the fleet's longest hint."""
        capacity = await self._capacity()
        hint_max_ms = capacity.hint_max_ms if capacity is not None else 0
        return DrainHintRule(lines.thresholds, hint_max_ms, lines.whose)

    async def _capacity(self) -> FleetCapacity | None:
        """The server's capacity record (it changes as nodes are added), else the one the console was given."""
        assert self.admin is not None
        try:
            record = CapacityRecord.model_validate(await self.admin.capacity())
        except (ApiError, ValidationError):
            return self.capacity
        return FleetCapacity(**record.model_dump(include=_CAPACITY_FIELDS))

    # --- the audit panel ---------------------------------------------------------------------------------

    async def open_audit(self) -> None:
        screen = AuditScreen(self.app.palette)
        await self.app.push_screen(screen)  # mounted before it is filled
        await self.refresh_audit()
        # Asked again while open (the timer is the screen's: it stops when the panel closes): a colleague's
        # drain a second ago showed only after Esc and L, though the panel is where one looks for it.
        screen.set_interval(REFRESH_S, self._refresh_audit_soon)

    def _refresh_audit_soon(self) -> None:
        self.app.run_worker(self.refresh_audit(), group="audit", exclusive=True, exit_on_error=False)

    async def refresh_audit(self) -> None:
        screens = [s for s in self.app.screen_stack if isinstance(s, AuditScreen)]
        if not screens:
            return
        records: list[dict[str, object]]
        if self.admin is None:
            records, note = [], "no fleet API: this session's attempts only"
        else:
            try:
                page = await self.admin.audit(AUDIT_LIMIT)
                records = [r for r in page.get("records", []) if isinstance(r, dict)]
                plural = "" if len(records) == 1 else "s"
                note = f"GET /v1/audit · {len(records):,} newest record{plural}"
            except ApiError as error:
                records, note = [], f"the server's audit log: {error}; this session's attempts only"
        if not records:
            actor = self.app.model.actor or "this console"
            records = [outcome.as_record(actor) for outcome in self.outcomes]
        for screen in screens:
            if screen.is_mounted:
                screen.show(records, note)
