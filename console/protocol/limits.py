"""Ranges a value has wherever it enters stormdeck: a scenario file, a `--set`, a fleet API body, a form.

One place, so the scenario schema (`console.sim.scenario_schema`), the API's request models
(`console.protocol.requests`) and the console's action forms (`console.model.actions.form`) cannot drift apart:
an admission the API accepts is one a scenario could have started with.

Each is `(low, high)`, both inclusive. Where a side spells "unlimited" differently (a scenario's 0, the
API's null), it keeps its own low end and takes the high end from here.
"""

from __future__ import annotations

#: Beyond a billion a rate or a count is a typo, and the simulator's tick arithmetic must never see it.
BILLION = 1_000_000_000
#: Beyond a week a duration an operator asks for (a drain's deadline, a rollout's interval) is a typo
#: (docs/actions.md: "times ≤ a week").
WEEK_S = 7 * 86_400

#: nodes.count, and so a rollout's batch and an add of capacity: the most nodes a fleet may have.
NODE_COUNT = (1, 10_000)
#: A rollout's batch_size: nodes restarted together, never more than a fleet can have.
ROLLOUT_BATCH_SIZE = (1, NODE_COUNT[1])
#: A rollout's interval_s between batch starts (a scenario keeps its own low end, 1 s).
ROLLOUT_INTERVAL_S = (0.0, float(WEEK_S))
#: A drain's deadline_s (the API's, a scenario's rollout.drain_deadline_s and drain_nodes event's).
DRAIN_DEADLINE_S = (0.0, float(WEEK_S))
#: A drain's rate_per_s, closes per second per draining node, > 0: a drain's own (the API's DrainRequest) and
#: the one a rollout may ask its batches to drain at (RolloutRequest.drain_rate_per_s; a scenario keeps its own
#: low end, 0.001).
DRAIN_RATE_PER_S = (0.0, float(BILLION))

#: admission.rate_per_s: token bucket refill per node, per second.
ADMISSION_RATE_PER_S = (0.0, float(BILLION))
#: admission.burst: token bucket depth per node.
ADMISSION_BURST = (0, BILLION)
#: admission.max_connections: connection ceiling per node.
ADMISSION_MAX_CONNECTIONS = (0, BILLION)
#: admission.retry_after_s: the window a refused client's Retry-After is drawn from — at most an hour
#: (the simulator sizes its timing wheel from it).
RETRY_AFTER_S = (0.0, 3600.0)
#: A connection's scheduled lifetime, and the dither taken off it (a scenario's clients.max_lifetime_s and
#: lifetime_dither_s, `gateway serve --lifetime-s`): at most a day. Zuul recycles every 30 minutes; a
#: connection kept past a day is one nobody recycles, and `--lifetime-s 1e300` a typo.
CONNECTION_LIFETIME_S = (0, 86_400)
#: After a node asks a client to reconnect, how long it waits for the client to leave first (a scenario's
#: clients.close_grace_s, `gateway serve --close-grace-s`): clients leave in seconds (Zuul waits 4), so
#: beyond 10 minutes the grace only keeps a drain or a lifetime from ending.
CLOSE_GRACE_S = (0, 600)
#: A drain's reconnect hint window, ms (the API's hint_ms, a scenario's rollout.drain_hint_ms): an hour.
HINT_MS = (0, 3_600_000)


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def window_text(bounds: tuple[float, float]) -> str:
    """What a [min, max] window within `bounds` may be, for an error message."""
    return f"[min, max] with {_bound(bounds[0])} ≤ min ≤ max ≤ {_bound(bounds[1])}"


def in_window(pair: tuple[float, float] | list[float], bounds: tuple[float, float]) -> bool:
    return len(pair) == 2 and bounds[0] <= pair[0] <= pair[1] <= bounds[1]
