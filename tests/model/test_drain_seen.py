"""A drain cancelled with `u`: the node's drain box says when, and what it had closed, from what the model
kept of the drain (its first and last progress seen) and the node's undrain event."""

from __future__ import annotations

from console.model.drain_seen import DrainSeen, cancelled_drain
from console.protocol import DrainProgress, Event
from console.ui.screens.node_detail import drain_text
from tests.fleet_builders import node


def progress(remaining: int, closed: int = 0, started_at_s: float = 700.0) -> DrainProgress:
    return DrainProgress(
        remaining=remaining,
        rate_per_s=50.0,
        hint_ms=(1000, 15000),
        started_at_s=started_at_s,
        deadline_at_s=started_at_s + 600,
        closed=closed,
    )


def state(time_s: float, before: str, after: str, why: str = "undrained") -> Event:
    message = f"gw-000 {why}: {before} → {after}"
    return Event(
        time_s=time_s, kind="node_state", node="gw-000", message=message, data={"from": before, "to": after}
    )


def test_a_cancelled_drain_says_when_and_how_many_it_had_closed() -> None:
    """Review: after `u` the drain box read only 'not draining', as for a node never drained."""
    seen = DrainSeen.of(None, progress(10_000), 701.0)
    seen = DrainSeen.of(seen, progress(8_796), 724.0)
    undrained = [state(724.0, "draining", "ready"), state(700.0, "ready", "draining", "drain at 50/s")]
    back = node("gw-000", connections=8_796)
    cancelled = cancelled_drain(back, undrained, seen)
    assert cancelled is not None and cancelled.closed == 1_204
    shown = drain_text(back, 730.0, cancelled=cancelled).plain
    assert shown == "drain cancelled at 0:12:04  1,204 closed, back in rotation", shown
    # A real node counts its own closes: they stand over the remaining's difference.
    real = DrainSeen.of(DrainSeen.of(None, progress(10_000), 701.0), progress(8_000, closed=1_500), 724.0)
    assert cancelled_drain(back, undrained, real).closed == 1_500  # type: ignore[union-attr]


def test_only_the_newest_state_change_of_a_node_back_in_rotation_is_a_cancel() -> None:
    seen = DrainSeen.of(None, progress(10_000), 701.0)
    undrained = [state(724.0, "drained", "ready"), state(700.0, "ready", "draining", "drain at 50/s")]
    assert cancelled_drain(node("gw-000"), undrained, seen) is not None
    restarted = [state(730.0, "restarting", "ready", "back in rotation"), *undrained]
    assert cancelled_drain(node("gw-000"), restarted, seen) is None
    assert cancelled_drain(node("gw-000", drain_rate_per_s=50.0), undrained, seen) is None  # draining again
    assert cancelled_drain(node("gw-000"), [], seen) is None
    # Attached mid-drain: what it closed before the console watched is not known, so no count.
    late = DrainSeen.of(None, progress(10_000, started_at_s=600.0), 701.0)
    cancelled = cancelled_drain(node("gw-000"), undrained, late)
    assert cancelled is not None and cancelled.closed is None
    assert drain_text(node("gw-000"), 730.0, cancelled=cancelled).plain == (
        "drain cancelled at 0:12:04  back in rotation"
    )
    assert cancelled_drain(node("gw-000"), undrained, None) is not None  # no progress kept: when only
