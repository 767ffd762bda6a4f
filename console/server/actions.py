"""What an operator asks of the fleet, as one value: the kind of action, its node, its parameters.

The server judges a `FleetAction` with the guards, binds a confirmation to it, applies it through the
backend, forecasts it and audits it — every one of those reads this record, so they agree on what the
action was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from console.guards import (
    FleetCapacity,
    Thresholds,
    judge_add_capacity,
    judge_admission,
    judge_drain,
    judge_rollout_halt,
    judge_rollout_resume,
    judge_rollout_start,
    judge_undrain,
)
from console.model.admission import change_words, sent_words
from console.protocol import (
    ActionKind,
    ActionRequest,
    AdmissionInForce,
    AdmissionRequest,
    CapacityRequest,
    DrainRequest,
    FleetSnapshot,
    RolloutRequest,
    Verdict,
)
from console.protocol.requests import whole_number

#: Fields of a request that steer the two-phase protocol rather than say what to do.
CONTROL_FIELDS = frozenset({"dry_run", "confirm", "override_reason"})


Request = DrainRequest | RolloutRequest | AdmissionRequest | CapacityRequest | ActionRequest


@dataclass(frozen=True)
class FleetAction:
    kind: ActionKind
    request: Request
    node_id: str | None = None

    def parameters(self) -> dict[str, Any]:
        """What the action does, without the two-phase controls: what a confirmation is bound to."""
        fields = self.request.model_dump(mode="json", exclude=set(CONTROL_FIELDS))
        return {"node": self.node_id, **fields} if self.node_id is not None else fields

    @property
    def target(self) -> str:
        return self.node_id if self.node_id is not None else "fleet"

    def describe(self, before: FleetSnapshot | None = None) -> str:
        """The action in an answer, its audit record and the stream's event: its parameters; an admission
        change says what it changes against what the nodes ran `before` (every setting as sent where that
        is not known) — a limit lifted is null, and "(retry_after_s=[1, 30])" said a change that lifted
        every limit."""
        if isinstance(self.request, AdmissionRequest):
            settings = self.request.settings()
            in_force = AdmissionInForce.of(before) if before is not None else None
            nodes = self.request.nodes
            shown = sent_words(settings) if in_force is None else change_words(in_force, settings, nodes)
        else:
            parameters = {
                k: v for k, v in self.parameters().items() if k not in ("node", "nodes") and v is not None
            }
            shown = ", ".join(f"{k}={_plain(v)}" for k, v in parameters.items())
        return f"{self.kind.value} {self._said_target()}" + (f" ({shown})" if shown else "")

    def _said_target(self) -> str:
        """`target`, or the nodes an admission change names ("on gw-009", "on 3 nodes (a, b, c)"): "admission
        fleet (…, nodes=['gw-009'])" named the fleet for one node's change."""
        nodes = getattr(self.request, "nodes", None)
        if self.node_id is not None or not nodes:
            return self.target
        if len(nodes) == 1:
            return f"on {nodes[0]}"
        named = ", ".join(nodes[:3]) + (", …" if len(nodes) > 3 else "")  # (a change may name 10 000)
        return f"on {len(nodes)} nodes ({named})"


def judge(
    snapshot: FleetSnapshot,
    capacity: FleetCapacity,
    action: FleetAction,
    thresholds: Thresholds,
    calm_baseline_per_s: float | None = None,
) -> Verdict:
    """The guards' verdict on `action` (raises `InputError` when the action makes no sense now).
    `calm_baseline_per_s`: the steady attempts learned over the published frames (`FleetFeed.steady`), which
    admission judges a limit by where the capacity record and the thresholds do not say the calm inflow."""
    request = action.request
    match action.kind:
        case ActionKind.DRAIN:
            assert isinstance(request, DrainRequest) and action.node_id is not None
            # Not `calm_baseline_per_s`: learned only after `baseline_learn_s`, it moved the reconnect line
            # between the planner's pre-fill and this verdict (the planner's own 100/s judged typed, 110 > 100).
            return judge_drain(snapshot, capacity, action.node_id, request, thresholds)
        case ActionKind.UNDRAIN:
            assert action.node_id is not None
            return judge_undrain(snapshot, action.node_id, thresholds)
        case ActionKind.ROLLOUT_START:
            assert isinstance(request, RolloutRequest)
            return judge_rollout_start(snapshot, capacity, request, thresholds)
        case ActionKind.ROLLOUT_HALT:
            return judge_rollout_halt(snapshot)
        case ActionKind.ROLLOUT_RESUME:
            return judge_rollout_resume(snapshot, thresholds)
        case ActionKind.ADMISSION:
            assert isinstance(request, AdmissionRequest)
            return judge_admission(snapshot, request, capacity, thresholds, calm_baseline_per_s)
        case ActionKind.ADD_CAPACITY:
            assert isinstance(request, CapacityRequest)
            return judge_add_capacity(snapshot, capacity, request, thresholds)
    raise AssertionError(action.kind)


def _plain(value: Any) -> Any:
    """833.0 reads 833 where an operator reads it (an audit detail, the stream's action event)."""
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return whole_number(value)
