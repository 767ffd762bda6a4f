"""The alarm rules of ../shared/DESIGN.md ("Alarms the console must know"), one class each; the shared
pieces (names, readings, the fleet view) are in `console.alarms.base`."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator
from typing import ClassVar

import numpy as np

from console.alarms.base import (
    AlarmName,
    FleetView,
    ForceClose,
    Reading,
    Rule,
    count,
    counts_apart,
    whole_count,
)
from console.alarms.tracking import (
    CalmBaseline,
    Onsets,
    Sustained,
    Window,
    calm_second,
    drop_pct,
    unhinted_attempts_per_s,
)
from console.figures import NAMED_NODES, beside_limit, first_named
from console.guards.capacity import node_room, spare_admission_per_s
from console.guards.rollout import HALTABLE, UNDRAINABLE
from console.guards.thresholds import Thresholds
from console.model.units import counted
from console.protocol import (
    WAVE_BIN_MS,
    Frame,
    NodeState,
    RolloutState,
    RolloutStatus,
    Severity,
    UnavailableReason,
)
from console.waves import bins_in, lockstep_index

__all__ = ["AlarmName", "FleetView", "Reading", "Rule", "build_rules"]


class ConnectionsDrop(Rule):
    """Total connections fell more than 5 % below their peak of the last 60 s (outage seed) — net of the
    clients a drain closed with a reconnect hint and still within it (`Totals.within_hint_clients`).

    Those are away by design: counted as lost, every drain-mode batch and planned drain whose clients wait
    out a hint of 1–30 s raised "clients are failing to reconnect" (found in review), and an alarm that
    cries on every planned batch teaches the operator to ignore it. Counted as held until their hint runs
    out, a client not back by then is missing again, and connections lost without a hint (an abrupt
    restart, a kill, a deadline's forced closes) are never covered. A source that does not say
    (`within_hint_clients` null) is judged on its connections alone, as before.

    A deadline's force-close still counts — it is a surge, hint or not — but where the nodes say what their
    drain's deadline force-closed in the window (`FleetView.force_closes`) and its clients are not yet due
    back, the words say so: "clients are failing to reconnect. Shed with admission." of the operator's own
    137 force-closed on a 300-client loopback fleet, all back within their 5 s hint, was false (review)."""

    each_second = True

    def __init__(self, thresholds: Thresholds) -> None:
        super().__init__(thresholds)
        self._window = Window(thresholds.connections_drop_window_s)

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        away = frame.totals.within_hint_clients or 0
        counted = frame.totals.connections + away
        self._window.add(frame.time_s, counted)
        peak = self._window.peak()
        drop = drop_pct(peak, counted)
        if drop is not None and drop > self.t.connections_drop_pct:
            # With drained clients counted, the words say so and what the rest can be: "failing to
            # reconnect" alone was the claim the review found false of a planned drain.
            beyond, counting, missing = (
                (
                    f" beyond the {whole_count(away)} clients closed by drains and still within their hint",
                    " counting them",
                    "the missing ones were lost without a paced hint (a restart, a kill, a deadline's "
                    "force-close) or are not back after theirs",
                )
                if away
                else ("", "", "clients are failing to reconnect")
            )
            advice = _hold_then_shed(frame, fleet)
            forced = self._forced_not_yet_due(frame.time_s, fleet)
            if forced:
                missing, advice = self._force_closed(forced, frame.time_s, peak - counted, peak, away, advice)
            yield Reading(
                AlarmName.CONNECTIONS_DROP,
                Severity.CRITICAL,
                drop,
                self.t.connections_drop_pct,
                f"Total connections fell {beside_limit(drop, self.t.connections_drop_pct, 1)} % within "
                f"{self.t.connections_drop_window_s:g} s{beyond} ({count(peak)} → {count(counted)}{counting}; "
                f"alarm over {self.t.connections_drop_pct:g} %): {missing}. " + advice,
            )

    def _forced_not_yet_due(self, time_s: float, fleet: FleetView) -> list[ForceClose]:
        """The drains' deadline force-closes inside the alarm's window whose clients are not all due back
        yet: what explains a drop now. One gone from the window is in no drop judged against its peak; one
        whose clients' hint has run out explains nothing more — those still away are missing. (A second's
        slack at the near end: a node dates its deadline on its own clock, the frame on the fleet's.)"""
        window_s = self.t.connections_drop_window_s
        return [
            closed
            for closed in fleet.force_closes
            if time_s - window_s < closed.at_s <= time_s + 1.0 and time_s < closed.due_by_s
        ]

    def _force_closed(
        self,
        forced: list[ForceClose],
        time_s: float,
        missing_clients: float,
        peak: float,
        away: int,
        advice: str,
    ) -> tuple[str, str]:
        """What is missing, and the advice, where drains' deadlines force-closed clients not yet due back.
        Where the rest of the drop (beyond the force-closed) stays within the line, the force-close is the
        drop: said as such, and the advice is for the moment they are due. Where more is missing, both."""
        clients = sum(closed.clients for closed in forced)
        nodes = sorted({closed.node for closed in forced})
        who = (
            f"{nodes[0]}'s drain deadline"
            if len(nodes) == 1
            else f"the drain deadlines of {first_named(nodes)}"
        )
        due_s = math.ceil(max(closed.due_by_s for closed in forced) - time_s - _SLACK_S)
        rest = missing_clients - clients
        rest_pct = drop_pct(peak, peak - rest)
        if rest_pct is None or rest_pct <= self.t.connections_drop_pct:
            low_s = min(closed.hint_ms[0] for closed in forced) / 1000.0
            high_s = max(closed.hint_ms[1] for closed in forced) / 1000.0
            said = (
                f"{who} force-closed {whole_count(clients)} clients at once, each told to come back within "
                f"{low_s:g}–{high_s:g} s — a forced close is counted as lost, not held, until its client is "
                f"back (due within {due_s} s)"
            )
            return said, "If they are not back by then, " + advice[0].lower() + advice[1:]
        rest_are = (
            "lost without a paced hint (a restart, a kill) or not back after theirs"
            if away
            else "clients are failing to reconnect"
        )
        return (
            f"{who} force-closed {whole_count(clients)} of them at once (due back within {due_s} s); "
            f"{whole_count(rest)} more are missing — {rest_are}",
            advice,
        )


#: Float noise in fleet times rebuilt from a deadline and a hint: a whole second is not rounded up past.
_SLACK_S = 1e-6


def _hold_then_shed(frame: Frame, fleet: FleetView) -> str:
    """The seed's "hold the rollout and drains" names only what is under way: on a fleet that cannot roll
    out, with nothing draining, it sent the operator after a rollout that did not exist. A frame that does
    not say its rollout keeps today's words."""
    rollout = frame.rollout
    held = [
        "the rollout" if rollout is None or rollout.state in HALTABLE else "",
        "drains" if rollout is None or NodeState.DRAINING in fleet.node_states else "",
    ]
    said = " and ".join(h for h in held if h)
    if not said:
        return "Shed with admission."
    return f"Hold {'the ' if said == 'drains' else ''}{said}; shed with admission."


class CpuAbort(Rule):
    """Any serving node's CPU above 80 % for 30 s: the outage seed's abort criterion.

    One fleet alarm naming the nodes, not one alarm per node: in a storm hundreds of nodes cross the line
    together, and a wall of identical alarms would bury the others (value: the hottest of them)."""

    each_second_over_line = True

    def __init__(self, thresholds: Thresholds) -> None:
        super().__init__(thresholds)
        self._hot = Onsets()

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        for_s = self.t.cpu_abort_for_s
        hot_s = self._hot.held(frame.time_s, (node_id for node_id, _ in fleet.hot_nodes))
        held = [(cpu, node_id) for node_id, cpu in fleet.hot_nodes if hot_s[node_id] >= for_s]
        if not held:
            return
        if fleet.hot_cpu_known:
            held.sort(reverse=True)
            named = first_named(
                [
                    f"{node_id} {beside_limit(cpu, self.t.cpu_abort_pct)} %"
                    for cpu, node_id in held[:NAMED_NODES]
                ],
                total=len(held),
            )
        else:  # an earlier second of a sped-up frame: its nodes, and its hottest CPU (it says no node's own)
            named = first_named([node_id for _, node_id in held]) + (
                f" (hottest node {beside_limit(held[0][0], self.t.cpu_abort_pct)} %)"
            )
        yield Reading(
            AlarmName.CPU_ABORT,
            Severity.CRITICAL,
            held[0][0],
            self.t.cpu_abort_pct,
            f"CPU over the abort line ({self.t.cpu_abort_pct:g} % for {for_s:g} s) on {named}: "
            + _abort_advice(frame, fleet),
            nodes=tuple(node_id for _, node_id in held),
        )


def _abort_advice(frame: Frame, fleet: FleetView) -> str:
    """The seed's "halt the restart" while a rollout is under way (or the source does not say); without
    one there is nothing to halt, and the advice is the load's: the seed's "add capacity" only where the
    fleet can grow (or does not say) — elsewhere what it can do, ration, and undrain the nodes out of
    rotation so the returning clients spread over more nodes."""
    rollout = frame.rollout
    if rollout is None or rollout.state in HALTABLE:
        return "halt the rollout and reassess."
    why_not = _cannot_add(frame, fleet)
    if why_not is None:
        return "no rollout is running to halt: ration the returning clients (admission) or add capacity."
    undrain = _undrain_move(fleet)
    return (
        f"no rollout is running to halt, and this fleet {why_not}: ration the returning clients (admission)"
        + (f"; {undrain}" if undrain else "")
        + "."
    )


def _cannot_add(frame: Frame, fleet: FleetView) -> str | None:
    """Why this fleet cannot add capacity ("adds no nodes", "is at its most, 16 nodes"); None when it can,
    or its frame does not say (then the advice keeps the seed's "add capacity"). The nodes are counted from
    the view, as node_down's way on counts them: the console judges frames sent without their node
    records."""
    room = node_room(frame.max_nodes, len(fleet.node_ids))
    return None if room is None else room.why_not()


def _undrain_move(fleet: FleetView) -> str:
    """The move that puts the nodes out of rotation back, "undrain gw-003, gw-007": capacity a fleet that
    cannot add nodes still has. Empty when none is out of rotation."""
    out = [
        node_id
        for node_id, state in zip(fleet.node_ids, fleet.node_states, strict=True)
        if state in UNDRAINABLE
    ]
    return f"undrain {first_named(out)}" if out else ""


class RolloutPaused(Rule):
    """The rollout paused itself (a surviving node went over the pause CPU, outage seed).

    A sped-up frame shows the rollout at its last second only; one that says when it paused
    (`paused_at_s`) is judged at each second it folds, held from the pause on — raised at the fleet second
    one frame a second raises it, not at the frame's end. Without it, judged on the last second, as before."""

    def each_second_of(self, frame: Frame, fleet: FleetView) -> bool:
        rollout = frame.rollout
        return (
            rollout is not None and rollout.state is RolloutState.PAUSED and rollout.paused_at_s is not None
        )

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        rollout = frame.rollout
        if rollout is None or rollout.state is not RolloutState.PAUSED:
            return
        if rollout.paused_at_s is not None and frame.time_s <= rollout.paused_at_s:
            return  # a second of a sped-up frame before the pause: the rollout still ran in it
        line_pct = rollout.pause_cpu_pct or self.t.cpu_pause_pct  # the rollout's own line, when it says
        reason = rollout.pause_reason or f"a surviving node went over {line_pct:g} % CPU"
        hottest_pct = frame.totals.max_cpu_pct or fleet.max_cpu_pct
        # The value is the CPU now, with no limit: what holds is the pause, not a reading over a line.
        # Compared with the pause line, the row's sign flipped as the fleet cooled ("12.2 < 15 %", then
        # "10.6 > 10 %") under a pause reason that said "CPU 16 % > 10 %" throughout (review).
        yield Reading(
            AlarmName.ROLLOUT_PAUSED,
            Severity.WARNING,
            hottest_pct,
            None,
            # ("before batch 1 of 3", not "at batch 0 of 3": a batch numbered 0 — `RolloutStatus.position`)
            f"Rollout auto-paused {rollout.position()}: {reason}. Hottest node now "
            f"{hottest_pct:.0f} % CPU; resume only once it is back under the pause line ({line_pct:g} %).",
        )


class HeadroomLow(Rule):
    """Headroom under the 35 % budget: no restart is safe (outage seed). Critical, as the headroom gauge
    shows it: below the budget the loss of any node (a restart, a crash) overloads the rest — the outage's
    cascade — and adding capacity takes minutes."""

    each_second = True

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        headroom_pct = frame.totals.headroom_pct
        if headroom_pct < self.t.headroom_min_pct:
            yield Reading(
                AlarmName.HEADROOM_LOW,
                Severity.CRITICAL,
                headroom_pct,
                self.t.headroom_min_pct,
                f"Headroom {beside_limit(headroom_pct, self.t.headroom_min_pct)} % is under the {self.t.headroom_min_pct:g} % budget: "
                + _headroom_advice(frame, fleet),
            )


def _headroom_advice(frame: Frame, fleet: FleetView) -> str:
    """The seed's "add capacity instead" where the fleet can grow (or does not say). Where it cannot, what
    it can do: bring the nodes down back first (their capacity is headroom lost, and node_down says how),
    halt a rollout under way (its restarts are what the budget says are unsafe), undrain the nodes out of
    rotation (headroom counts the nodes in rotation: theirs comes back), and shed load with admission (a
    connection ceiling keeps the survivors' connections under their capacity)."""
    why_not = _cannot_add(frame, fleet)
    if why_not is None:
        # With an add under way, "add capacity instead" read as if nothing had been done (review: 9 nodes
        # provisioning, the alarm unchanged for minutes).
        provisioning = sum(state is NodeState.PROVISIONING for state in fleet.node_states)
        if provisioning:
            return (
                f"no restart is safe; {counted(provisioning, 'node')} {'is' if provisioning == 1 else 'are'} "
                "provisioning: add more only if they will not reach the budget once ready (the add's verdict "
                "says)."
            )
        return "no restart is safe; add capacity instead."
    rollout = frame.rollout
    moves = [
        _down_move(frame, fleet),
        "halt the rollout" if rollout is not None and rollout.state in HALTABLE else "",
        _undrain_move(fleet),
        "shed load with admission",
    ]
    return f"no restart is safe, and this fleet {why_not}: " + "; ".join(m for m in moves if m) + "."


def _down_move(frame: Frame, fleet: FleetView) -> str:
    """The move that brings the down nodes back on a fleet that cannot add capacity, as node_down advises it
    (`way_on_for_a_node_down`): "restart gw-003" where its nodes have a restart command (or a newer reason
    does not say they have none), "start gw-003 again where it runs" where they have none and the fleet adds
    no nodes (a nodes file's controller). Empty with none down, and at its most with no restart command,
    where node_down names no way either."""
    down = fleet.down_nodes
    if not down:
        return ""
    rollout = frame.rollout
    reason = rollout.unavailable_reason if rollout is not None else None
    if _restarts_nodes(rollout) or (reason is not None and reason != UnavailableReason.NO_RESTART_COMMAND):
        return f"restart {first_named(down)}"
    if frame.max_nodes is not None and frame.max_nodes <= 0:
        return f"start {first_named(down)} again where {'it runs' if len(down) == 1 else 'they run'}"
    return ""


class DrainInflow(Rule):
    """Drain ÷ inflow below 1 for 60 s (losing ground), and the kill switch at 0.6 (sync-engine essay)."""

    each_second = True

    def __init__(self, thresholds: Thresholds) -> None:
        super().__init__(thresholds)
        self._losing = Sustained()

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        ratio = frame.totals.drain_inflow_ratio
        losing_under, kill_under = self.t.drain_inflow_losing_ratio, self.t.drain_inflow_kill_ratio
        losing = ratio is not None and ratio < losing_under
        held_s = self._losing.update(frame.time_s, losing)
        if ratio is None:
            return
        if held_s is not None and held_s >= self.t.drain_inflow_losing_for_s:
            # The words name the kill switch too: the ratio is kept on its side of both lines ("0.599",
            # not "0.60", beside a kill switch of 0.6).
            shown = beside_limit(ratio, losing_under, 2, also=[kill_under])
            # Under the kill switch, "before" it would ask for what is too late: its own alarm is up.
            when = (
                f"the kill switch ({kill_under:g}) has tripped"
                if ratio < kill_under
                else f"before the kill switch ({kill_under:g})"
            )
            yield Reading(
                AlarmName.DRAIN_INFLOW_LOSING,
                Severity.WARNING,
                ratio,
                losing_under,
                f"Drain ÷ inflow {shown} for {held_s:.0f} s (alarm under {losing_under:g}): the reconnect "
                f"backlog keeps growing; the storm is winning. Add no load; shed with admission — {when}.",
            )
        if ratio < kill_under:
            yield Reading(
                AlarmName.DRAIN_INFLOW_KILL_SWITCH,
                Severity.CRITICAL,
                ratio,
                kill_under,
                f"Drain ÷ inflow {beside_limit(ratio, kill_under, 2)} is under the kill switch "
                f"({kill_under:g}): stop adding load and shed with admission.",
            )


class LockstepWaves(Rule):
    """Attempts bunched in spikes rather than a smear: `console.waves.lockstep_index` over the last 30 s.
    Warning: waves are how a storm arrives, not yet a loss (that is `connections_drop`'s, `headroom_low`'s)."""

    each_second = True
    #: The wave chart says LOCKSTEP at this level too (console.ui.charts): one level on every panel.
    SEVERITY: ClassVar[Severity] = Severity.WARNING

    def __init__(self, thresholds: Thresholds) -> None:
        super().__init__(thresholds)
        self._bins: deque[int] = deque(maxlen=bins_in(thresholds.lockstep_window_s, WAVE_BIN_MS))

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        self._bins.extend(frame.waves.attempts)
        index = lockstep_index(np.fromiter(self._bins, dtype=np.float64, count=len(self._bins)))
        if index is not None and index >= self.t.lockstep_index_max:  # (None: too quiet to judge)
            # On its side of the limit as configured, as the wave chart's LOCKSTEP reading writes it: to
            # one place, "4.0" beside a limit of 4.05 read as under the line it fired at (or above).
            shown = beside_limit(index, self.t.lockstep_index_max, 1)
            yield Reading(
                AlarmName.LOCKSTEP_WAVES,
                self.SEVERITY,
                index,
                self.t.lockstep_index_max,
                f"Reconnects arrive in lockstep waves (a 100 ms bin {shown}× its 2 s mean, alarm at "
                f"{self.t.lockstep_index_max:g}×): client jitter is too small. Spread them: wide "
                "Retry-After windows, wide drain hints.",
            )


class RateOverBaseline(Rule):
    """A per-second rate many times its steady baseline, for a few seconds. Serves the reconnect rate
    (outage seed: ~80 k/min steady, 13 M/min in the storm) and abnormal 1006 closes (field guide)."""

    each_second = True

    def __init__(
        self,
        thresholds: Thresholds,
        name: AlarmName,
        severity: Severity,
        rate_of: Callable[[Frame], float],
        multiple: float,
        floor_per_s: float,
        configured_per_s: float,
        describe: str,
        advice: str | Callable[[Frame], str] = "",
    ) -> None:
        super().__init__(thresholds)
        self.name = name
        self.severity = severity
        self.rate_of = rate_of
        self.multiple = multiple
        self.floor_per_s = floor_per_s
        self.describe = describe
        self.advice = advice
        self._baseline = CalmBaseline(
            thresholds.baseline_learn_s, thresholds.baseline_tau_s, configured_per_s
        )
        self._over = Sustained()

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        rate_per_s = self.rate_of(frame)
        baseline = self._baseline.level_per_s
        limit = None if baseline is None else self.multiple * max(baseline, self.floor_per_s)
        over = limit is not None and rate_per_s > limit
        calm = calm_second(frame.totals, self.t.cpu_pause_pct, fleet.max_cpu_pct)
        self._baseline.observe(frame.time_s, rate_per_s, over_line=over, calm=calm)
        held_s = self._over.update(frame.time_s, over)
        if held_s is not None and held_s >= self.t.rate_alarm_for_s and baseline is not None:
            steady_per_s = max(baseline, self.floor_per_s)  # the line's base: never below the floor
            # The floor said as the floor ("the steady 10/s" of a fleet whose steady rate was 2/s).
            base = (
                f"the steady {count(steady_per_s)}/s"
                if baseline >= self.floor_per_s
                else f"the {count(steady_per_s)}/s floor (steady {baseline:,.0f}/s)"
            )
            yield Reading(
                self.name,
                self.severity,
                rate_per_s,
                limit,
                f"{self.describe} {count(rate_per_s)}/s, "
                f"{beside_limit(rate_per_s / steady_per_s, self.multiple)}× {base} "
                f"(alarm at {self.multiple:g}×)." + (f" {advice}" if (advice := self._advice(frame)) else ""),
            )

    def _advice(self, frame: Frame) -> str:
        return self.advice(frame) if callable(self.advice) else self.advice


def _ration_advice(frame: Frame) -> str:
    """What a reconnect storm asks of the operator: rationing with admission — or, where admission already
    rations them, to keep it (review: "Ration them with admission" for two minutes beside 250/s a node in
    force, as if nothing had been done)."""
    admission = frame.admission
    ration = (
        "Admission is on: keep it."
        if admission is not None and admission.rate_per_s is not None
        else "Ration them with admission."
    )
    returned = frame.totals.hinted_returns_per_s or 0.0
    if returned < 1:
        return ration
    # The drained clients back on their hint are not in the figure: said, so it adds up with the chart's.
    return f"{count(returned)}/s more are drained clients back on their hint, not counted. {ration}"


class ResyncShare(Rule):
    """Full resyncs as a share of accepts over the last 10 s: clients missing the resume window."""

    each_second = True

    #: Accepts a window must hold before its share counts (two resyncs of three accepts is not a trend).
    MIN_ACCEPTS = 100

    def __init__(self, thresholds: Thresholds) -> None:
        super().__init__(thresholds)
        self._resyncs = Window(thresholds.rate_window_s)
        self._accepts = Window(thresholds.rate_window_s)

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        self._resyncs.add(frame.time_s, frame.totals.full_resyncs_per_s)
        self._accepts.add(frame.time_s, frame.totals.accepts_per_s)
        accepts = self._accepts.total()
        if accepts < self.MIN_ACCEPTS:
            return
        share_pct = self._resyncs.total() / accepts * 100
        if share_pct > self.t.resync_share_max_pct:
            yield Reading(
                AlarmName.RESYNC_SHARE_RISING,
                Severity.WARNING,
                share_pct,
                self.t.resync_share_max_pct,
                f"Full resyncs are {beside_limit(share_pct, self.t.resync_share_max_pct)} % of accepts over "
                f"{self.t.rate_window_s:g} s (alarm over {self.t.resync_share_max_pct:g} %): clients are missing "
                "the resume window. Ration them with admission so the resync path keeps up.",
            )


class DrainPacing(Rule):
    """Draining nodes × drain rate over the spare admission capacity (field guide: "your deploy rate is a
    disconnect rate"). Spare = what nodes in rotation can admit − what they admit besides the drain.

    A sped-up frame whose drains say when they started (`DrainProgress.started_at_s`) is judged at each
    second it folds, against that second's accepts, with the drains under way then and the nodes still in
    rotation then (`FleetView.drains_in_second`): a breach between two frames' last seconds was missed. A
    drain that ended inside the frame counts up to its last second as the frame lists it
    (`Frame.folded_drains`, `FleetView.with_folded_drains`) — one that started inside it too — or, from an
    older server, up to the end the frame before dated it by (`FleetView.with_ended_drains`). Without the
    starts, judged on the last second, as before."""

    def each_second_of(self, frame: Frame, fleet: FleetView) -> bool:
        return fleet.drains_said

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        if fleet.draining_nodes == 0 or fleet.admission_capacity_per_s is None:
            return
        spare_per_s = spare_admission_per_s(
            fleet.admission_capacity_per_s, frame.totals.accepts_per_s, fleet.drain_rate_per_s
        )
        if fleet.drain_rate_per_s > spare_per_s:
            drain, spare = counts_apart(fleet.drain_rate_per_s, spare_per_s)
            yield Reading(
                AlarmName.DRAIN_PACING_EXCEEDED,
                Severity.WARNING,
                fleet.drain_rate_per_s,
                spare_per_s,
                f"{counted(fleet.draining_nodes, 'node')} draining at {drain} closes/s in all, "
                f"over the spare admission capacity ({spare}/s): slow the drains or drain fewer "
                "nodes at once.",
            )


class NodeDown(Rule):
    """A node `down` — killed, crashed, or not answering its admin API — one alarm per node, raised at once
    and cleared once it is back. A planned restart (a rollout's, an operator's) shows `restarting`, never
    `down`, so only the unplanned loss is named. Warning, not critical: what the loss does to the fleet is
    judged by `connections_drop` and `headroom_low`; this one says which node to bring back."""

    def __init__(self, thresholds: Thresholds) -> None:
        super().__init__(thresholds)
        self._down = Onsets()  # (a node back is forgotten: a later loss is a new outage, timed from then)

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        down = self._down.held(frame.time_s, fleet.down_nodes)
        # (the nodes counted from the view: the console judges frames sent without their node records)
        way_on = way_on_for_a_node_down(frame, len(fleet.node_ids)) if down else ""
        for node_id, down_s in down.items():
            yield Reading(
                AlarmName.NODE_DOWN,
                Severity.WARNING,
                down_s,
                None,
                f"{node_id} down {down_s:.0f} s, not a planned restart (killed, crashed or hung): its "
                f"clients reconnect to the rest. {way_on}",
                node=node_id,
            )


#: node_down's advice on a fleet that says its nodes have no restart command but not whether it can add
#: nodes (an older server: words in `rollout.unavailable` only, no `max_nodes`): both ways, as it cannot
#: tell which this fleet has.
EITHER_WAY_ON = (
    "This fleet's nodes have no restart command, so nothing here restarts it: add capacity, or start it "
    "again where it runs."
)


def _restarts_nodes(rollout: RolloutStatus | None) -> bool:
    """Nothing in the frame says this fleet cannot roll out (its nodes have their restart command): a
    node down there is restarted."""
    return rollout is None or not (rollout.unavailable or rollout.unavailable_reason)


def way_on_for_a_node_down(frame: Frame, nodes: int) -> str:
    """What to do about a node down, as this fleet allows (`nodes`: how many the frame lists, the down ones
    included, as an add's room counts them). A fleet whose nodes have no restart command says so in every
    frame (`rollout.unavailable_reason`, what R's refusal and the rollout panel read): nothing there restarts
    the node and no rollout runs, so "Restart it; no rollout until it is back" sent the operator after
    neither. Which way on it has, its `max_nodes` says: `fleet up` adds capacity (a provisioner), a
    controller over a nodes file adds none (0) — its node is started again where it runs."""
    rollout = frame.rollout
    if _restarts_nodes(rollout):
        return "Restart it; no rollout until it is back."
    reason = rollout.unavailable_reason
    if reason is None or (reason == UnavailableReason.NO_RESTART_COMMAND and frame.max_nodes is None):
        return EITHER_WAY_ON  # said in words only, or its room not said: not guessed from them
    if reason != UnavailableReason.NO_RESTART_COMMAND:
        # A newer server's reason: nothing says its nodes cannot be restarted. Named, no remedy guessed.
        return f"Restart it; this fleet cannot roll out ({reason.replace('_', ' ')})."
    no_restart = "This fleet's nodes have no restart command, so nothing here restarts it"
    room = node_room(frame.max_nodes, nodes)
    assert room is not None
    if room.max_nodes <= 0:
        return f"{no_restart}, and it {room.why_not()}: start it again where it runs."
    if not room.can_add:
        # An add is refused "at its most" (guards.add_capacity): not a way on here either.
        return f"{no_restart}, and it {room.why_not()} (the down one counted): it cannot add capacity either."
    return f"{no_restart}: add capacity in its place (room for {counted(room.room, 'more node')})."


class HistoryUnreachable(Rule):
    """Nodes reporting their history (Redis) unreachable for `history_unreachable_for_s`: arriving clients
    are closed 1013 and live messages wait. One fleet alarm naming the nodes, as `cpu_abort`: a fleet's
    nodes share one Redis, so when it goes they all say so at once. Calm by design: a Redis restart's few
    seconds raise nothing (the node detail shows them); warning, since clients come back by themselves once
    it answers (value: the longest of them, in seconds)."""

    def __init__(self, thresholds: Thresholds) -> None:
        super().__init__(thresholds)
        self._away = Onsets()

    def evaluate(self, frame: Frame, fleet: FleetView) -> Iterator[Reading]:
        for_s = self.t.history_unreachable_for_s
        away_s = self._away.held(frame.time_s, sorted(node_id for node_id, _ in fleet.history_unreachable))
        held = sorted(
            ((seconds, node_id) for node_id, seconds in away_s.items() if seconds >= for_s),
            key=lambda pair: (-pair[0], pair[1]),
        )
        if not held:
            return
        named = first_named([node_id for _, node_id in held])
        their, catch_up = (
            ("its", "the node catches up by itself")
            if len(held) == 1
            else ("their", "the nodes catch up by themselves")
        )
        yield Reading(
            AlarmName.HISTORY_UNREACHABLE,
            Severity.WARNING,
            held[0][0],
            for_s,
            f"{named} cannot reach Redis ({their} history) for {held[0][0]:.0f} s: arriving clients get "
            f"1013 (try again later), live messages wait. Bring Redis back; {catch_up}.",
            nodes=tuple(node_id for _, node_id in held),
        )


def build_rules(thresholds: Thresholds) -> list[Rule]:
    """Every rule, in the order their alarms are listed in DESIGN.md; then the ones added since
    (docs/alarms.md lists them all)."""
    t = thresholds
    return [
        ConnectionsDrop(t),
        CpuAbort(t),
        RolloutPaused(t),
        HeadroomLow(t),
        DrainInflow(t),
        LockstepWaves(t),
        RateOverBaseline(
            t,
            AlarmName.RECONNECT_RATE_HIGH,
            Severity.CRITICAL,
            lambda frame: unhinted_attempts_per_s(frame.totals),
            t.reconnect_rate_multiple,
            t.reconnect_floor_per_s,
            t.reconnect_baseline_per_s,
            "Reconnect attempts",
            _ration_advice,
        ),
        ResyncShare(t),
        RateOverBaseline(
            t,
            AlarmName.ABNORMAL_CLOSES_RISING,
            Severity.WARNING,
            lambda frame: frame.totals.abnormal_closes_per_s,
            t.abnormal_closes_multiple,
            t.abnormal_closes_floor_per_s,
            0.0,
            "Abnormal closes (1006, no close frame)",
            # 1006 carries no reason (field guide, INC-10719): say where such closes come from.
            "No reason given: look for nodes down or hot, or a load balancer cutting idle connections.",
        ),
        DrainPacing(t),
        NodeDown(t),
        HistoryUnreachable(t),
    ]
