"""What each objective reads of a run's frames, kept up to date as each frame comes. Pure.

A watch keeps what its objective needs of the frames and no more (the abort criterion's stretch, a dip, a
total's peak and time over its line, the rollout's completion), so a run of hours is measured in the memory
of one frame (`console.drills.objectives.RunMeasures` holds one watch an objective and folds each frame in).
What a watch means — met or not, and why — is the objectives' (`console.drills.objectives`); the drill
screen reads a watch's state for its deadlines (`console.drills.countdown`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from console.protocol import Frame, Totals


@dataclass(frozen=True)
class FleetSecond:
    """One reading of the fleet's totals: a fleet second, or a whole frame that does not say its seconds."""

    time_s: float
    totals: Totals
    span_s: float  # fleet seconds it stands for: 1, or an old sped-up frame's span (0 paused: counted as 1)


def seconds_of(frame: Frame) -> list[FleetSecond]:
    """The fleet seconds a frame stands for, oldest first, its own last: at speed > 1 a frame folds several
    (`span_s`), each earlier one's totals in `folded_totals`, so a dip, a floor broken or a total over its
    line inside the frame is read at its own second, as at one frame a second. A frame that does not say its
    seconds (a sped-up frame from an older server or recording; a paused frame) is one reading at its time,
    standing for its whole span, as before the field."""
    by_second = frame.seconds()
    if not by_second:
        return [FleetSecond(frame.time_s, frame.totals, frame.span_s or 1.0)]
    return [FleetSecond(time_s, totals, 1.0) for time_s, totals in by_second]


def abort_criterion_at(frames: Sequence[Frame], cpu_pct: float, for_s: float) -> tuple[float, str] | None:
    """When a serving node first stayed above `cpu_pct` for `for_s` seconds in a row, and which node."""
    watch = AbortWatch(cpu_pct, for_s)
    for frame in frames:
        watch.add(frame, [], 1.0)
        if watch.criterion is not None:
            break
    return watch.criterion


class Watch:
    """One objective's reading of the frames, kept up to date as each comes (what it needs, no more):
    `seconds` are the frame's fleet seconds (`seconds_of`), for what reads totals."""

    def add(self, frame: Frame, seconds: Sequence[FleetSecond], baseline: float) -> None:
        raise NotImplementedError


class AbortWatch(Watch):
    """The abort criterion: the first serving node above `cpu_pct` for `for_s` seconds in a row.

    Read from each fleet second: a sped-up frame's earlier seconds from the spells it carries for this
    line (`Frame.folded_hot`), its last from its nodes. A frame that does not say them (an older server or
    recording, or a line its server does not watch) is read at its last second only, so at ×N a stretch is
    seen at frame times, N s apart (at ×60 thundering-herd's criterion read 181–240 s, 161 s at one frame a
    second)."""

    def __init__(self, cpu_pct: float, for_s: float) -> None:
        self.cpu_pct, self.for_s = cpu_pct, for_s
        self.criterion: tuple[float, str] | None = None  # (fleet time, node) once met
        self._above_since: dict[str, float] = {}

    def add(self, frame: Frame, seconds: Sequence[FleetSecond], baseline: float) -> None:
        if self.criterion is not None:
            return
        earlier = frame.hot_by_second(self.cpu_pct)
        if earlier:
            # In the frame's node order, as its last second is read: the first node to get there wins (by
            # id where the frame has no node records: a replay's columnar frame).
            order = {node.id: i for i, node in enumerate(frame.nodes)}
            for (time_s, _), over in zip(frame.seconds() or (), earlier, strict=False):
                self._second(
                    time_s, sorted(over, key=lambda node_id: (order.get(node_id, len(order)), node_id))
                )
                if self.criterion is not None:
                    return
        self._second(frame.time_s, frame.nodes_over(self.cpu_pct))

    def _second(self, time_s: float, over: list[str]) -> None:
        """One fleet second: `over`, the serving nodes above the line then, in the frame's order."""
        above_since, meeting = self._above_since, set(over)
        for node_id in [n for n in above_since if n not in meeting]:
            del above_since[node_id]
        for node_id in over:
            if time_s - above_since.setdefault(node_id, time_s) >= self.for_s:
                self.criterion = time_s, node_id
                above_since.clear()
                return


