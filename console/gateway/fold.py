"""Folding the nodes' frames into the fleet's: totals over the nodes, wave bins summed over them, and
the clients' flow (drain ÷ inflow) over the trailing seconds.

Pure: node figures in, fleet figures out; the controller calls these on every frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from console.figures import DrainInflow, HintedCloses, WithinHint, headroom_pct
from console.protocol import WAVE_BIN_MS, DueBack, NodeState, NodeStatus, Totals, Waves

#: Wave bins are emitted once this old, so every node's frame for that second has had time to arrive.
WAVE_SETTLE_S = 1.5


def fold_totals(nodes: list[NodeStatus]) -> Totals:
    """Fleet totals from node figures. Headroom: the capacity of the nodes in rotation against every
    connection held (`figures.headroom_pct`, as the simulator's)."""
    capacity = sum(n.capacity_connections for n in nodes if n.state.in_rotation)
    connections = sum(n.connections for n in nodes)
    return Totals(
        connections=connections,
        attempts_per_s=sum(n.attempts_per_s for n in nodes),
        accepts_per_s=sum(n.accepts_per_s for n in nodes),
        rejects_per_s=sum(n.rejects_per_s for n in nodes),
        timeouts_per_s=sum(n.timeouts_per_s for n in nodes),
        drops_per_s=sum(n.drops_per_s for n in nodes),
        disconnects_per_s=sum(n.closes_per_s + n.drops_per_s for n in nodes),  # planned and not
        headroom_pct=headroom_pct(connections, capacity),
        drain_inflow_ratio=None,
        max_cpu_pct=max((n.cpu_pct for n in nodes), default=0.0),
    )


@dataclass
class WaveSum:
    """Attempts per absolute 100 ms bin, summed over nodes, handed out once each."""

    bins: dict[int, int] = field(default_factory=dict)
    emitted_to: int | None = None

    def add(self, waves: Waves) -> None:
        if waves.start_s is None:
            return
        first = round(waves.start_s * 1000 / WAVE_BIN_MS)
        for k, count in enumerate(waves.attempts):
            if self.emitted_to is None or first + k >= self.emitted_to:
                self.bins[first + k] = self.bins.get(first + k, 0) + count

    def take(self, now_s: float) -> Waves:
        upto = int((now_s - WAVE_SETTLE_S) * 1000 / WAVE_BIN_MS)
        start = self.emitted_to if self.emitted_to is not None else upto - 1000 // WAVE_BIN_MS
        attempts = [self.bins.pop(k, 0) for k in range(start, upto)]
        self.bins = {k: v for k, v in self.bins.items() if k >= upto}
        self.emitted_to = upto
        return Waves(attempts=attempts, start_s=start * WAVE_BIN_MS / 1000)


class DrainedAway:
    """The drained clients still within their hint, from the nodes' own accounts (`NodeStatus.due_back`):
    each node knows when it told each client to come back. Counted at one instant, the newest node frame's:
    a client back by then is counted on the node it came back to, and in no bin starting after it — so the
    fleet's connections plus these never count a client twice. (Modelled from `drain.closed` instead, the
    closes were placed up to a second late and spread as expected, not as drawn: after a 457/s drain of a
    300-client loopback fleet the sum read up to 314 in a frame, 338 in a snapshot between frames; review
    saw 322, and connections_drop fired once all were back.)

    Kept by node process (`key`: node id, stream epoch) while any is due: a node a rollout restarts goes
    silent, and its drained clients are still on their way back; its new process knows nothing of them."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str], DueBack] = {}

    def take(self, key: tuple[str, str], due_back: DueBack | None) -> None:
        """What an answering node process says now (None: none due)."""
        if due_back is None:
            self._kept.pop(key, None)
        else:
            self._kept[key] = due_back

    def clients(self, at_s: float) -> int:
        self._kept = {key: due for key, due in self._kept.items() if due.end_s > at_s}
        return sum(due.away_at(at_s) for due in self._kept.values())

    def accounts(self) -> dict[tuple[str, str], DueBack]:
        """The accounts as they stand (each replaced, never changed, by `take`): what `returned` reads
        a second later."""
        return dict(self._kept)


def returned(accounts: dict[tuple[str, str], DueBack], since_s: float, at_s: float) -> int:
    """The clients the nodes' accounts (`DrainedAway.accounts`, as they stood at `since_s`) had due back
    from `since_s` up to `at_s`: back on their hint. (A client closed since then and already due is left
    out: a hint shorter than the second between two frames.)"""
    return sum(due.away_at(since_s) - due.away_at(at_s) for due in accounts.values())


#: States the controller shows for a node whose process does not answer (killed, or restarted by a rollout):
#: it reports nothing, so the connections it held are lost.
_SILENT = frozenset({NodeState.DOWN, NodeState.RESTARTING})


class ClientFlow:
    """Drain ÷ inflow over real nodes, a second a frame: clients getting a connection back (the nodes'
    accepts) against clients losing one — the closes and drops the nodes report, and the connections a
    node held when it stopped answering (a killed node reports nothing; its clients are offline all the
    same, as the simulator counts a restart's). A draining node's closes carry its drain's reconnect hint
    (`drain.hint_ms`): those clients are due back over the hint window and count there, as the
    simulator counts its drains' (`DrainInflow`). A controller cannot see clients that hold no connection,
    so this is the flow, not the backlog (`offline_clients` stays unknown).

    And the drained clients still within their hint (`within_hint`, `Totals.within_hint_clients`: the
    connections_drop alarm counts them as held): as the nodes account for them (`DrainedAway`), and for a
    node that does not (an older one) from its drain's own running counts — its paced closes, `closed` −
    `forced` —, not the node's `closes_per_s`, which counts its lifetime closes and a deadline's forced
    ones too. The controller cannot tell whether a client heeds its hint: every paced close counts.

    And of those, the ones whose hint ran out in the last second (`Totals.hinted_returns_per_s`: the
    reconnect_rate_high alarm leaves them out), from the same two sources."""

    def __init__(self) -> None:
        self.window = DrainInflow()
        self.within_hint = WithinHint()
        self.away = DrainedAway()
        self._held: dict[str, int] = {}
        self._paced: dict[str, tuple[float, int]] = {}  # a draining node → its drain's start, paced closes
        # The nodes' accounts and their instant at the last second (`returned`), and the clients back on
        # their hint in it (`Totals.hinted_returns_per_s`), modelled and accounted.
        self._accounts_then: dict[tuple[str, str], DueBack] = {}
        self._counted_at: float | None = None
        self.returned_per_s = 0.0

    def observe(self, nodes: list[NodeStatus], totals: Totals, at_s: float | None = None) -> Totals:
        """One more second: `totals` (from `fold_totals`) with the lost connections among its
        disconnects, the window's ratio and the drained clients within their hint. `at_s`: the instant
        the nodes' connections were counted at (the newest frame's, fleet clock), which the nodes' own
        accounts (`away`) are read at; None counts only the modelled ones."""
        lost = 0
        for node in nodes:
            before = self._held.get(node.id, 0)
            gone = node.state in _SILENT
            if gone:
                lost += before
            self._held[node.id] = 0 if gone else node.connections
        disconnects = totals.disconnects_per_s + lost
        hinted = [HintedCloses(n.closes_per_s, n.drain.hint_ms) for n in nodes if n.drain is not None]
        # Summed, not `disconnects` less the hinted: a difference of rates leaves ±1e-15 after a drain,
        # and a window of residues reads 0 or negative: the kill switch on a quiet fleet.
        at_once = sum(n.drops_per_s + (n.closes_per_s if n.drain is None else 0.0) for n in nodes) + lost
        self.window.add(totals.accepts_per_s, at_once, hinted)
        self.within_hint.add(self._paced_closes(nodes))
        self.returned_per_s = self.within_hint.returned
        if at_s is not None:
            if self._counted_at is not None:
                self.returned_per_s += returned(self._accounts_then, self._counted_at, at_s)
            self._accounts_then, self._counted_at = self.away.accounts(), at_s
        return self.as_it_stands(totals.model_copy(update={"disconnects_per_s": disconnects}), at_s)

    def as_it_stands(self, totals: Totals, at_s: float | None = None) -> Totals:
        """`totals` with the flow's figures as they stand (a frame or snapshot between two seconds), the
        nodes' accounts read at `at_s` (as `observe`)."""
        away = self.within_hint.clients + (self.away.clients(at_s) if at_s is not None else 0)
        return totals.model_copy(
            update={
                "drain_inflow_ratio": self.ratio,
                "within_hint_clients": away,
                "hinted_returns_per_s": round(self.returned_per_s, 1),
            }
        )

    def _paced_closes(self, nodes: list[NodeStatus]) -> list[HintedCloses]:
        """Each drain's paced closes since the last second, with its hint. A drain first seen already under
        way (a new drain, or a controller started during one) counts its last second's at most — its rate,
        and the first close made at once: the clients it closed before are not known to be within their
        hint, and counted as such they would cover up to the whole node's loss."""
        paced_closes = []
        seen: dict[str, tuple[float, int]] = {}
        for node in nodes:
            drain = node.drain
            if drain is None or node.due_back is not None:  # a node that accounts for them (`away`)
                continue
            paced = drain.closed - drain.forced
            started_s, before = self._paced.get(node.id, (drain.started_at_s, -1))
            # (the start is the node's monotonic clock put on the wall's: the same drain reads a few µs apart)
            if abs(started_s - drain.started_at_s) > 0.5 or paced < before:
                before = -1
            new = paced - before if before >= 0 else min(paced, math.ceil(drain.rate_per_s) + 1)
            if new > 0:
                paced_closes.append(HintedCloses(new, drain.hint_ms))
            seen[node.id] = (drain.started_at_s, paced)
        self._paced = seen
        return paced_closes

    @property
    def ratio(self) -> float | None:
        return self.window.ratio
