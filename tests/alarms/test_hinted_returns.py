"""`reconnect_rate_high` judged on the attempts beyond the drained clients back on their hint
(`Totals.hinted_returns_per_s`): a paced drain's clients come back when the fleet told them to.

Found in review (trainee drills): the graceful-drain drill done right — the abrupt rollout halted, one
started in drain mode at 167 closes/s a node with hints of 1–30 s — raised "✖ reconnects 348 > 100/s"
(critical) for 30 minutes, and the report said admission was "not done". The drill's churn is 500/min,
so its steady rate is the 10/s floor and the line 100/s; two nodes draining at 167/s bring 334 reconnects/s,
by design. The alarm must still fire for reconnects beyond them, and judge every attempt where a source
does not say (an older server or recording).

Frames by hand: 10 attempts/s while calm (the floor's 10/s: a line of 100/s), then from 120 s two drains'
clients coming back at 340/s.
"""

from __future__ import annotations

from console.protocol import Frame
from tests.alarms.test_drain_hints import raised
from tests.fleet_builders import series

CALM_S, DRAIN_S = 120, 60
RETURNS_PER_S = 340.0


def run(extra_per_s: float, returns_said: bool = True) -> list[Frame]:
    """Calm, then the drains' returns and `extra_per_s` other attempts, all accepted (no storm marks)."""

    def attempts(t: float) -> float:
        return 10.0 + (RETURNS_PER_S + extra_per_s if t >= CALM_S else 0.0)

    def returns(t: float) -> float | None:
        if not returns_said:
            return None
        return RETURNS_PER_S if t >= CALM_S else 0.0

    return series(
        0, CALM_S + DRAIN_S, attempts_per_s=attempts, accepts_per_s=attempts, hinted_returns_per_s=returns
    )


def test_a_paced_drains_returns_raise_no_reconnect_alarm() -> None:
    assert "reconnect_rate_high" not in raised(run(extra_per_s=0.0))


def test_attempts_beyond_the_returns_still_raise_it_and_say_what_was_left_out() -> None:
    event = raised(run(extra_per_s=200.0))["reconnect_rate_high"]
    assert event.data["value"] == 210.0  # 10 steady + 200 beyond the drains' 340
    assert "340/s more are drained clients back on their hint, not counted" in event.data["message"]


def test_a_source_that_does_not_say_has_every_attempt_judged() -> None:
    event = raised(run(extra_per_s=0.0, returns_said=False))["reconnect_rate_high"]
    assert event.data["value"] == 350.0
    assert "drained clients" not in event.data["message"]
