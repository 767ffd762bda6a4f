"""The outage seed's timeline, replayed at 1/10 scale of nodes, through the default alarms.

04:00 calm (13 M connections, ~80 k reconnects/min) · 04:02 three survivors hit 100 % CPU · 04:03 their
clients drop and cannot get back · 04:04 synchronised retry waves, 13 M attempts/min. The seed's on-call
was paged at ~04:03 and halted at 04:11; the post-mortem's alarms should all have fired by 04:04:30.
"""

from __future__ import annotations

from console.alarms import alarms_fired
from tests.fleet_builders import frame, node

STEADY_PER_S = 80_000 / 60  # outage seed: ~80 k reconnects a minute in steady state
STORM_PER_S = 13_000_000 / 60  # ... and 13 M a minute in the storm

CALM = [node(f"gw-{i:03d}", cpu_pct=45.0) for i in range(48)]
HOT = [node(f"gw-{i:03d}", cpu_pct=100.0 if i < 3 else 60.0) for i in range(48)]


def waves(time_s: float) -> list[int]:
    """Attempts per 100 ms bin: a smear before 04:04, then a wave every 500 ms (the seed's doubling)."""
    per_bin = STEADY_PER_S / 10
    if time_s < 240:
        return [int(per_bin)] * 10
    return [int(STORM_PER_S / 2) if (int(time_s * 10) + i) % 5 == 0 else int(per_bin) for i in range(10)]


def outage_frame(time_s: float):
    connections = 13_000_000
    if time_s >= 180:  # clients that cannot reconnect: the counter flatlines, then drops
        connections -= int(min(time_s - 180, 60) / 60 * 1_000_000)
    return frame(
        time_s,
        fleet=HOT if time_s >= 120 else CALM,
        connections=connections,
        attempts_per_s=STORM_PER_S if time_s >= 240 else STEADY_PER_S,
        accepts_per_s=STEADY_PER_S,
        headroom_pct=35.0,
        attempts=waves(time_s),
    )


def test_the_seeds_outage_fires_its_alarms_in_order() -> None:
    fired = alarms_fired(outage_frame(float(t)) for t in range(0, 300))
    assert fired["cpu_abort"] == 150  # 04:02 + 30 s: the abort criterion, a minute before the drop
    assert 180 < fired["connections_drop"] <= 240  # more than 5 % gone within the minute
    assert fired["reconnect_rate_high"] == 245  # 162× the learned ~1.3 k/s, for 5 s
    assert 240 <= fired["lockstep_waves"] < 245
    assert max(fired.values()) <= 270  # everything by 04:04:30
    assert "headroom_low" not in fired  # the post-mortem's 35 % is exactly the budget
