"""What the alarm rules share: the alarm names, a reading, the one pass over a frame's nodes, the rule base.

A rule reads one frame (plus what it remembers of the frames before) and returns the readings that hold
now: each one an alarm condition with its value, its limit and a message in the operator's words. The
engine (`console.alarms.engine`) turns readings into raised and cleared alarms.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import ClassVar, NamedTuple

from console.guards.capacity import AdmissionLimit, FleetCapacity
from console.guards.thresholds import Thresholds
from console.protocol import AdmissionSettings, Frame, NodeState, Severity


class AlarmName(StrEnum):
    CONNECTIONS_DROP = "connections_drop"
    CPU_ABORT = "cpu_abort"
    ROLLOUT_PAUSED = "rollout_paused"
    HEADROOM_LOW = "headroom_low"
    DRAIN_INFLOW_LOSING = "drain_inflow_losing"
    DRAIN_INFLOW_KILL_SWITCH = "drain_inflow_kill_switch"
    LOCKSTEP_WAVES = "lockstep_waves"
    RECONNECT_RATE_HIGH = "reconnect_rate_high"
    RESYNC_SHARE_RISING = "resync_share_rising"
    ABNORMAL_CLOSES_RISING = "abnormal_closes_rising"
    DRAIN_PACING_EXCEEDED = "drain_pacing_exceeded"
    NODE_DOWN = "node_down"
    HISTORY_UNREACHABLE = "history_unreachable"


#: The unit of each alarm's value and limit, as the panel shows them ("8.54 > 5 %", "38.6k > 5.3k/s");
#: none for the ratios and indices (drain ÷ inflow, the lockstep index).
UNITS: dict[AlarmName, str] = {
    AlarmName.CONNECTIONS_DROP: " %",
    AlarmName.CPU_ABORT: " %",
    AlarmName.ROLLOUT_PAUSED: " %",
    AlarmName.HEADROOM_LOW: " %",
    AlarmName.RECONNECT_RATE_HIGH: "/s",
    AlarmName.RESYNC_SHARE_RISING: " %",
    AlarmName.ABNORMAL_CLOSES_RISING: "/s",
    AlarmName.DRAIN_PACING_EXCEEDED: "/s",
    AlarmName.NODE_DOWN: " s",  # how long the node has been down
    AlarmName.HISTORY_UNREACHABLE: " s",  # how long the longest of them has said so
}


class Reading(NamedTuple):
    """One alarm condition that holds in the current frame (a tuple: thousands are made per frame)."""

    name: AlarmName
    severity: Severity
    value: float | None
    limit: float | None
    message: str
    node: str | None = None  # an alarm about one node: one alarm per node
    nodes: tuple[str, ...] = ()  # a fleet alarm about several nodes: the nodes, worst first


#: States of a node still serving clients: the "surviving" nodes of the outage seed's abort criterion.
SERVING = frozenset({NodeState.READY, NodeState.DRAINING})


@dataclass(frozen=True)
class FleetView:
    """What the rules need from a frame's nodes, gathered in one pass (2000 nodes must stay cheap)."""

    hot_nodes: tuple[tuple[str, float], ...]  # serving nodes over the abort CPU line: (id, cpu_pct)
    draining_nodes: int
    drain_rate_per_s: float  # requested close rate, summed over draining nodes
    admission_capacity_per_s: float | None  # what nodes in rotation can admit per second; None if unknown
    max_cpu_pct: float = 0.0  # the hottest node's, for a frame whose totals do not say (0 with no nodes)
    down_nodes: tuple[str, ...] = ()  # nodes in state `down` (a planned restart is `restarting`, not down)
    # nodes reporting their history (Redis) unreachable: (id, why); a simulated node never does
    history_unreachable: tuple[tuple[str, str], ...] = ()
    # False for an earlier second of a sped-up frame (`folded_second`): which nodes were over the abort line
    # is known, not each one's CPU — each `hot_nodes` entry carries that second's hottest node's.
    hot_cpu_known: bool = True
    # Each draining node's drain: (started_at_s, rate_per_s, what it admitted per second in rotation —
    # None if unknown); None when a draining node does not say when its drain started (no drain status).
    drains: tuple[tuple[float, float, float | None], ...] | None = None

    def folded_second(self, hot: Iterable[str], max_cpu_pct: float) -> FleetView:
        """The view of an earlier second a sped-up frame folds, from the nodes it says were over the abort
        line then (`Frame.hot_by_second`); the rest is the frame's last second's (no rule judged each second
        reads it)."""
        over = tuple((node_id, max_cpu_pct) for node_id in sorted(hot))
        return replace(self, hot_nodes=over, max_cpu_pct=max_cpu_pct, hot_cpu_known=False)

    def drains_in_second(self, time_s: float) -> FleetView:
        """The view of an earlier second of a sped-up frame, the second ending at `time_s`, as the drains
        under way at the frame's end say: a drain counts from the second after it started
        (`DrainProgress.started_at_s`; the simulator starts one between seconds), and a node whose drain
        started later was still in rotation, admitting. A drain that ended within the frame (its node
        drained by the last second) is not known, and not counted. Itself when the drains do not say."""
        if not self.drains:
            return self
        draining = 0
        drain_rate = 0.0
        admit = self.admission_capacity_per_s
        for started_at_s, rate_per_s, admits_per_s in self.drains:
            if started_at_s < time_s:
                draining += 1
                drain_rate += rate_per_s
            elif admit is not None:
                admit = None if admits_per_s is None else admit + admits_per_s
        return replace(
            self, draining_nodes=draining, drain_rate_per_s=drain_rate, admission_capacity_per_s=admit
        )

    @classmethod
    def of(cls, frame: Frame, thresholds: Thresholds, capacity: FleetCapacity | None) -> FleetView:
        nodes = frame.nodes
        return cls.of_columns(
            [node.id for node in nodes],
            [node.state for node in nodes],
            [node.cpu_pct for node in nodes],
            [node.drain.rate_per_s if node.drain is not None else node.closes_per_s for node in nodes],
            frame.admission,
            thresholds,
            capacity,
            tuple((node.id, node.history_unreachable) for node in nodes if node.history_unreachable),
            drain_started_at_s=[
                node.drain.started_at_s if node.drain is not None else None for node in nodes
            ],
        )

    @classmethod
    def of_columns(
        cls,
        ids: Sequence[str],
        states: Sequence[NodeState],
        cpu_pct: Sequence[float],
        drain_rate_per_s: Sequence[float],
        admission: AdmissionSettings | None,
        thresholds: Thresholds,
        capacity: FleetCapacity | None,
        history_unreachable: tuple[tuple[str, str], ...] = (),
        *,
        drain_started_at_s: Sequence[float | None] | None = None,
    ) -> FleetView:
        """The same from columns, one value a node: what a simulator has without building a frame's node
        records (`sim run` judges 1,500 seconds of 480–680 nodes). drain_rate_per_s: a draining node's
        requested close rate (its closes when none was requested); read only for draining nodes.
        history_unreachable: (id, why) of the nodes saying they cannot reach their Redis (the console's
        NodeReadings carry it; a simulated node never says so). drain_started_at_s: a draining node's
        drain start (`DrainProgress.started_at_s`; None where it carries no drain status), read only for
        draining nodes: what `drains_in_second` judges a sped-up frame's earlier seconds by; None when
        not known (one frame a second needs none)."""
        abort_pct = thresholds.cpu_abort_pct
        admission_limit = AdmissionLimit(admission, capacity)
        hot: list[tuple[str, float]] = []
        down: list[str] = []
        draining = 0
        drain_rate = 0.0
        admit = 0.0
        admit_known = True
        starts = drain_started_at_s if drain_started_at_s is not None else [None] * len(ids)
        drains: list[tuple[float, float, float | None]] | None = []
        for node_id, state, cpu, rate, started_at_s in zip(
            ids, states, cpu_pct, drain_rate_per_s, starts, strict=True
        ):
            if cpu > abort_pct and state in SERVING:
                hot.append((node_id, cpu))
            if state is NodeState.DRAINING:
                draining += 1
                drain_rate += rate
                if started_at_s is None:
                    drains = None
                elif drains is not None:
                    drains.append((started_at_s, rate, admission_limit.for_node(node_id)))
            elif state is NodeState.DOWN:
                down.append(node_id)
            elif state is NodeState.READY:
                node_limit = admission_limit.for_node(node_id)
                if node_limit is None:
                    admit_known = False
                else:
                    admit += node_limit
        return cls(
            hot_nodes=tuple(hot),
            draining_nodes=draining,
            drain_rate_per_s=drain_rate,
            admission_capacity_per_s=admit if admit_known else None,
            max_cpu_pct=max(cpu_pct, default=0.0),
            down_nodes=tuple(down),
            history_unreachable=history_unreachable,
            drains=tuple(drains) if drains is not None else None,
        )


