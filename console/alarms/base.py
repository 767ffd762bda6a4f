"""What the alarm rules share: the alarm names, a reading, the one pass over a frame's nodes, the rule base.

A rule reads one frame (plus what it remembers of the frames before) and returns the readings that hold
now: each one an alarm condition with its value, its limit and a message in the operator's words. The
engine (`console.alarms.engine`) turns readings into raised and cleared alarms.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import ClassVar, NamedTuple

from console.guards.capacity import AdmissionLimit, FleetCapacity
from console.guards.thresholds import Thresholds
from console.protocol import (
    AdmissionInForce,
    AdmissionSettings,
    DrainProgress,
    FoldedDrain,
    Frame,
    NodeState,
    Severity,
)


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


#: Each alarm's name in a narrow panel (80 columns: 30 cells), as the gauges have theirs
#: (`console.model.gauges.SHORT_LABELS`): the name whole left its value and limit no room ("✖
#: connections_drop" and ten blank cells), and a name cut ("connectio…") is no word. Each is whole words
#: of the operator's, told apart from every other, in at most `SHORT_LABEL_MAX` cells; the full name is
#: said in the line under the panel.
SHORT_LABELS: dict[AlarmName, str] = {
    AlarmName.CONNECTIONS_DROP: "conns drop",
    AlarmName.CPU_ABORT: "cpu abort",
    AlarmName.ROLLOUT_PAUSED: "auto-pause",  # (the rollout paused itself: "Rollout auto-paused …")
    AlarmName.HEADROOM_LOW: "headroom",
    AlarmName.DRAIN_INFLOW_LOSING: "drain lags",  # (drain ÷ inflow under 1: the backlog grows)
    AlarmName.DRAIN_INFLOW_KILL_SWITCH: "drain kill",  # (drain ÷ inflow under the kill switch)
    AlarmName.LOCKSTEP_WAVES: "lockstep",
    AlarmName.RECONNECT_RATE_HIGH: "reconnects",
    AlarmName.RESYNC_SHARE_RISING: "resyncs",
    AlarmName.ABNORMAL_CLOSES_RISING: "abnormal",
    AlarmName.DRAIN_PACING_EXCEEDED: "drain pace",
    AlarmName.NODE_DOWN: "node down",
    AlarmName.HISTORY_UNREACHABLE: "no Redis",  # (a node's history is its Redis: "cannot reach Redis")
}
SHORT_LABEL_MAX = 10  # (at 80 columns: 30 cells less the glyph leave 15 for "38.6k > 5.3k/s")


def short_label(name: str) -> str:
    """Alarm `name`'s `SHORT_LABELS` entry; the name itself for one this console does not know (a newer
    server's)."""
    return SHORT_LABELS.get(name, name)


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


#: The alarms held while their value is under their limit (headroom, drain ÷ inflow): worst at their lowest.
#: Every other alarm is held over its limit (or has none: how long a node has been down), worst at its
#: highest — a "fell" rule's value is the drop, highest at its worst.
HELD_BELOW: frozenset[AlarmName] = frozenset(
    {AlarmName.HEADROOM_LOW, AlarmName.DRAIN_INFLOW_LOSING, AlarmName.DRAIN_INFLOW_KILL_SWITCH}
)


def is_worse(name: str, value: float, than: float) -> bool:
    """Whether `value` is further past alarm `name`'s limit than `than` (`HELD_BELOW`)."""
    return value < than if name in HELD_BELOW else value > than


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

#: Slack for fleet times rebuilt from a frame's time and a drain's `eta_s` (a sum of floats lands a hair
#: off the whole second it stands for).
_TIME_SLACK_S = 1e-6


class Drain(NamedTuple):
    """A draining node's drain as its status says it (`DrainProgress`): what judging the earlier seconds of
    a sped-up frame by its drains needs."""

    node: str
    started_at_s: float
    rate_per_s: float
    admits_per_s: float | None  # what its node admits per second in rotation; None if unknown
    eta_s: float | None  # seconds until empty at its rate, its deadline included
    deadline_at_s: float

    def last_second_s(self, seen_at_s: float) -> float | None:
        """The last fleet second this drain is under way, as its status at `seen_at_s` says: the second it
        closes its last connection in (empty `eta_s` from then), or, its deadline coming first, the second
        that starts at the deadline — the simulator force-closes what remains then, and shows the node
        draining through that second. None when its status gives no `eta_s`."""
        if self.eta_s is None:
            return None
        empty_at_s = seen_at_s + self.eta_s
        if empty_at_s >= self.deadline_at_s - _TIME_SLACK_S:
            return math.floor(self.deadline_at_s + _TIME_SLACK_S) + 1.0
        return float(math.ceil(empty_at_s - _TIME_SLACK_S))


