"""A halt or resume with nothing to act on, said as what the rollout did and what to do instead — one
sentence for the server's refusal and the console's at the key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from console.errors import InputError
from console.guards.rollout.plan import HALTABLE, RESUMABLE
from console.protocol import (
    ActionKind,
    RolloutState,
    RolloutStatus,
)

#: How the fleet API's refusal of a halt or resume names the next step: as `stormdeck act` types it (the
#: CLI is who reads the API's words; the console says its keys instead, `console.model.actions.refusals`).
ACT_STEPS: Mapping[ActionKind, str] = {
    ActionKind.ROLLOUT_START: " with `stormdeck act URL rollout start`",
    ActionKind.ROLLOUT_RESUME: " with `stormdeck act URL rollout resume`",
}


def nothing_to(
    kind: ActionKind,
    rollout: RolloutStatus,
    clock: Callable[[float], str] | None = None,
    steps: Mapping[ActionKind, str] = ACT_STEPS,
) -> str | None:
    """Why a halt or resume of `rollout` has nothing to act on, in what the rollout did and what to do
    instead — "nothing to halt — the rollout completed at 0:12:30 (batch 8 of 8); start a new one" — or
    None when it has. One sentence for the server's refusal and the console's at the key: both said the
    state's name, "'completed' is not allowed; expected a running or paused rollout". `clock` writes a
    fleet time (the fleet clock, H:MM:SS; the console passes its own face); `steps` how this edge says
    each next step (after "start a new one")."""
    verb = "halt" if kind is ActionKind.ROLLOUT_HALT else "resume"
    if rollout.state in (HALTABLE if kind is ActionKind.ROLLOUT_HALT else RESUMABLE):
        return None
    if clock is None:
        from console.model.units import fleet_clock  # (the model imports the guards: not at the top)

        clock = fleet_clock
    start = steps.get(ActionKind.ROLLOUT_START, "")
    where = f"batch {rollout.batch} of {rollout.batches}"
    match rollout.state:
        case RolloutState.IDLE:
            said = f"no rollout has started on this fleet; start one{start}"
        case RolloutState.COMPLETED:
            at = "" if rollout.completed_at_s is None else f" at {clock(rollout.completed_at_s)}"
            said = f"the rollout completed{at} ({where}); start a new one{start}"
        case RolloutState.ABORTED:
            why = f" ({rollout.pause_reason})" if rollout.pause_reason else ""
            said = f"the rollout aborted at {where}{why}, and an aborted one is not resumed; start a new one{start}"
        case RolloutState.HALTED:  # (a halt: a resume takes it)
            said = f"the rollout is halted already, at {where}; resume it{steps.get(ActionKind.ROLLOUT_RESUME, '')}"
        case _ if rollout.scheduled:  # (a resume): it starts by itself
            said = f"the rollout is scheduled: it {rollout.schedule_said(clock)}"
        case _:  # running (a resume): it goes on by itself
            said = f"the rollout is {rollout.state.value}, at {where}"
    return f"nothing to {verb} — {said}"


class NothingTo(InputError):
    """A halt or resume with no rollout to act on: bad input naming `rollout` (422, exit 2), said as
    `nothing_to` says it, after what was asked ("rollout halt: nothing to halt — …")."""

    def __init__(self, kind: ActionKind, rollout: RolloutStatus) -> None:
        self.words = nothing_to(kind, rollout) or ""
        self.asked = "rollout halt" if kind is ActionKind.ROLLOUT_HALT else "rollout resume"
        super().__init__("rollout", rollout.state.value, self.words)

    def _message(self) -> str:
        return f"{self.asked}: {self.words}"
