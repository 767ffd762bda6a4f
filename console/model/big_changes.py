"""What the operator checks before a change leaves the console: what the fleet runs (or what the console
suggested, or what the form was filled from) → what is sent. Pure: the check's screen
(console.ui.screens.change_check) only shows it.

An ok verdict applies on Enter without a dialog, and a form selects its pre-filled value so the first key
replaces it: `a`, `2`, Enter cut admission from 500 to 2 per node; and a form filled before a colleague's
change would put the old values back. The server still judges what is sent.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from console.errors import InputError
from console.model.actions.admission import nodes_said
from console.model.actions.answer import ActionReading, format_value
from console.model.actions.form import FORMS, ActionCall, FormField, Prefill, field_label
from console.model.admission import where_said
from console.protocol import ActionKind, AdmissionInForce, AdmissionSettings


@dataclass(frozen=True)
class BigChange:
    """One field whose new value is far from what the fleet runs (or what the console suggested)."""

    label: str
    before: str
    after: str
    why: str


#: An admission limit moved by more than this factor either way is checked before it is sent.
BIG_FACTOR = 2.0
_ADMISSION_LIMITS = ("rate_per_s", "burst", "max_connections")


def big_changes(
    call: ActionCall, admission: AdmissionInForce | AdmissionSettings | None, suggested: Prefill
) -> list[BigChange]:
    """What in `call` is far from what the fleet runs or what the console suggested, to be checked by the
    operator before it is sent (a one-key typo over a selected pre-fill changed the fleet at once):
    an admission limit cut below half or raised above double, or set where there was none or lifted —
    against what each node the call covers runs (`admission`: the fleet's settings and its per-node
    overrides), said where it runs when they differ ("2 on 3 nodes"); more nodes to add than the pre-fill
    (the nodes that restore the headroom budget)."""
    in_force = AdmissionInForce.said(admission)
    if call.kind is ActionKind.ADMISSION and in_force is not None:
        changes = []
        groups = in_force.covered(call.body.get("nodes"))
        for name in _ADMISSION_LIMITS:
            after = call.body.get(name)
            label = field_label(call.kind, name)
            befores = {getattr(group.settings, name) for group in groups}
            for group in groups:
                before = getattr(group.settings, name)
                why = _limit_change(before, after)
                if why is not None:
                    said = _limit_text(before)
                    where = said if len(befores) == 1 else where_said(said, group)
                    changes.append(BigChange(label, where, _limit_text(after), why))
        return changes
    if call.kind is ActionKind.ADD_CAPACITY:
        try:
            suggested_count = int(suggested.values.get("count", ""))
        except ValueError:
            return []
        count = int(call.body["count"])
        if count > suggested_count:
            why = f"more than the {suggested_count} pre-filled ({suggested.source})"
            return [BigChange(field_label(call.kind, "count"), str(suggested_count), str(count), why)]
    return []


def changed_since_filled(
    kind: ActionKind, sent: dict[str, str], filled: Prefill, now: Prefill
) -> list[BigChange]:
    """What the fleet changed under an open form that sending would undo: a field pre-filled from the
    fleet (admission replaces every setting) whose value in the fleet moved after the form was filled —
    another operator's change, a second ago — and is not what the form sends. Without this, changing the
    burst from a form opened before a colleague cut the rate put the old rate back, nothing shown."""
    changes = []
    for spec in FORMS[kind]:
        texts = (v.get(spec.name, "") for v in (filled.values, now.values, sent))
        before, current, sending = (_read(spec, text) for text in texts)
        if before == current or sending == current:
            continue
        was = _blank_as(spec, filled.values.get(spec.name, ""))
        why = f"changed in the fleet since this form was filled (it read {was})" + (
            ": sending puts that back" if sending == before else ""
        )
        shown = (_blank_as(spec, now.values.get(spec.name, "")), _blank_as(spec, sent.get(spec.name, "")))
        changes.append(BigChange(spec.label, *shown, why))
    return changes


def _read(spec: FormField, text: str) -> float | int | str | None:
    """A field's value for comparing: blank is no value (a drain planner with no safe rate pre-fills the
    rate empty, which `FormField.parse` refuses — that refusal, raised here, once closed the form with
    nothing sent and nothing said), and text that does not parse compares as itself."""
    if not text.strip():
        return None
    try:
        return spec.parse(text)
    except InputError:
        return text.strip()


def _blank_as(spec: FormField, text: str) -> str:
    """A blank optional field is what it stands for (an admission limit: unlimited); a blank required
    field (the planner's rate when none is safe) is none."""
    return text or (spec.blank if spec.optional else "none")


def refilled(typed: dict[str, str], filled: Prefill, now: Prefill) -> Prefill:
    """Back to the form after `changed_since_filled`: the fleet's values now where the operator had typed
    nothing over the old ones, what they typed elsewhere."""
    values = {
        name: now.values.get(name, value) if value == filled.values.get(name) else value
        for name, value in typed.items()
    }
    return replace(now, values=values)


def _limit_change(before: float | None, after: float | None) -> str | None:
    if before == after:
        return None
    if before is None:
        return "a limit where there was none: nodes refuse what is over it"
    if after is None:
        return "the limit lifted: unlimited"
    if before > 0 and after < before / BIG_FACTOR:
        return f"cut to {100 * after / before:.2g} % of now: nodes refuse what is over it"
    if before > 0 and after > before * BIG_FACTOR:
        return f"{after / before:.3g}× now"
    return None


def _limit_text(value: float | None) -> str:
    return "unlimited" if value is None else format_value(value)


def answering_offer(
    call: ActionCall, answer: ActionReading, admission: AdmissionInForce | None, suggested: Prefill
) -> tuple[ActionCall, list[BigChange]] | None:
    """The admission `call` the fleet refused for nodes that do not answer their admin API, sent to the
    nodes of it that answer instead, and what the operator checks before it leaves: the nodes it now
    covers, first, then its big changes against what those nodes run (`big_changes`); None for any other
    answer, or where no node of it answers. The refusal is right (a hung node that comes back keeps its old
    settings); applying to the answering nodes is the operator's choice, offered — the console had no way
    to shed load during exactly the incident its alarms said to shed in (found on a real fleet)."""
    if call.kind is not ActionKind.ADMISSION or not answer.nodes_refused or not answer.nodes_answering:
        return None
    answering = list(answer.nodes_answering)
    offered = ActionCall(call.kind, call.node_id, {**call.body, "nodes": answering})
    named = call.body.get("nodes")
    down = list(answer.nodes_down)
    keeps = "keeps its" if len(down) == 1 else "keep their"
    target = BigChange(
        "nodes",
        "every node" if named is None else nodes_said(named),
        f"{nodes_said(answering)} (answering)",
        f"{nodes_said(down)} {keeps} settings: {'it does' if len(down) == 1 else 'they do'} not answer",
    )
    return offered, [target, *big_changes(offered, admission, suggested)]
