"""Whether a recording starts during the incident, and what its first frame says had already happened.

A recording begun late (`record` or `attach --record` started after the first disconnect, or one whose
oldest frames retention dropped) has a first frame that is not the fleet before the incident: taken as
"the start", a minimum read "60 % of the start" with the start itself the collapse, and a connections
alarm raised on the fall the recording caught read "-29 s after the first mass disconnect" it held. Pure:
a first frame and the mass disconnects in, a verdict out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from console.figures import RECOVERED_SHARE
from console.guards.rollout import HALTABLE
from console.protocol import Frame, RolloutMode
from console.record.clock import clock


@dataclass(frozen=True)
class IncidentUnderway:
    """The incident had begun by the recording's first frame (`at_s`)."""

    at_s: float
    connections: int
    #: Clients wanting a connection then (connections + offline): what the fleet held before the incident.
    #: None where the source does not say (a controller over real nodes knows no offline clients).
    wanting: int | None
    #: The mass disconnects the recording holds from before its first frame (none of their levels before).
    disconnects_before_s: tuple[float, ...] = ()
    #: An abrupt rollout under way: the batches it had restarted by the first frame, of how many, from when.
    rollout_batch: int = 0
    rollout_batches: int = 0
    rollout_started_s: float | None = None

    @property
    def share(self) -> float | None:
        return self.connections / self.wanting if self.wanting else None

    @property
    def what(self) -> str:
        """What had happened by the first frame, without the lead: "at its first frame, 0:41, connections
        were already at 82 % of the 1,296,000 clients wanting one, and the rollout had restarted batches
        1–2 of 8 (abrupt, from 0:10)"."""
        said = []
        if self.share is not None and self.share < RECOVERED_SHARE:
            said.append(
                f"connections were already at {self.share * 100:.0f} % of the {self.wanting:,} clients "
                "wanting one"
            )
        if self.rollout_batch:
            batches = "batch 1" if self.rollout_batch == 1 else f"batches 1–{self.rollout_batch}"
            since = f", from {clock(self.rollout_started_s)}" if self.rollout_started_s is not None else ""
            said.append(f"the rollout had restarted {batches} of {self.rollout_batches} (abrupt{since})")
        text = (f"at its first frame, {clock(self.at_s)}, " + ", and ".join(said)) if said else ""
        if self.disconnects_before_s:
            before = f"its first mass disconnect, at {clock(self.disconnects_before_s[0])}, is before its first frame"
            text = f"{text}; {before}" if text else f"{before}, {clock(self.at_s)}"
        return text


def incident_underway(first: Frame, disconnect_times_s: Sequence[float]) -> IncidentUnderway | None:
    """The incident under way at `first`, the recording's first frame, or None where it starts before one.

    Under way when the first frame shows it — connections below the recovery line (95 %) of the clients
    wanting one, or an abrupt rollout that had already restarted a batch (each one a mass disconnect) — or
    a mass disconnect in the recording comes before its first frame, whose level before it no frame holds.
    A source that tells neither offline clients nor a rollout cannot show it: such a recording reads as
    starting before the incident, as before."""
    totals = first.totals
    wanting = totals.connections + totals.offline_clients if totals.offline_clients > 0 else None
    below = wanting is not None and totals.connections < RECOVERED_SHARE * wanting
    rollout = first.rollout
    batch = 0
    if (
        rollout is not None
        and rollout.state in HALTABLE
        and rollout.mode is RolloutMode.ABRUPT
        and (rollout.started_at_s is None or rollout.started_at_s < first.time_s)
    ):
        batch = rollout.batch
    before = tuple(t for t in disconnect_times_s if t < first.time_s)
    if not (below or batch or before):
        return None
    return IncidentUnderway(
        at_s=first.time_s,
        connections=totals.connections,
        wanting=wanting,
        disconnects_before_s=before,
        rollout_batch=batch,
        rollout_batches=rollout.batches if rollout is not None and batch else 0,
        rollout_started_s=rollout.started_at_s if rollout is not None and batch else None,
    )