class ForceClose(NamedTuple):
    """What a drain's deadline force-closed, as its node's drain status says (`DrainProgress.forced`: a real
    node's, kept once it is drained; the simulator says none): `clients` closed in one moment at `at_s`,
    each told to come back within `hint_ms`."""

    node: str
    clients: int
    at_s: float  # the drain's deadline (fleet time)
    hint_ms: tuple[int, int]

    @property
    def due_by_s(self) -> float:
        """When the last of them is due back: the hint's end after the deadline."""
        return self.at_s + self.hint_ms[1] / 1000.0


class EndedDrain(NamedTuple):
    """A drain under way in a sped-up frame's earlier seconds and not at its last: it ended inside the
    frame (as the frame says, `Frame.folded_drains`, or as the frame before dated it)."""

    started_at_s: float
    rate_per_s: float
    last_second_s: float  # the last fleet second it was under way (`Drain.last_second_s`)
    # What its node admits at the frame's end, in rotation again then (0 if not; None if unknown): it
    # did not while it drained.
    admits_at_end_per_s: float | None
    # What its node admits in rotation (None if unknown): it did before its drain started — a drain
    # starts from `ready` — in the seconds of a frame that also saw it start.
    admits_per_s: float | None = None


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
    # Each draining node's drain; None when a draining node does not say when its drain started (no drain
    # status).
    drains: tuple[Drain, ...] | None = None
    # The drains that ended inside a sped-up frame, from the frame before (`with_ended_drains`); None when
    # what ended is not known (no frame before, or one whose drains did not say).
    ended_drains: tuple[EndedDrain, ...] | None = None
    # The nodes as given, not copied — what `with_ended_drains` reads of the few whose drain ended.
    # What drains' deadlines force-closed, where the nodes' drain statuses say (`ForceClose`; none from a
    # source that does not: the simulator, or a frame sent without them).
    force_closes: tuple[ForceClose, ...] = ()
    node_ids: Sequence[str] = field(default=(), repr=False, compare=False)
    node_states: Sequence[NodeState] = field(default=(), repr=False, compare=False)
    admission_limit: AdmissionLimit | None = field(default=None, repr=False, compare=False)

    def folded_second(self, hot: Iterable[str], max_cpu_pct: float) -> FleetView:
        """The view of an earlier second a sped-up frame folds, from the nodes it says were over the abort
        line then (`Frame.hot_by_second`); the rest is the frame's last second's (no rule judged each second
        reads it)."""
        over = tuple((node_id, max_cpu_pct) for node_id in sorted(hot))
        return replace(self, hot_nodes=over, max_cpu_pct=max_cpu_pct, hot_cpu_known=False)

    @property
    def drains_said(self) -> bool:
        """Whether the drains say enough to judge a sped-up frame's earlier seconds (`drains_in_second`):
        every draining node gives its drain's start, and a drain is under way at the frame's end or the
        frame before said which were under way then (`with_ended_drains`) — with none under way in any of
        its seconds, an alarm up clears at its own second, not at the frame's end."""
        return self.drains is not None and (bool(self.drains) or self.ended_drains is not None)

    def drains_in_second(self, time_s: float) -> FleetView:
        """The view of an earlier second of a sped-up frame, the second ending at `time_s`, as the drains
        under way at the frame's end say: a drain counts from the second after it started
        (`DrainProgress.started_at_s`; the simulator starts one between seconds), and a node whose drain
        started later was still in rotation, admitting. A drain that ended within the frame (its node
        drained, or restarting, or back in rotation by the last second) counts up to its last second as the
        frame before dated it (`with_ended_drains`), its node not admitting then. Itself when the drains do
        not say."""
        if not self.drains_said:
            return self
        assert self.drains is not None
        draining = 0
        drain_rate = 0.0
        admit = self.admission_capacity_per_s
        for drain in self.drains:
            if drain.started_at_s < time_s:
                draining += 1
                drain_rate += drain.rate_per_s
            elif admit is not None:
                admit = None if drain.admits_per_s is None else admit + drain.admits_per_s
        for ended in self.ended_drains or ():
            if ended.started_at_s < time_s <= ended.last_second_s:
                draining += 1
                drain_rate += ended.rate_per_s
                if admit is not None:
                    admit = None if ended.admits_at_end_per_s is None else admit - ended.admits_at_end_per_s
            elif time_s <= ended.started_at_s and admit is not None:
                # Not yet draining: in rotation, admitting — though out of it at the frame's end.
                if ended.admits_per_s is None or ended.admits_at_end_per_s is None:
                    admit = None
                else:
                    admit += ended.admits_per_s - ended.admits_at_end_per_s
        return replace(
            self, draining_nodes=draining, drain_rate_per_s=drain_rate, admission_capacity_per_s=admit
        )

    def with_folded_drains(self, ended: Sequence[FoldedDrain]) -> FleetView:
        """This frame's view with the drains it says ended inside it (`Frame.folded_drains`): each counts in
        the frame's earlier seconds from the second after its start to its last, its node not admitting
        then, and admitting before it started (`drains_in_second`) — a drain that started and ended between
        two frames too, which neither frame's nodes show. Exact where `with_ended_drains` dates a drain by
        what the frame before said of it. Itself when this frame's drains do not say (`drains` None)."""
        if self.drains is None:
            return self
        under_way = {(drain.node, drain.started_at_s) for drain in self.drains}
        gone = [drain for drain in ended if (drain.node, drain.started_at_s) not in under_way]
        states = dict(zip(self.node_ids, self.node_states, strict=True)) if gone else {}
        return replace(
            self,
            ended_drains=tuple(
                self._ended(states, drain.node, drain.started_at_s, drain.rate_per_s, drain.last_s)
                for drain in gone
            ),
        )

    def _ended(
        self,
        states: dict[str, NodeState],
        node: str,
        started_at_s: float,
        rate_per_s: float,
        last_second_s: float,
    ) -> EndedDrain:
        """A drain of `node` that ended inside the frame, with what its node admits: at the frame's end
        (only if back in rotation then, as `states` say) and in rotation."""
        admits = self.admission_limit.for_node(node) if self.admission_limit else None
        in_rotation = states.get(node) is NodeState.READY
        return EndedDrain(started_at_s, rate_per_s, last_second_s, admits if in_rotation else 0.0, admits)

    def with_ended_drains(self, before: Sequence[Drain], before_s: float) -> FleetView:
        """This frame's view with the drains the frame before (at fleet time `before_s`) showed under way
        and this one does not: they ended inside this frame — the simulator drops a drain's status once its
        node is drained — and each counts in this frame's earlier seconds up to its last second as its
        status then said (`Drain.last_second_s`), not at all without it. A drain cut short (undrained, its
        node restarted or killed) is counted to that end too: the frame does not say when it stopped.
        Itself when this frame's drains do not say (`drains` None)."""
        if self.drains is None:
            return self
        under_way = {(drain.node, drain.started_at_s) for drain in self.drains}
        gone = [drain for drain in before if (drain.node, drain.started_at_s) not in under_way]
        if not gone:
            return replace(self, ended_drains=())
        states = dict(zip(self.node_ids, self.node_states, strict=True))
        ended = []
        for drain in gone:
            last_second_s = drain.last_second_s(before_s)
            if last_second_s is None or last_second_s <= before_s:
                continue
            ended.append(self._ended(states, drain.node, drain.started_at_s, drain.rate_per_s, last_second_s))
        return replace(self, ended_drains=tuple(ended))

    @classmethod
    def of(cls, frame: Frame, thresholds: Thresholds, capacity: FleetCapacity | None) -> FleetView:
        nodes = frame.nodes
        return cls.of_columns(
            [node.id for node in nodes],
            [node.state for node in nodes],
            [node.cpu_pct for node in nodes],
            [node.drain.rate_per_s if node.drain is not None else node.closes_per_s for node in nodes],
            AdmissionInForce.of(frame),
            thresholds,
            capacity,
            tuple((node.id, node.history_unreachable) for node in nodes if node.history_unreachable),
            drain_status=[node.drain for node in nodes],
        )

    @classmethod
    def of_columns(
        cls,
        ids: Sequence[str],
        states: Sequence[NodeState],
        cpu_pct: Sequence[float],
        drain_rate_per_s: Sequence[float],
        admission: AdmissionInForce | AdmissionSettings | None,
        thresholds: Thresholds,
        capacity: FleetCapacity | None,
        history_unreachable: tuple[tuple[str, str], ...] = (),
        *,
        drain_status: Sequence[DrainProgress | None] | None = None,
    ) -> FleetView:
        """The same from columns, one value a node: what a simulator has without building a frame's node
        records (`sim run` judges 1,500 seconds of 480–680 nodes). drain_rate_per_s: a draining node's
        requested close rate (its closes when none was requested); read only for draining nodes.
        history_unreachable: (id, why) of the nodes saying they cannot reach their Redis (the console's
        NodeReadings carry it; a simulated node never says so). drain_status: a node's drain status (None
        where it carries none), read only for draining nodes: its start and end are what `drains_in_second`
        and `with_ended_drains` judge a sped-up frame's earlier seconds by; None when not known (one frame
        a second needs none). admission: what each node runs (`AdmissionInForce`: the fleet's settings and
        its per-node overrides), or the fleet's settings alone."""
        abort_pct = thresholds.cpu_abort_pct
        admission_limit = AdmissionLimit(admission, capacity)
        hot: list[tuple[str, float]] = []
        down: list[str] = []
        draining = 0
        drain_rate = 0.0
        admit = 0.0
        admit_known = True
        statuses = drain_status if drain_status is not None else [None] * len(ids)
        drains: list[Drain] | None = []
        forced: list[ForceClose] = []
        for node_id, state, cpu, rate, status in zip(
            ids, states, cpu_pct, drain_rate_per_s, statuses, strict=True
        ):
            if status is not None and status.forced > 0:  # (a drained node's too: its deadline came)
                forced.append(ForceClose(node_id, status.forced, status.deadline_at_s, status.hint_ms))
            if cpu > abort_pct and state in SERVING:
                hot.append((node_id, cpu))
            if state is NodeState.DRAINING:
                draining += 1
                drain_rate += rate
                if status is None:
                    drains = None
                elif drains is not None:
                    admits = admission_limit.for_node(node_id)
                    drains.append(
                        Drain(node_id, status.started_at_s, rate, admits, status.eta_s, status.deadline_at_s)
                    )
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
            force_closes=tuple(forced),
            node_ids=ids,
            node_states=states,
            admission_limit=admission_limit,
        )


