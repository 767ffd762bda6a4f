"""Guards: thresholds, verdicts on actions, the drain planner — pure, shared by the server and the console.

    verdict = judge_drain(snapshot, capacity, "gw-017", DrainRequest(rate_per_s=833, deadline_s=600,
                                                                    hint_ms=(1000, 15000)))
    verdict.level, verdict.checks, verdict.projections
    plan = plan_drain(snapshot, capacity, ["gw-017"])   # the largest safe rate, to pre-fill a form

Every function takes values and returns values; loading thresholds from files and env lives apart, in
`console.guards.config`. See docs/guards.md.
"""

from console.guards.add_capacity import judge_add_capacity, nodes_for_headroom
from console.guards.admission import judge_admission
from console.guards.capacity import FleetCapacity
from console.guards.drain import DrainPlan, judge_drain, judge_undrain, plan_drain
from console.guards.rollout import judge_rollout_halt, judge_rollout_resume, judge_rollout_start
from console.guards.thresholds import DEFAULT_THRESHOLDS, Thresholds
from console.guards.verdict import LEVEL_RANK

__all__ = [
    "DEFAULT_THRESHOLDS",
    "LEVEL_RANK",
    "DrainPlan",
    "FleetCapacity",
    "Thresholds",
    "judge_add_capacity",
    "judge_admission",
    "judge_drain",
    "judge_rollout_halt",
    "judge_rollout_resume",
    "judge_rollout_start",
    "judge_undrain",
    "nodes_for_headroom",
    "plan_drain",
]