class DipWatch(Watch):
    """The longest stretch below `pct` % of the starting connections: a dip lasts until the first frame
    back at `pct` (or, still open, until the last frame)."""

    def __init__(self, pct: float) -> None:
        self.pct = pct
        self.longest_s = 0.0
        self.longest_from: float | None = None
        self.below_since: float | None = None

    def add(self, frame: Frame, seconds: Sequence[FleetSecond], baseline: float) -> None:
        for second in seconds:
            below = 100.0 * second.totals.connections / baseline < self.pct
            if below and self.below_since is None:
                self.below_since = second.time_s
            if self.below_since is not None and not below:
                self.longest_s, self.longest_from = self.longest_until(second.time_s)
                self.below_since = None

    def longest_until(self, time_s: float) -> tuple[float, float | None]:
        """The longest stretch, the one still open counted up to `time_s`."""
        if self.below_since is not None and (
            self.longest_from is None or time_s - self.below_since > self.longest_s
        ):
            return time_s - self.below_since, self.below_since
        return self.longest_s, self.longest_from


class TotalWatch(Watch):
    """A total against its line: a most (`totals_max`: its peak, and the fleet seconds above the line) or a
    least (`totals_min`, `at_least`: its lowest, and the seconds under it). `worst` and `beyond_s` read
    the same either way; `side` says which in the operator's words."""

    def __init__(self, name: str, limit: float, at_least: bool = False) -> None:
        self.name, self.limit, self.at_least = name, limit, at_least
        self.worst: float | None = None  # the peak of a most, the lowest of a least
        self.beyond_s = 0.0  # fleet seconds on the wrong side of the line

    @property
    def side(self) -> tuple[str, str]:
        """(the wrong side of the line, the worst reading) in words: ("above", "peak") or ("under", "lowest")."""
        return ("under", "lowest") if self.at_least else ("above", "peak")

    def beyond(self, value: float) -> bool:
        return value < self.limit if self.at_least else value > self.limit

    def add(self, frame: Frame, seconds: Sequence[FleetSecond], baseline: float) -> None:
        for second in seconds:
            value = float(getattr(second.totals, self.name))
            if self.worst is None or (value < self.worst if self.at_least else value > self.worst):
                self.worst = value
            if self.beyond(value):
                self.beyond_s += second.span_s

    def value(self, frame: Frame) -> float:
        """The total in `frame` (its last second)."""
        return float(getattr(frame.totals, self.name))

    def over(self, frame: Frame) -> bool:
        """Whether `frame` (its last second) is on the wrong side of the line: its grace is being spent."""
        return self.beyond(self.value(frame))


class RolloutWatch(Watch):
    """When the rollout first showed as completed: the first of a frame's seconds to end after the time the
    rollout reports it completed at (`completed_at_s`; the simulator stamps the start of the second it
    completed in). A ×60 frame shows only its last second's rollout, which would put a completion up to 59 s
    late; a frame of one second, or one that does not say its seconds, reads as its own time, as before.

    None of its seconds ends after it in a frame cut at the drill's end (`live.through`), whose rollout is
    the one of a second after the drill: not a completion within the drill, as at one frame a second (it
    was credited at the drill's last second)."""

    def __init__(self) -> None:
        self.completed_at_s: float | None = None
        self.completed_after_end = False  # shown completed only by the frame cut at the drill's end

    def add(self, frame: Frame, seconds: Sequence[FleetSecond], baseline: float) -> None:
        rollout = frame.rollout
        if self.completed_at_s is None and rollout is not None and rollout.state.value == "completed":
            reported = rollout.completed_at_s
            if reported is None:  # a source that does not say when: seen at this frame
                self.completed_at_s = frame.time_s
                return
            self.completed_at_s = next((s.time_s for s in seconds if s.time_s > reported), None)
            self.completed_after_end = self.completed_at_s is None
