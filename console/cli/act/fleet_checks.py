"""What an action reads from the fleet just before it is sent, as the console's form does: the admission
settings an option left out keeps, a change that changes nothing, a big change, the fleet's room."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from console.cli.act.request import ADMISSION_FIELDS, OPTION_OF
from console.client.actions import ActionClient
from console.errors import InputError, MissingInput
from console.model.actions.admission import kept_text
from console.model.big_changes import BigChange, big_changes

if TYPE_CHECKING:
    from console.model.actions.form import Prefill


async def _big_admission_changes(client: ActionClient, body: dict[str, Any]) -> list[BigChange]:
    """The console's check before a big admission change (`console.model.big_changes`: a limit cut below
    half of what a node runs or raised above double, set where there was none or lifted), against what
    each node it covers runs, read now: `--nodes` changes against those nodes' own settings (a node's
    override, else the fleet's), a fleet-wide one against every node's."""
    from console.model.actions.form import ActionCall, Prefill
    from console.protocol import ActionKind, AdmissionInForce

    current = AdmissionInForce.of(await client.fleet())
    return big_changes(ActionCall(ActionKind.ADMISSION, None, body), current, Prefill({}, ""))


async def _capacity_prefill(client: ActionClient) -> Prefill | None:
    """The console's add-capacity pre-fill and its check of the fleet's room, from the fleet's capacity
    record and snapshot now, against the server's thresholds (GET /v1/thresholds; this CLI's own where
    the server does not say them, as the console's form does); None without a capacity record (the server
    judges it then: a read-only fleet answers 409 to the action itself)."""
    from dataclasses import fields

    from pydantic import ValidationError

    from console.client.admin import ApiError
    from console.guards import FleetCapacity
    from console.guards.config import load_default_thresholds
    from console.model.actions.capacity import add_capacity_prefill_of
    from console.model.actions.thresholds import own_thresholds, servers_thresholds
    from console.protocol import CapacityRecord

    try:
        record = CapacityRecord.model_validate(await client.capacity())
    except ApiError:
        return None
    capacity = FleetCapacity(**record.model_dump(include={f.name for f in fields(FleetCapacity)}))
    own = load_default_thresholds().thresholds
    try:
        lines = servers_thresholds(await client.thresholds(), own)
    except ApiError as error:
        lines = own_thresholds(own, error.status, str(error))
    except ValidationError:
        lines = own_thresholds(own, 0, "its GET /v1/thresholds did not read as thresholds")
    return lines.noted(add_capacity_prefill_of(await client.fleet(), capacity, lines.thresholds))


async def _count_below_one(client: ActionClient, body: dict[str, Any]) -> None:
    """A count below 1 fits no fleet: refused here in the fleet's range, by the check the console's form
    runs (`check_count`: "an integer in [1, 64] (room left in the fleet: 64 of 84 nodes)"), before
    --yes or --dry-run could make it look worth sending (the server's 422 says the same). A count beyond
    the room is the server's to refuse: its thresholds (`add_capacity_max_nodes`) are the ones that hold,
    and its refusal is audited."""
    if body["count"] >= 1:
        return
    prefill = await _capacity_prefill(client)
    if prefill is not None and prefill.check is not None:
        prefill.check(body)


async def _big_capacity_changes(client: ActionClient, body: dict[str, Any]) -> list[BigChange]:
    """More nodes than the console's pre-fill (the nodes that bring headroom back to the budget once ready,
    at least one), as the console checks before sending; nothing to check without a capacity record."""
    from console.model.actions.form import ActionCall
    from console.protocol import ActionKind

    suggested = await _capacity_prefill(client)
    if suggested is None:
        return []
    if suggested.check is not None:
        try:
            suggested.check(body)
        except InputError:
            # Beyond the fleet's room: bad input, not a big change — sent, and the server's 422 names
            # `count` and its range (exit 2); held back as big, --yes would only have led to that.
            return []
    return big_changes(ActionCall(ActionKind.ADD_CAPACITY, None, body), None, suggested)


async def _unchanged_admission(client: ActionClient, body: dict[str, Any]) -> str | None:
    """Why the admission change as completed would change nothing (`unchanged_admission`, the console's
    form's check: the fleet's settings already, or the named nodes'), read now; None where it changes
    something. Sent, it was applied and audited as a change (found in review)."""
    from console.model.actions.admission import unchanged_admission
    from console.protocol import AdmissionInForce

    snapshot = await client.fleet()
    return unchanged_admission(body, AdmissionInForce.of(snapshot) or AdmissionInForce(snapshot.admission))


async def _keep_current_admission(client: ActionClient, body: dict[str, Any]) -> str | None:
    """Fill the admission fields the operator left out with what the nodes the change covers run, and
    say which (`kept_setting`, the console's form's rule): the named nodes' own for one with `--nodes` (a
    node's override, else the fleet's), every node's for a fleet-wide one — from the fleet's, `--nodes
    gw-001 --max-connections 300` put gw-001's own 5/s back to the fleet's 500/s, and a fleet-wide `--rate
    30` said "kept as the fleet has them: burst unlimited" while lifting the burst 20 two nodes ran (both
    found in review). Nodes that run different values of a field left out are refused naming its option:
    no one value keeps them all.

    `PUT /v1/admission` replaces every field (both backends, like the console's form, which pre-fills the
    current settings): the CLI sent null for an option left out, so `--rate 100` silently lifted the burst
    and put Retry-After back to 1:30 (found in review). Read here, just before sending: the verdict
    judges, and a confirmation binds, the settings as sent."""
    from console.guards.fleet import find_nodes
    from console.model.actions.admission import MixedSetting, kept_setting
    from console.protocol import AdmissionInForce

    missing = [name for name in ADMISSION_FIELDS if name not in body]
    nodes: list[str] | None = body.get("nodes")
    if not missing and nodes is None:
        return None
    snapshot = await client.fleet()
    if nodes is not None:
        # Before anything is read for them: `--nodes zz` was "kept as zz has them" (the fleet's settings,
        # for a node that is not there) and a big change asking --yes. The guard's own refusal, which the
        # server answers with (every unknown id, the fleet's ids, the nearest), named by the option.
        try:
            find_nodes(snapshot, nodes)
        except InputError as error:
            raise InputError(OPTION_OF[error.field], error.value, error.allowed) from None
    if not missing:
        return None
    in_force = AdmissionInForce.of(snapshot) or AdmissionInForce(snapshot.admission)
    kept = []
    for name in missing:
        try:
            value = body[name] = kept_setting(in_force, nodes, name)
        except MixedSetting as mixed:
            raise MissingInput(OPTION_OF[name], mixed.allowed) from None
        kept.append(f"{name} {kept_text(value)}")
    whose = (
        "the fleet has them"
        if not nodes
        else f"{nodes[0]} has them"
        if len(nodes) == 1
        else "the nodes named have them"
    )
    return f"kept as {whose}: " + ", ".join(kept)


async def _rollout_there_already(client: ActionClient, step: str) -> str | None:
    """Where a halt finds the rollout halted, or a resume finds it running (or scheduled), what was asked
    holds already: said in one line, read from the fleet now; None otherwise (a halt of a completed
    rollout, of none at all: the server's refusal stands, bad input). The server answers both with its
    422 "nothing to halt/resume" — the API's word, audited, and the same on the guard and both backends
    (docs/actions.md) — which the CLI exited 2 on, "bad input", for a state already as asked (review)."""
    from console.client.admin import ApiError, FleetUnreachable
    from console.model.units import fleet_clock
    from console.protocol import RolloutState

    try:
        rollout = (await client.fleet()).rollout
    except (ApiError, FleetUnreachable):
        return None  # (the refusal as the server said it, then)
    if rollout is None:
        return None
    if step == "halt" and rollout.state is RolloutState.HALTED:
        return f"rollout already halted, at {rollout.position()}: nothing to do"
    if step == "resume" and rollout.scheduled:
        return f"rollout already scheduled: it {rollout.schedule_said(fleet_clock)}: nothing to do"
    if step == "resume" and rollout.state is RolloutState.RUNNING:
        return f"rollout already running, at {rollout.position()}: nothing to do"
    return None
