"""What the fleet API server serves: a backend that produces one tick of frames and events at a time.

The simulator is one backend (`console.server.simulator`); the controller over real gateway nodes (#6)
is another. The server owns everything a client sees of time and order — `seq`, `epoch`, the pacing at
one frame per wall second, the resume history, the per-node history — so a backend only has to answer
"what is the fleet like now, after this much fleet time?".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from console.guards import FleetCapacity
from console.protocol import (
    TOTAL_COUNTERS,
    Event,
    FleetSnapshot,
    FoldedDrain,
    Frame,
    HotSpells,
    ServedDrill,
    Source,
    Totals,
    Waves,
)
from console.protocol.models import UnderWay

if TYPE_CHECKING:
    from console.errors import InputError
    from console.server.actions import FleetAction
    from console.sim.injection import Injection


#: Writes an injection's audit record before the fleet changes (raising: nothing is applied) and returns
#: who injected it, as the stream's `injection` event says it (`actor`, `role`, `audit_seq`, as an applied
#: action's event does), or None when nobody is known (a test's injection).
BeforeInjecting = Callable[["Injection"], Mapping[str, Any] | None]


@dataclass(frozen=True)
class Tick:
    """The result of advancing a backend: what a client sees for one frame interval."""

    frame: Frame  # the fleet after the tick; `seq`/`epoch` are overwritten by the server
    events: list[Event]
    snapshot: FleetSnapshot  # the same moment as `frame`, for `GET /v1/fleet`
    fleet_seconds: int = 1  # fleet seconds the tick covered (may fall short of what was asked)
    compute_s: float = field(default=0.0, compare=False)  # wall time the backend spent on it


@runtime_checkable
class FleetBackend(Protocol):
    """A source of fleet state for the API server.

    `tick` is awaited once per frame interval and never concurrently with itself. A backend that cannot
    change its clock (a real fleet) sets `clock_control = False` and ignores `fleet_seconds`.
    The write side (#4) adds the actions to this protocol; they too are awaited, so a backend can
    serialize them against `tick` (the simulator holds one lock for both).
    """

    fleet_name: str
    source: Source
    clock_control: bool

    async def start(self) -> FleetSnapshot:
        """Prepare and return the fleet's state before the first tick."""
        ...

    async def tick(self, fleet_seconds: int, budget_s: float) -> Tick:
        """Advance up to `fleet_seconds` (at least one), stopping early once `budget_s` of wall time is
        spent."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class ActingBackend(FleetBackend, Protocol):
    """A backend that takes actions (the write side, issue #4). The server judges first; the backend
    applies what was allowed, between its ticks, and may refuse (`InputError`) what its fleet cannot do.
    """

    def capacity(self) -> FleetCapacity:
        """What one node can absorb: the figures the guards need and a frame does not carry."""
        ...

    async def current_snapshot(self) -> FleetSnapshot:
        """The fleet now, actions applied since the last tick included: what an action is judged on."""
        ...

    def refuses(self, action: FleetAction) -> InputError | None:
        """What this fleet cannot do whatever the guards say, known before applying (a real fleet
        without restart commands cannot roll out): checked before the verdict, so a dry run says it too."""
        ...

    def deferred(self, action: FleetAction) -> str | None:
        """What of `action`, once applied, reaches part of the fleet only later — said in its answer and
        audit record (a real fleet gives admission to a node being restarted when it is back); None when
        all of it applies now."""
        ...

    async def apply(self, action: FleetAction) -> None:
        """Apply `action` entirely or not at all (raise `InputError`, nothing changed)."""
        ...

    async def forecast(self, action: FleetAction) -> dict[str, Any] | None:
        """The next minute with and without `action` (see `console.sim.forecast`), or None when this
        backend cannot forecast."""
        ...


@runtime_checkable
class InjectingBackend(FleetBackend, Protocol):
    """A backend an instructor can inject events into (a served drill, issue #5): only a simulation."""

    async def inject(
        self, event: str, params: dict[str, Any], before_applying: BeforeInjecting
    ) -> tuple[Injection, float]:
        """Check `event` against the fleet now, call `before_applying` (the audit record: it may raise,
        and then nothing is applied), apply it and announce it as an `injection` event, with who injected
        it as `before_applying` returns it — all between two fleet seconds. Returns the injection as
        applied and the fleet second it followed. An invalid injection raises `InputError` with nothing
        changed."""
        ...


@runtime_checkable
class ScenarioBackend(FleetBackend, Protocol):
    """A backend running a scenario (the simulator): the stream's hello names it and the run's seed, so a
    recording of the stream says which scenario it is of and how to run it again."""

    def scenario_name(self) -> str: ...

    def scenario_seed(self) -> int: ...

    def scenario_overrides(self) -> list[str]: ...


@runtime_checkable
class DrillServingBackend(FleetBackend, Protocol):
    """A backend serving a drill (`drill NAME --serve`): the stream's hello names the drill and its clock,
    so every console attached to it reads the times the drill's lines and hints speak."""

    def served_drill(self) -> ServedDrill: ...


class RunningCounts:
    """A backend's running counts (`Totals.*_total`): every fleet second's rates added as it runs, so a
    frame standing for several seconds still says exactly how many 503s, timeouts, … there were in all.

    `add` each second's totals (once, in order, from the fleet's first second); `stamp` a frame's totals
    with the counts so far. Counts are whole numbers: each rate is a count over one second.
    """

    def __init__(self) -> None:
        self.counts: dict[str, int] = dict.fromkeys(TOTAL_COUNTERS, 0)
        self.seconds = 0

    def add(self, totals: Totals) -> None:
        counts = self.counts
        for name, rate in TOTAL_COUNTERS.items():
            counts[name] += round(getattr(totals, rate))
        self.seconds += 1

    def stamp(self, totals: Totals) -> Totals:
        return totals.model_copy(update=self.counts)


def fold_frames(frames: Sequence[Frame], hot_lines: Sequence[float] = ()) -> Frame:
    """One frame standing for several fleet seconds: the last second's figures plus every wave bin and
    every earlier second's totals (`folded_totals`).

    At speed > 1 the server sends one frame per wall second, not one per fleet second, so a client is not
    flooded; the wave chart and the lockstep index still see every 100 ms bin (issue #3, section 1), and
    the alarms judge every second's totals (a condition held for 60 s is held for 60 fleet seconds, not
    two frames 60 s apart). The running counts (`totals.*_total`) are the last frame's: being running
    counts, they already hold every second folded in. Folding a frame that does not say its seconds' totals
    (`Frame.totals_by_second` None) leaves `folded_totals` null: a partial list would misplace them.

    `hot_lines`: the CPU lines to say, for each earlier second, which serving nodes were over
    (`folded_hot`), read from each frame's nodes (and the spells of a frame already folded); only for
    frames that carry their nodes. None given, or a folded frame not saying a line: no spells for it.
    """
    if not frames:
        raise ValueError("fold_frames needs at least one frame")
    last = frames[-1]
    if len(frames) == 1:
        return last
    bins: list[int] = []
    seconds: list[Totals] | None = []
    for frame in frames:
        bins.extend(frame.waves.attempts)
        of_frame = frame.totals_by_second()
        seconds = None if seconds is None or of_frame is None else [*seconds, *of_frame]
    span_s = sum(frame.span_s for frame in frames)
    waves = Waves(bin_ms=last.waves.bin_ms, attempts=bins)
    folded = seconds[:-1] if seconds is not None and len(seconds) == span_s > 1 else None
    hot = [spells for line in hot_lines if (spells := _spells(frames, line)) is not None] if folded else []
    update = {
        "waves": waves,
        "span_s": span_s,
        "folded_totals": folded,
        "folded_hot": hot or None,
        "folded_drains": _ended_drains(frames) if folded else None,
    }
    return last.model_copy(update=update)


def _ended_drains(frames: Sequence[Frame]) -> list[FoldedDrain] | None:
    """The drains under way in the seconds `frames` stand for that are not under way at the last
    (`Frame.folded_drains`): from each frame's draining nodes, and the drains a frame already folded says
    ended inside it. None when a frame does not say (no nodes, a draining node without its drain status, a
    folded frame without the list)."""
    seconds: list[tuple[float, list[UnderWay]]] = []
    for frame in frames:
        if frame.span_s > 1:
            if frame.folded_drains is None:
                return None
            seconds += [(d.last_s, [(d.node, d.started_at_s, d.rate_per_s)]) for d in frame.folded_drains]
        under_way = frame.drains_under_way()
        if under_way is None:
            return None
        seconds.append((frame.time_s, under_way))
    return FoldedDrain.ended(seconds, seconds[-1][1])


def _spells(frames: Sequence[Frame], line: float) -> HotSpells | None:
    """The spells over `line` in the seconds `frames` stand for, but the last (the folded frame's nodes)."""
    over: list[list[str] | set[str]] = []
    for frame in frames:
        earlier = frame.hot_by_second(line)
        if earlier is None:
            return None
        over += [*earlier, frame.nodes_over(line)]
    first_s = frames[-1].time_s - (len(over) - 1)
    return HotSpells.of_seconds(line, [(first_s + i, nodes) for i, nodes in enumerate(over[:-1])])


def still_frame(frame: Frame) -> Frame:
    """The frame sent while the clock stands still: the same fleet, no new wave bins, a span of 0 s.

    Frames keep leaving at one per wall second while paused, so a console can tell a paused fleet (fresh
    frames, `span_s` 0) from a dead link (no frames).
    """
    waves = Waves(bin_ms=frame.waves.bin_ms, attempts=[])
    return frame.model_copy(update={"waves": waves, "span_s": 0.0})
