"""The autoscaler and the cold-path breaker, directly: figures in, decisions out."""

from __future__ import annotations

from console.sim.controls import Autoscaler, ResyncBreaker
from console.sim.scenario import Autoscale, Resync


def hpa(**changes) -> Autoscaler:
    settings = dict(enabled=True, cpu_target_pct=60.0, step_nodes=50, max_nodes=400, cooldown_s=3.0)
    return Autoscaler(Autoscale(**{**settings, **changes}))


def test_the_autoscaler_waits_a_full_window_then_follows_the_hpa_rule() -> None:
    scaler = hpa()
    # 100 nodes at 90 % CPU each: desired ⌈100 × 90 / 60⌉ = 150, so 50 more — once three seconds are seen.
    assert scaler.decide(1.0, 100 * 90.0, 100, 100) is None
    assert scaler.decide(2.0, 100 * 90.0, 100, 100) is None
    scale = scaler.decide(3.0, 100 * 90.0, 100, 100)
    assert scale is not None and (scale.count, scale.mean_cpu_pct, scale.window_s) == (50, 90.0, 3)
    # Within the cooldown nothing more, however hot.
    assert scaler.decide(4.0, 150 * 100.0, 150, 150) is None


def test_the_autoscaler_is_bounded_by_its_step_and_by_max_nodes() -> None:
    scaler = hpa(step_nodes=10, cooldown_s=1.0)
    assert scaler.decide(1.0, 100 * 100.0, 100, 100).count == 10  # wanted 67
    near_max = hpa(max_nodes=104, cooldown_s=1.0)
    assert near_max.decide(1.0, 100 * 100.0, 100, 100).count == 4


def test_nodes_not_yet_ready_count_as_idle() -> None:
    scaler = hpa(cooldown_s=1.0)
    # 50 ready nodes at 60 % plus 50 provisioning: mean 30 % over 100 serving, below target: no scale-up.
    assert scaler.decide(1.0, 50 * 60.0, 100, 100) is None


def resync(**changes) -> Resync:
    settings = dict(
        capacity_per_s=1000.0,
        timeout_s=10.0,
        retry_s=(1.0, 5.0),
        breaker=True,
        breaker_failure_share=0.05,
        breaker_window_s=60.0,
        breaker_retry_after_s=30.0,
    )
    return Resync(**{**settings, **changes})


def test_the_breaker_opens_past_the_failure_share_and_closes_when_the_window_forgets() -> None:
    breaker = ResyncBreaker(resync(breaker_window_s=3.0))
    assert breaker.update(failed=4, done=96) is None and not breaker.open  # 4 %: under 5 %
    share = breaker.update(failed=10, done=90)  # 14 of 200: 7 %
    assert share is not None and abs(share - 0.07) < 1e-12 and breaker.open
    assert breaker.update(failed=20, done=80) is None and breaker.open  # 34 of 300: still over
    assert breaker.update(failed=0, done=100) is None and breaker.open  # 30 of 300 (the first forgotten)
    closed = breaker.update(failed=0, done=100)  # 20 of 300: 6.7 %, still over …
    assert closed is None and breaker.open
    closed = breaker.update(failed=0, done=100)  # … 0 of 300: the failures have left the window
    assert closed == 0.0 and not breaker.open
