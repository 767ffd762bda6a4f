"""Guards for rollouts: start, halt, resume (issue #4, section 1).

A rollout restarts the fleet `batch_size` nodes at a time. In `drain` mode each batch drains first; in
`abrupt` mode its clients all reconnect at once — the outage seed's restart, which is always `typed`.

Its parts, along the lines the verdict draws: `plan` (the batches, the states a rollout moves through),
`fleet_checks` (what a start and a resume both ask of the fleet), `lines` (the pause line), `pacing` (a
batch's drain against the spare admission), `force_close` (its deadline's force-close against the
connections_drop alarm's line), `batch` (the first batch and the sizes that pass), `start`
(the start's verdict), `nothing_to` and `halt_resume` (halting and resuming), `next_batch` (when a
resume's next batch starts).
"""

from console.guards.rollout.batch import (
    BATCH_CHECKS,
    SURVIVOR_CHECKS,
    FirstBatch,
    admission_for_batch,
    batch_checks_failing,
    largest_safe_batch_size,
)
from console.guards.rollout.fleet_checks import (
    WAIT_FOR_HEADROOM,
    headroom_check,
    nodes_down_check,
    rotation_check,
    start_rotation_check,
)
from console.guards.rollout.halt_resume import judge_rollout_halt, judge_rollout_resume
from console.guards.rollout.lines import PauseLine, configured_line
from console.guards.rollout.nothing_to import ACT_STEPS, NothingTo, nothing_to
from console.guards.rollout.pacing import BatchDrain, batch_drain
from console.guards.rollout.plan import ACTIVE, HALTABLE, RESUMABLE, UNDRAINABLE, plan_batches, undrain_first
from console.guards.rollout.start import judge_rollout_start

__all__ = [
    "ACTIVE",
    "ACT_STEPS",
    "BATCH_CHECKS",
    "HALTABLE",
    "RESUMABLE",
    "SURVIVOR_CHECKS",
    "UNDRAINABLE",
    "WAIT_FOR_HEADROOM",
    "BatchDrain",
    "FirstBatch",
    "NothingTo",
    "PauseLine",
    "admission_for_batch",
    "batch_checks_failing",
    "batch_drain",
    "configured_line",
    "headroom_check",
    "judge_rollout_halt",
    "judge_rollout_resume",
    "judge_rollout_start",
    "largest_safe_batch_size",
    "nodes_down_check",
    "nothing_to",
    "plan_batches",
    "rotation_check",
    "start_rotation_check",
    "undrain_first",
]