class _Scale(NamedTuple):
    """How `count` writes a figure of some size: divided by `divisor`, to `places`, then `unit`."""

    divisor: float
    places: int
    unit: str

    def shown(self, value: float, places: int | None = None) -> str:
        return f"{value / self.divisor:,.{self.places if places is None else places}f}{self.unit}"


def _scale(magnitude: float) -> _Scale:
    if magnitude >= 1e6:
        return _Scale(1e6, 2, " M")
    if magnitude >= 1e4:
        return _Scale(1e3, 0, " k")
    if magnitude >= 1e3:
        return _Scale(1e3, 1, " k")
    return _Scale(1.0, 0 if magnitude >= 10 else 1, "")


def count(value: float) -> str:
    """A figure the way an operator reads it: 13.0 M, 216 k, 833."""
    return _scale(abs(value)).shown(value)


def whole_count(value: float) -> str:
    """A count of things that come whole — clients — as `count` writes it, without its places under a
    thousand: "7 clients", not "7.0" (review)."""
    scale = _scale(abs(value))
    return scale.shown(value, 0 if scale.divisor == 1.0 else None)


#: The most places `counts_apart` writes: figures closer than that are said as equal.
MOST_PLACES = 6


def counts_apart(value: float, limit: float) -> tuple[str, str]:
    """`value` and its `limit` as `count` writes the larger of them, one format for both ("3.4" over "3.0",
    not "3.4" over "3"), with the places that keep `value` on its side of `limit` when that format reads
    them the same: 3.02 closes/s over a spare 3.00/s read "3" over "3" — as if equal — and 1,040 over 1,030
    read "1.0 k" over "1.0 k". Then they are written whole, unscaled ("1,040", "1,030"), and given places
    until they part ("3.02", "3.00"), at most `MOST_PLACES`."""
    side = (value > limit) - (value < limit)

    def parted(scale: _Scale, places: int) -> bool:
        shown_value, shown_limit = (
            float(f"{figure / scale.divisor:.{places}f}") for figure in (value, limit)
        )  # as printed (round() is not how f-strings round)
        return (shown_value > shown_limit) - (shown_value < shown_limit) == side

    scale = _scale(max(abs(value), abs(limit)))
    if not parted(scale, scale.places):
        scale = _Scale(1.0, 0 if scale.divisor > 1 else scale.places, "")
        while scale.places < MOST_PLACES and not parted(scale, scale.places):
            scale = scale._replace(places=scale.places + 1)
    return scale.shown(value), scale.shown(limit)


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
