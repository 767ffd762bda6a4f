"""Guards for drain and undrain, and the drain planner (issue #4, section 1).

A drain closes a node's connections at `rate_per_s`, each client told to come back within `hint_ms`, and
force-closes whatever remains at `deadline_s` (interview). Its reconnects land on the survivors, so every
check is about what the survivors can absorb.

Its parts, in the order a drain is planned and judged: `hint` (the reconnect hint window a rate needs, and
the clients offline at once while it runs), `leaving` (the nodes a drain takes out of rotation, and what
its deadline force-closes), `rate` (the largest safe rate and what set it), `plan` (the planner,
`plan_drain`), `verdict` (`judge_drain` and its checks), `undrain` (`judge_undrain`).
"""

from console.guards.drain.hint import (
    HINT_START_MS,
    hint_window_needed_ms,
    offline_at_once_pct,
    planned_hint_ms,
)
from console.guards.drain.plan import DrainPlan, plan_drain
from console.guards.drain.rate import (
    LIMITED_BY,
    RateBasis,
    admission_margin_kept_pct,
    margin_kept_pct,
    planned_basis,
    rate_basis,
)
from console.guards.drain.undrain import WATCH_IT, judge_undrain
from console.guards.drain.verdict import SURVIVOR_CHECKS, judge_drain

__all__ = [
    "HINT_START_MS",
    "LIMITED_BY",
    "SURVIVOR_CHECKS",
    "WATCH_IT",
    "DrainPlan",
    "RateBasis",
    "admission_margin_kept_pct",
    "hint_window_needed_ms",
    "judge_drain",
    "judge_undrain",
    "margin_kept_pct",
    "offline_at_once_pct",
    "plan_drain",
    "planned_basis",
    "planned_hint_ms",
    "rate_basis",
]