def count(value: float) -> str:
    """A figure the way an operator reads it: 13.0 M, 216 k, 833."""
    magnitude = abs(value)
    if magnitude >= 1e6:
        return f"{value / 1e6:.2f} M"
    if magnitude >= 1e4:
        return f"{value / 1e3:.0f} k"
    if magnitude >= 1e3:
        return f"{value / 1e3:.1f} k"
    return f"{value:.0f}" if magnitude >= 10 else f"{value:.1f}"


#: How many nodes a fleet alarm's message names (`first_named`).
NAMED_NODES = 3


def first_named(names: Sequence[str], shown: int = NAMED_NODES, total: int | None = None) -> str:
    """The first few of a list of nodes, and how many more: "gw-001, gw-007, gw-012 and 5 more" — a fleet
    alarm's message names a few; its `nodes` lists them all. `total`: how many there are, when `names`
    holds only the first (in a storm hundreds of nodes are hot each second: format only those shown)."""
    total = len(names) if total is None else total
    more = f" and {total - shown} more" if total > shown else ""
    return ", ".join(names[:shown]) + more


class Rule:
    """Base of the rules: `evaluate` yields what holds now; rules keep only their own memory."""

    #: The rule reads only the frame's time, totals and wave bins — what a sped-up frame carries for every
    #: second it folds (`Frame.folded_totals`) — so the engine judges it second by second, and it raises
    #: and clears at the fleet seconds it would at one frame a second. A rule reading the nodes, the
    #: rollout or admission is judged on the frame's last second only: that is all the frame shows of them
    #: (unless the frame says more: `each_second_of`).
    each_second: ClassVar[bool] = False
    #: The rule reads only the frame's time and the serving nodes over the abort line
    #: (`FleetView.hot_nodes`) — what a sped-up frame says for every second it folds (`Frame.folded_hot`)
    #: when its server watches the engine's line — so it too is judged second by second then.
    each_second_over_line: ClassVar[bool] = False

    def __init__(self, thresholds: Thresholds) -> None:
        self.t = thresholds

    def each_second_of(self, frame: Frame, fleet: FleetView) -> bool:
        """Whether this sped-up `frame` (its last second's nodes gathered in `fleet`) says enough for the
        rule to be judged at each second it folds, where its class does not say it always is
        (`RolloutPaused`: a frame dating the rollout's pause; `DrainPacing`: drains saying when they
        started)."""
        return False

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        raise NotImplementedError
