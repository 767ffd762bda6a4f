"""When a resumed rollout's next batch starts, said in the resume's verdict: both backends keep what is left
of the interval (batch start to batch start) across a halt, so "resume" is not "the next batch now".

A reviewer's resume on a real fleet was a plain ok, and batch 2 drained at once, 47 s before it was due; the
controller now waits (console/gateway/rollout.py), and the verdict says when: "batch 2 starts in 47 s".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from console.guards.rollout.plan import stopped_on_batch
from console.guards.verdict import note
from console.protocol import Check, FleetSnapshot, NodeState


@dataclass(frozen=True)
class NextBatch:
    """The batch a resume starts or goes on with, the seconds until it does (0: at once), and why."""

    batch: int
    in_s: float
    why: str

    def check(self) -> Check:
        """A note: it says what the resume will do, it never raises the level."""
        when = "at once" if self.in_s <= 0 else f"in {math.ceil(self.in_s)} s"
        return note("next_batch", when, None, ok=True, why=self.why)

    def projections(self) -> dict[str, float]:
        return {"next_batch": self.batch, "next_batch_in_s": round(max(0.0, self.in_s), 1)}


def next_batch(snapshot: FleetSnapshot) -> NextBatch | None:
    """What a resume of the paused or halted rollout does first, by its status: before its first batch,
    batch 1 at once (or at its scheduled start, `starts_at_s`); between batches, the next when the interval
    from the latest batch's start is over (`next_batch_at_s`); during a batch — its nodes out of rotation,
    no next batch due yet — that batch goes on at once. None where the status does not say enough (an
    older server between batches)."""
    rollout = snapshot.rollout
    now_s = snapshot.time_s
    if rollout.batch == 0:
        if rollout.starts_at_s is not None and rollout.starts_at_s > now_s:
            left_s = rollout.starts_at_s - now_s
            return NextBatch(1, left_s, f"batch 1 starts in {math.ceil(left_s)} s, at its scheduled start")
        return NextBatch(1, 0.0, "batch 1 starts at once")
    following = rollout.batch + 1
    if rollout.next_batch_at_s is not None and following <= rollout.batches:
        left_s = rollout.next_batch_at_s - now_s
        interval = f"the {rollout.interval_s:g} s interval" if rollout.interval_s else "the interval"
        paced = f"{interval} runs from batch {rollout.batch}'s start to batch {following}'s"
        if left_s <= 0:
            return NextBatch(following, 0.0, f"batch {following} starts at once ({paced}, and is over)")
        return NextBatch(
            following,
            left_s,
            f"batch {following} starts in {math.ceil(left_s)} s ({paced}): a resume keeps what is left of it",
        )
    out = [
        n
        for n in snapshot.nodes
        if n.id in set(stopped_on_batch(snapshot)) and n.state is not NodeState.READY
    ]
    if out:
        return NextBatch(
            rollout.batch,
            0.0,
            f"batch {rollout.batch} goes on at once (halted during it), and the next follows once it is back "
            "and its interval is over",
        )
    return None
